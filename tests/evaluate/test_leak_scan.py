"""The one-pass leak search finds exactly the secrets ``harness.leaked`` finds, one by one:
every secret format x transform (generated), real agent logs around them, summaries that
copy, cut and wrap them, their redactions, and random texts built from the characters the
leak views care about (line breaks, encodings, invisible and lookalike characters)."""

from __future__ import annotations

import base64
import functools
import itertools
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.evaluate.matching import JoinScan, LeakScanner, PatternIndex
from workbench.redaction import harness
from workbench.synth import secrets as S

BUNDLED = Path(__file__).resolve().parents[2] / "datasets" / "bundled"


def reference(secrets: list[str], texts: list[str], keys=None) -> set[int]:
    keys = range(len(secrets)) if keys is None else keys
    return {k for k in keys if harness.leaked(secrets[k], texts)}


@pytest.fixture
def views_once(monkeypatch):
    """``harness.leaked`` itself as the oracle, its views computed once per text (it
    recomputes them for every secret otherwise)."""
    monkeypatch.setattr(harness, "leak_views", functools.lru_cache(maxsize=None)(harness.leak_views))


def recorded_chunks(n: int, size: int = 600) -> list[str]:
    """Pieces of the bundled real agent logs (JSONL as written by the harnesses)."""
    files = sorted(p for p in BUNDLED.rglob("*") if p.is_file() and p.suffix in (".jsonl", ".json"))
    if not files:
        pytest.skip(f"no bundled logs under {BUNDLED}")
    rng = np.random.default_rng(0)
    out = []
    for i in range(n):
        text = files[i % len(files)].read_text(encoding="utf-8", errors="replace")
        a = int(rng.integers(0, max(1, len(text) - size)))
        out.append(text[a:a + size])
    return out


@pytest.fixture(scope="module")
def planted():
    """One planted secret per format x transform (contexts rotate)."""
    rng = np.random.default_rng(11)
    combos = {}
    for fmt, ctx, tr in S.compatible_combinations():
        combos.setdefault((fmt, tr), (fmt, ctx, tr))
    return [S.plant_secret(rng, *c) for c in combos.values()]


def test_every_format_and_transform_in_real_logs_and_summaries(planted, views_once):
    secrets = list(dict.fromkeys(p.value for p in planted))
    scanner = LeakScanner(secrets)
    logs = recorded_chunks(len(planted))
    rng = np.random.default_rng(5)
    checked = 0
    for p, log in zip(planted, logs, strict=True):
        # the scanner searches every secret; the oracle checks this one, 24 others drawn at
        # random and every one the scanner reports
        others = rng.choice(len(secrets), size=min(24, len(secrets)), replace=False).tolist()
        parts = p.texts
        value = p.value
        cut = max(1, len(value) // 2)
        # what a summary does with it: quote it, keep a part, redact it, wrap it
        derived = [f"- Noted the key {value[:cut]}\u2026 for later", harness.redact("\n".join(parts)).text,
                   f"[BYOK:{value}]", f"<REDACTED:{p.kind}>{value[-cut:]}"]
        lists = [[log, *parts], [*parts, log], [log[:200] + parts[0], *parts[1:], log[200:]],
                 [derived[int(rng.integers(len(derived)))], log], derived, [log], ["\r\n".join(parts)]]
        for texts in lists:
            texts = [t for t in texts if t]
            found = scanner.leaks_in(texts)
            keys = {secrets.index(p.value), *others, *found}
            assert found & keys == reference(secrets, texts, keys), (p.kind, p.transform, texts)
            checked += 1
    assert checked == 7 * len(planted)


ALPHABET = st.sampled_from([
    "a", "Z", "0", "9", "f", "=", "%", "/", "+", "_", "-", " ", ".", ":", "\\", "u", "n", "r",
    "\n", "\r", "\r\n", "\\n", "\\r\\n", "\\\\u", "%4", "%41", "\u200b", "\u00ad", "\u0430",
    "\uff21", "\u0301", "\ud83d", "\u2026", "\x00",
])


@st.composite
def texts_with_secrets(draw):
    # also secrets with a line break, a carriage return and a backslash in them (a PEM key,
    # a Windows-pasted value, an escaped password): the views differ right there
    secrets = ["AKIAQ7WE9RT2YU4IO6PA", "ghp_Q7wE9rT2yU4iO6pA8sD0fG1hJ3kL5zX7cV9b", "hunter2hunter2", "abcdef",
               "MIIEvQ\nIBADANBg", "pa\\ss\\word99", "win\r\nsecret77", "x\ny"]
    pieces = []
    for _ in range(draw(st.integers(1, 12))):
        kind = draw(st.integers(0, 5))
        s = secrets[draw(st.integers(0, len(secrets) - 1))]
        a = draw(st.integers(0, len(s) - 1))
        b = draw(st.integers(a + 1, len(s)))
        part = s[a:b]
        if kind == 0:
            pieces.append(part)
        elif kind == 1:
            pieces.append(base64.b64encode(part.encode()).decode())
        elif kind == 2:
            pieces.append(part.encode().hex())
        elif kind == 3:
            pieces.append("".join(f"%{ord(c):02X}" for c in part))
        elif kind == 4:
            pieces.append("".join(f"\\u{ord(c):04x}" for c in part))
        else:
            pieces.append("".join(draw(st.lists(ALPHABET, max_size=8))))
    text = "".join(pieces)
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=3)))
    bounds = [0, *cuts, len(text)]
    return secrets, [text[a:b] for a, b in itertools.pairwise(bounds)]


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts_with_secrets())
def test_random_texts_match_the_reference(case):
    secrets, texts = case
    assert LeakScanner(secrets).leaks_in(texts) == reference(secrets, texts)


