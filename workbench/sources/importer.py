"""The import driver: real agent logs -> one canonical dataset.

:func:`import_paths` walks files and directories (sorted, files before sub-directories,
hidden names skipped), picks each file's format (``--format`` forces one, otherwise the
best :mod:`~workbench.sources.detect` score), parses it, links Claude Code subagents to
their sessions, pairs tool calls with results, counts characters and tokens, fits the
tokenizer calibration (:mod:`~workbench.sources.calibrate`), attaches compaction calls
recorded apart (Claude Code's ``agent-acompact`` subagents) to the compaction they made
(:mod:`~workbench.sources.compaction_calls`) and writes the dataset
atomically with a manifest that lists every source file (sha256, bytes, format, records
skipped), every skipped record (file, line, error) and the calibration per continuity.

Files named explicitly must import: empty, binary, unrecognised or malformed files raise
:class:`~workbench.errors.SourceError` naming the file (and line). Files found by walking a
directory that no format recognises (a README, an image, an empty file) are not logs:
they are listed under ``manifest["import"]["ignored"]`` with the reason, and the import
fails only if nothing at all could be imported. A Claude Code session file named
explicitly brings its ``<session>/subagents/*.jsonl`` along.

>>> import tempfile
>>> from pathlib import Path
>>> import workbench
>>> logs = Path(workbench.__file__).parents[1] / "datasets" / "bundled" / "claude-code" / "short.jsonl"
>>> tmp = tempfile.TemporaryDirectory()
>>> ds = import_paths([logs], Path(tmp.name) / "mine")
>>> ds.manifest["import"]["on_error"], ds.manifest["import"]["skipped_total"]
('fail', 0)
>>> [c["status"][:8] for c in ds.manifest["import"]["calibration"].values()]
['too few ']
>>> tmp.cleanup()
"""

from __future__ import annotations

import contextlib
import hashlib
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from workbench.continuity.enums import EventFlag
from workbench.errors import SourceError
from workbench.sources.base import ON_ERROR, ParseContext, ParsedContinuity, SourceFormat

LARGE_INPUT_BYTES = 8 << 20  # show progress above this much input
_INT_COLUMNS = (
    ("kind", np.int8), ("role", np.int8), ("origin", np.int8), ("actor", np.int16),
    ("flags", np.int32), ("request", np.int32), ("pair_seq", np.int64), ("ts_ms", np.int64),
    ("usage_input", np.int64), ("usage_cache_read", np.int64), ("usage_cache_write", np.int64),
    ("usage_output", np.int64), ("compact_trigger", np.int8), ("compact_pre_tokens", np.int64),
    ("source_line", np.int32),
)
_STR_COLUMNS = ("call_id", "message_id", "name", "text", "raw")


@dataclass
class SourceFile:
    path: Path
    explicit: bool  # named on the command line (must import) vs found in a directory


@dataclass
class ParsedFile:
    path: Path
    fmt: str
    sha256: str
    size: int
    continuities: list[ParsedContinuity]
    skipped: list[dict[str, Any]]
    detection: str | None = None
    bom: bool = False  # the file starts with a UTF-8 byte order mark
    companions: list[dict[str, Any]] = field(default_factory=list)  # other files its parser read


@dataclass
class ParseResult:
    files: list[ParsedFile] = field(default_factory=list)
    ignored: list[dict[str, Any]] = field(default_factory=list)

    @property
    def bytes(self) -> int:
        return sum(f.size + sum(c["bytes"] for c in f.companions) for f in self.files)


# ------------------------------------------------------------------ discovery

def _walk(d: Path) -> list[Path]:
    entries = [e for e in d.iterdir() if not e.name.startswith(".")]
    files = sorted((e for e in entries if e.is_file()), key=lambda p: p.name)
    dirs = sorted((e for e in entries if e.is_dir()), key=lambda p: p.name)
    out = list(files)
    for sub in dirs:
        out.extend(_walk(sub))
    return out


