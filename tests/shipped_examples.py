"""The commands the repository ships as examples, found and run as written: the ``sh`` blocks of
README.md and the commands the comments of ``simulations/*.yaml`` give (``#   workbench ...``).
They run in a fresh copy of the repository (the files git tracks, with this checkout's
``.venv``), which they must leave as it was: nothing shipped changed or missing, nothing left in
the copy's ``$TMPDIR``. tests/test_readme.py and tests/test_spec_examples.py share the work
(README.md's blocks and the spec examples that reuse its sweeps; the other spec examples, one
copy per dataset they generate), so that two test workers can run them side by side."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
SKIP = "<!-- readme-test: skip"
LOCAL_LLM = "<!-- readme-test: local-llm"
SERVE = "<!-- readme-test: local-llm serve"  # a server in the foreground: a terminal of its own
SERVING = "Ctrl-C stops the server"  # what `workbench serve-model` prints once it answers
README_GROUP = "readme"  # the spec examples that run in the README's copy, after its blocks
_SWEEP = re.compile(r"workbench sweep (simulations/[\w.-]+\.yaml)")


def local_llm_installed() -> bool:
    from workbench.summarize.local_server import LocalModelUnavailable, default_model_path, missing_modules

    try:
        default_model_path()
    except LocalModelUnavailable:
        return False
    return not missing_modules()


def shell_blocks(text: str, *, local_llm: bool = False) -> list[tuple[int, str, bool]]:
    """``(line, script, serves)`` of every ``sh`` fence not marked to skip (markdown-it
    parses); one marked local-llm only when ``local_llm``; ``serves``: marked as a server in
    the foreground (``<!-- readme-test: local-llm serve``): it runs in the background until it
    says it serves, the next block runs, then it gets Ctrl-C, as a terminal sends it, and must
    stop cleanly."""
    from markdown_it import MarkdownIt

    tokens = MarkdownIt().parse(text)
    blocks, skip_next, serves = [], False, False
    for tok in tokens:
        marker = tok.content.lstrip() if tok.type == "html_block" else ""
        if marker.startswith(SKIP):
            skip_next = True
        elif marker.startswith(LOCAL_LLM):
            skip_next, serves = not local_llm, marker.startswith(SERVE)
        elif tok.type == "fence":
            if tok.info.strip() in ("sh", "bash", "shell") and not skip_next:
                blocks.append((tok.map[0] + 1, tok.content, serves))
            skip_next = serves = False
    return blocks


class Served:
    """A README block that serves in the foreground, run in the background in a session of its
    own (its output in a file) until it prints :data:`SERVING`; :meth:`stop` is Ctrl-C."""

    def __init__(self, where: str, script: str, cwd: Path, env: dict, log: Path, timeout: float = 900):
        self.where, self.log = where, log
        with log.open("w") as out:
            self.proc = subprocess.Popen(["bash", "-euo", "pipefail", "-c", script], cwd=cwd, env=env,
                                         stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                         start_new_session=True)
        deadline = time.monotonic() + timeout
        while SERVING not in log.read_text():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise AssertionError(f"{where} did not start serving:\n{log.read_text()[-3000:]}")
            time.sleep(0.2)

    def stop(self) -> str:
        import signal

        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGINT)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
                raise AssertionError(f"{self.where} did not stop on Ctrl-C:\n{self.log.read_text()[-3000:]}") from None
        return self.log.read_text()


def spec_examples(spec: Path) -> list[tuple[int, str]]:
    """``(line, command)`` of every command a spec's comments give: an indented comment line
    ``#   workbench ...`` and the comment lines it continues onto (a trailing backslash)."""
    found: list[tuple[int, str]] = []
    pending: list[str] = []
    start = 0
    for number, line in enumerate(spec.read_text().splitlines(), start=1):
        text = line[1:].strip() if line.startswith("#") else None
        if pending:
            if text is None:
                raise AssertionError(f"{spec}:{start}: the example's last line ends in a backslash")
            pending.append(text)
        elif text is not None and line.startswith("#  ") and text.startswith("workbench "):  # indented
            pending, start = [text], number
        if pending and not pending[-1].endswith("\\"):
            found.append((start, "\n".join(pending)))
            pending = []
    return found


