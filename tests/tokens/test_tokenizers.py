import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.errors import WorkbenchError
from workbench.tokens.estimate_nb import estimate_tokens_py
from workbench.tokens.tokenizers import count_texts


def test_exact_counts_are_cl100k():
    # cl100k_base: "hello world" -> [15339, 1917]; "tiktoken is great!" -> 6 tokens
    assert count_texts(["hello world", "tiktoken is great!", "", None], "cl100k").tolist() == [2, 6, 0, 0]


def test_exact_tokenizer_needs_no_network(tmp_path):
    """With sockets disabled and an empty tiktoken cache, the encoding still loads."""
    code = (
        "import socket\n"
        "def refuse(*a, **k): raise OSError('network disabled in this test')\n"
        "socket.socket.connect = refuse\n"
        "socket.create_connection = refuse\n"
        "from workbench.tokens.tokenizers import count_texts\n"
        "print(count_texts(['offline tokenization works'], 'cl100k').tolist())\n"
    )
    env = {**os.environ, "TIKTOKEN_CACHE_DIR": str(tmp_path / "empty-cache"),
           "DATA_GYM_CACHE_DIR": str(tmp_path / "empty-cache")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[4]"


def test_unknown_tokenizer_is_a_clear_error():
    with pytest.raises(WorkbenchError, match="unknown tokenizer 'gpt2'"):
        count_texts(["x"], "gpt2")


def test_chars4_heuristic():
    assert count_texts(["abcd", "abcde", ""], "chars4").tolist() == [1, 2, 0]


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(st.text(max_size=300), max_size=20))
def test_estimator_kernel_matches_its_python_twin(texts):
    assert count_texts(texts, "approx").tolist() == [estimate_tokens_py(t) for t in texts]


def test_estimator_is_close_to_exact_on_real_transcript_text(recorded_dir):
    lines = []
    for path in sorted((recorded_dir / "claude-code").glob("*.jsonl")):
        lines += path.read_text().splitlines()[:400]
    exact = count_texts(lines, "cl100k").astype(np.int64)
    approx = count_texts(lines, "approx").astype(np.int64)
    total_error = abs(approx.sum() - exact.sum()) / exact.sum()
    assert total_error < 0.25, f"estimator off by {total_error:.1%} in total"
