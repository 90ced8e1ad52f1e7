"""Exact cl100k counting on threads with reused counts gives exactly tiktoken's counts."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.tokens import exact_count as X
from workbench.tokens.tokenizers import count_texts, exact_encoding

ENC = exact_encoding()


def _tiktoken(texts):
    return [len(ENC.encode_ordinary(t or "")) for t in texts]


@pytest.fixture(scope="module")
def bundled_texts(recorded_dir):
    from workbench.sources.importer import build_tables, collect_files, parse_files

    events, *_ = build_tables(parse_files(collect_files([recorded_dir])), ())
    return events.column("text").to_pylist()


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_counts_of_every_bundled_text_are_tiktokens(bundled_texts, threads):
    assert count_texts(bundled_texts, "cl100k", num_threads=threads).tolist() == _tiktoken(bundled_texts)


def test_cut_into_small_pieces_the_counts_stay_exact(bundled_texts, monkeypatch):
    monkeypatch.setattr(X, "SPLIT_ABOVE", 64)
    monkeypatch.setattr(X, "PIECE", 32)
    pieces = [p for t in bundled_texts if t for p in X.safe_pieces(t, 32)]
    assert len(pieces) > 2 * len(bundled_texts)  # the cut really happens (most texts are short)
    assert X.count_exact(bundled_texts, ENC, num_threads=2).tolist() == _tiktoken(bundled_texts)


# the characters around the cut points: newlines, every kind of space (Unicode White_Space,
# and \x1c-\x1f that Python calls space and the Rust regex does not), letters, digits,
# punctuation, contractions, surrogate-free astral characters
ALPHABET = st.sampled_from(list("\n\r\t ab'sZ9_.,(){}-\u00a0\u0085\u2028\u3000\u2000\x1c\x1f\u00e9\u4e2d\U0001f600")
                           + ["'s", "'ll", "\r\n", "\n\n", "  \n", ".\n", "<|endoftext|>"])


@settings(max_examples=300, deadline=None, derandomize=True)
@given(parts=st.lists(ALPHABET, max_size=80), piece=st.integers(1, 12))
def test_safe_cut_points_add_up(parts, piece):
    text = "".join(parts)
    pieces = X.safe_pieces(text, piece)
    assert "".join(pieces) == text
    assert sum(len(ENC.encode_ordinary(p)) for p in pieces) == len(ENC.encode_ordinary(text))


def test_repeated_texts_and_none():
    texts = ["same text", None, "same text", "", "other"]
    assert count_texts(texts, "cl100k").tolist() == _tiktoken(texts)


def test_loading_the_encoding_writes_nothing_outside(tmp_path):
    """tiktoken copies a BPE file it loads into $TMPDIR/data-gym-cache (1.6 MB per install
    path) unless told otherwise: the workbench writes nowhere a command does not name."""
    import os
    import subprocess
    import sys

    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR")}
    code = ("import os\nfrom workbench.tokens.exact_count import exact_encoding\n"
            "assert exact_encoding().encode('hello world') == [15339, 1917]\n"
            "assert 'TIKTOKEN_CACHE_DIR' not in os.environ\n")
    r = subprocess.run([sys.executable, "-c", code], env={**env, "TMPDIR": str(tmp)}, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert list(tmp.iterdir()) == []
    # a cache the user asked for is still used
    mine = tmp_path / "mine"
    r = subprocess.run([sys.executable, "-c", code.replace("assert 'TIKTOKEN_CACHE_DIR' not", "assert 'TIKTOKEN_CACHE_DIR'")],
                       env={**env, "TMPDIR": str(tmp), "TIKTOKEN_CACHE_DIR": str(mine)}, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert len(list(mine.iterdir())) == 1 and list(tmp.iterdir()) == []