def test_scans_are_memoised_by_text():
    scanner = LeakScanner(["AKIAQ7WE9RT2YU4IO6PA"])
    text = "x AKIAQ7WE9RT2YU4 y"
    assert scanner.leaks(text) == {0}
    assert scanner.leaks(text) is scanner.leaks(text)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet="ab c\n", max_size=6), max_size=6),
       st.lists(st.text(alphabet="ab c", min_size=0, max_size=4), min_size=1, max_size=5))
def test_join_scan_is_a_search_of_the_joined_text(texts, answers):
    index = PatternIndex.of_values(answers)
    scan = JoinScan(index, " ")
    for t in texts:
        scan.add(t)
    joined = " ".join(texts)
    assert scan.found == {index.key_of[a] for a in answers if a in joined}


@pytest.mark.parametrize("secrets, texts", [
    # a secret over three lines and two texts: only the joined view of both holds a fragment
    (["AKIAQ7WE9RT2YU4IO6PA"], ["AKIAQ7\nWE9", "RT2\nzzz"]),
    # a bare carriage return inside a secret (every fragment holds it); the texts have it
    # only as part of a line break, which the joined view removes: no leak
    (["QWERTY\rUIOPAS"], ["zz Y", "\r\nUIOPA zz"]),
    (["QWERTY\rUIOPAS"], ["zz Y\r", "\nUIOPA zz"]),
    (["QWERTY\rUIOPAS"], ["zz Y\r\nUIOPA zz"]),
    # a literal "\n" (backslash, n) glued across the junction is a line break in the joined view
    (["QWERTYUIOPASDFGH"], ["QWERTYUI\\", "nOPASDFGH"]),
])
def test_line_breaks_and_junctions(secrets, texts):
    assert LeakScanner(secrets).leaks_in(texts) == reference(secrets, texts)


def test_a_remembered_scan_keeps_only_the_ends_of_its_views():
    """The scan memo keeps what a pair scan needs (the views' ends, first and last lines),
    not the long text's views (hundreds of MB of summaries at a million events); two long
    texts read in sequence are still scanned across their junction."""
    from workbench.evaluate.matching import LeakScanner

    secret = "AKIAQ7WE9RT2YU4IO6PA"
    scanner = LeakScanner([secret])
    filler = "\n".join(f"line {i} of notes, nothing secret here at all" for i in range(2000))
    a, b = filler + "\nkey " + secret, " tail\n" + filler
    assert scanner.leaks_in([b]) == frozenset() and scanner.leaks_in([b, a]) == frozenset({0})
    assert scanner.leaks_in([a, b]) == frozenset({0})
    for scan in scanner._text.values():
        held = sum(len(getattr(scan, f)) for f in scan.__dataclass_fields__ if isinstance(getattr(scan, f), str))
        assert held < 1000, held


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts_with_secrets(), st.sampled_from(["\n", "\r\n", "\n\n", "\\n", " \n"]))
def test_a_text_scanned_through_its_lines_is_scanned_whole(case, sep):
    """``_scan`` (the lines' scans, the line-break patterns over the text and its normalised
    view, the line-joined view whole) is ``_scan_whole`` (every view searched whole), every
    field of the scan: the texts glued by line breaks of every kind."""
    secrets, texts = case
    scanner = LeakScanner(secrets)
    for text in (sep.join(texts), "".join(texts), sep.join(texts) + sep):
        assert scanner._scan(text) == scanner._scan_whole(text), text


