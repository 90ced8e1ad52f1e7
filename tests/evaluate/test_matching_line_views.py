"""A line's leak views searched with its decoded runs remembered by run: the same secrets
and line-joined view as ``harness.leak_views`` searched whole (the oracle,
:meth:`LeakScanner._line_views_by_leak_views`)."""

from __future__ import annotations

import base64
import itertools
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.evaluate.matching import LeakScanner

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
