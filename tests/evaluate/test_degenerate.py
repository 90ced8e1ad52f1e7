"""Degenerate summaries (workbench.evaluate.degenerate) on hand-made texts, and their column
in the compaction table and count in the verdict."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.evaluate.degenerate import FLAGS, STOPWORDS, count_degenerate, degenerate_flags

GOOD = ("## Primary request and intent\nMove the api-gateway deploy to port 9443 and keep the "
        "rollback plan.\n\n## Key facts and decisions\n- The ticket is OPS-1142; the config lives in "
        "`deploy/gateway.yaml`.\n- Release 4.2.1 is the one to restore if the new port fails.\n\n"
        "## Current work and next step\nThe health check on 9443 passed; next, update the runbook.\n")


def flags(text, budget=400, span=4000):
    return degenerate_flags(text, budget_tokens=budget, span_tokens=span)


def test_a_good_summary_has_no_flag():
    assert flags(GOOD) == []


@pytest.mark.parametrize("text", ["", "   \n\t", None])
def test_empty(text):
    assert flags(text) == ["empty"]


def test_a_loop_is_repetitive():
    loop = "The user wants to deploy the gateway on port 9443. " * 15
    assert flags(loop) == ["repetitive"]
    lines = GOOD + "\n".join(["- Restore release 4.2.1."] * 6)
    assert "repetitive" in flags(lines)
    # a path listed twice in a long summary is not a loop
    assert flags(GOOD + "- `deploy/gateway.yaml`\n- `deploy/gateway.yaml`\n") == []


def test_cut_off_at_the_budget_is_truncated():
    cut = GOOD + "The runbook update is blocked because the"
    budget = len(cut) // 4  # the text used its whole budget and stops mid-sentence
    assert flags(cut, budget=budget) == ["truncated"]
    # the same text well under its budget stopped on purpose (a terse last line)
    assert flags(cut, budget=budget * 3) == []
    # a finished sentence at the budget is not cut
    assert flags(GOOD, budget=len(GOOD) // 4) == []
    # an unclosed code fence is cut whatever the budget
    assert flags(GOOD + "```python\nrestore('4.2.1')\n", budget=10_000) == ["truncated"]


def test_longer_than_the_span_it_replaced():
    assert flags(GOOD, span=len(GOOD) // 8) == ["longer_than_span"]
    assert flags(GOOD, span=None) == []


def test_wrong_language():
    french = ("L'utilisateur a demandé de déplacer le déploiement de la passerelle vers le port 9443. "
              "Le ticket est OPS-1142 et la configuration se trouve dans deploy/gateway.yaml. "
              "Si le nouveau port échoue, il faut restaurer la version 4.2.1. Le contrôle de santé "
              "est passé; ensuite, mettre à jour le guide d'exploitation pour l'équipe.")
    assert flags(french) == ["wrong_language"]
    chinese = "用户要求将网关部署迁移到端口9443，工单编号已经记录，配置文件在部署目录中。如果新端口失败，需要回滚到旧版本。"
    assert flags(chinese) == ["wrong_language"]
    # a short English note of values is not judged by stop words (too few words)
    assert flags("- port 9443\n- OPS-1142\n- deploy/gateway.yaml\n- release 4.2.1") == []


def test_several_flags_come_in_a_fixed_order():
    loop = "Le port est 9443 et le ticket est OPS-1142. " * 20
    assert flags(loop, span=10) == ["repetitive", "longer_than_span", "wrong_language"]


def test_counted_per_policy():
    table = pl.DataFrame({"policy": ["a", "a", "a", "b"],
                          "degenerate": [["repetitive", "truncated"], [], None, ["empty"]]},
                         schema={"policy": pl.String, "degenerate": pl.List(pl.String)})
    counts = count_degenerate(table)
    assert counts["a"]["degenerate_summaries"] == 1 and counts["a"]["summaries_judged"] == 2
    assert counts["a"]["degenerate_by_flag"] == {**dict.fromkeys(FLAGS, 0), "repetitive": 1, "truncated": 1}
    assert counts["b"]["degenerate_summaries"] == 1


def test_the_console_says_how_many(capsys):
    from workbench.report.console import print_evaluation

    by_flag = {**dict.fromkeys(FLAGS, 0), "repetitive": 3, "truncated": 1}
    report = {"summarizer": "http",
              "over_redaction": {"negatives_in_derived_text": 0, "harness": 0, "detect_secrets": None},
              "policies": {"p": {"sr1": True, "secrets": 1, "leaks": 0, "leaks_context": 0, "retention": 0.5}},
              "degenerate": {"p": {"degenerate_summaries": 3, "summaries_judged": 7, "degenerate_by_flag": by_flag},
                             "opaque": {"degenerate_summaries": 0, "summaries_judged": 0,
                                        "degenerate_by_flag": dict.fromkeys(FLAGS, 0)}}}
    print_evaluation(report)
    out = capsys.readouterr().out
    assert "degenerate summaries: p 3/7, truncated 1, repetitive 3" in out
    assert "opaque" not in out


# ---- the text checks, counted over arrays, against their plain definitions

def _plain_letters(body):
    letters = [ch for ch in body if ch.isalpha()]
    return len(letters), sum(1 for ch in letters if ch < "\u0250")


def _plain_words(body):
    import re

    return [w.lower() for w in re.findall(r"[^\W\d_]+", body)]


def _plain_repeated_grams(words):
    grams = [tuple(words[i:i + 4]) for i in range(len(words) - 3)]
    return len(grams) - len(set(grams))


_ALPHABET = ("abcdefghijklmnopqrstuvwxyzABCXYZ0129 _.,;:!?-\n\t`#*@[]{}" "éßÆİıſﬀ²½Ωж中文ΣΆ\u0307\u0301\ud800\U0001f600")


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list(_ALPHABET)), max_size=300)
       | st.text(max_size=200))
def test_counts_match_their_plain_definitions(body):
    from workbench.evaluate.degenerate import _words, letter_counts

    assert letter_counts(body) == _plain_letters(body)
    words = _words(body)
    assert words == _plain_words(body)
    if len(words) >= 4:
        distinct = len(set(zip(*(words[k:] for k in range(4)), strict=False)))
        assert (len(words) - 3) - distinct == _plain_repeated_grams(words)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["the", "port", "is", "le", "est", "de", "9443", "of", "and", "gateway",
                                 "\n", "- ", ". ", "Ωмега", "中文", "É"]), max_size=120))
def test_flags_match_their_plain_definitions(parts):
    text = " ".join(parts)
    body = text.strip()
    if not body:
        return
    letters, latin = _plain_letters(body)
    words = _plain_words(body)
    wrong = bool(letters) and (latin / letters < 0.5 or (
        len(words) >= 40 and sum(w in STOPWORDS for w in words) / len(words) < 0.04))
    lines = [ln.strip().lower() for ln in body.splitlines() if ln.strip()]
    rep_lines = len(lines) - len(set(lines))
    repetitive = (rep_lines >= 3 and rep_lines / len(lines) >= 1 / 3) or (
        len(words) >= 24 and _plain_repeated_grams(words) / (len(words) - 3) >= 0.5)
    got = flags(text, budget=None, span=None)
    assert ("wrong_language" in got) == wrong
    assert ("repetitive" in got) == repetitive


# ---- the judge (lines numbered once, 4-word sequences as integer codes) against the
# ---- checks it replaced (tests/evaluate/degenerate_oracle.py)

_LINES = st.lists(st.sampled_from(["the", "port", "is", "le", "est", "9443", "of", "and", "Gateway", "```", "~~~",
                                   "  ", "\t", "- ", "# ", ". ", ";", "Ωмега", "中文", "É", "\r", "\x0b", "\u2028",
                                   "\x1c", "\x0c"]),
                  max_size=12).map(" ".join)
_SUMMARY = st.lists(st.sampled_from(range(8)), max_size=60)


@settings(max_examples=300, deadline=None)
@given(st.lists(_LINES, min_size=8, max_size=8), st.lists(_SUMMARY, min_size=1, max_size=6),
       st.sampled_from([None, 0, 5, 60, 400]), st.sampled_from([None, 0, 10, 200]), st.booleans())
def test_the_judge_is_the_checks_it_replaced(lines, summaries, budget, span, wide):
    """Summaries drawn from a few shared lines (as a chain of summaries carries its lines
    forward), one judge for all of them: the flags of each equal the old checks'."""
    import degenerate_oracle as oracle

    from workbench.evaluate import degenerate as D

    judge = D.SummaryJudge()
    limit = D._FOUR_WORD_CODES
    try:
        if wide:  # the numbering of word pairs (for more distinct words than a code holds)
            D._FOUR_WORD_CODES = 0
        for picks in summaries:
            text = "\n".join(lines[i] for i in picks)
            got = judge.flags(text, budget_tokens=budget, span_tokens=span)
            assert got == oracle.degenerate_flags(text, budget_tokens=budget, span_tokens=span), text
    finally:
        D._FOUR_WORD_CODES = limit


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list(_ALPHABET)), max_size=400) | st.text(max_size=300),
       st.sampled_from([None, 3, 50]))
