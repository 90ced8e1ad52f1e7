"""No planted secret reaches a report in any encoding a reader or a browser decodes
(issue 26 item 2, issue 34 item 3).

Every report kind is rendered on one tiny run whose secrets are planted with every
transform the generator has (``workbench.synth.secrets.TRANSFORMS``), with a summarizer
that copies secrets as they appear (encoded, split, disguised) and a policy with SR-1 off,
so raw summarizer output reaches the report's text paths; the stored SR-1-off summaries are
then rewritten to quote the planted values in every encoding (a summarizer may write any),
among them the demo's case, a unicode-escaped copy cut short inside an escape (issue 26:
``\\u0054\\u006f\\u006b…`` in compaction-inspector.html). The HTML, the executed notebooks
and any Parquet a report writes are then scanned for every planted value in every encoding:
JSON and unicode escapes (``\\uXXXX``, ``\\\\uXXXX``, ``\\xXX``), HTML character references
(named, decimal, hex), percent-encoding, base64 / base32 / hex (also nested twice), and in
views of the artefact with zero-width characters removed, homoglyphs folded and lines
joined (also across diff lines).

The encoders are this suite's own (``tests/planted_encodings.py``: the standard library and
the generator's tables), independent of :mod:`workbench.redaction.normalize`, the code
under test.
"""

from __future__ import annotations

import html
import json
from pathlib import Path

import orjson
import polars as pl
import pytest
from planted_encodings import encoded_fragments, find_planted, planted_in

from workbench.synth import secrets as S

ENGINE = "kernel"
NO_SR1 = "llm-summary-no-sr1"
KINDS = ("policy-comparison", "redaction-audit", "determinism-audit", "compaction-inspector",
         "threshold-sweep", "fidelity")


# ---- the run ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def planted_run(tmp_path_factory):
    """A tiny coding dataset with two secrets per transform, two policies (one with SR-1
    off), the redaction audit with a summarizer that copies secrets as they appear (whole
    or in part) and SR-1-off summaries that quote every planted value in every encoding,
    a determinism audit's files and a threshold sweep."""
    from workbench.audits import redaction_audit
    from workbench.engine.presets import get_policy
    from workbench.engine.run import simulate
    from workbench.evaluate.determinism import run_hashes
    from workbench.sweep import runner
    from workbench.synth.generate import GeneratorConfig, generate_dataset

    root = tmp_path_factory.mktemp("encodings")
    ds = generate_dataset(GeneratorConfig(profile="coding", events=1500, seed=3,
                                          secrets=2 * len(S.TRANSFORMS) + 2), root / "ds")
    policies = ["llm-summary", get_policy("llm-summary", {"redaction.sr1_carry_forward": False}, rename=NO_SR1)]
    result = simulate(ds, policies, engine=ENGINE)
    run = result.write(root / "run")
    audit = redaction_audit(result, ds, baseline=False, summary_samples=1,
                            summarizer_options={"p_copy_secret": 0.6, "p_partial_secret": 0.4,
                                                "copy_form": "surface"})
    # the summarizer copies secrets as the generator disguised them; a summarizer may also
    # write them in any other encoding: every stored SR-1-off summary is rewritten as one a
    # summarizer could write, each planted value in turn in every encoding
    texts = audit.tables["texts.parquet"]
    copied = "\n".join(t for t in texts.filter(pl.col("policy") == NO_SR1)["text"].to_list() if t)
    values = _planted_values(Path(ds.path))
    mine = (pl.col("policy") == NO_SR1) & (pl.col("kind") == "summary")
    order = texts.with_row_index("_row").filter(mine)["_row"].to_list()
    rewritten = dict(zip(order, (encoded_summary(values[i % len(values)]) for i in range(len(order))), strict=True))
    audit.tables["texts.parquet"] = texts.with_columns(
        pl.Series("text", [rewritten.get(i, t) for i, t in enumerate(texts["text"])], dtype=pl.String))
    audit.write(run)
    hashes = run_hashes(result)
    pl.DataFrame([{"check": "repeat", "policy": p, "status": "pass", "detail": "same bytes"}
                  for p in hashes]).write_parquet(run / "determinism.parquet")
    (run / "determinism.json").write_bytes(orjson.dumps({"passed": True, "hashes": hashes}))
    spec = root / "sweep.yaml"
    spec.write_text(f"name: encodings\ndataset: {ds.path}\nbase: llm-summary\n"
                    f"parameters:\n  trigger.every_turns: [10, 30]\nseeds: [0]\nevaluate: true\n"
                    f"engine: {ENGINE}\ntokenizer: cl100k\n")
    runner.run_sweep(spec, root / "sweep", executor="serial")
    return {"root": root, "dataset": Path(ds.path), "run": run, "sweep": root / "sweep", "copied": copied}


