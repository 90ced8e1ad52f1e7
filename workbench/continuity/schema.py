"""The canonical continuity format: one versioned Arrow schema.

A dataset (``datasets/<name>/``) holds:

* ``events.parquet``       one row per event, all continuities of the dataset, ordered by
                           (``continuity``, ``seq``);
* ``continuities.parquet`` one row per continuity (id, parent, source, model, window);
* ``facts.parquet`` / ``secrets.parquet``  planted labels with character spans into
                           ``events.text`` (synthetic datasets; empty for imports);
* ``manifest.json``        schema version, source, file hashes, counts, tokenizers.

Fixed-width columns use sentinels instead of nulls (``-1`` = unknown/none) so kernels
get plain arrays; only strings are nullable.

Recorded usage follows the Anthropic convention, whatever the provider:
``usage_input`` is prompt tokens neither read from nor written to the cache, so the
whole prompt is ``usage_input + usage_cache_read + usage_cache_write``. Importers of
OpenAI-style logs (where ``input_tokens`` includes cached tokens) subtract.
"""

from __future__ import annotations

SCHEMA_VERSION = 1

# (name, arrow type name, sentinel or None for nullable strings)
FIXED_COLUMNS: tuple[tuple[str, str, int], ...] = (
    ("continuity", "int32", -1),
    ("seq", "int64", -1),
    ("kind", "int8", 0),
    ("role", "int8", 0),
    ("origin", "int8", 0),
    ("actor", "int16", 0),
    ("flags", "int32", 0),
    ("request", "int32", -1),
    ("pair_seq", "int64", -1),
    ("ts_ms", "int64", -1),
    ("chars", "int32", 0),
    ("usage_input", "int64", -1),
    ("usage_cache_read", "int64", -1),
    ("usage_cache_write", "int64", -1),
    ("usage_output", "int64", -1),
    ("compact_trigger", "int8", 0),
    ("compact_pre_tokens", "int64", -1),
    ("source_file", "int16", -1),
    ("source_line", "int32", -1),
)

STRING_COLUMNS: tuple[tuple[str, str], ...] = (
    ("call_id", "string"),
    ("message_id", "string"),
    ("name", "string"),
    ("text", "large_string"),
    ("raw", "large_string"),
)

TOKEN_PREFIX = "tokens_"
USAGE_COLUMNS = ("usage_input", "usage_cache_read", "usage_cache_write", "usage_output")


def token_column(tokenizer: str) -> str:
    return f"{TOKEN_PREFIX}{tokenizer}"


def events_schema(tokenizers: tuple[str, ...] | list[str] = ()):
    """The Arrow schema of ``events.parquet`` for the given token-count columns."""
    import pyarrow as pa

    fields = [pa.field(n, getattr(pa, t)(), nullable=False) for n, t, _ in FIXED_COLUMNS]
    fields += [pa.field(token_column(t), pa.int32(), nullable=False) for t in tokenizers]
    fields += [pa.field(n, getattr(pa, t)(), nullable=True) for n, t in STRING_COLUMNS]
    return pa.schema(fields, metadata={b"workbench.schema_version": str(SCHEMA_VERSION).encode()})


def continuities_schema():
    import pyarrow as pa

    return pa.schema(
        [
            pa.field("continuity", pa.int32(), nullable=False),
            pa.field("continuity_id", pa.string(), nullable=False),
            pa.field("parent", pa.int32(), nullable=False),  # -1: top level
            pa.field("source_format", pa.string(), nullable=False),
            pa.field("source_file", pa.string(), nullable=True),
            pa.field("profile", pa.string(), nullable=True),
            pa.field("model", pa.string(), nullable=True),
            pa.field("provider", pa.string(), nullable=True),
            pa.field("context_window", pa.int64(), nullable=False),  # -1: unknown
            pa.field("n_events", pa.int64(), nullable=False),
        ]
    )


def facts_schema():
    import pyarrow as pa

    return pa.schema(
        [
            pa.field("continuity", pa.int32(), nullable=False),
            pa.field("seq", pa.int64(), nullable=False),
            pa.field("start", pa.int32(), nullable=False),
            pa.field("end", pa.int32(), nullable=False),
            pa.field("fact_id", pa.string(), nullable=False),
            pa.field("kind", pa.string(), nullable=False),
            pa.field("probe", pa.string(), nullable=False),
            pa.field("answer", pa.string(), nullable=False),
        ]
    )


def secrets_schema():
    import pyarrow as pa

    return pa.schema(
        [
            pa.field("continuity", pa.int32(), nullable=False),
            pa.field("seq", pa.int64(), nullable=False),
            pa.field("start", pa.int32(), nullable=False),
            pa.field("end", pa.int32(), nullable=False),
            pa.field("secret_id", pa.string(), nullable=False),
            pa.field("kind", pa.string(), nullable=False),  # format, or negative kind
            pa.field("context", pa.string(), nullable=False),
            pa.field("transform", pa.string(), nullable=False),
            pa.field("part", pa.int8(), nullable=False),  # 0 whole, 1.. for split parts
            pa.field("negative", pa.bool_(), nullable=False),  # hard negative: must NOT be redacted
            pa.field("value", pa.string(), nullable=False),  # the plaintext secret (or negative)
        ]
    )
