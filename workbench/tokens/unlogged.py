"""What a harness sends that its log does not show, estimated from the log alone (no usage).

A replay without the log's own usage (the fidelity audit's ``loo_unanchored`` line) decides
when to compact on its own estimate of the prompt. On Claude Code logs that estimate was low
or high by tens of thousands of tokens for reasons the log itself can tell
(docs/fidelity-findings.md, "Unanchored compaction positions"):

* **Attachments.** A user turn that mentions a file (``@src/notes.md``) sends the file's
  content with the turn; Claude Code does not write it to the log. When the log holds the
  whole file elsewhere (a ``Read`` of the same path without ``offset``/``limit``), its
  counted tokens less the growth of the ``Edit`` calls made in between are the estimate
  (:func:`mention_attachments`); else nothing is added.
* **Thinking of earlier turns.** Anthropic's API leaves out the thinking blocks of earlier
  assistant turns once a user turn that is not a tool result follows them (documented in
  the extended-thinking guide): they are in the log, not in the prompt
  (:func:`dropped_thinking`).
* **Hook denials.** A ``PreToolUse`` hook that denies a call sends its reason once more, as a
  system reminder the 2.1 log does not hold (:mod:`workbench.sources.claude_code_hooks`): the
  reminder's counted tokens join the call's error result (:func:`denial_attachments`).
* **Tool definitions a model without tool search gets.** Claude Code defers tool definitions
  behind its tool search; "Haiku models do not support tool search" (Claude Code's tool-search
  documentation, code.claude.com/docs/en/agent-sdk/tool-search), so a request served by Haiku
  carries them in full: a constant more prefix, fitted as the first-request prefix of the
  Haiku logs less that of the others of their kind (main session, sub-agent)
  (:func:`tool_search_offset`), and added where a session switches to such a model (a skill's
  ``model:``, ``/model``; the import's ``model_runs``; :func:`model_switches`).
* **Per-request framing.** Each call appends tool-use/tool-result blocks, ids and role
  framing that no text event holds: a constant number of tokens per request, fitted.
* **Files restored after a compaction.** The first call after a compaction sends more than
  the summary (Claude Code re-attaches files read before it): a constant per compaction,
  fitted on the other logs' compactions (``restored_tokens``; on a recorded summary).

The growth model (:func:`fit_growth`) is ``prompt ≈ a + b·sent + c·k``: ``sent`` the counted
tokens the request sends (attachments in, dropped thinking out), ``k`` the requests since the
stretch began. ``b`` and ``c`` come from the increments between consecutive requests of one
stretch (the unseen prefix cancels out; a robust line, every increment one observation), ``a``
from each log's first request, median over logs.

>>> import numpy as np
>>> kind = np.array([1, 4, 1, 3, 1, 4])      # user, thinking, assistant, result, user, thinking
>>> user = np.array([1, 0, 0, 0, 1, 0], bool)
>>> dropped_thinking(kind, user).tolist()     # the first thinking is followed by a user turn
[False, True, False, False, False, False]
>>> MENTION.findall("@src/a.md review it, and @moduledoc is a tag")
['src/a.md']
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

REASONING = 4  # workbench.continuity.enums.EventKind.REASONING (kept literal: no enum import here)
# a mention of a file path: "@" at a word start, a path whose last part has an extension
MENTION = re.compile(r"(?:^|(?<=\s))@((?:[\w.~-]+/)*[\w-][\w.-]*\.[A-Za-z0-9]+)\b")
# harnesses whose logs name attached files with "@path" in the user's text
MENTIONING_HARNESSES = ("claude_code",)
# harnesses whose logs were checked against their recorded usage for what they leave out
# (docs/fidelity-findings.md); on Cline and Roo Code the growth model was worse than a + b·counted
GROWTH_HARNESSES = ("claude_code",)
MIN_INCREMENTS = 5  # a growth fit needs this many increments in all


def drops_thinking(model: str | None) -> bool:
    """Whether the model's provider leaves earlier turns' thinking out of the prompt
    (Anthropic's rule; other providers' reasoning is either encrypted or not logged)."""
    return bool(model) and model.rsplit("/", 1)[-1].lower().startswith("claude")


def dropped_thinking(kind: np.ndarray, is_user_message: np.ndarray) -> np.ndarray:
    """Reasoning rows a later user message (not a tool result) follows: once that turn is
    sent the provider no longer counts them (the static view: a row counts fully up to its
    turn's end and nothing after)."""
    kind = np.asarray(kind)
    user = np.asarray(is_user_message, bool)
    users_after = np.cumsum(user[::-1])[::-1]  # user messages at or after each row
    return (kind == REASONING) & (users_after > 0) & ~user


def dropped_before(kind: np.ndarray, is_user_message: np.ndarray, lo: int, fo: int) -> np.ndarray:
    """Rows of ``[lo, fo)`` that a request whose first output row is ``fo`` does not send:
    reasoning with a user message after it and before ``fo``."""
    k = np.asarray(kind)[lo:fo]
    u = np.asarray(is_user_message, bool)[lo:fo]
    return dropped_thinking(k, u)


def _args(text: str | None) -> dict:
    import orjson

    try:
        args = orjson.loads(text) if text else None
    except orjson.JSONDecodeError:
        return {}  # a call whose input is not JSON names no path
    return args if isinstance(args, dict) else {}


# a Read result's line-number gutter ("   12→"): the attachment shows it too, per line
_GUTTER = re.compile(r"(?m)^ *\d+→")


def _same_file(path: str, rel: str) -> bool:
    return path == rel or path.endswith("/" + rel.lstrip("./"))


def mention_attachments(texts: list, kinds: np.ndarray, roles: np.ndarray, names: list, call_ids: list,
                        tokens: np.ndarray, count=None, *, user_role: int = 2, call_kind: int = 2,
                        result_kind: int = 3, message_kind: int = 1) -> dict[int, int]:
    """``{row: counted tokens}`` for one continuity's rows: each user message that mentions a
    file whose whole content the log holds in a ``Read`` result gets that result's tokens
    (the whole read nearest the mention; each path counted once per message). ``count``
    (texts -> token counts) undoes the ``Edit`` calls the log made to the file between the
    mention and the read: their new text less their old text, with the gutter of the lines
    they add (what the read shows per line). A ``Write`` in between leaves the size unknown:
    no estimate."""
    reads: list[tuple[int, str, int, str]] = []  # (row, path, tokens, text) of whole Reads
    edits: list[tuple[int, str, str, str]] = []  # (row, path, old, new); new None: a Write
    result_rows = {cid: i for i, (k, cid) in enumerate(zip(kinds.tolist(), call_ids, strict=True))
                   if k == result_kind and cid}
    for i, (k, nm) in enumerate(zip(kinds.tolist(), names, strict=True)):
        if k != call_kind or nm not in ("Read", "Edit", "MultiEdit", "Write"):
            continue
        args = _args(texts[i])
        path = str(args.get("file_path") or "")
        if not path:
            continue
        if nm == "Read":
            res = result_rows.get(call_ids[i])
            if res is not None and args.get("offset") is None and args.get("limit") is None:
                reads.append((i, path, int(tokens[res]), texts[res] or ""))
        elif nm == "Write":
            edits.append((i, path, "", None))
        else:
            for e in (args.get("edits") or []) if nm == "MultiEdit" else [args]:
                if isinstance(e, dict):
                    edits.append((i, path, str(e.get("old_string") or ""), str(e.get("new_string") or "")))
    out: dict[int, int] = {}
    if not reads:
        return out
    for i, (k, r) in enumerate(zip(kinds.tolist(), roles.tolist(), strict=True)):
        if k != message_kind or r != user_role or not texts[i]:
            continue
        total = 0
        for rel in dict.fromkeys(MENTION.findall(texts[i])):
            hits = sorted((abs(row - i), row, t, text) for row, p, t, text in reads if _same_file(p, rel))
            if not hits:
                continue
            _d, row, size, text = hits[0]
            between = [e for e in edits if _same_file(e[1], rel) and min(i, row) < e[0] < max(i, row)]
            if any(new is None for *_x, new in between):
                continue  # rewritten in between: its size at the mention is unknown
            if between and count is not None:
                lines = text.count("\n") + 1
                gutter = (size - int(count([_GUTTER.sub("", text)])[0])) / lines
                old = [o for *_x, o, _n in between]
                new = [n for *_x, n in between]
                grown = (int(count(new).sum()) - int(count(old).sum())
                         + gutter * (sum(t.count("\n") for t in new) - sum(t.count("\n") for t in old)))
                size -= int(round(grown)) if row > i else -int(round(grown))
            total += max(size, 0)
        if total:
            out[i] = total
    return out


def searches_tools(model: str | None) -> bool:
    """Whether Claude Code's tool search serves the model (deferred tool definitions stay out
    of its prompt): every Claude model but Haiku (the tool-search documentation)."""
    name = (model or "").rsplit("/", 1)[-1].lower()
    return not (name.startswith("claude") and "haiku" in name)


def tool_search_offset(firsts: dict[str, tuple[float, bool, bool]]) -> float:
    """The prefix a model without tool search carries beyond one with it, from ``{log:
    (first request's unseen prefix, served without tool search, a sub-agent)}``: per kind
    (main sessions, sub-agents) with logs on both sides, the median without less the median
    with; the median over kinds (0 when no kind has both; never below 0).

    >>> tool_search_offset({"a": (17_800, True, True), "b": (13_300, False, True),
    ...                     "c": (13_700, False, True), "d": (25_800, False, False)})
    4300.0
    """
    diffs = []
    for sub in (False, True):
        without = [a for a, no, s in firsts.values() if s == sub and no]
        with_ = [a for a, no, s in firsts.values() if s == sub and not no]
        if without and with_:
            diffs.append(float(np.median(without)) - float(np.median(with_)))
    return max(0.0, float(np.median(diffs))) if diffs else 0.0


def model_switches(ds) -> dict[str, list[tuple[int, bool]]]:
    """Per continuity id of a session that switched model (the import's ``model_runs``):
    ``[(seq of the first output row of the run's first request, served without tool search)]``."""
    from workbench.continuity.enums import EventFlag
    from workbench.sources.claude_code import MODEL_RUNS

    metas = (ds.manifest.get("import") or {}).get("continuities") or {}
    runs = {cid: m[MODEL_RUNS] for cid, m in metas.items() if isinstance(m, dict) and m.get(MODEL_RUNS)}
    if not runs:
        return {}
    import polars as pl

    conts = ds.continuities().filter(pl.col("continuity_id").is_in(list(runs)))
    num = dict(zip(conts["continuity_id"].to_list(), conts["continuity"].to_list(), strict=True))
    ev = (ds.events(columns=["continuity", "seq", "request", "flags"])
          .filter(pl.col("continuity").is_in(list(num.values()))
                  & ((pl.col("flags") & int(EventFlag.OUTPUT)) != 0) & (pl.col("request") >= 0))
          .group_by("continuity", "request").agg(pl.col("seq").min()))
    first = {(c, r): s for c, r, s in ev.iter_rows()}
    out: dict[str, list[tuple[int, bool]]] = {}
    for cid, rs in runs.items():
        for req, model in rs:
            seq = first.get((num.get(cid), int(req)))
            if seq is not None:
                out.setdefault(cid, []).append((int(seq), not searches_tools(model)))
    return out


def denial_attachments(texts: list, kinds: np.ndarray, call_ids: list, denials: dict[str, dict[str, str]],
                       count, *, result_kind: int = 3) -> dict[int, int]:
    """``{row: counted tokens}``: each call a hook denied (``denials``, the import's
    :func:`~workbench.sources.claude_code_hooks.hook_denials` of one continuity) gets the
    system reminder Claude Code sent with its error result, at that result's row."""
    from workbench.sources.claude_code_hooks import reminder

    rows, notes = [], []
    for i, (k, cid) in enumerate(zip(kinds.tolist(), call_ids, strict=True)):
        if k == result_kind and cid in denials and cid not in notes:
            rows.append(i)
            notes.append(cid)
    if not rows:
        return {}
    counts = count([reminder(denials[c], texts[i]) for i, c in zip(rows, notes, strict=True)])
    return {i: int(t) for i, t in zip(rows, counts.tolist(), strict=True)}


def fit_growth(logs: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]) -> dict[str, Any] | None:
    """``{prefix_tokens, factor, per_request_tokens}`` fitted on ``{log: (sent, recorded,
    k, stretch)}`` (per request with recorded usage, in request order); None when the logs
    hold fewer than :data:`MIN_INCREMENTS` increments or the slope is implausible."""
    from workbench.sources.calibrate import PLAUSIBLE_FACTOR, robust_line

    dx, dy = [], []
    for sent, rec, k, stretch in logs.values():
        same = (stretch[1:] == stretch[:-1]) & (np.diff(k) == 1)  # consecutive requests of one stretch
        dx.append((sent[1:] - sent[:-1])[same])
        dy.append((rec[1:] - rec[:-1])[same])
    dx_all = np.concatenate(dx) if dx else np.zeros(0)
    if dx_all.size < MIN_INCREMENTS:
        return None
    per_request, factor = robust_line(dx_all, np.concatenate(dy))
    lo, hi = PLAUSIBLE_FACTOR
    if not (np.isfinite(factor) and lo <= factor <= hi):
        return None
    per_request = max(0.0, float(per_request))
    firsts = [float(rec[0] - factor * sent[0]) for sent, rec, _k, _s in logs.values() if sent.size]
    prefix = max(0.0, float(np.median(firsts)))
    # what the first request after a compaction sends beyond the prefix and the summary
    # (Claude Code re-attaches files read before it): the median over the logs' compactions
    after = [float(rec[i] - prefix - factor * sent[i]) for sent, rec, k, stretch in logs.values()
             for i in np.flatnonzero((k == 0) & (stretch != stretch[0])).tolist()]
    return {"prefix_tokens": round(prefix, 1), "factor": round(float(factor), 4),
            "per_request_tokens": round(per_request, 1),
            "restored_tokens": round(max(0.0, float(np.median(after))), 1) if after else 0.0,
            "fitted_on": sorted(logs), "increments": int(dx_all.size)}


