"""The ``workbench`` command line. It parses options, calls the library and prints; each
command imports its machinery lazily so that ``workbench --help`` stays fast.

Ctrl-C at any moment, even while the commands are still being imported, prints one line
and exits 130 (no traceback).

>>> from typer.testing import CliRunner
>>> CliRunner().invoke(app, ["--help"]).exit_code
0
"""

from __future__ import annotations

import signal
import sys
import threading

INTERRUPTED = "error: interrupted; whatever was complete is kept"


def _import_commands():
    """Import the commands with Ctrl-C held until they are in: a KeyboardInterrupt inside a
    C extension's import can crash the interpreter at exit; afterwards it is one line."""
    held: list[int] = []
    main_thread = threading.current_thread() is threading.main_thread()  # signals: main thread only
    previous = signal.getsignal(signal.SIGINT) if main_thread else None
    if main_thread:
        signal.signal(signal.SIGINT, lambda signum, frame: held.append(signum))
    try:
        # each module registers its commands on import
        from workbench.cli import audit, data, export, replay, replicate, reports, serve, sweeps  # noqa: F401
    finally:
        if main_thread:  # None: a handler not set from Python; Python's own is the fallback
            signal.signal(signal.SIGINT, signal.default_int_handler if previous is None else previous)
    if held:  # Ctrl-C while `workbench` started: nothing has been done yet
        print(INTERRUPTED, file=sys.stderr)
        raise SystemExit(130)


_import_commands()
from workbench.cli._app import app, audit_app  # noqa: E402  (after the commands registered on it)

__all__ = ["app", "audit_app", "main"]


def main() -> None:
    from workbench.cli._app import said_interrupted

    try:
        app()
    except KeyboardInterrupt:  # outside a command's own handling (building the parser)
        print(INTERRUPTED, file=sys.stderr)
        raise SystemExit(130) from None
    except SystemExit as exc:  # click turns Ctrl-C while parsing into a silent exit 130
        if exc.code == 130 and not said_interrupted():
            print(INTERRUPTED, file=sys.stderr)
        raise


if __name__ == "__main__":
    main()
