"""Shortcuts of the scan, each against the code it replaced (kept here as the oracle).

The driver's per-run rules skip the token runs they would all turn down (paths,
identifiers, rulers: :func:`workbench.redaction.rules.driver.inert_run`), remembered per run.
The oracle is the driver with no run skipped (every run through every per-run rule, the
code as it was): the same findings and redactions on random texts built around the edge
cases of the test (digits, capitals, separators, vendor heads, known prefixes, the
characters before a run the rules read) and on the summaries of a run. Also: the junction
pass asks for keywords only when a join needs them, an escape with a character common to
all its triggers is ruled out by that character, and the pure shape tests of a value are
remembered."""

from __future__ import annotations

import sys
from contextlib import contextmanager

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.redaction import harness as H
from workbench.redaction import normalize as N
from workbench.redaction.normalize import normalize
from workbench.redaction.rules import driver as D
from workbench.redaction.rules import keyed as K
from workbench.redaction.rules import shape as R


@contextmanager
def every_run_through_the_rules():
    """The oracle: no run is inert (the loop body of the old code runs for every run)."""
    saved = D.inert_run
    D.inert_run = lambda run: False
    D._INERT_RUNS.clear()
    try:
        yield
    finally:
        D.inert_run = saved
        D._INERT_RUNS.clear()


def _old_and_new(fn, *args):
    with every_run_through_the_rules():
        old = fn(*args)
    return old, fn(*args)


RUN_PIECES = ["src/app/config", "tests/test_parser", "test_render_template_16", "retry_with_backoff",
              "UserRepository", "SessionManager", "------------", "============", "a1b2c3d4e5f6",
              "Q7wE9rT2yU4iO6pA", "deadbeefdeadbeefdeadbeef", "JBSWY3DPEHPK3PXP", "jbswy3dpehpk3pxp",
              "dGhpcyBpcyBhIHRlc3Qgc3RyaW5n", "xoxb-123456789012-123456789012-", "1234567890123",
              "ghp_", "AKIA", "sk-", "sk_live_", "rk_test_", "eyJ", "hf_", "npm_", "glpat-", "SG.",
              "dp.pt.", "sha256~", "MTA", "NzA", "Oz", "pk_", "xai-", "AIza", "github_pat_",
              "lin_api_", "api_org_", "pat", "lib/queue", "apply_", "/repo/web/src/App", "QUJDRGFi",
              "UserRepositoryFactory", "abcdefghijklmnop", "RETRY_WITH_BACKOFF",
              "a", "Z", "0", "9", "_", "-", "+", "/", "=", "==", "x9Y", "0x"]
CONTEXT = ["", " ", "\n", "\\", "\\n", ".", "~", "=", ":", "@", "(", "\"", "'", "password is ",
           "api_key=", "token: ", "Authorization: Bearer ", "<REDACTED:secret>", "https://u:", "\u00e9",
           "...", "%41%42%43", "\\u0041"]
runs = st.lists(st.sampled_from(RUN_PIECES), min_size=1, max_size=6).map("".join)
texts = st.lists(st.one_of(runs, st.sampled_from(CONTEXT)), max_size=40).map("".join)


@settings(max_examples=600, deadline=None)
@given(st.sampled_from(CONTEXT), runs, st.sampled_from(CONTEXT))
def test_an_inert_run_yields_nothing_wherever_it_stands(before, run, after):
    view = normalize(before + run + after)[0]
    old, new = _old_and_new(lambda v: D._find(v, 0), view)
    assert new == old
    for depth, pieces in ((1, True), (2, True), (0, False)):
        old, new = _old_and_new(lambda v, d=depth, p=pieces: D._find(v, d, True, p), view)
        assert new == old


@settings(max_examples=400, deadline=None)
@given(texts)
def test_scan_and_redact_find_what_every_run_through_the_rules_found(text):
    old, new = _old_and_new(D.scan, text)
    assert new == old
    old, new = _old_and_new(H.redact, text)
    assert new == old