def test_flags_of_any_text_are_the_old_checks(text, budget):
    import degenerate_oracle as oracle

    for t in (text, text * 3, (text + "\n") * 5):
        assert flags(t, budget=budget, span=20) == oracle.degenerate_flags(t, budget_tokens=budget, span_tokens=20)


def test_the_real_summaries_are_judged_as_before():
    """Every readable summary of the reference-sized run (a folding chain, most lines
    carried), judged by one judge: the old checks' flags."""
    import tempfile

    import degenerate_oracle as oracle

    from workbench.engine.run import simulate
    from workbench.evaluate.degenerate import SummaryJudge
    from workbench.evaluate.texts import materialize_texts
    from workbench.synth.generate import GeneratorConfig, generate_dataset

    with tempfile.TemporaryDirectory() as tmp:
        ds = generate_dataset(GeneratorConfig(profile="coding", events=6000, seed=5), f"{tmp}/d")
        texts = materialize_texts(simulate(ds, ["llm-summary", "openclaw-flush"]), ds)
    summaries = texts.filter(pl.col("kind") == "summary")["text"].to_list()
    assert len(summaries) > 10
    judge = SummaryJudge()
    for budget, span in ((None, None), (len(summaries[-1]) // 4, 1000), (10, 10**6)):
        for text in summaries:
            assert judge.flags(text, budget_tokens=budget, span_tokens=span) == oracle.degenerate_flags(
                text, budget_tokens=budget, span_tokens=span)


@pytest.mark.parametrize("text, budget", [
    ("The port is 9443.\x1cThe port is 9443.\x1cThe port is 9443.\nok", None),  # splitlines breaks at \x1c
    ("a line\nthe port is 9443\x0cthe port is 9443\x0cthe port is 9443\x0cthe port", 2),
    ("- the port is 9443\r# heading\rthe rest of it runs on and on and on", 3),  # last line after \r
    ("the same line\n  The Same Line  \nthe same line\n\n\nthe same line\nother", None),  # blank lines
    ("first line\n# the last line starts a heading and runs on", 3),
])
def test_lines_counted_by_number_are_the_old_checks(text, budget):
    """The judge counts a summary's repeated lines and reads its last line from its ``\\n``
    lines only when those are ``splitlines``' (ASCII, no other break): the old checks'."""
    import degenerate_oracle as oracle

    from workbench.evaluate.degenerate import SummaryJudge

    judge = SummaryJudge()
    for t in (text, text + "\n" + text):
        assert judge.flags(t, budget_tokens=budget, span_tokens=None) == oracle.degenerate_flags(
            t, budget_tokens=budget, span_tokens=None), t
