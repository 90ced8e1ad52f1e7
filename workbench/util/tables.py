"""Tables for people and for programs: every number printed in full, whatever the output.

A rich table on a terminal wraps cells that do not fit (``overflow="fold"``: nothing is cut
to ``reques…``); piped into a file or a CI log it is printed at its natural width. The same
rows can be written as ``csv``, ``json`` or ``markdown`` (``--format``), with the raw values
rather than their display form.

>>> import io
>>> buf = io.StringIO()
>>> emit([{"policy": "claude-code", "cost_usd": 12.5}], ["policy", "cost_usd"], fmt="csv", file=buf)
>>> buf.getvalue().splitlines()
['policy,cost_usd', 'claude-code,12.5']
"""

from __future__ import annotations

import csv
import sys
from collections.abc import Callable, Sequence
from typing import Any, TextIO

FORMATS = ("table", "csv", "json", "markdown")


def console(file: TextIO | None = None, *, stderr: bool = False):
    """A rich Console; when the output is not a terminal, wide enough never to cut a line."""
    from rich.console import Console

    c = Console(file=file, stderr=stderr)
    if c.is_terminal:
        return c
    return Console(file=file, stderr=stderr, width=100_000, soft_wrap=True)


def print_table(table, *, file: TextIO | None = None) -> None:
    """Print a rich table: folded cells on a terminal, natural width otherwise."""
    for col in table.columns:
        col.overflow = "fold"
    c = console(file)
    if not c.is_terminal:
        from rich.console import Console

        width = c.measure(table).maximum
        c = Console(file=file, width=max(40, width))
    c.print(table)


def _display(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:,.4f}" if abs(value) < 1e6 else f"{value:,.0f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def emit(rows: Sequence[dict[str, Any]], columns: Sequence[str], *, fmt: str = "table",
         title: str | None = None, headers: dict[str, str] | None = None,
         display: dict[str, Callable[[Any], str]] | None = None, file: TextIO | None = None) -> None:
    """Write ``rows`` (mappings) restricted to ``columns`` in ``fmt``."""
    import orjson

    out = file or sys.stdout
    headers = headers or {}
    display = display or {}
    if fmt == "csv":
        w = csv.writer(out, lineterminator="\n")
        w.writerow(columns)
        for r in rows:
            w.writerow(["" if r.get(c) is None else r.get(c) for c in columns])
    elif fmt == "json":
        out.write(orjson.dumps([{c: r.get(c) for c in columns} for r in rows],
                               option=orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY).decode() + "\n")
    elif fmt == "markdown":
        names = [headers.get(c, c) for c in columns]
        out.write("| " + " | ".join(names) + " |\n")
        out.write("|" + "|".join("---" for _ in columns) + "|\n")
        for r in rows:
            cells = [display.get(c, _display)(r.get(c)).replace("|", "\\|") for c in columns]
            out.write("| " + " | ".join(cells) + " |\n")
    elif fmt == "table":
        from rich.markup import escape
        from rich.table import Table

        table = Table(*[headers.get(c, c) for c in columns], title=title)
        for r in rows:  # cells are text: a "[source: ...]" in a description is not rich markup
            table.add_row(*[escape(display.get(c, _display)(r.get(c))) for c in columns])
        print_table(table, file=file)
    else:
        from workbench.errors import WorkbenchError

        raise WorkbenchError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