def readme_scripts(root: Path) -> list[tuple[str, str, bool]]:
    """``(where, script, serves)`` of README.md's blocks, top to bottom."""
    return [(f"README.md block at line {line}", script, serves)
            for line, script, serves in shell_blocks((root / "README.md").read_text(),
                                                     local_llm=local_llm_installed())]


def spec_groups(root: Path) -> dict[str, list[tuple[str, str]]]:
    """``{group: [(where, command), ...]}``: every spec example in exactly one group, in spec-name
    order. A spec that a README block sweeps is in :data:`README_GROUP` (its examples reuse that
    sweep, so they run after the README's blocks, in its copy); the others are grouped by the
    dataset their spec generates (``dataset.path``), so that specs sharing one generate it once."""
    readme = shell_blocks((root / "README.md").read_text())
    swept = {m.group(1) for _, script, _ in readme for m in _SWEEP.finditer(script)}
    groups: dict[str, list[tuple[str, str]]] = {}
    for spec in sorted((root / "simulations").glob("*.yaml")):
        rel = spec.relative_to(root).as_posix()
        group = README_GROUP if rel in swept else Path(yaml.safe_load(spec.read_text())["dataset"]["path"]).name
        groups.setdefault(group, []).extend((f"{rel}:{line}", command) for line, command in spec_examples(spec))
    return groups


def _tracked_files() -> list[str]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: the shipped examples run in a copy of the files git tracks")
    out = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, check=True)
    return [f for f in out.stdout.decode().split("\0") if f]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@dataclass
class FreshCopy:
    """A copy of the files git tracks (``root``), its digests taken, and a ``$TMPDIR`` of its own
    (``tmp``): whatever the commands leave there was written outside the paths they name."""

    root: Path
    tmp: Path
    shipped: dict[str, str]

    @classmethod
    def make(cls, where: Path) -> FreshCopy:
        root = where / "clone"
        files = _tracked_files()
        for f in files:
            src = ROOT / f
            if src.is_file():
                (root / f).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, root / f)
        (root / ".venv").symlink_to(Path(sys.prefix))
        tmp = where / "tmp"
        tmp.mkdir()
        return cls(root, tmp, {f: _digest(root / f) for f in files if (root / f).is_file()})

    def run(self, scripts: Iterable[tuple]) -> None:
        """Run each ``(where, script)`` (or ``(where, script, serves)``: see :func:`shell_blocks`)
        in turn (bash, ``-euo pipefail``), each of which must succeed and print no cut table;
        then the checks of the copy. ``pytest -s`` shows where the time went."""
        env = {**os.environ, "TMPDIR": str(self.tmp), "COLUMNS": "80",
               # `workbench` as a spec says it
               "PATH": f"{self.root / '.venv' / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"}
        took: list[tuple[float, str]] = []
        server: Served | None = None
        try:
            for where, script, *serves in scripts:
                started = time.perf_counter()
                if serves and serves[0]:
                    server = Served(where, script, self.root, env, self.tmp.parent / "served.log")
                    took.append((time.perf_counter() - started, where))
                    continue
                r = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=self.root, capture_output=True,
                                   text=True, timeout=1200, env=env)
                took.append((time.perf_counter() - started, where))
                assert r.returncode == 0, (f"{where} failed ({r.returncode}):\n{script}\n"
                                           f"--- stdout\n{r.stdout[-3000:]}\n--- stderr\n{r.stderr[-3000:]}")
                # piped (as here), tables print every figure and name in full
                assert "…" not in r.stdout, f"{where} printed a cut table:\n{r.stdout[-3000:]}"
                if server is not None:  # the block that used the server has run: Ctrl-C
                    served, server = server.stop(), None
                    assert "stopped the model server" in served, served[-3000:]
        finally:
            if server is not None:
                server.stop()
        print("\n".join(f"{dt:7.1f}s  {where}" for dt, where in sorted(took, reverse=True)))
        assert sorted(p.name for p in self.tmp.iterdir()) == [], "the examples left files in $TMPDIR"
        after = {f: _digest(self.root / f) for f in self.shipped if (self.root / f).is_file()}
        assert after == self.shipped, "an example changed or deleted a file shipped with the repository"
