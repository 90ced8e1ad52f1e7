"""The committed notebooks: no outputs, a python3 kernelspec, a parameters cell with paths
and ids only, and one notebook per report kind."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from workbench.report import KINDS
from workbench.report.render import PARAMETERS

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
ALL = sorted(NOTEBOOKS.glob("*.ipynb"))


def test_every_report_has_its_notebook():
    names = {p.name for p in ALL}
    assert set(KINDS.values()) <= names
    assert "getting-started.ipynb" in names


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.name)
def test_committed_without_outputs(path):
    nb = json.loads(path.read_text())
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            assert cell.get("outputs") == [], f"{path.name}: a code cell has outputs"
            assert cell.get("execution_count") is None, f"{path.name}: a code cell has an execution count"
    ks = nb["metadata"]["kernelspec"]
    assert ks["name"] == "python3" and ks["language"] == "python"


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.name)
def test_parameters_cell_takes_paths_and_ids_only(path):
    nb = json.loads(path.read_text())
    tagged = [c for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) == 1, f"{path.name}: exactly one parameters-tagged cell"
    tree = ast.parse("".join(tagged[0]["source"]))
    names = []
    for node in tree.body:
        assert isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant), \
            f"{path.name}: the parameters cell holds plain assignments of constants"
        assert node.value.value is None or isinstance(node.value.value, str), \
            f"{path.name}: parameters are paths and ids (strings or None)"
        names += [t.id for t in node.targets]
    assert all(n.endswith(("_dir", "_path", "_id")) for n in names), names
    kind = next((k for k, f in KINDS.items() if f == path.name), None)
    if kind is not None:
        assert tuple(names) == PARAMETERS[kind], f"{path.name}: parameters differ from render.PARAMETERS"
