"""Shared test fixtures, and a test session that leaves nothing behind.

Every temporary file of the session (pytest's ``tmp_path`` directories, and whatever the
workbench, papermill's kernels, Dask or a subprocess puts in the temporary directory) lives
in one directory of its own, ``$TMPDIR/workbench-tests-*``: ``TMPDIR`` points inside it for
the session and every process it starts, and the per-user caches of matplotlib, IPython and
the XDG directories too (a user's matplotlibrc does not reach the figures either). It is
removed when the session passes (kept, and named, when it fails). At the end the session
fails if it left a new file in the repository (outside the caches ``.pytest_cache``,
``.numba_cache``, ``.hypothesis``, ``__pycache__``), in its temporary directory (pytest's
``tmp_path`` directories and ``$WORKBENCH_TEST_SCRATCH`` are apart from it) or in ``$HOME``
(two levels deep: ``~/.config/chromium``); a ``--basetemp`` given is the session's too.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from bundled_logs import BUNDLED_LOGS

ROOT = Path(__file__).resolve().parents[1]
# what a test run may add to the repository: caches of pytest, numba, hypothesis, Python (and
# ruff's, of a `make lint` run meanwhile)
REPO_CACHES = frozenset({".pytest_cache", ".numba_cache", ".hypothesis", "__pycache__", ".ruff_cache"})
REPO_SKIP = frozenset({".git", ".venv"})  # not the project's files (a worktree's .git is a file)
HOME_DEPTH = 2  # ~/.cache/dconf, ~/.config/chromium: deep enough for a tool's own directory

# the session's temporary directory, and the per-user caches the stack writes below $HOME
# (matplotlib's font list, IPython's profile, Jupyter's runtime files), as names under it
_ENV = {"TMPDIR": "tmp", "MPLCONFIGDIR": "matplotlib", "IPYTHONDIR": "ipython",
        "XDG_CACHE_HOME": "cache", "XDG_CONFIG_HOME": "config", "XDG_DATA_HOME": "data",
        "XDG_STATE_HOME": "state", "JUPYTER_RUNTIME_DIR": "jupyter-runtime"}

_SESSION: dict[str, object] = {}


def _repo_listing(root: Path) -> set[str]:
    found: set[str] = set()
    for dirpath, dirnames, filenames in os.walk(root):
        rel = Path(dirpath).relative_to(root)
        dirnames[:] = [d for d in dirnames if d not in REPO_CACHES and not (rel == Path(".") and d in REPO_SKIP)]
        found.update(str(rel / n) for n in dirnames + filenames
                     if not (rel == Path(".") and n in REPO_SKIP))
    return found


def _listing(root: Path, depth: int) -> set[str]:
    """Names below ``root`` down to ``depth`` levels (symbolic links not followed)."""
    found: set[str] = set()
    if depth <= 0:
        return found
    try:
        entries = list(os.scandir(root))
    except OSError:
        return found
    for entry in entries:
        found.add(entry.path)
        if entry.is_dir(follow_symlinks=False):
            found |= _listing(Path(entry.path), depth - 1)
    return found


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    """Before pytest makes its temporary directories: one private directory for the session."""
    if hasattr(config, "workerinput") or "root" in _SESSION:
        return
    home = Path.home()
    _SESSION["repo"] = _repo_listing(ROOT)
    _SESSION["home"] = _listing(home, HOME_DEPTH)
    root = Path(tempfile.mkdtemp(prefix="workbench-tests-"))
    _SESSION["root"] = root
    if config.option.basetemp is None:
        config.option.basetemp = str(root / "pytest")  # instead of /tmp/pytest-of-USER, kept 3 runs
    _SESSION["basetemp"] = Path(config.option.basetemp).resolve()
    tmp = root / "tmp"
    caches = root / "caches"
    for d in (tmp, caches, root / "scratch"):
        d.mkdir()
    _SESSION["saved_env"] = {k: os.environ.get(k) for k in (*_ENV, "WORKBENCH_TEST_SCRATCH")}
    os.environ.update({"TMPDIR": str(tmp), **{k: str(caches / sub) for k, sub in _ENV.items() if k != "TMPDIR"}})
    _reuse_font_list(caches / _ENV["MPLCONFIGDIR"])
    # for data a test module caches outside fixtures (functools.cache helpers that hypothesis
    # tests call), removed with the session's directory
    os.environ["WORKBENCH_TEST_SCRATCH"] = str(root / "scratch")
    tempfile.tempdir = str(tmp)
    _SESSION["tmp"] = tmp


def _reuse_font_list(config_dir: Path) -> None:
    """Start from the user's matplotlib font list, if there is one: a kernel that builds it
    says so on stderr, which a notebook test reads as a failure."""
    saved = _SESSION["saved_env"]
    where = saved.get("MPLCONFIGDIR") or os.path.join(saved.get("XDG_CACHE_HOME") or
                                                      os.path.join(Path.home(), ".cache"), "matplotlib")
    config_dir.mkdir(parents=True, exist_ok=True)
    for font_list in Path(where).glob("fontlist-*.json"):
        shutil.copy2(font_list, config_dir / font_list.name)


def _left_behind() -> list[str]:
    left = [f"{ROOT / p}" for p in sorted(_repo_listing(ROOT) - _SESSION["repo"])]
    tmp = _SESSION["tmp"]
    left += [str(p) for p in sorted(tmp.iterdir())] if tmp.is_dir() else []
    left += sorted(_listing(Path.home(), HOME_DEPTH) - _SESSION["home"])
    # the session's own directory is not litter, wherever it is (the repository, $HOME); a
    # name inside a new directory says the same thing again
    mine = [str(_SESSION["root"]), str(_SESSION["basetemp"])]
    left = sorted({p for p in left if p.startswith(str(tmp) + os.sep)
                   or not any(p == m or p.startswith(m + os.sep) for m in mine)})
    return [p for p in left if not any(p.startswith(q + os.sep) for q in left)]


def pytest_sessionfinish(session, exitstatus):
    if "root" not in _SESSION or hasattr(session.config, "workerinput"):
        return
    left = _left_behind()
    _SESSION["keep"] = bool(left) or exitstatus != 0
    if left:
        _SESSION["left"] = left
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    left = _SESSION.get("left")
    if left:
        terminalreporter.section("files left behind", sep="=", red=True, bold=True)
        terminalreporter.line(f"the test session wrote {len(left)} path(s) outside its temporary "
                              "directories, so the run fails:", red=True)
        for p in left[:50]:
            terminalreporter.line(f"  {p}")
        if len(left) > 50:
            terminalreporter.line(f"  ... and {len(left) - 50} more")


def pytest_unconfigure(config):
    root = _SESSION.pop("root", None)
    if root is None:
        return
    for k, v in _SESSION.pop("saved_env", {}).items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
    tempfile.tempdir = None
    if _SESSION.get("keep"):
        print(f"\nthe session's temporary files are kept in {root}")
    else:
        shutil.rmtree(root, ignore_errors=True)


# Under pytest-xdist (`make test`: every core, `--dist loadscope`: a module's tests, which share
# its fixtures, run on one worker) the longest tests start first, so that none of them is still
# running alone at the end: the README's blocks (one chain, ~12 minutes on one core) and the spec
# examples, whose tests are units of their own (a copy of the repository each, no shared fixture).
RUN_FIRST = ("tests/test_readme.py", "tests/test_spec_examples.py")
EACH_TEST_APART = ("tests/test_spec_examples.py",)


def pytest_collection_modifyitems(session, config, items):
    """The modules of :data:`RUN_FIRST` first, in that order (a stable sort: every module's
    tests stay together and in their order)."""
    def rank(item) -> int:
        return next((i for i, prefix in enumerate(RUN_FIRST) if item.nodeid.startswith(prefix + "::")), len(RUN_FIRST))

    items.sort(key=rank)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadscope`` as xdist has it, except that each test of :data:`EACH_TEST_APART`
    is a unit of its own, and units go out in collection order (xdist would put the modules
    with the most tests first, and the README's, with two, last)."""
    if config.getvalue("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class LongestFirst(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return nodeid if nodeid.startswith(EACH_TEST_APART) else super()._split_scope(nodeid)

        def _reschedule(self, node) -> None:
            # a worker starts a test once the next one has arrived (fixture teardown needs to
            # know it), so one queued behind the running test is enough; xdist queues up to
            # two, which then wait behind a README-long test while the other worker idles
            if not node.shutting_down and self.workqueue and self._pending_of(self.assigned_work[node]) >= 2:
                return
            super()._reschedule(node)

    config.option.loadscopereorder = False
    return LongestFirst(config, log)


@pytest.fixture(scope="session")
def recorded_dir() -> Path:
    """The real agent logs bundled with the repository (``datasets/bundled``)."""
    assert BUNDLED_LOGS.is_dir(), f"bundled logs missing at {BUNDLED_LOGS} (part of the repository)"
    return BUNDLED_LOGS


@pytest.fixture(scope="session")
def imported_bundle(recorded_dir, tmp_path_factory):
    """Every bundled log imported once (a dataset the calibration profiles are fitted on)."""
    from workbench.continuity.dataset import load_dataset
    from workbench.sources.importer import import_paths

    out = tmp_path_factory.mktemp("bundle") / "bundled"
    import_paths([recorded_dir], out)
    return load_dataset(out)
