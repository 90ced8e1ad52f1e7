"""Registering a format: its sniffer never raises (:func:`safe_sniff`) and its parser only
raises SourceError (:func:`guard_parse`, the last line of defence of every parser)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from workbench.errors import SourceError
from workbench.sources.base import Detection, ParseContext, ParsedContinuity, SourceFormat, register
from workbench.sources.sniffing import safe_sniff


def run_parser(fmt: str, fn: Callable[[ParseContext], list[ParsedContinuity]],
               ctx: ParseContext) -> list[ParsedContinuity]:
    """``fn(ctx)``; anything but SourceError escaping a parser is reported as a SourceError
    naming the file (a RecursionError as a record nested too deeply, anything else as an
    internal error of the importer: a bug, which the fuzz tests fail on)."""
    try:
        return fn(ctx)
    except SourceError:
        raise
    except RecursionError as exc:
        raise SourceError(f"record nested too deeply for the {fmt} parser ({exc})",
                          path=str(ctx.path), expected=f"a {fmt} log") from exc
    except Exception as exc:  # noqa: BLE001 - the contract is "only SourceError"
        raise SourceError(f"internal error in the {fmt} importer ({type(exc).__name__}: {exc})",
                          path=str(ctx.path), expected=f"a {fmt} log") from exc


def guard_parse(fmt: str, fn: Callable[[ParseContext], list[ParsedContinuity]]):
    """``fn`` wrapped by :func:`run_parser` (the last line of defence of every parser)."""

    def wrapped(ctx: ParseContext) -> list[ParsedContinuity]:
        return run_parser(fmt, fn, ctx)

    wrapped.__name__ = getattr(fn, "__name__", "parse")
    wrapped.__doc__ = fn.__doc__
    wrapped.__wrapped__ = fn  # type: ignore[attr-defined]
    return wrapped


def register_format(name: str, description: str, *, sniff: Callable[[Path, bytes], Detection],
                    parse: Callable[[ParseContext], list[ParsedContinuity]], profile: str,
                    raw_joiner: str | None = "\n",
                    primary_of: Callable[[Path], Path | None] | None = None) -> SourceFormat:
    """Register a format whose sniffer never raises and whose parser only raises SourceError."""
    return register(SourceFormat(name=name, description=description, sniff=safe_sniff(sniff),
                                 parse=guard_parse(name, parse), raw_joiner=raw_joiner,
                                 profile=profile, primary_of=_never_raising(primary_of)))


def _never_raising(fn: Callable[[Path], Path | None] | None) -> Callable[[Path], Path | None] | None:
    """``fn``, answering None where it raises (a companion test is a look at names only)."""
    if fn is None:
        return None

    def wrapped(path: Path) -> Path | None:
        try:
            return fn(path)
        except (OSError, ValueError):
            return None

    return wrapped
