"""Leakage, retention, over-redaction and the derived texts are the tables the implementation
before the one-pass leak search produced, row for row.

The golden files were written by that implementation (first at commit 2762384; written again
by it at commit eff16a0, the same evaluation code, when the secret generator gained the
command-line and header formats and a policy threshold had to lie inside its window),
detect-secrets baseline on:

* ``demo-audit.json``: the demo's text-level audit set (coding, seed 2) at 2,000 events,
  every preset, the modelled summarizer with its defaults (what ``make demo`` audits);
* ``leaky-summarizer.json``: 2,500 events with 40 secrets and 12 facts, small windows so
  there are many compactions and flushes, and a summarizer that copies, truncates,
  hallucinates and wraps secrets often (SR-1 on and off, flush memory, masking).

Derived texts are compared by a digest of each row (text and raw text hashed). Their
``artifact_id`` column was rewritten once, when artifact ids became the hash of the
artifact's document (ADR-0011, issue 20): every other field of every row was checked to be
the golden's before the ids were replaced.

Issue 26 moved one row of ``demo-audit.json``: ``openai-responses-compact``'s second compaction
item now replaces the first (OpenAI's compaction guide: the latest item carries the context), so
it covers from the first span's start (``from_seq`` 1, not 1019) and is ``clamp(0.05 x (7,982 +
151,647)) = 7,981`` tokens: a new artifact id and text digest; every other row, the leakage,
retention and headline tables included, is unchanged.

The shared normalization of issue 26/34 (escapes, HTML references, base32, splits) moved, each
checked by hand against the old and new runs: ``demo-audit.json``'s openhands-default text row 18
(a cut-short ``\\u006…`` after a redaction marker is now redacted: it was part of the copied
secret); in ``leaky-summarizer.json`` two partial base64 copies whose length is one more than a
multiple of 4 (173 and 17 characters) now decode and leak (leakage rows 185 and 337, so sr1-off's
``leaks_context`` 34 -> 35), and texts rows 19 and 125 lose a cut-short escape, which SR-1 carries
into openclaw-flush's later summaries (texts rows 127-149; retention row 285 memory -> summary).

Issue 27 item 5 added the task state's retention to every policy's headline
(``task_retention``): ``null`` in both goldens, whose datasets plant no task state; every
other figure is unchanged.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import polars as pl
import pytest

from workbench.engine.presets import PRESETS, get_policy
from workbench.engine.run import simulate
from workbench.evaluate.pipeline import evaluate_run
from workbench.synth.generate import GeneratorConfig, generate_dataset

GOLDEN = Path(__file__).parent / "golden"


def _leaky_policies():
    small = {"provider.context_window": 25_000}
    return [get_policy("llm-summary", small, rename="sr1-on"),
            get_policy("llm-summary", {**small, "redaction.sr1_carry_forward": False}, rename="sr1-off"),
            get_policy("openclaw-flush", {"provider.context_window": 30_000}),
            get_policy("claude-code", {**small, "trigger.reserve_tokens": 4_125})]  # 33k scaled to 25k


# the presets the demo-audit golden was written on (presets added since have no golden rows)
GOLDEN_PRESETS = ("no-compaction", "as-recorded", "claude-code", "codex-local", "codex-remote",
                  "openhands-default", "openhands-sdk", "observation-masking", "llm-summary", "hybrid",
                  "anthropic-clear-tool-uses", "anthropic-compact", "openai-responses-compact",
                  "openclaw-flush", "letta", "langchain-summarization", "rip-adr0011")

CASES = {
    "demo-audit": lambda: [PRESETS[name] for name in GOLDEN_PRESETS],
    "leaky-summarizer": _leaky_policies,
}


def _rows(frame: pl.DataFrame, columns: list[str]) -> list[list]:
    return [list(r) for r in frame.select(columns).rows()]


def _text_digests(texts: pl.DataFrame) -> list[list]:
    def h(t):
        return None if t is None else hashlib.sha256(t.encode()).hexdigest()[:16]

    out = []
    for r in texts.drop("run_id").to_dicts():
        r["text"], r["text_raw"] = h(r["text"]), h(r["text_raw"])
        blob = json.dumps(r, sort_keys=True, ensure_ascii=False).encode()
        out.append([r["policy"], r["artifact_id"], hashlib.sha256(blob).hexdigest()[:16]])
    return out


@pytest.fixture(scope="module", params=sorted(CASES))
def case(request, tmp_path_factory):
    name = request.param
    golden = json.loads((GOLDEN / f"{name}.json").read_text(encoding="utf-8"))
    ds = generate_dataset(GeneratorConfig(**golden["dataset"]), tmp_path_factory.mktemp(name) / "ds")
    result = simulate(ds, CASES[name]())
    ev = evaluate_run(result, ds, summarizer_options=golden["summarizer_options"], baseline=True)
    return name, golden, ev


def _as_recorded_is_no_compaction(want: dict) -> dict:
    """Issue 20: on a generated set (no recorded compaction) as-recorded replays exactly as
    no-compaction, so its expected rows are no-compaction's pre-change rows under its name
    (the golden was written while as-recorded truncated without a pinned head)."""
    cols = want["columns"]
    if "policy" not in cols:
        return want
    k = cols.index("policy")
    rows = [r for r in want["rows"] if r[k] != "as-recorded"]
    same = [[*r[:k], "as-recorded", *r[k + 1:]] for r in want["rows"] if r[k] == "no-compaction"]
    order = {p: i for i, p in enumerate(dict.fromkeys(r[k] for r in want["rows"]))}
    merged = rows + same
    merged.sort(key=lambda r: order[r[k]])  # stable: each policy's rows keep their order
    return {"columns": cols, "rows": merged}


@pytest.mark.slow
@pytest.mark.parametrize("table", ["leakage", "retention", "over_redaction"])
def test_tables_are_the_pre_change_tables(case, table):
    name, golden, ev = case
    want = _as_recorded_is_no_compaction(golden[table]) if name == "demo-audit" else golden[table]
    have = _rows(ev[table], want["columns"]) if want["columns"] else _rows(ev[table], [])
    assert len(have) == len(want["rows"]), (name, table)
    for i, (h, w) in enumerate(zip(have, want["rows"], strict=True)):
        assert h == w, (name, table, i, dict(zip(want["columns"], w, strict=True)))


@pytest.mark.slow
def test_derived_texts_are_the_pre_change_texts(case):
    name, golden, ev = case
    assert _text_digests(ev["texts"]) == golden["texts"]["rows"], name


@pytest.mark.slow
def test_headline_is_the_pre_change_headline(case):
    name, golden, ev = case
    # "degenerate" is newer than these goldens (tests/evaluate/test_degenerate.py checks it)
    report = {k: v for k, v in ev["report"].items() if k not in ("run_id", "leaks_measured", "degenerate")}
    assert report == golden["report"], name
    assert ev["report"]["leaks_measured"] is True  # planted secrets: leakage is measured