def encoded_summary(value: str) -> str:
    """A summary that quotes a fragment of ``value`` in every encoding (this suite's own
    encoders), and the demo's case: a unicode-escaped copy cut short inside an escape."""
    lines = [f"- {encoding}: {sorted(pieces)[0]}" for encoding, pieces in encoded_fragments(value).items()
             if pieces]
    lines.append("- cut short: " + "".join(f"\\u{ord(c):04x}" for c in value[:12]) + "\\u00\u2026")
    return "Summary of the earlier work.\n" + "\n".join(lines)


def _planted_values(dataset: Path) -> list[str]:
    sec = pl.read_parquet(dataset / "secrets.parquet").filter(~pl.col("negative"))
    return sorted(set(sec["value"].to_list()))


def test_every_transform_is_planted_and_reaches_the_summaries(planted_run):
    """The test below means something: every transform is planted, and the SR-1-off
    summaries carry planted values in encoded forms the old guard did not decode."""
    sec = pl.read_parquet(planted_run["dataset"] / "secrets.parquet").filter(~pl.col("negative"))
    assert set(sec["transform"].to_list()) == set(S.TRANSFORMS)
    raw = planted_run["copied"]
    carried = {t for v, t in zip(sec["value"], sec["transform"], strict=True)
               if any(f in raw for f in encoded_fragments(v)["unicode_escape"] | encoded_fragments(v)["plain"])}
    assert "unicode_escape" in carried, "no unicode-escaped secret reached the SR-1-off summaries"
    # and the stored SR-1-off summaries the reports read hold every value in every encoding
    stored = pl.read_parquet(planted_run["run"] / "texts.parquet").filter(pl.col("policy") == NO_SR1)
    values = _planted_values(planted_run["dataset"])
    assert planted_in(stored["text"].to_list(), {v: encoded_fragments(v) for v in values[:3]})


@pytest.mark.parametrize("kind", KINDS)
def test_no_planted_value_in_any_encoding_in_a_report(planted_run, kind):
    from workbench.report.render import render_report

    run = planted_run["sweep"] if kind == "threshold-sweep" else planted_run["run"]
    kwargs = {}
    if kind == "fidelity":
        from workbench.evaluate.fidelity import fidelity_table

        fid = fidelity_table(planted_run["dataset"], engine=ENGINE)
        where = planted_run["root"] / "fidelity"
        where.mkdir(exist_ok=True)
        fid["summary"].write_parquet(where / "fidelity.parquet")
        fid["requests"].write_parquet(where / "fidelity_requests.parquet")
        kwargs["fidelity"] = where
    out = planted_run["root"] / "reports" / kind
    res = render_report(kind, run, out, **kwargs)
    written = sorted(p for p in out.rglob("*") if p.suffix in (".html", ".ipynb", ".parquet"))
    assert res.html in written and res.notebook in written
    values = _planted_values(planted_run["dataset"])
    fragments = {v: encoded_fragments(v) for v in values}
    assert not find_planted(written, fragments)


