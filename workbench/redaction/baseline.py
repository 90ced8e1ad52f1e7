"""detect-secrets 1.5 as a baseline, run in-process, with spans located by us.

detect-secrets is line-based and reports *values*, not offsets: ``scan_line`` yields
``PotentialSecret`` objects whose ``secret_value`` we look up in the line ourselves (every
occurrence). Its plugins only run inside ``default_settings()``/``transient_settings()``,
and for ad-hoc scans the high-entropy plugins return every token, so we apply their entropy
limit here exactly as the plugin would (``entropy > limit``). Known behaviour this
reproduces faithfully: GitHub tokens reported as ``'ghp'``, PEM as the header line only,
JWTs without the signature, many hex ids flagged; no normalisation and no decoding.
Each distinct line is scanned once per process (its findings are remembered by its text).

>>> r = detect_secrets_scan(["key = 'AKIAQ7WE9RT2YU4IO6PA'"])[0]
>>> ("AWS Access Key", "AKIAQ7WE9RT2YU4IO6PA") in r.values
True
>>> r.spans[0][:2]
(7, 27)
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

Span = tuple[int, int, str]


@dataclass(frozen=True)
class BaselineResult:
    spans: tuple[Span, ...]              # located occurrences, merged, in text coordinates
    values: tuple[tuple[str, str], ...]  # (detect-secrets type, value) as reported


def _merge(spans: list[Span]) -> list[Span]:
    out: list[list] = []
    for s, e, k in sorted(spans, key=lambda t: (t[0], -t[1])):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e, k])
    return [(s, e, k) for s, e, k in out]


# detect-secrets judges each line on its own, so a line's findings are remembered by its text
# (summaries carry earlier summaries' lines forward; filler repeats event lines)
_LINE_MEMO: dict[str, tuple[tuple[str, str], ...]] = {}
LINE_MEMO_LIMIT = 500_000


def _scan_lines(lines: list[str]) -> None:
    """Fill the memo for ``lines`` (every default plugin, the entropy limit applied)."""
    from detect_secrets.core.scan import scan_line
    from detect_secrets.settings import default_settings, get_plugins

    if len(_LINE_MEMO) + len(lines) > LINE_MEMO_LIMIT:
        _LINE_MEMO.clear()
    with default_settings():
        entropy = {p.secret_type: p for p in get_plugins() if hasattr(p, "entropy_limit")}
        for line in lines:
            found = []
            for sec in scan_line(line):
                v = sec.secret_value
                if not v:
                    continue
                plugin = entropy.get(sec.type)
                if plugin is not None and not (plugin.calculate_shannon_entropy(v) > plugin.entropy_limit):
                    continue
                found.append((sec.type, v))
            _LINE_MEMO[line] = tuple(found)


def detect_secrets_scan(texts: Iterable[str]) -> list[BaselineResult]:
    """Scan each text line by line with every default detect-secrets plugin."""
    texts = list(texts)
    split = [text.split("\n") for text in texts]
    new = list(dict.fromkeys(line for lines in split for line in lines
                             if line.strip() and line not in _LINE_MEMO))
    if new:
        _scan_lines(new)
    results: list[BaselineResult] = []
    for lines in split:
        spans: list[Span] = []
        values: list[tuple[str, str]] = []
        pos = 0
        for line in lines:
            if line.strip():
                found = _LINE_MEMO.get(line)
                if found is None:  # the memo was emptied while filling it
                    _scan_lines([line])
                    found = _LINE_MEMO[line]
                for kind, v in found:
                    values.append((kind, v))
                    i = line.find(v)
                    while i != -1:
                        spans.append((pos + i, pos + i + len(v), kind))
                        i = line.find(v, i + 1)
            pos += len(line) + 1
        results.append(BaselineResult(spans=tuple(_merge(spans)), values=tuple(values)))
    return results


def detect_secrets_redact(texts: Iterable[str]) -> list[str]:
    """Texts with every located detect-secrets value replaced by ``<REDACTED:detect_secrets>``."""
    texts = list(texts)
    out = []
    for text, res in zip(texts, detect_secrets_scan(texts), strict=True):
        pieces, last = [], 0
        for s, e, _ in res.spans:
            pieces += [text[last:s], "<REDACTED:detect_secrets>"]
            last = e
        pieces.append(text[last:])
        out.append("".join(pieces))
    return out


def detect_secrets_redact_one(text: str) -> str:
    """:func:`detect_secrets_redact` of one text."""
    return detect_secrets_redact([text])[0]