@pytest.mark.parametrize("run, inert", [
    ("src/app/config", True), ("tests/test_parser", True), ("test_render_template_16", True),
    ("------------", True), ("UserRepository", True), ("retry_with_backoff", True),
    ("retrywithbackoff", False),   # single case, no separator: base32 is tried
    ("abcdefghijklmnop", False), ("RETRY_WITH_BACKOFF_X", True),
    ("QUJDRGFiY2RlZmdoaWprbA", False),  # both cases, 16+, quanta that could start ASCII text
    ("UserRepositoryFactory", True), ("/repo/web/src/App", True),  # (quanta that cannot)
    ("lib/queue/worker", True), ("lin_api_abcdefgh", False),  # a vendor head, the prefix or not
    ("apply_migration", True), ("api_org_abcdefgh", False),
    ("parse_config", True), ("pattern_matching", False), ("Mozilla_Firefox", False),
    ("user-1234567890-x", False),  # a digit and only a dash: maybe a Slack piece
    ("Test_render_16_x", False), ("a1b2c3d4e5f6", False), ("ghp_abcdefghijkl", False),
    ("sk-abcdefghijkl", False), ("xoxb-abcdefghij", False), ("MTAxMjM0NTY3ODkw", False),
    ("dp_something_long", True), ("my_eyJhbGciOi", False),
])
def test_inert_run_table(run, inert):
    assert D.inert_run(run) is inert


def test_summaries_of_a_run_redact_as_with_every_run_through_the_rules(tmp_path_factory):
    from workbench.engine.run import simulate
    from workbench.evaluate.texts import derive_texts
    from workbench.synth.generate import GeneratorConfig, generate_dataset

    ds = generate_dataset(GeneratorConfig(profile="coding", events=6000, seed=5),
                          tmp_path_factory.mktemp("inert") / "d")
    result = simulate(ds, ["openclaw-flush", "claude-code", "hermes"])
    texts, _ = derive_texts(result, ds)
    raws = [t for t in texts["text_raw"].to_list() if t]
    assert len(raws) > 10
    with every_run_through_the_rules():
        old = [H.redact(t) for t in raws]
    new = [H.redact(t) for t in raws]
    assert sum(r.changed for r in new) > 0
    assert new == old


def test_a_repeated_path_is_judged_once():
    """3,000 lines naming the same paths: the prefix search runs once per distinct run, not
    once per run (the old loop searched every run)."""
    text = "".join(f"- edited src/app/config and tests/test_parser at step {i}\n" for i in range(3000))
    D._INERT_RUNS.clear()
    searches = 0

    def count(frame, event, arg):
        nonlocal searches
        searches += event == "c_call" and getattr(arg, "__name__", "") == "search"

    sys.setprofile(count)
    try:
        D._find(text, 0)
    finally:
        sys.setprofile(None)
    assert searches < 100, searches


def test_the_junction_pass_asks_for_keywords_only_when_a_join_needs_them(monkeypatch):
    """``keyword_possible`` reads the whole view (a dozen scans of a long summary): the
    junction pass asks it when a join gets that far, not once per view with breaks."""
    calls = []
    real = D.keyword_possible
    monkeypatch.setattr(D, "keyword_possible", lambda text: calls.append(1) or real(text))
    text = "the plan holds\nbecause the parser\nreturns early\n" * 200
    assert N.joinable_breaks(text)
    assert D._find(text, 0) == [] and calls == []
    split = "the value is ab12cd34\nef56gh78 now"  # (a join without a token format asks)
    assert D._find(split, 0) == D._find(split, 0, junctions=False) and calls


@settings(max_examples=300, deadline=None)
@given(texts)
def test_junctions_with_keywords_asked_late_as_with_keywords_first(view):
    out_old: list = []
    kw = D.keyword_possible(view)
    for b0, b1 in N.joinable_breaks(view):
        out_old.extend(D.join_at(view, b0, view, b1, 0, normalised=True, keywords=kw))
    out_new: list = []
    D._junctions(view, out_new, 0)
    assert out_new == out_old


def _possible_oracle(esc, text: str) -> bool:
    return any(all(literal in text for literal in group) for group in esc.triggers)


@settings(max_examples=400, deadline=None)
@given(texts)
def test_escape_triggers_as_the_full_check(text):
    for esc in N.ESCAPES:
        assert esc.possible(text) == _possible_oracle(esc, text)


def test_the_backslash_escapes_are_ruled_out_by_one_character():
    """A text without a backslash: one memchr scan, not three scans for two characters."""
    assert N.ESCAPE["backslash"]._shared == ("\\",) and N.ESCAPE["percent"]._shared == ("%",)
    assert not N.ESCAPE["backslash"].possible("plain text " * 100)


CACHED_VALUE_TESTS = [(R.is_placeholder, 1), (R.random_shape, 2), (K.generic_value_ok, 2),
                      (K.password_value_ok, 1)]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(runs, st.sampled_from(CONTEXT)), min_size=1, max_size=4).map("".join),
       st.sampled_from(["", "token", "secretkey", "accesskeyid", "apikey", "bearer"]), st.booleans())