def predict(fit: dict[str, Any], sent: np.ndarray, k: np.ndarray, stretch: np.ndarray | None = None) -> np.ndarray:
    """The growth model's prompt per request (``stretch``: the restored files after a
    compaction count from the second stretch on)."""
    out = fit["prefix_tokens"] + fit["factor"] * np.asarray(sent, np.float64) + fit["per_request_tokens"] * k
    if stretch is not None and stretch.size:
        out = out + fit.get("restored_tokens", 0.0) * (stretch != stretch[0])
    return out


def growth_points(ds, tokenizer: str = "cl100k") -> tuple[dict[str, tuple], dict[str, list[tuple[int, int]]]]:
    """Per continuity id: ``(sent, recorded, k, stretch)`` per request with recorded usage
    whose context the log holds (the requests :func:`workbench.sources.calibrate.calibration_points`
    fits on): counted tokens sent (attachments in, dropped thinking out), recorded prompt,
    requests since the stretch began, the stretch's first row; and per continuity id its
    attachments, ``[(seq of the mentioning message or the denied call's result, counted tokens)]``."""
    from workbench.continuity.enums import EventKind, Origin, Role
    from workbench.sources.calibrate import (
        ANCHOR_ROLES,
        CONTEXT_KINDS,
        NOT_CONTEXT_NAMES,
        _ContextSums,
        _request_windows,
    )

    cols = ["continuity", "seq", "kind", "role", "origin", "flags", "request", "name", "call_id", "text",
            "usage_input", "usage_cache_read", "usage_cache_write", f"tokens_{tokenizer}"]
    ev = ds.events(columns=cols).sort("continuity", "seq")
    conts = ds.continuities().sort("continuity")
    ids = conts["continuity_id"].to_list()
    fmt = dict(zip(conts["continuity"].to_list(), conts["source_format"].to_list(), strict=True))
    thinking_dropped = {c for c, m in zip(conts["continuity"].to_list(), conts["model"].to_list(), strict=True)
                        if drops_thinking(m)}
    kind, role = ev["kind"].to_numpy(), ev["role"].to_numpy()
    cont, origin = ev["continuity"].to_numpy(), ev["origin"].to_numpy()
    names = ev["name"].to_list()
    tokens = ev[f"tokens_{tokenizer}"].to_numpy().astype(np.int64)
    context = np.isin(kind, [int(k) for k in CONTEXT_KINDS]) & ~np.isin(np.asarray(names, dtype=object),
                                                                         list(NOT_CONTEXT_NAMES))
    user = (kind == int(EventKind.MESSAGE)) & (role == int(Role.USER))
    anchor = context & (((kind == int(EventKind.MESSAGE)) & np.isin(role, [int(r) for r in ANCHOR_ROLES]))
                        | (kind == int(EventKind.SUMMARY)))
    extra = np.zeros(tokens.size, np.int64)
    starts = np.flatnonzero(np.concatenate([[True], cont[1:] != cont[:-1]])) if cont.size else np.zeros(0, int)
    ends = np.append(starts[1:], cont.size)
    from workbench.tokens.tokenizers import count_texts

    def count(strings: list[str]) -> np.ndarray:
        return count_texts(strings, tokenizer)

    from workbench.sources.claude_code_hooks import hook_denials

    texts, call_ids = ev["text"].to_list(), ev["call_id"].to_list()
    seqs = ev["seq"].to_numpy()
    denied = hook_denials(ds.manifest)
    attached: dict[str, list[tuple[int, int]]] = {}
    for s, e in zip(starts.tolist(), ends.tolist(), strict=True):
        cid = ids[int(cont[s])]
        found: dict[int, int] = {}
        if fmt.get(int(cont[s])) in MENTIONING_HARNESSES:
            found = mention_attachments(texts[s:e], kind[s:e], role[s:e], names[s:e], call_ids[s:e],
                                        tokens[s:e], count)
        if cid in denied:
            for row, t in denial_attachments(texts[s:e], kind[s:e], call_ids[s:e], denied[cid], count).items():
                found[row] = found.get(row, 0) + t
        for row, t in sorted(found.items()):
            extra[s + row] = t
            attached.setdefault(cid, []).append((int(seqs[s + row]), int(t)))
    flags = ev["flags"].to_numpy()
    counted = _ContextSums(tokens + extra, flags, context)  # main chain and side chain apart
    side = counted.side
    reasoning = context & (kind == REASONING)
    windows = _request_windows(cont, kind, flags, ev["request"].to_numpy(),
                               ev["usage_input"].to_numpy(), ev["usage_cache_read"].to_numpy(),
                               ev["usage_cache_write"].to_numpy())
    out: dict[int, list[tuple[int, int, int, int]]] = {}
    for c, req, u, lo, fo, recorded in windows:
        if recorded <= 0 or origin[u] == int(Origin.BACKGROUND) or not anchor[lo:fo].any():
            continue
        sent = counted.between(lo, fo)
        if c in thinking_dropped and reasoning[lo:fo].any():
            chain = side == side[fo]
            gone = dropped_before(np.where(chain, kind, -1), user & chain, lo, fo)
            sent -= int(tokens[lo:fo][gone].sum())
        out.setdefault(c, []).append((sent, recorded, req, lo))
    res = {}
    for c, pts in out.items():
        sent, rec = (np.array(v, np.float64) for v in list(zip(*pts, strict=True))[:2])
        req, lo = (np.array(v, np.int64) for v in list(zip(*pts, strict=True))[2:])
        first: dict[int, int] = {}
        k = np.array([req[i] - first.setdefault(int(lo[i]), int(req[i])) for i in range(req.size)], np.int64)
        res[ids[c]] = (sent, rec, k, lo)
    return res, attached
