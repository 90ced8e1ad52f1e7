"""The redactor's bulk passes against the per-line code they replaced (kept here as the
oracle): the same findings, the same redactions, on random texts and on the summaries of a
run. The junction pass finds its candidate breaks with one regex pass
(:func:`workbench.redaction.normalize.joinable_breaks`) instead of stepping through every
line break; the line starts of a diff come from numpy instead of a regex iterator."""

from __future__ import annotations

import re
import sys
from bisect import bisect_right
from contextlib import contextmanager

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.redaction import harness as H
from workbench.redaction import normalize as N
from workbench.redaction.rules import driver as D

# --------------------------------------------------------------------------- the oracle


def _line_starts_oracle(view: str) -> list[int]:
    return sorted([0, *(m.end() for m in re.finditer(r"\n|\\n", view))])


def _line_breaks_oracle(view: str, start: int = 0, end: int | None = None, *, token_next: bool = False):
    end = len(view) if end is None else end
    starts = None
    for literal, pattern in zip(("\\n", "\n"), N._R_BREAKS_TOKEN if token_next else N._R_BREAKS, strict=True):
        if literal not in view:
            continue
        for m in pattern.finditer(view, start, end):
            b0, b1 = m.span()
            if b0 and view[b0 - 1] in "r\r":
                brk = m.group()
                cr = "\r" if brk == "\n" else brk[:-1] + "r"
                if b0 >= len(cr) and view.startswith(cr, b0 - len(cr)):
                    b0 -= len(cr)
            if b1 < end and view[b1] in "+->":
                mark = view[b1]
                if starts is None:
                    starts = _line_starts_oracle(view)
                ls = starts[bisect_right(starts, b0) - 1]
                if view.startswith(mark, ls) and not view.startswith(mark * 2, b1):
                    b1 += 1
            yield b0, b1


def _junction_points_oracle(view: str):
    n = len(view)
    for b0, b1 in _line_breaks_oracle(view, token_next=True):
        if b1 < n and view[b1] in D.TOKEN_CHARS:
            yield b0, b1


def _junctions_oracle(view: str, out: list, depth: int) -> None:
    kw = None
    for b0, b1 in _junction_points_oracle(view):
        if kw is None:
            kw = D.keyword_possible(view)
        out.extend(D.join_at(view, b0, view, b1, depth, normalised=True, keywords=kw))


@contextmanager
def per_line_code():
    """The redactor as it was: every line break stepped through in Python."""
    saved = D._junctions, N._line_starts
    D._junctions, N._line_starts = _junctions_oracle, _line_starts_oracle
    try:
        yield
    finally:
        D._junctions, N._line_starts = saved


def _old_and_new(fn, *args):
    with per_line_code():
        old = fn(*args)
    return old, fn(*args)


# --------------------------------------------------------------------------- random texts

GH = "ghp_" + "Q7wE9rT2yU4iO6pA8sD0fG1hJ3kL5zX7cV9b"
AWS_ID = "AKIAQ7WE9RT2YU4IO6PA"
AWS_SECRET = "Kd90Ahoan4N1Xa36Klr+xnQEEvQ7wE9rT2yU4i/O"
PEM = ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7kR3vQ9xYzT2pL8mN4bC6dF1gH5jK0sW"
       "\nqE3rU7iO9pA2sD4fG6hJ8kL0zX1cV3bN5mQ7wE9rT2yU4iO6pA8sD0fG1hJ3kL5\n-----END RSA PRIVATE KEY-----")


