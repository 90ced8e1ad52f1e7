"""A line's leak views searched with its decoded runs remembered by run: the same secrets
and line-joined view as ``harness.leak_views`` searched whole (the oracle,
:meth:`LeakScanner._line_views_by_leak_views`)."""

from __future__ import annotations

import base64
import itertools
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.evaluate.matching import LeakScanner
from workbench.redaction import harness

BUNDLED = Path(__file__).resolve().parents[2] / "datasets" / "bundled"
SECRETS = ["AKIAQ7WE9RT2YU4IO6PA", "ghp_Q7wE9rT2yU4iO6pA8sD0fG1hJ3kL5zX7cV9b", "hunter2hunter2", "abcdef",
           "pa\\ss\\word99", "\u0430bc\u200bdefghijklmn", "x=y&z;secret"]


def encodings(part: str) -> list[str]:
    raw = part.encode("utf-8", "surrogatepass")
    return [part, base64.b64encode(raw).decode(), base64.urlsafe_b64encode(raw).decode().rstrip("="),
            base64.b32encode(raw).decode(), base64.b32encode(raw).decode().lower(), raw.hex(), raw.hex().upper(),
            "".join(f"%{b:02X}" for b in raw), "".join(f"\\u{ord(c):04x}" for c in part),
            "".join(f"\\\\x{b:02x}" for b in raw), "".join(f"&#{ord(c)};" for c in part),
            "".join(f"&#x{ord(c):x}" for c in part) + "\u2026"]


PIECES = st.one_of(
    st.sampled_from(["a", "Z", "0", " ", "=", "==", "%", "%4", "\\u00", "&amp;", "&#", ";", "\\n", "\\\\n", "\r",
                     "\u200b", "\u0430", "\uff21", "\u2026", "...", "\x00", "+", "-", "_", "/", ">"]),
    st.builds(lambda s, a, b, k: encodings(s[min(a, b):max(a, b) + 1])[k], st.sampled_from(SECRETS),
              st.integers(0, 40), st.integers(0, 40), st.integers(0, 11)),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(PIECES, max_size=16))
def test_a_line_scanned_by_run_is_scanned_as_its_leak_views(pieces):
    line = "".join(pieces)
    scanner = LeakScanner(SECRETS)
    assert scanner._line_views(line) == scanner._line_views_by_leak_views(line)
    assert scanner._line_views(line) == scanner._line_views_by_leak_views(line)  # remembered runs


def test_every_encoding_of_every_secret_part_alone_and_amid_text():
    scanner = LeakScanner(SECRETS)
    checked = found = 0
    for s in SECRETS:
        for a, b in itertools.combinations(range(0, len(s) + 1, 2), 2):
            for enc in encodings(s[a:b]):
                for line in (enc, f"id {enc} and {enc[:len(enc) // 2]}", f"x{enc}y"):
                    new = scanner._line_views(line)
                    assert new == scanner._line_views_by_leak_views(line), line
                    checked += 1
                    found += bool(new[0])
    assert checked > 1000 and found > 300


def test_lines_of_the_bundled_real_logs():
    files = sorted(p for p in BUNDLED.rglob("*") if p.is_file() and p.suffix in (".jsonl", ".json"))
    scanner = LeakScanner(SECRETS)
    lines = list(dict.fromkeys(line for f in files[:20]
                               for line in f.read_text(encoding="utf-8", errors="replace").split("\n")))[:3000]
    assert len(lines) > 100
    for line in lines:
        assert scanner._line_views(line) == scanner._line_views_by_leak_views(line)


