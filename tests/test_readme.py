"""README.md runs as written: every ``sh`` block, top to bottom, in a fresh copy of the
repository (the files git tracks), with this checkout's ``.venv``. A block preceded by
``<!-- readme-test: skip (why) -->`` is not run (the set-up commands: `make test` is what
runs this). A block preceded by ``<!-- readme-test: local-llm (why) -->`` runs only where
the local-llm extra is installed (``make local-llm``: a real model served by llama.cpp); one
preceded by ``<!-- readme-test: local-llm serve (why) -->`` is a server in the foreground (a
terminal of its own): it runs in the background until it says it serves, the next block runs,
then it gets Ctrl-C, as a terminal sends it, and must stop cleanly.
Then, in the same copy, every command the comments of ``simulations/*.yaml`` give
(``#   workbench ...``), with ``.venv/bin`` on the PATH. Afterwards nothing shipped with the
repository is changed or missing."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SKIP = "<!-- readme-test: skip"
LOCAL_LLM = "<!-- readme-test: local-llm"
SERVE = "<!-- readme-test: local-llm serve"
#: what `workbench serve-model` prints once it answers
SERVING = "Ctrl-C stops the server"


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
    the foreground."""
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


def _tracked_files() -> list[str]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: the README test copies the files git tracks")
    out = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, check=True)
    return [f for f in out.stdout.decode().split("\0") if f]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.slow
def test_readme_and_spec_examples_run_as_written(tmp_path):
    clone = tmp_path / "clone"
    files = _tracked_files()
    for f in files:
        src = ROOT / f
        if src.is_file():
            (clone / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, clone / f)
    (clone / ".venv").symlink_to(Path(sys.prefix))
    before = {f: _digest(clone / f) for f in files if (clone / f).is_file()}
    # a temporary directory of their own: whatever the commands leave there was written
    # outside the paths the README names
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp), "COLUMNS": "80"}
    scripts = [(f"README.md block at line {line}", script, serves) for line, script, serves
               in shell_blocks((clone / "README.md").read_text(), local_llm=local_llm_installed())]
    # after the README (whose sweeps they reuse), the commands the specs' comments give
    scripts += [(f"{spec.relative_to(clone)}:{line}", command, False)
                for spec in sorted((clone / "simulations").glob("*.yaml")) for line, command in spec_examples(spec)]
    env["PATH"] = f"{clone / '.venv' / 'bin'}{os.pathsep}{env.get('PATH', '')}"  # `workbench` as a spec says it
    took: list[tuple[float, str]] = []
    server: Served | None = None
    try:
        for where, script, serves in scripts:
            started = time.perf_counter()
            if serves:
                server = Served(where, script, clone, env, tmp_path / "served.log")
                took.append((time.perf_counter() - started, where))
                continue
            r = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=clone, capture_output=True,
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
    # (``pytest -s`` shows where the time goes)
    print("\n".join(f"{dt:7.1f}s  {where}" for dt, where in sorted(took, reverse=True)))
    assert sorted(p.name for p in tmp.iterdir()) == [], "README commands left files in $TMPDIR"
    after = {f: _digest(clone / f) for f in files if (clone / f).is_file()}
    assert after == before, "a README command changed or deleted a file shipped with the repository"
    for path in ("reports/coding/policy-comparison.html", "reports/recorded/fidelity.html",
                 "reports/sweep/threshold-sweep.html", "runs/det/determinism.parquet"):
        assert (clone / path).is_file(), path
