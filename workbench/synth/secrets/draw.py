"""Random drawing shared by the generators: alphabets, picks, strings redrawn until they
are plausibly random (never a placeholder a redactor would rightly skip)."""

from __future__ import annotations

import base64
import string
from collections.abc import Callable

import numpy as np

UPPER = string.ascii_uppercase
LOWER = string.ascii_lowercase
DIGITS = string.digits
ALNUM = UPPER + LOWER + DIGITS
WORD = ALNUM + "_"            # \w (ASCII)
WORD_DASH = WORD + "-"        # [\w-]
B32 = UPPER + "234567"        # [A-Z2-7]
B64 = ALNUM + "+/"
HEX = "0123456789abcdef"

Rng = np.random.Generator


def _pick(rng: Rng, seq):
    return seq[int(rng.integers(len(seq)))]


def _rand(rng: Rng, alphabet: str, n: int) -> str:
    idx = rng.integers(0, len(alphabet), size=n)
    return "".join([alphabet[i] for i in idx.tolist()])


def _classes(s: str) -> int:
    return (any(c.isupper() for c in s) + any(c.islower() for c in s)
            + any(c.isdigit() for c in s) + any(not c.isalnum() for c in s))


def _plausibly_random(body: str) -> bool:
    """Rejects the rare draw a redactor would rightly call a placeholder.

    A random draw can (very rarely) contain ``EXAMPLE``/``xxxx``, or repeat one character;
    generators redraw then, so every planted secret is a fair test of recall.
    """
    low = body.lower()
    if any(w in low for w in ("example", "xxxx", "your", "dummy", "sample", "redact", "test")):
        return False
    return len(set(body)) > max(3, len(body) // 5)


def _draw(rng: Rng, make: Callable[[], str], ok: Callable[[str], bool] = _plausibly_random) -> str:
    for _ in range(64):
        s = make()
        if ok(s):
            return s
    raise RuntimeError("could not draw a plausible secret")  # pragma: no cover


def _b64url(b: bytes) -> str:
    return base64.urlsafe_b64encode(b).decode().rstrip("=")


def _rand_bytes(rng: Rng, n: int) -> bytes:
    return rng.integers(0, 256, size=n, dtype=np.uint8).tobytes()
