"""The commands the comments of ``simulations/*.yaml`` give (``#   workbench ...``) run as
written, with ``.venv/bin`` on the PATH, in fresh copies of the repository: those of a spec
README.md sweeps after its blocks (tests/test_readme.py), the others here, one copy per dataset
their specs generate (a test each, so that test workers share them). Nothing shipped with the
repository changes (tests/shipped_examples.py: the copy and its checks)."""

from __future__ import annotations

import pytest
from shipped_examples import README_GROUP, ROOT, FreshCopy, spec_examples, spec_groups

GROUPS = sorted(set(spec_groups(ROOT)) - {README_GROUP})


def test_spec_examples_are_found(tmp_path):
    examples = {p.name: spec_examples(p) for p in sorted((ROOT / "simulations").glob("*.yaml"))}
    assert examples and all(examples.values()), f"a spec gives no command: {examples}"
    tune = examples["claude-code-threshold.yaml"][-1][1]
    assert tune.startswith("workbench tune") and "--harness claude-code" in tune and "retention>=" in tune
    # a continued line, and a comment that is not a command
    spec = tmp_path / "s.yaml"
    spec.write_text("# a sweep\n#\n#   workbench tune s.yaml \\\n#       --constraint 'leaks==0'\n"
                    "# workbench is a word here\nname: s\n")
    assert spec_examples(spec) == [(3, "workbench tune s.yaml \\\n--constraint 'leaks==0'")]


def test_every_spec_example_runs_once():
    groups = spec_groups(ROOT)
    ran = [where for examples in groups.values() for where, _ in examples]
    everything = [f"simulations/{name}:{line}" for name in sorted(p.name for p in (ROOT / "simulations").glob("*.yaml"))
                  for line, _ in spec_examples(ROOT / "simulations" / name)]
    assert sorted(ran) == sorted(everything) and len(set(ran)) == len(ran)
    # the README's threshold sweep is reused by its spec's tune, in the README's copy
    assert "simulations/claude-code-threshold.yaml:10" in [w for w, _ in groups[README_GROUP]]
    # specs on one dataset share a copy: both ADR-0011 sweeps generate sweep-chat-34k
    assert {w.split(":")[0] for w, _ in groups["sweep-chat-34k"]} == {"simulations/adr0011-compile.yaml",
                                                                       "simulations/adr0011-stride.yaml"}


@pytest.mark.slow
@pytest.mark.parametrize("group", GROUPS)
def test_spec_examples_run_as_written(group, tmp_path):
    copy = FreshCopy.make(tmp_path)
    copy.run(spec_groups(copy.root)[group])
