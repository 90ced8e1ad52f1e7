"""``workbench report KIND --run DIR --out DIR``: papermill, then nbconvert, then PNG export.

1. papermill executes ``notebooks/<KIND>.ipynb`` (kernel ``python3``, language python,
   working directory = the caller's, so relative paths mean what they meant on the command
   line) with the paths/ids as parameters, writing the executed notebook to
   ``<out>/<KIND>.ipynb``;
2. nbconvert renders it to ``<out>/<KIND>.html`` without code cells (``exclude_input``),
   without stderr streams and without external scripts (the page opens offline; figures
   are inline PNG data);
3. every figure the notebook showed with :func:`workbench.report.figures.show` is written
   as ``<out>/<KIND>-<name>.png``.

A failing cell raises :class:`~workbench.report.verdict.ReportError` naming the cell (its
index, the section it sits in, its first line) and the exception, e.g.::

    policy-comparison report failed in cell 4 (section "Verdict", `v = V.build_verdict(...)`):
    ReportError: runs/x/summary.parquet: unreadable Parquet (...); executed notebook: reports/x/...

>>> from workbench.report.render import render_report                       # doctest: +SKIP
>>> res = render_report("policy-comparison", "runs/demo-synthetic", "reports/demo")  # doctest: +SKIP
>>> res.html, [p.name for p in res.figures]                                 # doctest: +SKIP
"""

from __future__ import annotations

import base64
import contextlib
import html
import json
import logging
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.report import KINDS
from workbench.report.figures import FIGURE_KEY
from workbench.report.verdict import ReportError
from workbench.selection import Constraints

PROJECT = Path(__file__).resolve().parents[2]
NOTEBOOKS = PROJECT / "notebooks"
KERNEL = "python3"
CELL_TIMEOUT_S = 900

# the parameters each report notebook declares (paths and ids only)
PARAMETERS = {
    "policy-comparison": ("run_dir", "determinism_dir", "constraints_path", "continuity_id"),
    "threshold-sweep": ("sweep_dir", "constraints_path"),
    "redaction-audit": ("run_dir", "determinism_dir", "constraints_path"),
    "determinism-audit": ("run_dir", "determinism_dir", "constraints_path"),
    "fidelity": ("run_dir", "fidelity_dir", "determinism_dir", "constraints_path", "continuity_id"),
    "compaction-inspector": ("run_dir", "constraints_path", "continuity_id", "ab_sweep_dir", "against_run_dir"),
    "replication": ("run_dir",),
}
TITLES = {
    "policy-comparison": "Policy comparison",
    "threshold-sweep": "Threshold sweep",
    "redaction-audit": "Redaction audit",
    "determinism-audit": "Determinism audit",
    "fidelity": "Fidelity",
    "compaction-inspector": "Compaction inspector",
    "replication": "Replication",
}


@dataclass
class RenderResult:
    kind: str
    html: Path
    notebook: Path
    figures: list[Path] = field(default_factory=list)


def notebook_path(kind: str) -> Path:
    if kind not in KINDS:
        raise ReportError(f"unknown report {kind!r}; choose one of {', '.join(KINDS)}")
    path = NOTEBOOKS / KINDS[kind]
    if not path.is_file():
        raise ReportError(f"{path}: report notebook not found")
    return path


def build_parameters(kind: str, run: str | Path, *, determinism: str | Path | None = None,
                     fidelity: str | Path | None = None, continuity: str | None = None,
                     constraints_path: str | Path | None = None,
                     ab_sweep: str | Path | None = None, against: str | Path | None = None) -> dict[str, Any]:
    given = {"run_dir": str(run), "sweep_dir": str(run),
             "determinism_dir": None if determinism is None else str(determinism),
             "fidelity_dir": None if fidelity is None else str(fidelity),
             "continuity_id": continuity,
             "constraints_path": None if constraints_path is None else str(constraints_path),
             "ab_sweep_dir": None if ab_sweep is None else str(ab_sweep),
             "against_run_dir": None if against is None else str(against)}
    return {k: given[k] for k in PARAMETERS[kind]}


