"""The ``workbench`` command line. It parses options, calls the library and prints; each
command imports its machinery lazily so that ``workbench --help`` stays fast.

>>> from typer.testing import CliRunner
>>> CliRunner().invoke(app, ["--help"]).exit_code
0
"""

from __future__ import annotations

from workbench.cli import audit, data, replay, replicate, reports, sweeps  # noqa: F401  (registers commands)
from workbench.cli._app import app, audit_app

__all__ = ["app", "audit_app", "main"]


def main() -> None:
    app()


if __name__ == "__main__":
    main()