def collect_files(paths: list[Path]) -> list[SourceFile]:
    """Expand directories (deterministic order) and dedupe; keep explicit files first-seen."""
    seen: set[Path] = set()
    out: list[SourceFile] = []

    def push(p: Path, explicit: bool) -> None:
        key = p.resolve()
        if key not in seen:
            seen.add(key)
            out.append(SourceFile(p, explicit))

    for p in paths:
        p = Path(p)
        if p.is_dir():
            for f in _walk(p):
                push(f, False)
        elif p.is_file():
            push(p, True)
            sub = p.with_suffix("") / "subagents"
            if p.suffix == ".jsonl" and sub.is_dir():
                for f in sorted(sub.glob("*.jsonl")):
                    push(f, False)
        else:
            raise SourceError("no such file or directory", path=str(p),
                              expected="existing log files or directories")
    return out


# ------------------------------------------------------------------ parsing

def _parse_one(sf: SourceFile, forced: SourceFormat | None, formats: dict[str, SourceFormat],
               on_error: str) -> ParsedFile:
    from workbench.sources.detect import HEAD_BYTES, check_text, describe, detect_format
    from workbench.sources.registration import run_parser

    data = sf.path.read_bytes()
    check_text(sf.path, data)
    detection = None
    if forced is None:
        fmt, seen = detect_format(sf.path, data[:HEAD_BYTES], formats)
        detection = describe(seen[:3])
    else:
        fmt = forced
    ctx = ParseContext(path=sf.path, on_error=on_error, data=data)
    conts = run_parser(fmt.name, fmt.parse, ctx)  # a parser bug must still name the file
    return ParsedFile(path=sf.path, fmt=fmt.name, sha256=hashlib.sha256(data).hexdigest(),
                      size=len(data), continuities=conts, skipped=list(ctx.skipped),
                      detection=detection, bom=ctx.bom, companions=list(ctx.companions))


def _companion_files(files: list[SourceFile], formats: dict[str, SourceFormat]) -> dict[Path, Path]:
    """Files whose log's primary file is imported too (its parser reads them): file -> primary.

    A Cline task's ``ui_messages.json`` found next to its ``api_conversation_history.json``
    is part of that log, not a log of its own; named alone, it is imported alone."""
    present = {sf.path.resolve() for sf in files}
    out: dict[Path, Path] = {}
    for sf in files:
        for fmt in formats.values():
            primary = fmt.primary_of(sf.path) if fmt.primary_of is not None else None
            if primary is not None and primary.resolve() != sf.path.resolve() and primary.resolve() in present:
                out[sf.path.resolve()] = primary
                break
    return out


def parse_files(files: list[SourceFile], *, fmt: str | None = None, on_error: str = "fail",
                progress=None) -> ParseResult:
    """Parse every file; files found in directories that are not logs are ignored (listed)."""
    from workbench.sources import load_formats

    if on_error not in ON_ERROR:
        raise SourceError(f"on_error must be one of {', '.join(ON_ERROR)}, not {on_error!r}")
    formats = load_formats()
    forced = None
    if fmt is not None:
        key = fmt.replace("-", "_")
        if key not in formats:
            raise SourceError(f"unknown format {fmt!r}; known: {', '.join(formats)}")
        forced = formats[key]
    res = ParseResult()
    companion_of = _companion_files(files, formats)
    for sf in files:
        if sf.path.resolve() in companion_of:  # read by its primary's parser
            if progress is not None:
                progress(sf.path)
            continue
        try:
            res.files.append(_parse_one(sf, forced, formats, on_error))
        except SourceError as exc:
            if sf.explicit or not _is_not_a_log(exc):
                raise
            res.ignored.append({"path": str(sf.path), "reason": str(exc)})
        if progress is not None:
            progress(sf.path)
    read = {Path(c["path"]).resolve() for f in res.files for c in f.companions}
    for path, primary in companion_of.items():
        if path not in read:  # its primary's parser did not need it: not silently lost
            res.ignored.append({"path": str(path), "reason": f"part of the log {primary}, "
                                "whose parser did not read it"})
    if not res.files:
        detail = "; ".join(f"{i['reason']}" for i in res.ignored[:10])
        raise SourceError("nothing to import" + (f": {detail}" if detail else " (no files found)"),
                          path=", ".join(str(f.path) for f in files[:3]) or None,
                          expected="at least one agent log")
    return res


def _is_not_a_log(exc: SourceError) -> bool:
    msg = str(exc)
    return any(s in msg for s in ("format not recognised", "binary file", "not UTF-8 text",
                                  "file is empty", "file holds only whitespace"))


# ------------------------------------------------------------------ building