def render_report(kind: str, run: str | Path, out: str | Path, *, determinism: str | Path | None = None,
                  fidelity: str | Path | None = None, continuity: str | None = None,
                  constraints: Constraints | None = None, cwd: str | Path | None = None,
                  timeout: int = CELL_TIMEOUT_S, force: bool = False,
                  ab_sweep: str | Path | None = None, against: str | Path | None = None) -> RenderResult:
    """Execute the ``kind`` notebook on ``run`` and write HTML, notebook and PNGs into ``out``
    (new, empty, or a report directory the workbench wrote: :mod:`workbench.rundir`);
    ``ab_sweep``: a sweep over the summarizer's prompt and model, ``against``: the same replay
    evaluated with another summarizer (both compaction-inspector)."""
    from workbench.rundir import Kind, check_output

    src = notebook_path(kind)
    cwd = Path(cwd) if cwd is not None else Path.cwd()
    run_abs = Path(run) if Path(run).is_absolute() else cwd / run
    if not run_abs.is_dir():
        raise ReportError(f"{run}: no such run directory")
    out_abs = Path(out) if Path(out).is_absolute() else cwd / out
    check_output(out_abs, Kind.REPORT, force=force, replacing=False)
    absolute = lambda p: None if p is None else (Path(p) if Path(p).is_absolute() else cwd / p)  # noqa: E731
    check_inputs(kind, run_abs, determinism=absolute(determinism), fidelity=absolute(fidelity),
                 ab_sweep=absolute(ab_sweep))
    if against is not None:
        if kind != "compaction-inspector":
            raise ReportError(f"--against is read by the compaction-inspector report only, not by {kind}")
        from workbench.evaluate.summarizer_compare import compare_runs

        compare_runs(run_abs, absolute(against))  # the same compactions, or say why not before a kernel starts
    if continuity is not None:
        check_continuity(run_abs, continuity)
    # Everything is made in a staging directory beside ``out`` and only then added to it: a
    # report stopped halfway (Ctrl-C, a killed kernel) leaves no partial report directory
    stage = _make_stage(out_abs)
    try:
        cname = f"{kind}.constraints.json"
        staged_constraints = None
        if constraints is not None and constraints != Constraints():
            staged_constraints = stage / cname
            staged_constraints.write_text(json.dumps(constraints.to_dict(), indent=2))
        params = build_parameters(kind, run, determinism=determinism, fidelity=fidelity, continuity=continuity,
                                  constraints_path=staged_constraints, ab_sweep=ab_sweep, against=against)
        try:
            nb = execute(src, stage / f"{kind}.ipynb", params, cwd=cwd, kind=kind, timeout=timeout,
                         shown_as=out_abs / f"{kind}.ipynb")
        except ReportError:
            # the executed notebook shows where a cell failed: it is kept, as the error says
            if (stage / f"{kind}.ipynb").is_file():
                _add_files(out_abs, kind, force, {f"{kind}.ipynb": (stage / f"{kind}.ipynb").read_bytes()})
            raise
        if staged_constraints is not None:  # the notebook names the file where it is kept
            _point_parameters(nb, str(staged_constraints), str((out_abs / cname).resolve()))
        import nbformat

        files = {f"{kind}.ipynb": nbformat.writes(nb).encode("utf-8"),
                 f"{kind}.html": to_html(nb, TITLES.get(kind, kind)).encode("utf-8"),
                 **figure_files(nb, prefix=kind)}
        if staged_constraints is not None:
            files[cname] = staged_constraints.read_bytes()
        written = _add_files(out_abs, kind, force, files)
    finally:
        import shutil

        shutil.rmtree(stage, ignore_errors=True)
    figures = [written[n] for n in files if n.endswith(".png")]
    return RenderResult(kind=kind, html=written[f"{kind}.html"], notebook=written[f"{kind}.ipynb"],
                        figures=figures)


def _make_stage(out: Path) -> Path:
    """``.NAME.PID.*.tmp`` beside ``out`` (inside, it would be a file the workbench did not
    write in an empty directory; `workbench clean` knows a killed writer's leftover)."""
    from workbench.rundir.temp import make_temp_dir

    out = out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    return make_temp_dir(out)


def _add_files(out: Path, kind: str, force: bool, files: dict[str, bytes]) -> dict[str, Path]:
    """Add ``files`` (name: bytes) to the report directory ``out``, each atomically."""
    from workbench.rundir import Kind, adding, claim, write_file

    with adding(out, Kind.REPORT, f"report {kind}", force=force) as target:
        claim(target, list(files))
        return {name: write_file(target, name, data) for name, data in files.items()}