POOL_SECRETS = ["AKIAQ7WE9RT2YU4IO6PA", "MIIEvQIBAD\nANBgkqhkiG9w0B", "hunter2hunter2", "abcdef"]


@st.composite
def carried_summaries(draw):
    """Summaries that carry lines from a pool (in another order, some dropped), as a
    compacting policy does: long and short lines, blank ones, the halves of secrets (one
    split by a line break), encoded parts and escaped breaks."""
    s = POOL_SECRETS
    pool = ["- Noted the migration plan for the queue worker today", "", "ok", "### Earlier context",
            f"key {s[0][:9]}", f"{s[0][9:]} was rotated", "pem MIIEvQIBAD", "ANBgkqhkiG9w0B rest",
            f"{s[2][:7]}", f"{s[2][7:]} and more words here", "x" * 11, "y" * 12, "\\u0041\\n tail end",
            base64.b64encode(s[0].encode()).decode()[:18], "caf\u00e9 \u200b line with a mark", "abc", "def and so on"]
    pick = st.lists(st.sampled_from(pool), min_size=1, max_size=14)
    return [("\n".join(draw(pick))) for _ in range(draw(st.integers(2, 5)))]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(carried_summaries())
def test_texts_that_carry_lines_scan_as_whole_with_their_lines_remembered(texts):
    """One scanner over texts that share lines (its line memo warm): every scan is the
    whole scan, and ``leaks_in`` is ``harness.leaked``."""
    scanner = LeakScanner(POOL_SECRETS)
    for text in texts:
        assert scanner._scan(text) == scanner._scan_whole(text), text
    assert scanner.leaks_in(texts) == reference(POOL_SECRETS, texts)


def test_a_known_text_is_searched_whole_only_in_its_line_joined_view(monkeypatch):
    """Once its lines are scanned, a text's own characters go through the full automaton once
    (the line-joined view); the text is searched only for the patterns that hold a line
    break, and a secret split by a line break is still found there."""
    secrets = ["AKIAQ7WE9RT2YU4IO6PA", "MIIEvQIBAD\nANBgkqhkiG9w0B"]
    scanner = LeakScanner(secrets)
    lines = [f"line {i} of notes, nothing secret here" for i in range(50)]
    text = "\n".join([*lines, "pem MIIEvQIBAD", "ANBgk rest"])
    scanner._scan("\n".join(reversed(text.split("\n"))))  # every line known
    searched: list[int] = []
    real = PatternIndex.keys_in

    def counting(index, t):
        if index is scanner.index:
            searched.append(len(t))
        return real(index, t)

    monkeypatch.setattr(PatternIndex, "keys_in", counting)
    assert scanner._scan(text).keys == {1}
    assert sum(searched) < 1.2 * len(text), searched


@pytest.mark.parametrize("sep", ["\n", "\r\n"])
def test_long_lines_are_searched_around_their_breaks_and_junctions(sep):
    """Lines long enough that only the characters around each line break (text and
    normalised views) and each junction of line-joined views are searched: secrets split
    there, at the text's ends, by a wide character and by an escaped break, still found."""
    secrets = ["AKIAQ7WE9RT2YU4IO6PA", "MIIEvQIBAD\nANBgkqhkiG9w0B", "ghp_Q7wE9rT2yU4iO6pA8sD0fG1hJ3kL5zX7cV9b",
               "hunter2hunter2x", "zz\r\nwinsecret77"]
    filler = "nothing secret is written on this line, only words and more words"
    lines = [f"{filler} {i}" for i in range(40)]
    cases = [
        [*lines[:5], f"{filler} AKIAQ7WE9R", f"T2YU4IO6PA {filler}", *lines[5:]],      # joined across a break
        [*lines[:5], f"{filler} pem MIIEvQIBAD", f"ANBgkqhkiG {filler}", *lines[5:]],  # a break inside the secret
        [f"ghp_Q7wE9rT2y {filler}", *lines, f"{filler} hunter2hun"],                    # at the ends
        [*lines[:3], f"{filler} \uff41\u200bKIAQ7WE9", f"RT2YU4 caf\u00e9 {filler}", *lines[3:]],
        [*lines[:3], f"{filler} hunter2\\nhunter2x {filler}", *lines[3:]],              # an escaped break
        [*lines[:3], f"{filler} zz", f"winsecret77 {filler}", *lines[3:]],
    ]
    scanner = LeakScanner(secrets)
    for parts in cases:
        text = sep.join(parts)
        scan = scanner._scan(text)
        assert scan == scanner._scan_whole(text), parts
        assert scan.keys == reference(secrets, [text]), parts
