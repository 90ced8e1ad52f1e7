"""OpenAI-style chat message lists (the helpers shared with other importers live in
``openai_style``).

Accepted inputs (``openai_messages``):

* a JSON list of messages ``[{role, content, tool_calls?, tool_call_id?, name?}, ...]``;
* an object ``{"messages": [...], ...}`` (other keys are kept in the document event);
* JSONL, one message object per line.

Mapping: ``system``/``developer``/``user`` → MESSAGE; ``assistant`` → REASONING (if it
carries ``reasoning_content``), MESSAGE, then one TOOL_CALL per ``tool_calls`` entry
(``call_id`` = the entry's ``id``, ``name`` = ``function.name``, ``text`` = ``arguments``;
``tool_calls`` given as a JSON-encoded string is decoded); ``tool`` → TOOL_RESULT
(``call_id`` = ``tool_call_id``); legacy ``function_call`` / role ``function`` pairs get a
synthetic ``call_id`` (``fn-<n>``). Any other role becomes OPAQUE. One request per
assistant message; inputs belong to the request that first sees them.

Lossless ``raw`` (see :func:`roundtrip`):

* JSONL: each line's text is the ``raw`` of the first event of that line, so the non-null
  raws joined with ``"\\n"`` equal the input's non-blank lines byte for byte.
* JSON documents: event 0 is META ``document`` (the document with its message array
  emptied), event 1 is META ``layout`` (which arrays/values were taken out and how many
  elements); every element's ``orjson.dumps`` is the raw of its first event.
  :func:`rebuild_document` puts them back together (``== json.load(input)``).

The message mapping (:func:`~workbench.sources.openai_style.message_events`) and the document
layout live in :mod:`workbench.sources.openai_style` and :mod:`workbench.sources.lossless`,
shared with the other importers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from workbench.errors import SourceError
from workbench.sources.base import Detection, ParseContext, ParsedContinuity
from workbench.sources.builder import Builder, is_message_list
from workbench.sources.checks import pick, type_name
from workbench.sources.lossless import roundtrip as roundtrip
from workbench.sources.lossless import start_document
from workbench.sources.openai_style import MessageState, message_events
from workbench.sources.registration import register_format
from workbench.sources.sniffing import is_message, peek

NAME = "openai_messages"
KNOWN_ROLES = {"system", "developer", "user", "assistant", "tool", "function"}


def _looks_like_claude_or_codex(obj: Any) -> bool:
    return isinstance(obj, dict) and "type" in obj and ("payload" in obj or "message" in obj)


def _continuity_id(path: Path) -> str:
    name = path.name
    for suf in (".jsonl", ".json"):
        if name.lower().endswith(suf):
            return name[: -len(suf)]
    return path.stem


def _parse(ctx: ParseContext) -> list[ParsedContinuity]:
    expected = "a JSON list of {role, content} messages, an object with 'messages', or JSONL"
    data = ctx.read_bytes()
    if not data.strip():
        raise SourceError("file is empty", path=str(ctx.path), expected=expected)
    b = Builder(ctx)
    st = MessageState()
    meta: dict[str, Any] = {}
    doc: Any = None
    is_doc = False
    try:
        doc = orjson.loads(data)
        is_doc = True
    except orjson.JSONDecodeError as exc:
        if data.lstrip()[:1] == b"[" or b"\n" not in data.strip():
            raise SourceError(f"not valid JSON: {exc}", path=str(ctx.path),
                              line=getattr(exc, "lineno", None), expected=expected) from None
    if is_doc and is_message(doc) and len([ln for ln in data.split(b"\n") if ln.strip()]) == 1:
        is_doc = False  # a one-line JSONL file

    def mapper(m: Any, where: str) -> list[dict[str, Any]]:
        return message_events(m, where, b, st)

    if is_doc:
        if not is_message_list(doc):
            got = "an object without a 'messages' list" if isinstance(doc, dict) else type_name(doc)
            raise SourceError(f"top-level JSON is {got}", path=str(ctx.path), expected=expected)
        meta.update(pick(doc, model=str))
        lay = start_document(doc)
        msgs = lay.take_messages()
        lay.emit(b)
        b.record_elements(msgs, "messages", mapper)
    else:
        b.record_lines(mapper)
    rows = b.finish()
    return [ParsedContinuity(continuity_id=_continuity_id(ctx.path), source_format=NAME,
                             source_file=str(ctx.path), rows=rows, model=meta.get("model"),
                             meta={"container": "json" if is_doc else "jsonl"})]



def _sniff(path: Path, head_bytes: bytes) -> Detection:
    p = peek(path, head_bytes)
    if p.doc_ok:
        d = p.doc
        if isinstance(d, list):
            sample = d[:50]
            if sample and all(is_message(m) for m in sample):
                roles = {m["role"] for m in sample}
                if roles <= KNOWN_ROLES:
                    tools = any("tool_calls" in m or m["role"] == "tool" for m in sample)
                    return Detection(0.65 if tools else 0.6,
                                     f"JSON list of {len(d)} messages with roles {', '.join(sorted(roles))}")
                return Detection(0.3, "JSON list of role objects with unknown roles")
            return Detection(0.0, "JSON list whose items are not {role, content} messages")
        if isinstance(d, dict):
            msgs = d.get("messages")
            if isinstance(msgs, list) and msgs and all(is_message(m) for m in msgs[:50]):
                return Detection(0.5, "JSON object with a 'messages' list of role messages")
            return Detection(0.0, "JSON object without a 'messages' list")
        return Detection(0.0, "JSON scalar")
    if p.first_ok:
        f = p.first
        if _looks_like_claude_or_codex(f):
            return Detection(0.02, "JSONL with top-level 'type' and 'payload'/'message' (Claude Code/Codex)")
        if is_message(f) and "kind" not in f and "type" not in f:
            return Detection(0.55, "JSONL whose first record is a {role, content} message")
        return Detection(0.0, "JSONL whose first record is not a message")
    return Detection(0.0, "not JSON")


FORMAT = register_format(
    NAME, "OpenAI-style chat message list (JSON list, {messages: [...]}, or JSONL)",
    sniff=_sniff, parse=_parse,
    profile="as-recorded",  # a bare message list: no harness whose policy we know
    raw_joiner=None,  # JSON documents use the document layout; see roundtrip()
)
parse, sniff = FORMAT.parse, FORMAT.sniff