def _point_parameters(nb, staged: str, final: str) -> None:
    """Rewrite a staged path in papermill's injected parameters cell to where it is kept."""
    for cell in nb.cells:
        if "injected-parameters" in (cell.get("metadata") or {}).get("tags", []):
            cell.source = cell.source.replace(repr(staged), repr(final)).replace(json.dumps(staged),
                                                                               json.dumps(final))


def check_inputs(kind: str, run_dir: Path, *, determinism: Path | None = None,
                 fidelity: Path | None = None, ab_sweep: Path | None = None) -> None:
    """What the ``kind`` notebook reads must be there, before a kernel starts."""
    from workbench.rundir import names
    from workbench.rundir import read as R

    if ab_sweep is not None and kind != "compaction-inspector":
        raise ReportError(f"--ab-sweep is read by the compaction-inspector report only, not by {kind}")
    if ab_sweep is not None and not (ab_sweep / names.SWEEP).is_file():
        raise ReportError(f"--ab-sweep {ab_sweep}: not a sweep directory (no {names.SWEEP}); run `workbench sweep "
                          "SPEC` over summarizer.prompt / summarizer.model first")

    if kind == "replication":
        if not (run_dir / "replication.parquet").is_file():
            raise ReportError(f"{run_dir}: no replication.parquet; `workbench replicate NAME` writes one "
                              "(reports/replications/NAME)")
        R.check_complete(run_dir)
        return
    if kind == "threshold-sweep":
        if not (run_dir / names.SWEEP).is_file():
            raise ReportError(f"{run_dir}: not a sweep directory (no {names.SWEEP}); a threshold-sweep "
                              "report reads `workbench sweep` output (runs/sweeps/NAME)")
        R.check_complete(run_dir)
        return
    R.load_config(run_dir)
    if kind == "determinism-audit" and R.find_determinism(run_dir, determinism) is None:
        raise ReportError(f"{run_dir}: no {names.DETERMINISM_JSON}; run `workbench audit determinism "
                          f"--out {run_dir}` first, or pass --determinism DIR")
    if kind == "compaction-inspector" and not (run_dir / names.COMPACTIONS).is_file():
        raise ReportError(f"{run_dir}: no {names.COMPACTIONS}; run `workbench audit redaction --run {run_dir}` "
                          "first (add --summary-samples 5 for the spread)")
    if kind == "fidelity":
        where = fidelity or run_dir
        if not any((where / n).is_file() for n in (names.FIDELITY, names.FIDELITY_REQUESTS)):
            raise ReportError(f"{where}: no {names.FIDELITY} / {names.FIDELITY_REQUESTS}; run "
                              f"`workbench audit fidelity --dataset DATASET --out {where}` first, "
                              "or pass --fidelity DIR")


def check_continuity(run_dir: Path, continuity: str) -> None:
    """``--continuity`` must name a continuity of the run (listing the valid ones)."""
    import polars as pl

    from workbench.rundir import names

    path = run_dir / names.SUMMARY
    if not path.is_file():
        return  # not a simulate run (a sweep): the notebook says what it needs
    ids = pl.read_parquet(path, columns=["continuity_id"])["continuity_id"].unique(maintain_order=True).to_list()
    if continuity not in ids:
        shown = ", ".join(ids[:10]) + (f" and {len(ids) - 10} more" if len(ids) > 10 else "")
        raise ReportError(f"--continuity {continuity!r} is not a continuity of {run_dir}; it has: {shown}")


