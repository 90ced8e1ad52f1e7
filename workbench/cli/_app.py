"""The Typer application, its error handling and the options many commands share.

Exit codes: 0 the command did what was asked; 1 it ran but what it found or did is a
failure (a failed audit, failed sweep configurations, no feasible configuration); 2 bad
input (a path, a value, a spec) — the message names it and what is allowed. An error the
workbench did not anticipate prints one line and exits 1; ``--debug`` (or
``WORKBENCH_DEBUG=1``) shows the traceback of either. Ctrl-C prints one line and exits 130.

Under ``--format csv|json`` stdout is exactly one document (every table of the command in it,
:func:`workbench.util.tables.one_document`); whatever else a command says goes to stderr.

Help is click's plain layout (``rich_markup_mode=None``): at any width an option's name is
printed whole and a switch reads ``--force`` or ``--evaluate / --no-evaluate``, where the
rich panels cut names to fit a column (``--model-price-…``) and gave switches a ``<bool>``.
"""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from workbench.errors import WorkbenchError

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  rich_markup_mode=None,
                  help="Replay agent continuities through compaction policies and measure them.")
audit_app = typer.Typer(no_args_is_help=True, rich_markup_mode=None,
                        help="Evaluate runs: leakage and retention, determinism, conformance, fidelity.")
app.add_typer(audit_app, name="audit")

_STATE = {"debug": False, "machine": False}
# a message longer than this is cut on screen; --debug prints it whole
MESSAGE_LIMIT = 400


@app.callback()
def _main(debug: Annotated[bool, typer.Option("--debug", help="show tracebacks and full error "
                                                               "messages")] = False) -> None:
    _STATE["debug"] = debug or os.environ.get("WORKBENCH_DEBUG", "").strip().lower() in {"1", "true", "yes"}


def debugging() -> bool:
    return bool(_STATE["debug"])


def _short(text: str) -> str:
    text = " ".join(str(text).split())
    if debugging() or len(text) <= MESSAGE_LIMIT:
        return text
    return text[:MESSAGE_LIMIT].rstrip() + " … (the whole message: --debug)"


def fail(message: str, code: int = 2) -> typer.Exit:
    typer.secho(f"error: {_short(message)}", fg=typer.colors.RED, err=True)
    return typer.Exit(code)


def say(message: str, *, err: bool = False) -> None:
    """A message for the person running the command: stdout, unless stdout carries a
    machine-readable document (``--format csv|json``), then stderr."""
    typer.echo(message, err=err or bool(_STATE["machine"]))


def print_document(text: str) -> None:
    """The command's machine-readable result (``--json``): stdout, whatever the format."""
    typer.echo(text)


def warn(message: str) -> None:
    typer.secho(f"warning: {message}", fg=typer.colors.YELLOW, err=True)


def handled(fn, name: str | None = None):
    """Turn the workbench's errors into exit 2 and anything unforeseen into one line + exit 1.
    ``name`` (e.g. "audit redaction"): the command, which may read a directory it left
    incomplete when it was stopped (running it again is the remedy the message names)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        from workbench.rundir.output import rerunning
        from workbench.util.tables import FORMATS, MACHINE_FORMATS, one_document

        fmt = kwargs.get("fmt")
        if fmt is not None and fmt not in FORMATS:  # before any work, not after a run is written
            raise fail(f"--format {fmt}: unknown format; choose one of {', '.join(FORMATS)}")
        _STATE["machine"] = fmt in MACHINE_FORMATS
        try:
            with rerunning(name or fn.__name__), one_document(fmt) as doc:
                try:
                    result = fn(*args, **kwargs)
                except typer.Exit as exc:
                    if doc is not None and exc.exit_code in (0, 1):  # a result, failed or not
                        doc.write()
                    raise
                if doc is not None:
                    doc.write()
                return result
        except typer.Exit:
            raise
        except WorkbenchError as exc:
            if debugging():
                import traceback

                traceback.print_exc(file=sys.stderr)
            raise fail(str(exc), 2) from None
        except KeyboardInterrupt:
            raise interrupted() from None
        except BrokenPipeError:
            # the reader went away (`workbench policies | head`): stop quietly, as a shell
            # tool killed by SIGPIPE does; stdout is closed so Python's exit does not complain
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            raise typer.Exit(141) from None
        except Exception as exc:  # noqa: BLE001 - the one place an unforeseen error is reported
            if debugging():
                raise
            raise fail(f"internal error {type(exc).__name__}: {exc} (a bug: --debug shows the "
                       "traceback; please report it)", 1) from None

    return wrapper


def interrupted() -> typer.Exit:
    """Ctrl-C: one line, exit 130 (128 + SIGINT, as a shell reports it)."""
    from workbench.cli import INTERRUPTED

    _STATE["interrupted"] = True
    return fail(INTERRUPTED.removeprefix("error: "), 130)


def said_interrupted() -> bool:
    return bool(_STATE.get("interrupted"))


def command(target: typer.Typer = app, **kwargs):
    """``@command()``: register on ``target`` with the error handling above."""

    def deco(fn):
        name = kwargs.get("name") or fn.__name__.replace("_", "-")
        target.command(**kwargs)(handled(fn, f"audit {name}" if target is audit_app else name))
        return fn

    return deco


Force = Annotated[bool, typer.Option("--force", help="also replace a workbench directory of "
                                                      "another kind (never anything else)")]
Format = Annotated[str, typer.Option("--format", help="table | csv | json | markdown (csv and json: "
                                                      "stdout is one document, messages go to stderr)")]
OutDir = Annotated[Path, typer.Option("--out")]
