"""`make test` runs the suite on every core (pytest-xdist, ``--dist loadscope``), and
tests/conftest.py stays right there: the README's test starts first, with nothing but a short
unit queued behind it; each spec-example test is a unit of its own, so both workers run them;
the session-end check of files left behind runs once, in the controller, after every worker."""

from __future__ import annotations

import os
import re
from pathlib import Path

pytest_plugins = ["pytester"]

TESTS = Path(__file__).resolve().parents[1] / "tests"


def _xdist_session(pytester, monkeypatch, files: dict[str, str]):
    """A two-worker session in a repository of its own (``pytester.path``, our conftest in its
    ``tests/``), its temporary directory inside it too; ``{gw: [nodeid, ...]}`` in the order
    each worker reported them, and the result."""
    tests = pytester.path / "tests"
    tests.mkdir()
    (tests / "conftest.py").write_text((TESTS / "conftest.py").read_text())
    for name, body in files.items():
        (tests / name).write_text(body)
    (pytester.path / "system-tmp").mkdir()
    monkeypatch.setenv("TMPDIR", str(pytester.path / "system-tmp"))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]))
    r = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", "2", "--dist", "loadscope", "-v", "tests")
    ran: dict[str, list[str]] = {}
    reported = re.findall(r"^\[(gw\d)\] \[\s*\d+%\] (?:PASSED|FAILED|ERROR) (\S+)", r.stdout.str(), re.MULTILINE)
    for gw, nodeid in reported:
        ran.setdefault(gw, []).append(nodeid)
    return ran, r


QUICK = "def test_{n}():\n    pass\n"


def test_the_readme_starts_first_and_the_spec_examples_spread(pytester, monkeypatch):
    ran, r = _xdist_session(pytester, monkeypatch, {
        # xdist alone would start with the module of most tests and end with the README's
        "test_aaa.py": "".join(QUICK.format(n=n) for n in range(8)),
        "test_readme.py": "import time\n\ndef test_found():\n    pass\n\ndef test_long():\n    time.sleep(4)\n",
        "test_spec_examples.py": "".join(f"def test_group_{n}():\n    pass\n" for n in range(4)),
    })
    assert r.ret == 0, r.stdout.str()
    readme = next(gw for gw, ids in ran.items() if "tests/test_readme.py::test_long" in ids)
    assert ran[readme][:2] == ["tests/test_readme.py::test_found", "tests/test_readme.py::test_long"], ran
    # behind the long test one unit (a spec-example test or a module), the rest on the other worker
    behind = ran[readme][2:]
    assert len({i.split("::")[0] for i in behind}) <= 1, ran
    assert len([i for i in behind if "test_spec_examples.py" in i]) <= 1, ran
    other = next(gw for gw in ran if gw != readme)
    assert any("test_spec_examples.py" in i for i in ran[other]), ran
    assert sum(len(ids) for ids in ran.values()) == 14


def test_a_file_left_behind_by_a_worker_fails_the_session_once_at_the_end(pytester, monkeypatch):
    ran, r = _xdist_session(pytester, monkeypatch, {
        # a worker's temporaries, alive while the other worker's tests end, are not litter
        "test_a.py": "import tempfile, time\n\ndef test_holds_a_temporary():\n"
                     "    with tempfile.TemporaryDirectory() as d:\n        time.sleep(2)\n",
        "test_b.py": "import os, tempfile\n\ndef test_forgets_a_temporary():\n"
                     "    fd, _ = tempfile.mkstemp(prefix='forgotten-')\n    os.close(fd)\n",
    })
    assert len(ran) == 2, r.stdout.str()  # each module on a worker of its own
    assert r.ret == 1, r.stdout.str()
    out = r.stdout.str()
    assert out.count("files left behind") == 1 and "/tmp/forgotten-" in out, out
    # the directory test_a held was not reported (read in the report's own section: the
    # header names the interpreter, whose path holds "/tmp/tmp" in a clone made by mktemp -d)
    report = out.split("files left behind", 1)[1].split("\n=", 1)[0]
    assert "/tmp/forgotten-" in report and "/tmp/tmp" not in report, out
