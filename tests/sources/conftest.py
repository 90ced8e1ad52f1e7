"""Fixtures for the importer tests: the recorded logs, a parse helper, one shared import."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.sources import load_formats
from workbench.sources.base import ParseContext


@pytest.fixture(scope="session")
def cc_dir(recorded_dir: Path) -> Path:
    return recorded_dir / "claude-code"


@pytest.fixture(scope="session")
def codex_dir(recorded_dir: Path) -> Path:
    return recorded_dir / "codex"


def parse_file(path: Path, fmt: str, on_error: str = "fail"):
    """Parse one file with one format; returns (continuities, ctx)."""
    ctx = ParseContext(path=Path(path), on_error=on_error)
    return load_formats()[fmt].parse(ctx), ctx


def nonblank_lines(path: Path) -> list[bytes]:
    return [ln for ln in Path(path).read_bytes().split(b"\n") if ln.strip()]


def joined_raw(rows) -> bytes:
    return "\n".join(r for r in rows.cols["raw"] if r is not None).encode("utf-8")


@pytest.fixture(scope="session")
def imported(tmp_path_factory, recorded_dir: Path):
    """Claude Code + Codex logs imported once (exact tokenizer, calibration)."""
    from workbench.sources.importer import import_paths

    out = tmp_path_factory.mktemp("import") / "recorded"
    return import_paths([recorded_dir / "claude-code", recorded_dir / "codex"], out)


def write_jsonl(path: Path, records, *, trailing_newline: bool = True) -> Path:
    import orjson

    lines = [r if isinstance(r, (bytes, str)) else orjson.dumps(r) for r in records]
    data = b"\n".join(x.encode() if isinstance(x, str) else x for x in lines)
    path.write_bytes(data + (b"\n" if trailing_newline else b""))
    return path


@pytest.fixture(scope="session")
def src():
    """Helper functions for the importer tests (parse, nonblank_lines, joined_raw, write_jsonl)."""
    from types import SimpleNamespace

    return SimpleNamespace(parse=parse_file, nonblank_lines=nonblank_lines, joined_raw=joined_raw,
                           write_jsonl=write_jsonl)
