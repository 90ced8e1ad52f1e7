"""Kernel helpers take the replay's arrays as two bundles (``kernel_nb.CONT``: the continuity
as the policy sees it; ``kernel_nb.BUFS``: the per-request tables and the work buffers), not
a dozen positional arrays each; every helper unpacks a bundle in its declared order."""

from __future__ import annotations

import ast
from pathlib import Path

from workbench.engine import kernel_nb as nb

SOURCE = Path(nb.__file__).read_text()
ARRAYS = set(nb.CONT) | set(nb.BUFS)
MOST_LOOSE_ARRAYS = 5  # a small leaf helper may take a few arrays of its own


def _functions() -> list[ast.FunctionDef]:
    return [n for n in ast.walk(ast.parse(SOURCE)) if isinstance(n, ast.FunctionDef)]


def test_no_helper_takes_the_replays_arrays_one_by_one():
    loose = {f.name: [a.arg for a in f.args.args if a.arg in ARRAYS] for f in _functions()
             if f.name.startswith("_")}
    many = {name: args for name, args in loose.items() if len(args) > MOST_LOOSE_ARRAYS}
    assert many == {}, f"helpers taking the replay's arrays one by one (bundle them): {many}"


def test_every_unpacked_bundle_follows_its_declaration():
    checked = 0
    for f in _functions():
        for node in ast.walk(f):
            if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Name)
                    and node.value.id in ("cont", "bufs") and isinstance(node.targets[0], ast.Tuple)):
                continue
            names = [t.id for t in node.targets[0].elts]
            declared = nb.CONT if node.value.id == "cont" else nb.BUFS
            assert len(names) == len(declared), (f.name, names)
            assert all(n in ("_", d) for n, d in zip(names, declared, strict=True)), (f.name, names, declared)
            checked += 1
    assert checked >= 20  # the request loop's helpers all unpack their bundles
