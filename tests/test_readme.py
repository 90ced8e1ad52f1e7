"""README.md runs as written: every ``sh`` block, top to bottom, in a fresh copy of the
repository (the files git tracks), with this checkout's ``.venv``. A block preceded by
``<!-- readme-test: skip (why) -->`` is not run (the set-up commands: `make test` is what
runs this). A block preceded by ``<!-- readme-test: local-llm (why) -->`` runs only where
the local-llm extra is installed (``make local-llm``: a real model served by llama.cpp).
Then, in the same copy, the commands the comments of the specs README.md sweeps give
(``#   workbench ...``: they reuse its sweeps), with ``.venv/bin`` on the PATH; the other specs'
commands run in tests/test_spec_examples.py. Afterwards nothing shipped with the repository is
changed or missing (tests/shipped_examples.py: the copy and its checks). A block preceded
by ``<!-- readme-test: local-llm serve (why) -->`` is a server in the foreground: it runs in the
background until it serves, the next block runs, then it gets Ctrl-C and must stop cleanly."""

from __future__ import annotations

import pytest
from shipped_examples import README_GROUP, ROOT, FreshCopy, readme_scripts, shell_blocks, spec_groups


# the long test first: under xdist the quick one is then what waits behind it (tests/conftest.py)
@pytest.mark.slow
def test_readme_runs_as_written_and_then_the_examples_of_the_specs_it_sweeps(tmp_path):
    copy = FreshCopy.make(tmp_path)
    copy.run(readme_scripts(copy.root) + spec_groups(copy.root)[README_GROUP])
    for path in ("reports/coding/policy-comparison.html", "reports/recorded/fidelity.html",
                 "reports/sweep/threshold-sweep.html", "runs/det/determinism.parquet"):
        assert (copy.root / path).is_file(), path


def test_the_blocks_are_found():
    blocks = shell_blocks((ROOT / "README.md").read_text())
    commands = "\n".join(b for _, b, _ in blocks)
    assert len(blocks) >= 4
    for cmd in ("generate", "import", "simulate", "audit redaction", "sweep", "tune", "report fidelity"):
        assert f"workbench {cmd}" in commands
    assert "make demo" not in commands  # the set-up block is marked
    # the local model's example runs only where the extra is installed
    assert "serve-model" not in commands and not any(serves for _, _, serves in blocks)
    with_model = shell_blocks((ROOT / "README.md").read_text(), local_llm=True)
    served = [b for _, b, serves in with_model if serves]
    assert len(served) == 1 and "workbench serve-model" in served[0]  # the server: a block of its own
    after = with_model[[serves for _, _, serves in with_model].index(True) + 1][1]
    assert "--summarizer http" in after and "report compaction-inspector" in after
