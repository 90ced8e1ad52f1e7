"""Values read from records: timestamps (:func:`parse_ts`), compact JSON (:func:`dumps`),
message content as text (:func:`content_text`, :func:`flatten_content`) and LiteLLM/OpenAI
usage objects in the canonical convention (:func:`litellm_usage`).

>>> parse_ts("2026-01-01T00:00:00Z"), parse_ts(1_767_225_600), parse_ts("not a date")
(1767225600000, 1767225600000, -1)
>>> flatten_content([{"type": "text", "text": "a"}, "b"])
'a\\nb'
"""

from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Callable
from typing import Any

import orjson

from workbench.sources.checks import Malformed, opt_dict, opt_int, type_name, want_dict, want_list


def parse_ts(v: Any) -> int:
    """Epoch milliseconds from an ISO-8601 string (naive = UTC) or positive epoch
    seconds/ms (a number above 1e11 is taken as ms); ``-1`` when absent or unreadable
    (timestamps are metadata, never a reason to fail)."""
    try:
        if isinstance(v, str) and v:
            s = v.strip()
            if s.endswith("Z"):
                s = s[:-1] + "+00:00"
            d = _dt.datetime.fromisoformat(s)
            if d.tzinfo is None:
                d = d.replace(tzinfo=_dt.UTC)
            return int(round(d.timestamp() * 1000))
        if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) and v > 0:
            ms = v if v > 1e11 else v * 1000.0
            return int(round(ms)) if ms < 2**62 else -1
    except (ValueError, OverflowError, OSError):
        return -1
    return -1


def dumps(value: Any) -> str:
    """Compact JSON text of a parsed value (ValueError if it cannot be serialised)."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:  # orjson: ints beyond 64 bits, nesting deeper than 255
        import json

        try:
            return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        except RecursionError:
            raise ValueError("value nested too deeply to serialise") from None


def content_text(content: Any, where: str) -> str | None:
    """Message content as plain text: a string, or a list of parts (text parts joined by
    a newline; image/audio/other non-text parts contribute nothing, they stay in raw).
    Validates: a part that is neither a string nor an object is Malformed."""
    if content is None:
        return None
    if isinstance(content, str):
        return content
    if isinstance(content, dict):  # a single part
        content = [content]
    parts = want_list(content, where, "a string, a list of content parts, or null")
    return join_parts(parts, where, "a content part object {type, text}", _part_text)


def _part_text(p: dict, where: str) -> str | None:
    t = p.get("text")
    if t is not None and not isinstance(t, str | dict):
        raise Malformed(f"{where}.text", f"is {type_name(t)}", "a string")
    return t if isinstance(t, str) else None


def join_parts(parts: list, where: str, expected: str,
               text_of: Callable[[dict, str], str | None]) -> str:
    """The texts of a list of parts joined by newlines: a string part as is, an object
    part (else Malformed, naming ``expected``) by ``text_of(part, where[i])``, which
    returns None for a part that contributes no text."""
    out: list[str] = []
    for i, p in enumerate(parts):
        if isinstance(p, str):
            out.append(p)
            continue
        t = text_of(want_dict(p, f"{where}[{i}]", expected), f"{where}[{i}]")
        if t is not None:
            out.append(t)
    return "\n".join(out)


def media_placeholder(block: dict) -> str:
    """``[image: image/png, 1234 base64 chars]`` for an Anthropic image/document block."""
    src = block.get("source")
    btype = block.get("type")
    if isinstance(src, dict):
        media = src.get("media_type") or src.get("type") or "?"
        data = src.get("data")
        if isinstance(data, str):
            return f"[{btype}: {media}, {len(data)} base64 chars]"
        if isinstance(src.get("url"), str):
            return f"[{btype}: {src['url']}]"
        return f"[{btype}: {media}]"
    return f"[{btype}]"


def flatten_content(content: Any) -> str:
    """Tool-result (or message) content -> one string, never failing: text parts as is,
    image/document parts as placeholders, anything else as its JSON."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for item in content:
            if isinstance(item, str):
                parts.append(item)
            elif isinstance(item, dict):
                t = item.get("type")
                if t == "text" and isinstance(item.get("text"), str):
                    parts.append(item["text"])
                elif t in ("image", "document"):
                    parts.append(media_placeholder(item))
                else:
                    parts.append(dumps(item))
            else:
                parts.append(dumps(item))
        return "\n".join(parts)
    return dumps(content)


def litellm_usage(u: Any, where: str) -> tuple[int, int, int, int] | None:
    """Canonical (input, cache_read, cache_write, output) from a LiteLLM/OpenAI usage object.

    LiteLLM's ``prompt_tokens`` *includes* cached tokens: for Anthropic models it is
    ``input_tokens + cache_creation_input_tokens + cache_read_input_tokens`` (checked on
    openhands/basic_gui_mode.json: 3601 = 6 + 160 + 3435), for OpenAI models it includes
    ``prompt_tokens_details.cached_tokens``. So ``usage_input = prompt_tokens - read - write``.
    A raw Anthropic usage (``input_tokens`` next to ``cache_*_input_tokens``) is already
    exclusive and is taken as is.
    """
    if u is None:
        return None
    u = want_dict(u, where, "a usage object")
    write = opt_int(u.get("cache_creation_input_tokens"), f"{where}.cache_creation_input_tokens")
    read = opt_int(u.get("cache_read_input_tokens"), f"{where}.cache_read_input_tokens")
    details = opt_dict(u.get("prompt_tokens_details"), f"{where}.prompt_tokens_details")
    if read is None and details is not None:
        read = opt_int(details.get("cached_tokens"), f"{where}.prompt_tokens_details.cached_tokens")
    prompt = opt_int(u.get("prompt_tokens"), f"{where}.prompt_tokens")
    out = opt_int(u.get("completion_tokens"), f"{where}.completion_tokens")
    if prompt is None and out is None:
        inp = opt_int(u.get("input_tokens"), f"{where}.input_tokens")
        out = opt_int(u.get("output_tokens"), f"{where}.output_tokens")
        if inp is None and out is None:
            return None
        anthropic_raw = "cache_creation_input_tokens" in u or "cache_read_input_tokens" in u
        if not anthropic_raw:
            idet = opt_dict(u.get("input_tokens_details"), f"{where}.input_tokens_details")
            if read is None and idet is not None:
                read = opt_int(idet.get("cached_tokens"), f"{where}.input_tokens_details.cached_tokens")
            inp = None if inp is None else max(inp - (read or 0) - (write or 0), 0)
        return (-1 if inp is None else inp, read or 0, write or 0, -1 if out is None else out)
    read = read or 0
    write = write or 0
    inp = -1 if prompt is None else max(prompt - read - write, 0)
    return (inp, read, write, -1 if out is None else out)
