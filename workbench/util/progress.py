"""Progress bars for long work (rich), silent when not wanted or not on a terminal.

A bar is drawn on stderr, never stdout: stdout carries a command's result (one JSON or CSV
document under ``--format json|csv``), and a bar, even a transient one, would leave bytes in it.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")


def progress_iter(items: Iterable[T], description: str, *, enabled: bool = True,
                  total: int | None = None) -> Iterator[T]:
    if not enabled or not sys.stderr.isatty():
        yield from items
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    if total is None and hasattr(items, "__len__"):
        total = len(items)  # type: ignore[arg-type]
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(description, total=total)
        for item in items:
            yield item
            bar.advance(task)