def _halves(secret: str) -> list[str]:
    return [secret[:k] for k in (4, 9, len(secret) // 2)] + [secret[k:] for k in (4, 9, len(secret) // 2)]


PIECES = ["\n", "\\n", "\\\\n", "\r\n", "\\r\\n", "\\\\r\\\\n", "\r", "+", "-", ">", "++", "--", "- ", "+ ",
          "> ", " ", "  ", ".", ",", ":", "=", "/", "a", "b1", "x9Y", "word", "Summary", "## ", "1. ",
          "- [x] ", "password is ", "api_key=", "GITHUB_TOKEN=", "Authorization: Bearer ", "--password ",
          "https://user:", "@host.example", "<REDACTED:secret>", "<REDACTED:github_classic>", "[BYOK:",
          "...", "\u2026", "\u0410", "\u200b", "\uff21", "%41", "\\u0041", "&#65;", "```\n", "SG.",
          GH, AWS_ID, AWS_SECRET, PEM, *_halves(GH), *_halves(AWS_ID), *_halves(AWS_SECRET)]

texts = st.lists(st.sampled_from(PIECES), max_size=60).map("".join)


@settings(max_examples=300, deadline=None)
@given(texts)
def test_line_starts_match_the_regex_oracle(view):
    assert N._line_starts(view) == _line_starts_oracle(view)


@settings(max_examples=500, deadline=None)
@given(texts)
def test_joinable_breaks_are_the_per_line_points_a_join_can_start_at(view):
    old = list(_junction_points_oracle(view))
    new = N.joinable_breaks(view)
    assert list(N.line_breaks(view, token_next=True)) == list(_line_breaks_oracle(view, token_next=True))
    assert new == [(b0, b1) for b0, b1 in old
                   if b0 and view[b0 - 1] in D.TOKEN_CHARS
                   and b1 + 1 < len(view) and view[b1 + 1] in D.TOKEN_CHARS]
    for b0, b1 in set(old) - set(new):  # (a point left out is one join_at turns down)
        assert D.join_at(view, b0, view, b1, normalised=True) == []


@settings(max_examples=400, deadline=None)
@given(texts)
def test_scan_finds_what_the_per_line_code_found(text):
    old, new = _old_and_new(D.scan, text)
    assert new == old
    old, new = _old_and_new(lambda t: D._find(N.normalize(t)[0]), text)
    assert new == old


@settings(max_examples=150, deadline=None)
@given(st.lists(texts, min_size=1, max_size=4))
def test_redact_messages_as_the_per_line_code(messages):
    old, new = _old_and_new(H.redact_messages, messages)
    assert new == old


def test_token_class_is_the_token_characters():
    assert N._TOKEN_SET == D.TOKEN_CHARS


def test_junctions_do_not_step_through_every_line():
    """A summary of 3,000 bullet lines has no break a token runs across: the junction pass
    makes no Python call per line (the per-line code made ~3,000)."""
    text = "".join(f"- step {i} of the plan: done; next\n" for i in range(3000))
    calls = 0

    def count(frame, event, arg):
        nonlocal calls
        calls += event == "call"

    out: list = []
    sys.setprofile(count)
    try:
        D._junctions(text, out, 0)
    finally:
        sys.setprofile(None)
    assert out == [] and calls < 50, calls
    assert N.joinable_breaks(text) == []


# --------------------------------------------------------------------------- a run's summaries


@pytest.fixture(scope="module")
def run_texts(tmp_path_factory):
    from workbench.engine.run import simulate
    from workbench.evaluate.texts import derive_texts
    from workbench.synth.generate import GeneratorConfig, generate_dataset

    ds = generate_dataset(GeneratorConfig(profile="coding", events=6000, seed=3),
                          tmp_path_factory.mktemp("fastredact") / "d")
    result = simulate(ds, ["openclaw-flush", "claude-code", "llm-summary", "hermes", "aider"])
    texts, _ = derive_texts(result, ds)
    return [t for t in texts["text_raw"].to_list() if t]


def test_summaries_of_a_run_redact_as_with_the_per_line_code(run_texts):
    assert len(run_texts) > 20
    assert sum(len(N.joinable_breaks(t)) for t in run_texts) > 0
    with per_line_code():
        old = [H.redact(t) for t in run_texts]
    new = [H.redact(t) for t in run_texts]
    assert sum(r.changed for r in new) > 0
    assert new == old
