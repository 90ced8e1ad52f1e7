"""Tables for people and for programs: every number printed in full, whatever the output.

A rich table on a terminal wraps cells that do not fit (``overflow="fold"``: nothing is cut
to ``reques…``); piped into a file or a CI log it is printed at its natural width. The same
rows can be written as ``csv``, ``json`` or ``markdown`` (``--format``), with the raw values
rather than their display form.

A command that prints several tables prints them as ONE document under ``csv`` and ``json``
(:func:`one_document`): a JSON object with a key per table, or one CSV table whose first
column, ``table``, names the table a row belongs to. A program reads stdout whole.

>>> import io
>>> buf = io.StringIO()
>>> emit([{"policy": "claude-code", "cost_usd": 12.5}], ["policy", "cost_usd"], fmt="csv", file=buf)
>>> buf.getvalue().splitlines()
['policy,cost_usd', 'claude-code,12.5']
"""

from __future__ import annotations

import csv
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, TextIO

FORMATS = ("table", "csv", "json", "markdown")
# the formats a program reads: the command's stdout is exactly one document of them
MACHINE_FORMATS = ("csv", "json")


@dataclass
class Document:
    """The tables a command emitted under a machine format, written once, together."""

    fmt: str
    sections: list[tuple[str, list[str], list[dict[str, Any]]]] = field(default_factory=list)

    def add(self, name: str, columns: Sequence[str], rows: Sequence[dict[str, Any]]) -> None:
        taken = {n for n, _, _ in self.sections}
        key, i = name, 2
        while key in taken:  # two tables of one title stay two sections
            key, i = f"{name}_{i}", i + 1
        self.sections.append((key, list(columns), [{c: r.get(c) for c in columns} for r in rows]))

    def write(self, out: TextIO | None = None) -> None:
        out = out or sys.stdout
        if not self.sections:
            return
        if len(self.sections) == 1:
            _, columns, rows = self.sections[0]
            _write(rows, columns, self.fmt, out)
        elif self.fmt == "json":
            _write({name: rows for name, _, rows in self.sections}, None, "json", out)
        else:
            columns = ["table"]
            for _, cols, _ in self.sections:
                columns += [c for c in cols if c not in columns]
            rows = [{"table": name, **r} for name, _, rs in self.sections for r in rs]
            _write(rows, columns, "csv", out)


_DOCUMENT: ContextVar[Document | None] = ContextVar("workbench_document", default=None)


@contextmanager
def one_document(fmt: str) -> Iterator[Document | None]:
    """While it is open, :func:`emit` under csv/json adds its rows to one :class:`Document`
    instead of printing them; the caller writes it (``doc.write()``) once the command has
    produced everything. Other formats print as they go (``None`` is yielded)."""
    if fmt not in MACHINE_FORMATS:
        yield None
        return
    doc = Document(fmt)
    token = _DOCUMENT.set(doc)
    try:
        yield doc
    finally:
        _DOCUMENT.reset(token)


def section_name(title: str | None) -> str:
    return re.sub(r"[^a-z0-9]+", "_", (title or "rows").lower()).strip("_") or "rows"


def _write(rows: Any, columns: Sequence[str] | None, fmt: str, out: TextIO) -> None:
    import orjson

    if fmt == "csv":
        w = csv.writer(out, lineterminator="\n")
        w.writerow(columns)
        for r in rows:
            w.writerow(["" if r.get(c) is None else r.get(c) for c in columns])
    else:
        doc = rows if columns is None else [{c: r.get(c) for c in columns} for r in rows]
        out.write(orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY
                               | orjson.OPT_NON_STR_KEYS).decode() + "\n")


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
         display: dict[str, Callable[[Any], str]] | None = None, file: TextIO | None = None,
         name: str | None = None) -> None:
    """Write ``rows`` (mappings) restricted to ``columns`` in ``fmt``; inside
    :func:`one_document` (and without ``file``), csv/json rows become its section ``name``
    (default: the title in snake case)."""
    out = file or sys.stdout
    headers = headers or {}
    display = display or {}
    doc = _DOCUMENT.get()
    if fmt in MACHINE_FORMATS and doc is not None and file is None:
        doc.add(name or section_name(title), columns, rows)
    elif fmt in MACHINE_FORMATS:
        _write(rows, columns, fmt, out)
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