def _unique_ids(ids: list[str]) -> list[str]:
    count: dict[str, int] = {}
    out = []
    for cid in ids:
        k = count.get(cid, 0)
        count[cid] = k + 1
        out.append(cid if k == 0 else f"{cid}#{k + 1}")
    return out


def build_tables(res: ParseResult, tokenizers: tuple[str, ...] | list[str] = ("cl100k", "approx"),
                 *, timings: dict[str, float] | None = None, placeholders=None,
                 placeholder_stats: dict[str, Any] | None = None):
    """(events table, continuities table, continuity ids, unresolved parents).

    ``placeholders`` (:class:`~workbench.sources.placeholders.Placeholders`, the built-in
    patterns when None): length-keeping redaction placeholders count as the text they
    replaced; ``placeholder_stats`` (a dict) receives what was expanded."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from workbench.continuity import schema as S
    from workbench.continuity.validate import pair_tool_events
    from workbench.sources.compaction_calls import attach_compaction_calls
    from workbench.tokens.tokenizers import count_texts

    t0 = time.perf_counter()
    if len(res.files) > np.iinfo(np.int16).max + 1:
        raise SourceError(f"{len(res.files)} source files in one dataset; the source_file column holds "
                          f"at most {np.iinfo(np.int16).max + 1}: import them as several datasets")
    conts: list[tuple[int, ParsedContinuity]] = [(fi, c) for fi, f in enumerate(res.files)
                                                 for c in f.continuities]
    ids = _unique_ids([c.continuity_id for _, c in conts])
    sizes = np.array([len(c.rows) for _, c in conts], dtype=np.int64)
    n = int(sizes.sum())

    # parents: by continuity id, else by the parent's file stem
    by_id = {cid: i for i, cid in enumerate(ids)}
    by_stem: dict[str, int] = {}
    for i, (fi, c) in enumerate(conts):
        if c.parent_id is None:
            by_stem.setdefault(Path(res.files[fi].path).stem, i)
    parents = []
    unresolved = []
    for i, (_, c) in enumerate(conts):
        p = -1
        if c.parent_id is not None:
            p = by_id.get(c.parent_id, by_stem.get(c.parent_id, -1))
            if p < 0 or p == i:
                p = -1
                unresolved.append({"continuity": ids[i], "parent_id": c.parent_id})
        parents.append(p)

    attach_compaction_calls([c for _, c in conts], ids, parents)

    cols: dict[str, Any] = {}
    cont_idx = np.repeat(np.arange(len(conts), dtype=np.int32), sizes)
    cols["continuity"] = cont_idx
    seq = np.arange(n, dtype=np.int64)
    if len(conts):
        offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        seq -= np.repeat(offsets, sizes)
    cols["seq"] = seq
    for name, dt in _INT_COLUMNS:
        if len(conts) == 1:
            cols[name] = np.asarray(conts[0][1].rows.cols[name], dtype=dt)
        else:
            buf: list = []
            for _, c in conts:
                buf.extend(c.rows.cols[name])
            cols[name] = np.asarray(buf, dtype=dt) if buf else np.zeros(0, dtype=dt)
    cols["source_file"] = np.repeat(np.array([fi for fi, _ in conts], dtype=np.int16), sizes)
    strs: dict[str, list] = {}
    for name in _STR_COLUMNS:
        if len(conts) == 1:
            strs[name] = conts[0][1].rows.cols[name]
        else:
            buf = []
            for _, c in conts:
                buf.extend(c.rows.cols[name])
            strs[name] = buf

    # tool pairing; a parser may pre-pair a self-contained call (pair_seq == seq)
    string_types = dict(S.STRING_COLUMNS)
    call_id_arr = pa.array(strs["call_id"], type=getattr(pa, string_types["call_id"])())
    preset = cols["pair_seq"] >= 0
    call_ids = call_id_arr
    if preset.any():
        call_ids = pc.if_else(pa.array(preset), pa.scalar(None, call_id_arr.type), call_id_arr)
    pair, unpaired = pair_tool_events(cont_idx, seq, cols["kind"], call_ids)
    pair[preset] = cols["pair_seq"][preset]
    unpaired &= ~preset
    cols["pair_seq"] = pair
    cols["flags"] = cols["flags"] | np.where(unpaired, np.int32(EventFlag.UNPAIRED), np.int32(0))

    arrays: dict[str, Any] = {}
    for name, typ, _ in S.FIXED_COLUMNS:
        if name == "chars":
            continue
        arrays[name] = pa.array(cols[name], type=getattr(pa, typ)())
    text = pa.array(strs["text"], type=pa.large_string())
    arrays["chars"] = pc.fill_null(pc.utf8_length(text), 0).cast(pa.int32())
    built = {"text": text, "call_id": call_id_arr}
    for name, typ in S.STRING_COLUMNS:
        arrays[name] = built[name] if name in built else pa.array(strs[name], type=getattr(pa, typ)())
    t1 = time.perf_counter()
    if placeholders is None:
        from workbench.sources.placeholders import Placeholders

        placeholders = Placeholders.compile()
    found = placeholders.candidates(text) if tokenizers else None  # once for every tokenizer
    for tok in tokenizers:
        counts, stats = placeholders.expand(text, count_texts(text, tok), tok, found)
        arrays[S.token_column(tok)] = pa.array(counts, type=pa.int32())
        if placeholder_stats is not None:
            placeholder_stats.update(stats)
    t2 = time.perf_counter()
    schema = S.events_schema(tuple(tokenizers))
    events = pa.Table.from_arrays([arrays[f.name] for f in schema], schema=schema)

    windows = [c.context_window for _, c in conts]
    continuities = pa.table({
        "continuity": pa.array(np.arange(len(conts), dtype=np.int32)),
        "continuity_id": pa.array(ids, type=pa.string()),
        "parent": pa.array(np.array(parents, dtype=np.int32)),
        "source_format": pa.array([c.source_format for _, c in conts], type=pa.string()),
        "source_file": pa.array([str(res.files[fi].path) for fi, _ in conts], type=pa.string()),
        "profile": pa.array([profile_of(c.source_format) for _, c in conts], type=pa.string()),
        "model": pa.array([c.model for _, c in conts], type=pa.string()),
        "provider": pa.array([c.provider for _, c in conts], type=pa.string()),
        "context_window": pa.array(np.array(windows, dtype=np.int64)),
        "n_events": pa.array(sizes),
    })
    if timings is not None:
        timings["build_s"] = timings.get("build_s", 0.0) + (t1 - t0) + (time.perf_counter() - t2)
        timings["tokenize_s"] = timings.get("tokenize_s", 0.0) + (t2 - t1)
    return events, continuities, ids, unresolved


def profile_of(source_format: str) -> str | None:
    """The harness preset a source format's recorded behaviour follows (each format
    declares it: ``SourceFormat.profile``); None for a format that is not registered."""
    from workbench.sources import load_formats

    fmt = load_formats().get(source_format)
    return None if fmt is None else fmt.profile


# ------------------------------------------------------------------ driver

def import_paths(paths: list[Path], out: Path, *, fmt: str | None = None, on_error: str = "fail",
                 progress: bool = False, tokenizers=("cl100k", "approx"),
                 timings: dict[str, float] | None = None, force: bool = False,
                 placeholder_patterns: tuple[str, ...] | list[str] = ()):
    """Import logs at ``paths`` into the dataset directory ``out``; return the Dataset.
    ``out`` may be new, empty or a dataset the workbench wrote (checked before any work).
    ``placeholder_patterns``: regular expressions with a named group ``len`` for redaction
    placeholders besides the built-in ones (:mod:`workbench.sources.placeholders`); the
    manifest's ``import.placeholders`` says how many texts were expanded.

    ``timings`` (a dict) receives the wall seconds of each phase: ``parse_s``, ``build_s``,
    ``tokenize_s``, ``calibrate_s``, ``write_s`` (benchmarks/bench_import.py prints them)."""
    from workbench.rundir import Kind, check_output, exclusive
    from workbench.sources.placeholders import Placeholders

    placeholders = Placeholders.compile(tuple(placeholder_patterns))  # a bad pattern fails first
    check_output(out, Kind.DATASET, force=force)
    with exclusive(out):
        return _import(paths, out, fmt=fmt, on_error=on_error, progress=progress, tokenizers=tokenizers,
                       timings=timings, force=force, placeholders=placeholders)


def _import(paths, out, *, fmt, on_error, progress, tokenizers, timings, force, placeholders):
    from workbench.continuity.dataset import write_dataset
    from workbench.sources.calibrate import NOT_MEANINGFUL, calibrate_table
    from workbench.sources.run_usage import RUN_USAGE, summarize

    files = collect_files([Path(p) for p in paths])
    tokenizers = tuple(tokenizers)
    total = 0
    for sf in files:
        with contextlib.suppress(OSError):
            total += sf.path.stat().st_size
    bar = _Progress(total, enabled=progress and (total >= LARGE_INPUT_BYTES or len(files) > 200))
    phases: dict[str, float] = {} if timings is None else timings
    t0 = time.perf_counter()
    with bar:
        res = parse_files(files, fmt=fmt, on_error=on_error, progress=bar.advance)
        phases["parse_s"] = time.perf_counter() - t0
        bar.phase("building and tokenizing")
        expanded: dict[str, Any] = {}
        events, continuities, ids, unresolved = build_tables(res, tokenizers, timings=phases,
                                                             placeholders=placeholders,
                                                             placeholder_stats=expanded)
        bar.phase("calibrating")
        t1 = time.perf_counter()
        conts = [c for f in res.files for c in f.continuities]
        cal_tok = "cl100k" if "cl100k" in tokenizers else (tokenizers[0] if tokenizers else None)
        not_meaningful = {cid: c.meta.get(NOT_MEANINGFUL) for cid, c in zip(ids, conts, strict=True)}
        calibration = (calibrate_table(events, ids, cal_tok, not_meaningful) if cal_tok
                       else {cid: {"status": "no tokenizer column to calibrate"} for cid in ids})
        phases["calibrate_s"] = time.perf_counter() - t1

    skipped = [{"file": str(f.path), **s} for f in res.files for s in f.skipped]
    formats = sorted({f.fmt for f in res.files})
    source = {
        "format": formats[0] if len(formats) == 1 else "mixed",
        "files": [{"path": str(f.path), "sha256": f.sha256, "bytes": f.size, "format": f.fmt,
                   "skipped": len(f.skipped), "continuities": len(f.continuities),
                   **({"bom": True} if f.bom else {}),
                   **({"companions": f.companions} if f.companions else {})}
                  for f in res.files],
    }
    extra = {"import": {
        "on_error": on_error,
        "skipped_total": len(skipped),
        "skipped": skipped,
        "ignored": res.ignored,
        "unresolved_parents": unresolved,
        "placeholders": {"patterns": list(placeholders.patterns), **expanded},
        "continuities": {cid: c.meta for cid, c in zip(ids, conts, strict=True)},
        "calibration": calibration,
        "run_usage": summarize({cid: c.meta[RUN_USAGE] for cid, c in zip(ids, conts, strict=True)
                                if isinstance(c.meta.get(RUN_USAGE), dict)}),
    }}
    if progress and (skipped or res.ignored):
        for s in skipped[:20]:
            print(f"skipped {s['file']}:{s['line']}: {s['error']}", file=sys.stderr)
        for ig in res.ignored[:20]:
            # the full detection report stays in the manifest; one line per file here
            print(f"ignored {ig['path']}: not an agent log in any known format "
                  f"(what detection saw: manifest.json import.ignored)", file=sys.stderr)
        for what, rows in (("skipped records", skipped), ("ignored files", res.ignored)):
            if len(rows) > 20:
                print(f"... and {len(rows) - 20} more {what} (all listed in manifest.json import)",
                      file=sys.stderr)
    t2 = time.perf_counter()
    ds = write_dataset(out, events=events, continuities=continuities, tokenizers=list(tokenizers),
                       source=source, extra=extra, force=force)
    phases["write_s"] = time.perf_counter() - t2
    return ds


class _Progress:
    """A rich progress bar over input bytes, or nothing."""

    def __init__(self, total: int, enabled: bool):
        self.total = total
        self.enabled = enabled
        self._p = None
        self._task = None

    def __enter__(self):
        if self.enabled:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                DownloadColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )

            self._p = Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(),
                               TimeElapsedColumn(), console=Console(stderr=True), transient=True)
            self._p.__enter__()
            self._task = self._p.add_task("parsing", total=self.total)
        return self

    def __exit__(self, *exc):
        if self._p is not None:
            self._p.__exit__(*exc)
        return False

    def advance(self, path: Path) -> None:
        if self._p is not None:
            try:
                size = path.stat().st_size
            except OSError:
                size = 0
            self._p.update(self._task, advance=size, description=f"parsing {path.name[:40]}")

    def phase(self, what: str) -> None:
        if self._p is not None:
            self._p.update(self._task, description=what)