# ---- the scanner finds what it looks for ------------------------------------------------------
def test_the_scan_finds_each_encoding(tmp_path):
    """Each encoding of a value, written into an artefact, is found (the scan can fail)."""
    value = "AKIAQ7WE9RT2YU4IO6PA"
    page = tmp_path / "page.html"
    frags = encoded_fragments(value)
    for encoding, pieces in frags.items():
        assert pieces, encoding
        piece = sorted(pieces)[0]
        page.write_text(f"<pre>{html.escape(piece)}</pre>", encoding="utf-8")
        hits = find_planted([page], {value: {encoding: pieces}})
        assert hits, encoding
    # disguises: zero-width characters, homoglyphs, a split across (diff) lines
    disguised = [value[:5] + "\u200b" + value[5:], value.replace("A", "\u0410"),
                 "+k = " + value[:9] + "\n+" + value[9:], S.to_fullwidth(value)]
    for shown in disguised:
        page.write_text(f"<pre>{html.escape(shown)}</pre>", encoding="utf-8")
        assert find_planted([page], {value: {"plain": frags["plain"]}}), shown
    page.write_text("<pre>nothing planted here: AKIAIOSFODNN7EXAMPLE</pre>", encoding="utf-8")
    assert not find_planted([page], {value: frags})


def _values() -> list[str]:
    """One planted value per secret format (a PEM key included), and one nothing detects."""
    import numpy as np

    rng = np.random.default_rng(26)
    values = {}
    for fmt, context, transform in S.compatible_combinations():
        if transform == "none" and fmt not in values:
            values[fmt] = S.plant_secret(rng, fmt, context, transform).value
    return [*values.values(), "zq8Xw2Lm9Pk4Rt7Yv1Bn3Cd6"]


def test_the_guard_masks_every_encoding_of_a_planted_value():
    """The mask alone (no redaction harness): every planted value, in every encoding and
    disguise, shown whole, in part, or cut out of a longer encoding, is masked."""
    from workbench.report.textguard import PLANTED_MARKER, TextGuard

    values = _values()
    guard = TextGuard(values)
    for value in values:
        frags = encoded_fragments(value)
        k = len(value) // 2
        shown = [piece for pieces in frags.values() for piece in sorted(pieces)[:2]]
        shown += [value[:k] + "\u200b" + value[k:], "".join(S.HOMOGLYPHS.get(c, (c,))[0] for c in value),
                  S.to_fullwidth(value), value[:k] + "\n" + value[k:], "+x = " + value[:k] + "\n+" + value[k:],
                  json.dumps(json.dumps({"k": value})), html.escape(json.dumps({"k": value}))]
        for piece in shown:
            masked = guard.mask_known(f"Summary: it was {piece} (copied).")
            assert PLANTED_MARKER in masked, (value[:8], piece[:60])
            assert not planted_in([masked], {value: frags}), (value[:8], piece[:60], masked[:200])
        # all of them in one text (escapes elsewhere in it must not stop a run decoding)
        masked = guard.mask_known(encoded_summary(value))
        assert not planted_in([masked], {value: frags}), (value[:8], masked)
    assert guard.mask_known("nothing planted: AKIAIOSFODNN7EXAMPLE, 0123456789abcdef") == \
        "nothing planted: AKIAIOSFODNN7EXAMPLE, 0123456789abcdef"


def test_the_guard_masks_every_occurrence():
    """The same encoded value written twice decodes to the same text twice; both go."""
    from workbench.report.textguard import TextGuard

    value = "zq8Xw2Lm9Pk4Rt7Yv1Bn3Cd6"
    pieces = sorted(encoded_fragments(value)["base64"]) + sorted(encoded_fragments(value)["html_hex"])
    for piece in pieces[:2] + pieces[-2:]:
        masked = TextGuard([value]).mask_known(f"one {piece} two {piece} three")
        assert masked == "one <REDACTED:planted> two <REDACTED:planted> three", masked
