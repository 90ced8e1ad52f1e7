import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_import_workbench_is_cheap():
    code = ("import sys, workbench, workbench.cli; "
            "heavy = [m for m in ('numba', 'polars', 'pyarrow', 'tiktoken', 'pandas') if m in sys.modules]; "
            "print(','.join(heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_numba_cache_lives_in_the_project_and_jit_can_be_switched_off(tmp_path):
    code = ("import os, workbench._numba as n; print(os.environ['NUMBA_CACHE_DIR']); "
            "print(os.environ.get('NUMBA_DISABLE_JIT', '0'))")
    env = {**os.environ}
    env.pop("WORKBENCH_NUMBA_CACHE", None)
    env.pop("NUMBA_CACHE_DIR", None)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    cache, disabled = out.stdout.split()
    assert Path(cache) == ROOT / ".numba_cache"
    assert disabled == "0"
    env["WORKBENCH_DISABLE_JIT"] = "1"
    env["WORKBENCH_NUMBA_CACHE"] = str(tmp_path)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    cache, disabled = out.stdout.split()
    assert Path(cache) == tmp_path and disabled == "1"


def test_jit_off_switch_runs_kernels_as_python(tmp_path):
    code = ("import numpy as np, numba\n"
            "from workbench.tokens.estimate_nb import estimate_tokens_nb, BYTE_CLASSES\n"
            "from workbench.tokens.tokenizers import count_texts\n"
            "print(type(estimate_tokens_nb).__name__, count_texts(['hello world'], 'approx').tolist())")
    env = {**os.environ, "WORKBENCH_DISABLE_JIT": "1", "WORKBENCH_NUMBA_CACHE": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert out.stdout.split()[-1] == "[2]"