def execute(src: Path, dest: Path, parameters: dict[str, Any], *, cwd: Path, kind: str,
            timeout: int = CELL_TIMEOUT_S, shown_as: Path | None = None):
    """papermill, in a child process of its own session; a failing cell becomes a ReportError
    that names it (and ``shown_as``, where the executed notebook is kept).

    Its own session: Ctrl-C reaches only this process, which stops the child and its kernel
    (the whole group) and raises KeyboardInterrupt; the kernel's shutdown noise (ZMQError,
    DeadKernelError, "Task exception was never retrieved") stays in the child's captured
    stderr instead of the user's terminal."""
    import os
    import signal
    import subprocess
    import sys

    import nbformat

    job = json.dumps({"src": str(src), "dest": str(dest), "parameters": parameters, "cwd": str(cwd),
                      "kind": kind, "timeout": timeout, "shown_as": str(shown_as or dest),
                      "parent": os.getpid()})
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(PROJECT), os.environ.get("PYTHONPATH"))
                                                       if p)}
    child = subprocess.Popen([sys.executable, "-c", "from workbench.report.render import execute_job; "
                              "execute_job()"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, cwd=str(cwd), env=env, start_new_session=True)
    try:
        out, err = child.communicate(job)
    except BaseException:  # KeyboardInterrupt above all: the child and its kernel go with us
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGTERM)
        try:
            child.wait(timeout=10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(child.pid, signal.SIGKILL)
            child.wait()
        raise
    if child.returncode == FAILED_CELL:
        raise ReportError(json.loads(out)["error"])
    if child.returncode != 0:
        last = next((ln for ln in reversed(err.strip().splitlines()) if ln.strip()), "no message")
        raise ReportError(f"{kind} report: papermill stopped (exit code {child.returncode}): {last}")
    return nbformat.read(str(dest), as_version=4)


FAILED_CELL = 3  # the child's exit code when a notebook cell failed (stdout: the description)


def execute_job() -> None:
    """The child of :func:`execute`: read the job (JSON) on stdin, run papermill."""
    import signal
    import sys

    import papermill as pm
    from papermill.exceptions import PapermillExecutionError

    from workbench.util.processes import die_with_parent

    job = json.loads(sys.stdin.read())
    # `kill -9` of `workbench report` takes this process along (its kernel follows its parent)
    die_with_parent(job["parent"])
    # the parent stops this child with SIGTERM (Ctrl-C): unwind, so the kernel's private
    # directory is removed on the way out
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    with kernel_config() as local:
        try:
            pm.execute_notebook(job["src"], job["dest"], parameters=job["parameters"], kernel_name=KERNEL,
                                language="python", cwd=job["cwd"], progress_bar=False, log_output=False,
                                execution_timeout=job["timeout"], config=local)
        except PapermillExecutionError as exc:
            sys.stdout.write(json.dumps({"error": describe_failure(job["kind"], Path(job["dest"]), exc,
                                                                   shown_as=Path(job["shown_as"]))}))
            sys.stdout.flush()
            raise SystemExit(FAILED_CELL) from None


@contextlib.contextmanager
def kernel_config() -> Iterator[Any]:
    """The configuration papermill starts a notebook's kernel with, for the block's duration.

    IPC sockets, not TCP: the kernel is local, and ipykernel warns (rightly) about
    unencrypted TCP on every start. The sockets and the connection file go into a private
    directory removed afterwards, even when the kernel dies: by default they would be
    ``kernel-ipc-N`` in the working directory and ``tmp*.json`` in ``$TMPDIR``. A socket's
    path has a length limit (108 bytes on Linux, 104 on macOS): below a ``$TMPDIR`` too deep
    for it the kernel talks TCP on localhost."""
    from traitlets.config import Config

    _remove_stale_channels(Path(tempfile.gettempdir()))
    channels = Path(tempfile.mkdtemp(prefix=f"workbench-kernel-{os.getpid()}-"))
    manager = {"transport": "tcp", "connection_file": str(channels / "kernel.json")}
    if len(os.fsencode(channels / "ipc-00")) <= _SOCKET_PATH_MAX:
        manager.update(transport="ipc", ip=str(channels / "ipc"))
    try:
        yield Config({"KernelManager": manager})
    finally:
        shutil.rmtree(channels, ignore_errors=True)


_SOCKET_PATH_MAX = 100  # sun_path's 104 bytes (macOS), less a margin


_CHANNELS = re.compile(r"^workbench-kernel-(\d+)-[A-Za-z0-9_]+$")
_CHANNEL_FILES = re.compile(r"^(ipc-\d+|kernel\.json)$")


def _remove_stale_channels(tmp: Path) -> None:
    """Remove the kernel directories of renders killed before they could (``kill -9``): named
    by a pid no process has, holding nothing but sockets and the connection file."""
    import psutil

    try:
        entries = [e for e in tmp.iterdir() if _CHANNELS.match(e.name)]
    except OSError:
        return
    for entry in entries:
        if psutil.pid_exists(int(_CHANNELS.match(entry.name).group(1))) or entry.is_symlink():
            continue
        with contextlib.suppress(OSError):
            if all(_CHANNEL_FILES.match(f.name) for f in entry.iterdir()):
                shutil.rmtree(entry)


def describe_failure(kind: str, executed: Path, exc, *, shown_as: Path | None = None) -> str:
    """'<kind> report failed in cell N (section "...", `first line`): Ename: evalue' (the
    executed notebook read at ``executed``, named as ``shown_as``, where it is kept)."""
    import nbformat

    section = None
    try:
        nb = nbformat.read(str(executed), as_version=4)
        for cell in nb.cells[: exc.cell_index]:
            if cell.cell_type == "markdown":
                for line in cell.source.splitlines():
                    if line.startswith("#"):
                        section = line.lstrip("#").strip()
    except Exception:  # the partial notebook is a courtesy; the error is what matters
        pass
    lines = (exc.source or "").splitlines()
    first = next((ln.strip() for ln in lines if ln.strip() and not ln.strip().startswith("#")), "")
    at = _failing_line(exc.traceback or [], exc.exec_count)
    where = f"cell {exc.cell_index}"
    where += f' (section "{section}", `{first[:80]}`)' if section else f" (`{first[:80]}`)"
    if at is not None and 0 < at <= len(lines):
        where += f", line {at}: `{lines[at - 1].strip()[:100]}`"
    evalue = (exc.evalue or "").strip()
    if len(evalue) > 600:
        evalue = evalue[:600] + " …"
    return f"{kind} report failed in {where}: {exc.ename}: {evalue}; executed notebook: {shown_as or executed}"


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _failing_line(traceback: list[str], exec_count) -> int | None:
    """The line of the notebook cell the traceback points at ("Cell In[3], line 6")."""
    pat = re.compile(r"Cell In\[(\d+)\], line (\d+)")
    found = None
    for entry in traceback:
        for m in pat.finditer(_ANSI.sub("", entry)):
            if exec_count is None or int(m.group(1)) == int(exec_count):
                found = int(m.group(2))
    return found


_EXTERNAL_SCRIPT = re.compile(r"<script[^>]*\ssrc=\"https?://[^\"]*\"[^>]*>\s*</script>", re.I)
_MATHJAX_BLOCK = re.compile(r"<!-- Load mathjax -->.*?<!-- End of mathjax configuration -->", re.S)


def to_html(nb, title: str) -> str:
    """HTML without code cells, stderr streams or external scripts."""
    import copy

    from nbconvert import HTMLExporter

    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = [o for o in cell.get("outputs", [])
                            if not (o.get("output_type") == "stream" and o.get("name") == "stderr")]
    exporter = HTMLExporter(template_name="lab", exclude_input=True, exclude_input_prompt=True,
                            exclude_output_prompt=True)
    exporter.log.setLevel(logging.ERROR)  # alt text is added below
    body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": title}})
    body = _MATHJAX_BLOCK.sub("", body)
    body = _EXTERNAL_SCRIPT.sub("", body)
    names = iter(_png_names(nb))

    def alt(m: re.Match) -> str:
        name = next(names, None) or "figure"
        return m.group(1) + f'alt="{html.escape(TITLES.get(name, name.replace("-", " ")))}"'

    return _IMG_ALT.sub(alt, body)


_IMG_ALT = re.compile(r'(<img\s[^>]*?)alt="No description has been provided for this image"', re.S)


def _png_names(nb) -> list[str | None]:
    return [(o.get("metadata") or {}).get(FIGURE_KEY)
            for cell in nb.cells if cell.cell_type == "code"
            for o in cell.get("outputs", []) if "image/png" in (o.get("data") or {})]


def figure_files(nb, *, prefix: str) -> dict[str, bytes]:
    """Every PNG output tagged by :func:`figures.show`, as ``{"<prefix>-<name>.png": bytes}``."""
    files: dict[str, bytes] = {}
    seen: dict[str, int] = {}
    for cell in nb.cells:
        for o in cell.get("outputs", []) if cell.cell_type == "code" else []:
            name = (o.get("metadata") or {}).get(FIGURE_KEY)
            data = (o.get("data") or {}).get("image/png")
            if not name or not data:
                continue
            n = seen.get(name, 0)
            seen[name] = n + 1
            safe = re.sub(r"[^A-Za-z0-9_.-]+", "-", name) + (f"-{n + 1}" if n else "")
            files[f"{prefix}-{safe}.png"] = base64.b64decode(data if isinstance(data, str) else "".join(data))
    return files

