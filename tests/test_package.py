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
            "print(os.environ.get('NUMBA_DISABLE_JIT', '0')); print(n.cache_key())")
    env = {**os.environ}
    env.pop("WORKBENCH_NUMBA_CACHE", None)
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "inherited")  # e.g. from another checkout's process
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    cache, disabled, key = out.stdout.split()
    assert Path(cache) == ROOT / ".numba_cache" / key
    assert disabled == "0"
    env["WORKBENCH_DISABLE_JIT"] = "1"
    env["WORKBENCH_NUMBA_CACHE"] = str(tmp_path)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    cache, disabled, key = out.stdout.split()
    assert Path(cache) == tmp_path / key and disabled == "1"


def test_cache_key_covers_every_kernel_source_and_what_they_import():
    import workbench._numba as n

    names = {p.relative_to(ROOT / "workbench").as_posix() for p in n.kernel_sources()}
    kernels = {p.relative_to(ROOT / "workbench").as_posix() for p in (ROOT / "workbench").rglob("*_nb.py")}
    assert kernels and kernels <= names
    # constants frozen into kernels come from these; the compile options from _numba.py
    assert {"_numba.py", "engine/enums.py", "engine/records.py"} <= names


def test_kernel_imports_are_found_in_every_import_style(tmp_path):
    import workbench._numba as n

    source = tmp_path / "k_nb.py"
    source.write_text("from workbench.engine import enums as E, records\n"
                      "from workbench.engine.pricing_nb import (  # the price rule\n"
                      "    PRICE,\n    call_cost_nb,\n)\n"
                      "import workbench.engine.metrics_nb\n"
                      "import numpy as np\n"
                      "def f():\n    from workbench.tokens import estimate_nb\n")
    found = {p.relative_to(ROOT / "workbench").as_posix() for p in n._imported_package_files(source)}
    assert found == {"engine/enums.py", "engine/records.py", "engine/pricing_nb.py", "engine/metrics_nb.py",
                     "tokens/estimate_nb.py"}


def test_stale_cache_keys_are_pruned(tmp_path):
    import workbench._numba as n

    keys = [f"{i:016x}" for i in range(7)]
    for age, key in enumerate(keys):
        (tmp_path / key).mkdir()
        os.utime(tmp_path / key, (1_000_000 + age, 1_000_000 + age))
    (tmp_path / "not-a-key").mkdir()
    (tmp_path / f"engine_{'a' * 40}").mkdir()  # numba's layout before keys: stale
    (tmp_path / "notes.txt").write_text("kept")
    current = tmp_path / keys[0]  # the oldest, but in use
    n._prune(current)
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == sorted([keys[0], *keys[-(n.KEEP_CACHES - 1):], "not-a-key", "notes.txt"])


def test_every_compiled_function_is_named_nb():
    """Walk every module of the package: each numba dispatcher it defines ends in ``_nb``
    and caches to disk (it came from ``workbench._numba.njit``)."""
    import importlib

    from numba.core.caching import NullCache
    from numba.core.dispatcher import Dispatcher

    found, wrong = [], []
    for path in sorted((ROOT / "workbench").rglob("*.py")):
        if path.name == "__main__.py":  # runs the command line when imported
            continue
        parts = path.relative_to(ROOT).with_suffix("").parts
        module = importlib.import_module(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
        for name, obj in vars(module).items():
            if isinstance(obj, Dispatcher) and obj.py_func.__module__ == module.__name__:
                found.append(f"{module.__name__}.{name}")
                if not name.endswith("_nb") or isinstance(obj._cache, NullCache):
                    wrong.append(f"{module.__name__}.{name}")
    assert "workbench.engine.kernel_nb.simulate_nb" in found and len(found) > 30
    assert wrong == []


def test_jit_off_switch_runs_kernels_as_python(tmp_path):
    code = ("import numpy as np, numba\n"
            "from workbench.tokens.estimate_nb import estimate_tokens_nb, BYTE_CLASSES\n"
            "from workbench.tokens.tokenizers import count_texts\n"
            "print(type(estimate_tokens_nb).__name__, count_texts(['hello world'], 'approx').tolist())")
    env = {**os.environ, "WORKBENCH_DISABLE_JIT": "1", "WORKBENCH_NUMBA_CACHE": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert out.stdout.split()[-1] == "[2]"


def test_help_shows_the_front_door_functions_with_their_signatures():
    import pydoc
    import re

    import workbench as wb
    from workbench.report import KINDS

    text = pydoc.render_doc(wb, renderer=pydoc.plaintext)
    functions = text.split("FUNCTIONS", 1)[1].split("\nDATA", 1)[0]
    for name in ("evaluate", "report", "sweep", "simulate"):
        assert re.search(rf"^    {name}\(", functions, re.M), f"{name} has no signature under FUNCTIONS"
    data = text.split("\nDATA", 1)[1] if "\nDATA" in text else ""
    assert not re.search(r"^    (evaluate|report|sweep) = ", data, re.M)
    assert all(f"``{k}``" in wb.report.__doc__ for k in KINDS), "the report docstring omits a kind"
    assert callable(wb.evaluate) and wb.sweep.__name__ == "sweep"
    import workbench.evaluate.pipeline as pipeline  # the subpackage stays importable

    assert pipeline.__name__ == "workbench.evaluate.pipeline" and callable(wb.evaluate)


def test_the_front_door_simulate_spells_out_every_option_of_the_engine():
    """``wb.simulate`` hides no parameter behind ``**options``: its keywords are the engine's,
    with the same defaults."""
    import inspect

    import workbench as wb
    from workbench.engine.run import simulate

    front, engine = inspect.signature(wb.simulate).parameters, inspect.signature(simulate).parameters
    assert not any(p.kind is p.VAR_KEYWORD for p in front.values())
    assert list(front) == list(engine)
    assert {n: p.default for n, p in front.items()} == {n: p.default for n, p in engine.items()}


def test_simulate_takes_one_policy_name(tmp_path):
    import workbench as wb

    ds = wb.generate("coding", events=300, seed=1, out=tmp_path / "d")
    result = wb.simulate(ds, "observation-masking", engine="reference")
    assert result.summary["policy"].to_list() == ["observation-masking"]
    assert result.ledger.height > 0 and result.ledger["policy"].unique().to_list() == ["observation-masking"]


def test_audit_results_have_their_tables_as_attributes():
    import polars as pl
    import pytest

    from workbench.audits import AuditResult

    texts = pl.DataFrame({"a": [1]})
    res = AuditResult("redaction", {"texts.parquet": texts}, {"evaluation.json": {"passed": True}}, None)
    assert res.texts is texts and res.tables["texts.parquet"] is texts  # the old mapping still works
    assert res.evaluation == {"passed": True}
    assert {"texts", "evaluation"} <= set(dir(res))
    with pytest.raises(AttributeError, match="has no table or document 'leakage'; it has texts, evaluation"):
        _ = res.leakage


def test_every_audit_is_reachable_from_the_front_door():
    import inspect

    import workbench as wb

    assert wb.audit.redaction is wb.api.evaluate  # one concept, one function
    for name, first in (("conformance", "run_dir"), ("determinism", "dataset"), ("fidelity", "dataset")):
        fn = getattr(wb.audit, name)
        assert list(inspect.signature(fn).parameters)[0] == first and fn.__doc__, name
    assert "audit" in wb.__all__
