"""An edited kernel file reaches every compiled path (issue 12): numba checks only the file
that defines a function, so a kernel that calls another file's kernel kept its old machine
code and a batch sweep silently disagreed with ``simulate``. The cache is keyed by a hash of
every kernel source (``workbench._numba``); here a copy of the package is run, edited, and
run again in fresh interpreters sharing one cache root."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# one path per interpreter, as sweep workers run: machine code a process loaded first can
# stand in for another copy of the same function loaded later, hiding a stale cache
SCRIPT = """
import json, sys, tempfile
import workbench
from workbench.engine.presets import get_policy
from workbench.engine.run import simulate
from workbench.sweep.runner import collect, run_sweep
from workbench.sweep.spec import SweepSpec

path, dataset = sys.argv[1:]
if path == "simulate":
    row = simulate(dataset, [get_policy("claude-code", {"trigger.reserve_tokens": 30_000})]).summary
else:
    with tempfile.TemporaryDirectory() as out:
        run_sweep(SweepSpec.from_dict({"name": "s", "dataset": dataset, "base": "claude-code", "engine": "batch",
                                       "parameters": {"trigger.reserve_tokens": 30_000}}), out, executor="serial")
        row = collect(out)
print(json.dumps({"package": workbench.__file__, "row": row.row(0, named=True)}, default=str))
"""

# two edits that change numbers: a ledger column in the kernel itself (the case), and
# the price of output tokens in another kernel file that the batch totals call through
EDITS = {
    "engine/kernel_nb.py": ("ledger[k, LEDGER.output_tokens] = output\n",
                            "ledger[k, LEDGER.output_tokens] = output + 1\n"),
    "engine/pricing_nb.py": ("+ output * price_per_token_nb(table, PRICE.OUTPUT, prompt))",
                             "+ 2 * output * price_per_token_nb(table, PRICE.OUTPUT, prompt))"),
}


def run(package: Path, cache: Path, dataset: Path) -> dict:
    """``{"simulate": summary row, "batch": batch sweep row}``, each from a fresh interpreter."""
    env = {**os.environ, "PYTHONPATH": str(package), "WORKBENCH_NUMBA_CACHE": str(cache)}
    env.pop("WORKBENCH_DISABLE_JIT", None)
    rows = {}
    for path in ("batch", "simulate"):
        out = subprocess.run([sys.executable, "-c", SCRIPT, path, str(dataset)], capture_output=True,
                             text=True, env=env, cwd=package, timeout=900)
        assert out.returncode == 0, out.stderr[-3000:]
        result = json.loads(out.stdout.strip().splitlines()[-1])
        assert Path(result["package"]).is_relative_to(package)  # the copy ran, not the checkout
        rows[path] = result["row"]
    return rows


@pytest.mark.slow
def test_a_kernel_edit_reaches_the_batch_sweep(tmp_path):
    from workbench.synth.generate import GeneratorConfig, generate_dataset

    dataset = tmp_path / "data"
    generate_dataset(GeneratorConfig(profile="coding", events=1500, seed=3), dataset)
    package = tmp_path / "pkg"
    shutil.copytree(ROOT / "workbench", package / "workbench", ignore=shutil.ignore_patterns("__pycache__"))
    cache = tmp_path / "cache"

    before = run(package, cache, dataset)
    for key in ("output_tokens", "cost_usd", "compactions"):
        assert before["batch"][key] == pytest.approx(before["simulate"][key], rel=1e-12)
    for name, (old, new) in EDITS.items():
        path = package / "workbench" / name
        text = path.read_text()
        assert text.count(old) == 1, name
        path.write_text(text.replace(old, new))

    after = run(package, cache, dataset)
    sim, batch = after["simulate"], after["batch"]
    assert sim["output_tokens"] == before["simulate"]["output_tokens"] + before["simulate"]["calls"]
    assert sim["cost_usd"] > before["simulate"]["cost_usd"] * 1.05
    assert batch["output_tokens"] == sim["output_tokens"]
    assert batch["cost_usd"] == pytest.approx(sim["cost_usd"], rel=1e-12)
    assert len([p for p in cache.iterdir() if p.is_dir()]) == 2  # one compiled cache per kernel version
