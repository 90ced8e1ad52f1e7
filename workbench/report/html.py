"""HTML pieces of the reports: escaped tables, the house style, guarded excerpts, notes.

>>> message_html("not audited").endswith('<p class="wb-note">not audited</p>')
True
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import Any

_CSS = """<style>
.wb-verdict{border-left:6px solid #888;padding:6px 12px;margin:4px 0 12px 0;background:#fafafa}
.wb-pass{border-color:#2e7d32}.wb-fail{border-color:#c62828}.wb-unverified{border-color:#ef6c00}
table.wb-kv{margin:4px 0}
table.wb-kv th{text-align:left!important;padding:3px 14px 3px 0!important;vertical-align:top;white-space:nowrap}
table.wb-kv td{text-align:left!important;padding:3px 0!important;max-width:1000px}
table.wb-table{border-collapse:collapse;margin:6px 0;font-size:12px}
table.wb-table th,table.wb-table td{border:1px solid #ccc!important;padding:3px 6px!important;text-align:right!important}
table.wb-table td.s,table.wb-table th.s,tr.wb-group th{text-align:left!important}
tr.wb-chosen td{background:#e8f5e9;font-weight:600}
tr.wb-group th{background:#eef1f5;font-weight:600}
td.wb-yes{color:#2e7d32}td.wb-no{color:#c62828;font-weight:600}td.wb-unk{color:#ef6c00}
pre.wb-excerpt{white-space:pre-wrap;font-size:11px;background:#f4f4f4;padding:6px;max-width:1100px}
p.wb-note{color:#ef6c00}p.wb-sign{margin-top:14px;color:#444}
p.wb-bounds{color:#fff;background:#c62828;padding:4px 8px;font-weight:600}
</style>"""

# policies of the run being rendered whose figures break a physical bound
# (workbench.conformance.bounds), {policy: [bound, ...]}: set by flag_bounds, shown above every table
_FLAGGED: dict[str, list[str]] = {}


def _e(v: Any) -> str:
    return html.escape(str(v), quote=True)


NUMERIC = ("usd", "int", "num", "pct", "verdict")  # cell kinds drawn right-aligned


def fmt(value: Any, kind: str) -> tuple[str, str]:
    """(text, css class) of one table cell."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—", "wb-unk" if kind == "verdict" else ""
    if kind == "usd":
        return f"{value:,.4f}", ""
    if kind == "int":
        return f"{int(value):,}", ""
    if kind == "num":
        return (f"{value:,.0f}" if float(value).is_integer() else f"{value:,.2f}"), ""
    if kind == "pct":
        return f"{value:.1%}", ""
    if kind == "bool":
        return ("on" if value else "off") if isinstance(value, bool) else str(value), "s"
    if kind == "verdict":
        return ("yes", "wb-yes") if value else ("NO", "wb-no")
    return str(value), "s"


def table_html(frame, columns: Sequence[tuple[str, str, str]] = (), *, highlight: tuple[str, Any] | None = None,
               max_rows: int = 200, group: str | None = None) -> str:
    """An escaped HTML table of ``frame``; ``columns`` are (column, header, format). With
    ``group`` (a column of ``frame``, its rows already grouped), a heading row opens each run
    of equal values.

    >>> import polars as pl
    >>> t = table_html(pl.DataFrame({"h": ["a", "a", "b"], "x": [1, 2, 3]}), group="h")
    >>> t.count('class="wb-group"'), t.index(">a<") < t.index(">b<")
    (2, True)
    """
    if frame is None:
        return bounds_banner() + "<p><em>no data</em></p>"
    if not columns:
        columns = tuple((c, c, _guess(frame.schema[c])) for c in frame.columns)
    columns = [c for c in columns if c[0] in frame.columns]
    # a header sits on the side its column's cells do: numbers right, text left
    heads = "".join(f'<th class="{"" if kind in NUMERIC else "s"}">{_e(h)}</th>' for _, h, kind in columns)
    out = [_CSS, bounds_banner(frame), '<table class="wb-table"><tr>' + heads + "</tr>"]
    last = object()
    for r in frame.head(max_rows).iter_rows(named=True):
        if group is not None and r[group] != last:
            last = r[group]
            out.append(f'<tr class="wb-group"><th colspan="{len(columns)}">{_e(last)}</th></tr>')
        chosen = highlight is not None and highlight[1] is not None and r.get(highlight[0]) == highlight[1]
        cells = []
        for col, _, kind in columns:
            text, cls = fmt(r[col], kind)
            cells.append(f'<td class="{cls}">{_e(text)}</td>')
        out.append(f'<tr class="{"wb-chosen" if chosen else ""}">' + "".join(cells) + "</tr>")
    out.append("</table>")
    if frame.height > max_rows:
        out.append(f"<p><em>{frame.height - max_rows} more rows not shown</em></p>")
    return "\n".join(out)


def _guess(dtype) -> str:
    if dtype.is_float():
        return "num"
    if dtype.is_integer():
        return "int"
    return "s"


def excerpts_html(frame) -> str:
    """Guarded excerpts (from :func:`text_samples`) as HTML; the text is escaped."""
    if frame is None:
        return message_html("No stored texts: the redaction audit has not run on this run "
                            "(`workbench audit redaction --run RUN_DIR`).")
    if frame.height == 0:
        return message_html("No stored summaries or memory entries: no policy produced readable text.")
    out = [_CSS]
    for r in frame.iter_rows(named=True):
        out.append(f"<p><b>{_e(r['policy'])}</b> · {_e(r['kind'])} at request {_e(r['request'])} · "
                   f"{_e(r['continuity_id'])} · SR-1 {'on' if r['sr1'] else 'off'} · "
                   f"{_e(r['redactions'])} redactions when stored</p>"
                   f'<pre class="wb-excerpt">{_e(r["excerpt"])}</pre>')
    return "\n".join(out)


def message_html(text: str, level: str = "note") -> str:
    return f'{_CSS}<p class="wb-{"note" if level == "note" else "sign"}">{_e(text)}</p>'


def flag_bounds(summary, ledger=None) -> dict[str, list[str]]:
    """Remember, for every table rendered after it, the policies of a run whose figures break a
    physical bound (``summary.parquet``, and ``ledger.parquet`` when given); returns them."""
    from workbench.conformance.bounds import policy_violations

    _FLAGGED.clear()
    _FLAGGED.update(policy_violations(ledger=ledger, summary=summary))
    return dict(_FLAGGED)


def bounds_banner(frame=None) -> str:
    """A red line naming each policy whose figures break a physical bound: those
    :func:`flag_bounds` found in the run, and those whose figures in ``frame`` itself do;
    empty when none does.

    >>> import polars as pl
    >>> "over-window" in bounds_banner(pl.DataFrame({"policy": ["over-window"], "context_window": [10],
    ...                                               "peak_context_tokens": [11]}))
    True
    """
    from workbench.conformance.bounds import BOUNDS, policy_violations

    found = {p: list(b) for p, b in _FLAGGED.items()}
    if frame is not None and "policy" in frame.columns:
        for policy, bounds in policy_violations(summary=frame).items():
            found[policy] = [b for b in BOUNDS if b in set(found.get(policy, [])) | set(bounds)]
    if not found:
        return ""
    what = "; ".join(f"{p}: " + ", ".join(BOUNDS[b] for b in bounds) for p, bounds in found.items())
    return (f'<p class="wb-bounds">Physically impossible figures, do not sign off: {_e(what)} '
            "(workbench audit conformance --run RUN_DIR lists every call).</p>")