GLUE = st.sampled_from(["a", "Z", "0", " ", "=", "%", "%4", "%41", "\\", "u", "n", "\\u00", "\\u0041", "&", "&#",
                        "&#65", ";", "\r", "\n", "\r\n", "\\n", "+", "-", ">", "\u200b", "\uff21", "\uff1b", "\u0430",
                        "QUtJQVE3V0U5", "414b4941", "IFLUSQJT", "AKIAQ7", "WE9RT2", "YU4IO6PA", "hunter2", "\x00",
                        # halves of an encoded secret that leak only glued; HTML references
                        # without ";" read only where the line has one
                        "QUtJQVE3V0U5Ul", "QyWVU0SU82UEE=", "414b494151375745395254", "32595534494f365041",
                        "&#65&#66&#67&#68&#69&#70", " ;"])


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(GLUE, max_size=10), st.lists(GLUE, max_size=10))
def test_a_glued_line_from_its_parts_is_the_glued_line_scanned(left, right):
    a, b = "".join(left), "".join(right)
    if not a or not b:
        return
    scanner = LeakScanner([*SECRETS, "ABCDEFGHIJKL"])
    fast = scanner._scan_pair(a, b)
    scanner.forget()
    assert fast == scanner._scan_pair(a, b, by_parts=False)


def test_most_real_junctions_are_glued_from_their_parts(monkeypatch):
    """Consecutive lines of the bundled logs: most junctions need no scan of the glued line
    (a space, a quote or a bracket at the junction), and every one gives the same keys."""
    files = sorted(p for p in BUNDLED.rglob("*") if p.is_file() and p.suffix in (".jsonl", ".json"))
    texts = [line for f in files[:10] for line in f.read_text(encoding="utf-8", errors="replace").split("\n")][:800]
    scanner = LeakScanner(SECRETS)
    plain = 0
    for a, b in zip(texts, texts[1:], strict=False):
        if not a or not b:
            continue
        plain += scanner._glued_plainly(a, b, a + b) is not None
        fast = scanner._scan_pair(a, b)
        assert fast == scanner._scan_pair(a, b, by_parts=False)
    assert plain > 100


@pytest.mark.parametrize("a, b", [
    ("key QUtJQVE3V0U5Ul", "QyWVU0SU82UEE= end"),                      # a base64 run across the junction
    ("hex 414b494151375745395254", "32595534494f365041 ok"),             # a hex run across it
    ("x &#65&#66&#67&#68&#69&#70", " ; y"),                              # references read only glued
    ("x &#65&#66&#67&#68&#69&#70", "&#71;"),
    ("esc \\u0041\\u004b\\u0049\\u0041\\u0051\\u0037", "\\u0057\\u0045\\u0039\\u0052\\u0054\\u0032 z"),
    ("pct %41%4B%49%41%51%37", "%57%45%39%52%54%32 z"),
    ("split \\", "nAKIAQ7WE9RT2 z"),                                       # an escaped break made by the glue
    ("AKIAQ7WE9RT2YU4IO6PA\r", "\nx"), ("a\r\nAKIAQ7WE9RT2", "YU4IO6PA\r\nz"),
    ("\uff21KIAQ7WE9", "RT2YU4IO6PA"),
    ("xx abcdefg\nhijk", " lm"),  # only the line-joined view of both texts holds a fragment
])
def test_junctions_that_make_a_new_run_or_break(a, b):
    scanner = LeakScanner([*SECRETS, "ABCDEFGHIJKL", "abcdefghijk lmnopqrstuvw"])
    fast = scanner._scan_pair(a, b)
    scanner.forget()
    assert fast == scanner._scan_pair(a, b, by_parts=False)
    assert fast == {k for k, s in enumerate(scanner.secrets) if harness.leaked(s, [a, b])}


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(PIECES, max_size=8).map("".join), min_size=2, max_size=8, unique=True))
def test_lines_scanned_together_are_scanned_as_each_alone(lines):
    """A text's new lines are searched in one pass (views and runs NUL-separated): each
    line's secrets and line-joined view are its own leak views'."""
    scanner = LeakScanner(SECRETS)
    assert scanner._lines_views(lines) == [scanner._line_views_by_leak_views(line) for line in lines]