def test_remembered_value_tests_answer_as_the_tests_themselves(value, key, loose):
    """The shape tests of a value are remembered per value (pure functions of it): the
    answer is the function's own (``__wrapped__``, the code as it was), asked twice."""
    for fn, arity in CACHED_VALUE_TESTS:
        args = (value,) if arity == 1 else (value, loose if fn is R.random_shape else key)
        assert fn(*args) == fn.__wrapped__(*args) == fn(*args)


def test_a_trigger_is_gated_only_by_a_character_it_holds():
    from workbench.redaction.rules import vendors as V

    assert [(k, t) for k, t, _, _ in V._INSIDE_GATED] == [(k, t) for k, t, _ in V._INSIDE]
    assert all(rare in trigger for _, trigger, _, rare in V._INSIDE_GATED)
    assert any(rare for _, _, _, rare in V._INSIDE_GATED)


VENDOR_BITS = ["Q~", "abcQ~defghijklmnopqrstuvwxyz0123456789ABCD", "CONTRIBSYS__COM", "cafebabe:deadbeef",
               "-us12", "0123456789abcdef0123456789abcdef-us21", "123456789:AAE" + "x" * 33, ".acc", "at.", "~", "Y"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(VENDOR_BITS + CONTEXT), max_size=20).map("".join))
def test_vendor_rules_inside_tokens_as_without_the_gate(view):
    from workbench.redaction.rules import vendors as V

    old: list = []
    for kind, trigger, rx in V._INSIDE:
        if trigger in view:
            for m in rx.finditer(view):
                V._accept(view, m, kind, old)
    new: list = []
    V.vendor_inside(view, new)
    assert new == old


def _keyword_possible_oracle(text: str) -> bool:
    """keyword_possible as it was: the case-sensitive password triggers scanned first."""
    if "://" in text or "<REDACTED:" in text or "[BYOK:" in text:
        return True
    if any(True for _ in K._pw_keywords(text)):
        return True
    low = R.ascii_lower(text)
    return D._generic_anchor(low) or D._slot_anchor(text, low)


KEYWORD_BITS = ["pass", "Pass", "PASS", "PaSs", "pwd", "Pwd", "PWD", "pWd", "password", "PASSWORD", "passwd",
                "passphrase", "passed", "PASSED", "bypass", "pass:", "pwd=", "Pass\u00e9", "pass\u00e9", "token",
                "api_key=", "bearer ", "Authorization", "x-api-key", "-p ", "--password", "://", "[BYOK:",
                "<REDACTED:x>", "\u0130", "\u212a", " ", "\n", "1", "=", ":"]


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(KEYWORD_BITS), max_size=12).map("".join))
def test_keyword_possible_as_with_the_case_sensitive_triggers_first(text):
    assert D.keyword_possible(text) == _keyword_possible_oracle(text)
    assert K.pw_keyword_in(text, R.ascii_lower(text)) == any(True for _ in K._pw_keywords(text))


def _generic_anchor_oracle(low: str) -> bool:
    """_generic_anchor as it was: every key word looked for."""
    return "bearer " in low or any(w in low and r.search(low) is not None
                                   for w, r in D._R_GENERIC_ASSIGNED.items())


def _generic_keys_oracle(view: str, out: list, low: str | None = None) -> None:
    """_generic_keys as it was: every trigger scanned (the loop body is the module's)."""
    saved = K.key_words_possible
    K.key_words_possible = lambda words, hay: iter(words)
    try:
        K._generic_keys(view, out, low)
    finally:
        K.key_words_possible = saved


KEY_BITS = ["api", "API", "Api", "api_key", "apikey", "api-key", "apiKey", "ApiKey", "API_KEY", "access",
            "access_key", "accesskey", "access-key", "accessKey", "ACCESS_KEY", "token", "secret", "credential",
            "bearer ", "Bearer ", "=", ": ", "\"", "'", " ", "\n", "?", "&", "x-", "_id", "Q7wE9rT2yU4iO6pA8sD0",
            "deadbeefdeadbeef0123", "\u00e9", "..."]


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(KEY_BITS), max_size=14).map("".join))
def test_key_words_looked_for_only_under_their_head_as_every_word(text):
    low = R.ascii_lower(text)
    assert D._generic_anchor(low) == _generic_anchor_oracle(low)
    for lowered in (R._lowered(text), None):
        old: list = []
        _generic_keys_oracle(text, old, lowered)
        new: list = []
        K._generic_keys(text, new, lowered)
        assert new == old
    words = K._GENERIC_TRIGGERS_LOW
    assert [w for w in words if w in low] == [w for w in K.key_words_possible(words, low) if w in low]
