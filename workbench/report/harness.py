"""The policies of a report grouped by the harness they mirror.

A preset (or one of its release lines, ``claude-code@2.0``) mirrors the harness
:func:`workbench.engine.presets.harness_of` names; a policy renamed in a spec mirrors none
and shows ``-``. :func:`by_harness` adds that column and groups the rows (harnesses in
alphabetical order, ``-`` last, the table's own order within a harness); the HTML table
draws a heading row per harness (:func:`workbench.report.html.table_html`, ``group=``).

>>> harness_name("claude-code@2.0"), harness_name("codex-remote"), harness_name("my-spec")
('claude-code', 'codex', '-')
>>> import polars as pl
>>> t = by_harness(pl.DataFrame({"policy": ["my-spec", "codex-local", "claude-code", "codex-remote"]}))
>>> list(zip(t["harness"], t["policy"]))  # doctest: +NORMALIZE_WHITESPACE
[('claude-code', 'claude-code'), ('codex', 'codex-local'), ('codex', 'codex-remote'),
 ('-', 'my-spec')]
"""

from __future__ import annotations

NONE = "-"
HARNESS_COLUMN = ("harness", "harness", "s")  # (column, header, format) of the report tables


def harness_name(policy: str) -> str:
    """The harness a preset or release-line name mirrors; ``-`` for any other name."""
    from workbench.engine.presets import PRESETS, VERSIONS, harness_of

    if policy in PRESETS:
        return harness_of(PRESETS[policy]) or NONE
    base, _, line = policy.partition("@")
    if line and line in VERSIONS.get(base, {}):
        return harness_of(VERSIONS[base][line]) or NONE
    return NONE


def by_harness(table, column: str = "policy"):
    """``table`` with a ``harness`` column, its rows grouped by harness (see the module)."""
    import polars as pl

    names = [harness_name(str(n)) for n in table[column].to_list()]
    return (table.with_columns(pl.Series("harness", names, dtype=pl.String))
            .with_row_index("_row")
            .sort([pl.col("harness") == NONE, pl.col("harness"), pl.col("_row")])
            .drop("_row"))
