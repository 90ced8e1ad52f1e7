"""The project's own error types. Parsers and loaders raise only these."""

from __future__ import annotations


class WorkbenchError(Exception):
    """Base of every error the workbench raises on purpose."""


class DatasetError(WorkbenchError):
    """A dataset on disk is missing, malformed or of an unknown schema version."""


class ValidationError(WorkbenchError):
    """A continuity breaks an invariant of the canonical format."""


class SourceError(WorkbenchError):
    """A source log could not be read. Names the file and line and what was expected."""

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None,
                 expected: str | None = None):
        self.path = path
        self.line = line
        self.expected = expected
        where = ""
        if path is not None:
            where = f"{path}:{line}: " if line is not None else f"{path}: "
        tail = f" (expected {expected})" if expected else ""
        super().__init__(f"{where}{message}{tail}")


class PolicyError(WorkbenchError):
    """A policy spec is invalid (unknown name, bad parameter)."""
