"""The definition of a paraphrased fact (workbench/synth/fact_forms.py): alternate forms
never hold the exact answer, every form is recognised, other numbers and words are not,
and the normal-form pre-filter never drops a match."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.evaluate.matching import FormIndex
from workbench.synth.fact_forms import alternate_forms, form_pattern, normal_form, number_words
from workbench.synth.facts import FACT_KINDS, plant_fact


def _facts(n=400, seed=5):
    rng = np.random.default_rng(seed)
    return [plant_fact(rng, i) for i in range(n)]


def test_every_kind_has_forms_none_holding_the_answer_and_each_recognised():
    seen = set()
    for f in _facts():
        forms = alternate_forms(f.kind, f.answer)
        assert forms, (f.kind, f.answer)
        seen.add(f.kind)
        pattern = form_pattern(f.kind, f.answer)
        for form in forms:
            text = f"As noted: {form}; carry on."
            assert f.answer not in text
            m = pattern.search(text)
            assert m, (f.kind, f.answer, form)
            assert normal_form(m.group(0)) in normal_form(text)
    assert seen == set(FACT_KINDS)


@pytest.mark.parametrize("kind, answer, text, found", [
    ("date", "2026-03-05", "the freeze starts on March 5, 2026.", True),
    ("date", "2026-03-05", "the freeze starts 5 march 2026", True),
    ("date", "2026-03-05", "dated 2026/03/05", True),
    ("date", "2026-03-05", "on March 15, 2026", False),
    ("port", "6432", "listens on 6,432", True),
    ("port", "6432", "listens on six thousand four hundred thirty-two", True),
    ("port", "6432", "listens on 16432", False),
    ("numeric_constant", "800", "a timeout of eight hundred ms", True),
    ("numeric_constant", "800", "raised to 1800 ms", False),
    ("numeric_constant", "800", "8,000 rows", False),
    ("owner", "Alice Moreau", "ask Moreau, Alice", True),
    ("owner", "Alice Moreau", "ask A. Moreau", True),
    ("owner", "Alice Moreau", "ask alice moreau", True),
    ("owner", "Alice Moreau", "ask Alice Moreaux", False),
    ("codename", "Copper Finch", "codename copper-finch", True),
    ("codename", "Copper Finch", "codename CopperFinch", True),
    ("codename", "Copper Finch", "copper and finch", False),
    ("file_path", "src/billing/retry_policy.py", "edit retry_policy.py in src/billing", True),
    ("file_path", "src/billing/retry_policy.py", "edit src\\billing\\retry_policy.py", True),
    ("file_path", "src/billing/retry_policy.py", "edit retry_policy.py", False),
    ("version", "1.2.3", "pin it to 1.2 patch 3", True),
    ("version", "1.2.3", "steps 1, 2, 3", False),
    ("ticket", "OPS-1234", "see ops 1234", True),
    ("ticket", "OPS-1234", "see OPS1234", True),
    ("ticket", "OPS-1234", "see OPS-12345", False),
    ("hostname", "db-staging-12.acme.internal", "reboot db-staging-12 later", True),
    ("hostname", "db-staging-12.acme.internal", "reboot db-staging-120", False),
])
def test_recognised_forms_by_hand(kind, answer, text, found):
    assert bool(form_pattern(kind, answer).search(text)) is found


def test_number_words():
    assert number_words(0) == "zero"
    assert number_words(42) == "forty-two"
    assert number_words(800) == "eight hundred"
    assert number_words(65000) == "sixty-five thousand"
    assert number_words(20718) == "twenty thousand seven hundred eighteen"
    with pytest.raises(ValueError):
        number_words(1_000_000)


def test_an_answer_of_another_shape_has_no_forms():
    assert alternate_forms("date", "next Tuesday") == ()
    assert alternate_forms("port", "http") == ()
    assert alternate_forms("unknown-kind", "x") == ()
    assert form_pattern("unknown-kind", "") .search("anything") is None


_SEPS = st.sampled_from(["-", " ", "_", "", ".", "/"])


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 399), _SEPS, st.booleans(), st.text(alphabet="abc ,.;:\n", max_size=20))
def test_separator_and_case_variants_are_found_and_pre_filtered(i, sep, upper, noise):
    f = _facts(400)[i]
    runs = re.findall(r"[^\W_]+", f.answer)
    if any(a.isdigit() and b.isdigit() for a, b in zip(runs, runs[1:], strict=False)) and sep in ("", " "):
        sep = "-"  # digits next to digits need a separator (a version is not "1 2 3")
    variant = sep.join(runs)
    variant = variant.upper() if upper else variant.lower()
    text = f"{noise} {variant} {noise}"
    assert form_pattern(f.kind, f.answer).search(text)
    index = FormIndex([(f.kind, f.answer)])
    assert index.keys_in(text) == frozenset({0})  # the pre-filter keeps every match


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("aZ09_ -.,\n\tİßÉé٣ⅫＡ\u0301")), max_size=60))
def test_normal_form_positions_point_at_each_kept_character(text):
    """ASCII or not, the normal form is the letters and digits of the lower-cased text, and
    each of its characters sits at its position there."""
    from workbench.synth.fact_forms import _RUN, normal_form_positions

    norm, where = normal_form_positions(text)
    low = text.lower()
    assert norm == normal_form(text)
    assert where.dtype == np.int64
    assert where.tolist() == [i for m in _RUN.finditer(low) for i in range(m.start(), m.end())]
    assert all(low[i] == c for i, c in zip(where.tolist(), norm, strict=True))


_WIDE = list("aZ09_ -.,\n\t…İßÉé٣ⅫＡΣς\u0301\u00a0\u2028\ud800\U0001f600中ж")


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(_WIDE), max_size=200) | st.text(max_size=200),
       st.text(alphabet="abc 12,.\n", max_size=300))
def test_normal_form_positions_are_the_regex_walk(text, ascii_part):
    """The code-point array path equals the regex walk it replaced (tests/synth/fact_forms_oracle.py),
    on any text, a mostly-ASCII summary with a few other characters included."""
    from fact_forms_oracle import normal_form_positions as walk

    from workbench.synth.fact_forms import normal_form_positions

    for t in (text, ascii_part + text + ascii_part, ascii_part):
        norm, where = normal_form_positions(t)
        old_norm, old_where = walk(t)
        assert norm == old_norm
        assert where.dtype == np.int64 and where.tolist() == old_where.tolist()


@pytest.mark.parametrize("text", ["", "…", "a…b", "İstanbul 2026", "x\ud800y", "ΣΑΣ. ς", "٣ and Ⅻ", "_a_b_"])
def test_normal_form_positions_by_hand(text):
    from fact_forms_oracle import normal_form_positions as walk

    from workbench.synth.fact_forms import normal_form_positions

    norm, where = normal_form_positions(text)
    assert (norm, where.tolist()) == (walk(text)[0], walk(text)[1].tolist())
