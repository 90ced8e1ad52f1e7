"""Predictive fidelity: does each harness preset compact where the real harness did, and do
the replay's totals and cost match what the log recorded, in sample and out of sample?

Two tables, both from replays in provider tokens (:mod:`workbench.engine.accounting`):

* :func:`preset_compactions` — every continuity whose harness has a preset
  (:data:`HARNESS_PRESET`) is replayed under that preset, release-matched to the log's
  harness version (``claude-code`` on a 2.0.76 log is ``claude-code@2.0``), with no other
  flag. One row per continuity × line: the requests where the preset compacted, the
  requests the log recorded a compaction at (and whether each was automatic or manual),
  and the distance between the first automatic one and the preset's first compaction. A
  manual compaction is the user's, not the harness's: the preset is only checked not to
  compact before it (``compacted_early``).
* :func:`totals_table` — the ``as-recorded`` replay's prompt, cache-read and cost totals
  (input side and total, priced with genai-prices for the continuity's model, the
  recorded usage priced the same way) against the recorded ones, per continuity × line.

Lines (``line``): ``in_sample`` is the continuity's own fitted line (its harness profile
when it has none), ``loo`` the profile fitted **without** this log (leave-one-log-out:
:func:`workbench.sources.profiles.fit_profiles`), both anchored to the recorded usage;
``loo_unanchored`` no recorded usage at all, i.e. how a log whose usage was never recorded
would be replayed: for Claude Code the growth model of what its logs do not show (attached
files, earlier turns' thinking the API drops, per-request framing, files restored after a
compaction: :mod:`workbench.tokens.unlogged`, fitted without the log), else the ``loo``
profile. A log alone in its harness has no ``loo``. The preset table's ``within`` is
``|first_auto_delta_requests| <= WITHIN_REQUESTS`` (3, issue 28); the audit prints how many
recorded automatic compactions the unanchored preset meets.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from workbench.engine.presets import PRESET_OF_FORMAT

# the preset that mirrors each log format's harness (presets.PRESET_OF_FORMAT); aider
# summarises its chat history without writing it to the log, so no aider log can say where it
# compacted: left out
HARNESS_PRESET = {fmt: name for fmt, name in PRESET_OF_FORMAT.items() if fmt != "aider"}
WITHIN_REQUESTS = 3  # "compacts where the real harness did": within this many requests (issue 28)
LINES = ("in_sample", "loo", "loo_unanchored")


def _lines(profiles: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """``{line name: {continuity id: Line}}`` for the out-of-sample lines (in-sample is
    the accountant's default)."""
    from workbench.engine.accounting import Line
    from workbench.tokens.unlogged import drops_thinking

    loo, bare = {}, {}
    for cid, entry in (profiles.get("logs") or {}).items():
        fit = entry.get("loo")
        if fit:
            loo[cid] = Line(fit["prefix_tokens"], fit["factor"], f"loo profile {fit['profile']}")
            bare[cid] = Line(fit["prefix_tokens"], fit["factor"], f"loo profile {fit['profile']}", anchored=False)
        grown = entry.get("loo_unanchored")
        if grown:  # the growth model: what the log does not show, estimated (workbench.tokens.unlogged)
            bare[cid] = Line(grown["prefix_tokens"], grown["factor"], f"loo growth {grown['profile']}",
                             anchored=False, per_request=grown["per_request_tokens"],
                             attachments=tuple(tuple(a) for a in grown.get("attachments", ())),
                             drop_thinking=drops_thinking(entry.get("family")),
                             restored=grown.get("restored_tokens", 0.0),
                             switches=tuple(tuple(s) for s in grown.get("switches", ())),
                             switch_tokens=grown.get("tool_search_tokens", 0.0))
    return {"in_sample": {}, "loo": loo, "loo_unanchored": bare}


def _replays(inputs, policy_of, lines: dict[str, Any], engine: str, price_as: str | None):
    """Yield ``(line name, input, rule, line, provider, ledger, events)`` per continuity and line."""
    from workbench.engine.accounting import Accountant
    from workbench.engine.provider import resolve_provider
    from workbench.engine.run import accounted, replay

    for name, overrides in lines.items():
        acct = Accountant("provider", None, "own", overrides=overrides)
        for inp in inputs:
            pol = policy_of(inp)
            if pol is None or (name != "in_sample" and inp.continuity_id not in overrides):
                continue
            rule, view, line = accounted(acct, inp, pol)
            prov = resolve_provider(rule, continuity_model=inp.model, continuity_window=inp.context_window,
                                    price_as=price_as)
            led, ev = replay(view, rule, prov, engine)
            yield name, view, rule, line, prov, led, ev


def _recorded_boundaries(ds) -> dict[str, list[tuple[int, str]]]:
    """Per continuity id: (request after the boundary, trigger name) of each recorded compaction."""
    import polars as pl

    from workbench.continuity.enums import TRIGGER_NAMES, EventKind

    ids = dict(ds.continuities().select("continuity", "continuity_id").iter_rows())
    ev = ds.events(columns=["continuity", "kind", "request", "compact_trigger"]).filter(
        pl.col("kind") == int(EventKind.COMPACTION))
    out: dict[str, list[tuple[int, str]]] = {}
    for c, req, trig in ev.select("continuity", "request", "compact_trigger").iter_rows():
        out.setdefault(ids[c], []).append((int(req), TRIGGER_NAMES.get(int(trig), str(trig))))
    return out


def preset_compactions(ds, inputs, profiles: dict[str, Any], *, engine: str = "kernel",
                       price_as: str | None = None):
    """One row per continuity (with a harness preset and recorded usage or a recorded
    compaction) × line; see the module docstring."""
    import polars as pl

    from workbench.engine import enums as E
    from workbench.engine.presets import get_policy
    from workbench.engine.records import EVENT

    bounds = _recorded_boundaries(ds)
    wanted = [inp for inp in inputs if inp.harness in HARNESS_PRESET
              and (inp.continuity_id in bounds
                   or (inp.recorded_prompt is not None and (inp.recorded_prompt >= 0).any()))]
    presets = {h: get_policy(p) for h, p in HARNESS_PRESET.items()}
    rows = []
    for name, view, rule, line, _prov, _led, ev in _replays(wanted, lambda i: presets[i.harness],
                                                           _lines(profiles), engine, price_as):
        done = ev[ev[:, EVENT.type] == E.EventType.CHECKPOINT]
        simulated = [int(view.req_source[r]) for r in done[:, EVENT.request].tolist()]
        recorded = bounds.get(view.continuity_id, [])
        auto = [r for r, t in recorded if t == "auto"]
        first_any = min((r for r, _ in recorded), default=None)
        delta = (simulated[0] - auto[0]) if auto and simulated else None
        rows.append({
            "continuity_id": view.continuity_id, "harness": view.harness, "harness_version": view.harness_version,
            "preset": HARNESS_PRESET[view.harness], "release_line": rule.name, "line": name,
            "line_source": line.source, "prefix_tokens": int(round(line.prefix)), "factor": float(line.factor),
            "recorded_compactions": [r for r, _ in recorded], "recorded_triggers": [t for _, t in recorded],
            "simulated_compactions": simulated,
            "first_auto_delta_requests": delta,
            "within": (None if not auto else delta is not None and abs(delta) <= WITHIN_REQUESTS),
            "compacted_early": (bool(simulated) and first_any is not None and simulated[0] < first_any - WITHIN_REQUESTS)
            or (bool(simulated) and first_any is None),
        })
    schema = {"continuity_id": pl.String, "harness": pl.String, "harness_version": pl.String, "preset": pl.String,
              "release_line": pl.String, "line": pl.String, "line_source": pl.String,
              "prefix_tokens": pl.Int64, "factor": pl.Float64, "recorded_compactions": pl.List(pl.Int64),
              "recorded_triggers": pl.List(pl.String), "simulated_compactions": pl.List(pl.Int64),
              "first_auto_delta_requests": pl.Int64, "within": pl.Boolean, "compacted_early": pl.Boolean}
    return pl.DataFrame(rows, schema=schema)


def totals_table(inputs, profiles: dict[str, Any], *, engine: str = "kernel", price_as: str | None = None,
                 manifest: dict[str, Any] | None = None, miss_profiles: dict[str, Any] | None = None):
    """One row per continuity with recorded usage × line: the as-recorded replay's totals
    against the recorded ones (main calls of requests the log has usage for). A request whose
    recorded output count is a streaming placeholder (the import's ``usage_placeholders``,
    from ``manifest``) has no known output: its output is left out on both sides.

    The simulated cost and cache read are the expected values under the provider's own
    cache misses (:mod:`workbench.engine.cache_miss`; ``miss_profiles``: a fitted document,
    by default fitted on ``inputs``), with the p10-p90 band of the cost
    (``simulated_cost_p10_usd``, ``simulated_cost_p90_usd``) and the cost with the replay's
    own reads (``simulated_cost_hits_usd``). ``in_sample`` uses the profile fitted with the
    log itself, ``loo`` and ``loo_unanchored`` the profile fitted without it."""
    import polars as pl

    from workbench.engine.cache_miss import cold_requests, fit_miss_profiles, miss_band, resolve, serving_provider
    from workbench.engine.enums import CallKind
    from workbench.engine.presets import get_policy
    from workbench.engine.records import LEDGER
    from workbench.sources.claude_code import cache_writes_1h, usage_placeholders
    from workbench.sources.compaction_calls import compaction_calls

    pol = get_policy("as-recorded")
    cold = cold_requests(manifest or {})
    if miss_profiles is None:
        miss_profiles = fit_miss_profiles(inputs, cold=cold)
    unknown_output = usage_placeholders(manifest or {})
    writes_1h = cache_writes_1h(manifest or {})
    recorded_calls = compaction_calls(manifest or {})
    wanted = [inp for inp in inputs if inp.recorded_prompt is not None and (inp.recorded_prompt >= 0).any()]
    rows = []
    for name, view, _rule, line, prov, led, _ev in _replays(wanted, lambda i: pol, _lines(profiles),
                                                           engine, price_as):
        comp = led[led[:, LEDGER.call_kind] == CallKind.COMPACTION]
        main = led[led[:, LEDGER.call_kind] == 0]
        req = main[:, LEDGER.request]
        has = view.recorded_prompt[req] >= 0
        main = main[has]
        rec_prompt, rec_read, rec_write, rec_out = _recorded_usage(view)
        unknown = unknown_output.get(view.continuity_id)
        if unknown:
            rec_src = view.req_source[np.flatnonzero(view.recorded_prompt >= 0)]
            rec_out = np.where(np.isin(rec_src, list(unknown)), 0, rec_out)
            main = main.copy()
            main[np.isin(view.req_source[main[:, LEDGER.request]], list(unknown)), LEDGER.output_tokens] = 0
        sim = {k: int(main[:, getattr(LEDGER, c)].sum()) for k, c in
               (("prompt", "prompt_tokens"), ("cache_read", "cache_read_tokens"),
                ("cache_write", "cache_write_tokens"), ("output", "output_tokens"))}
        sim_cost = prov.prices.cost(main[:, LEDGER.prompt_tokens], main[:, LEDGER.cache_read_tokens],
                                    main[:, LEDGER.cache_write_tokens], main[:, LEDGER.uncached_tokens],
                                    main[:, LEDGER.output_tokens])
        sim_input_cost = prov.prices.cost(main[:, LEDGER.prompt_tokens], main[:, LEDGER.cache_read_tokens],
                                          main[:, LEDGER.cache_write_tokens], main[:, LEDGER.uncached_tokens],
                                          np.zeros(len(main), np.int64))
        rec_uncached = rec_prompt - rec_read - rec_write
        rec_cost = prov.prices.cost(rec_prompt, rec_read, rec_write, rec_uncached, rec_out)
        rec_input_cost = prov.prices.cost(rec_prompt, rec_read, rec_write, rec_uncached,
                                          np.zeros(rec_prompt.size, np.int64))
        # cache writes the log records at the 1-hour tier: the bill has them at its price; a
        # replay that writes what the log recorded (anchored, unchanged) wrote them too, one
        # whose writes the cache model chose writes at the 5-minute tier
        tier = writes_1h.get(view.continuity_id)
        if tier:
            rec_src = view.req_source[np.flatnonzero(view.recorded_prompt >= 0)]
            rec_1h = np.array([tier.get(int(q), 0) for q in rec_src], np.int64)
            rec_extra = prov.prices.write_1h_extra(rec_1h)
            rec_cost, rec_input_cost = rec_cost + rec_extra, rec_input_cost + rec_extra
            sim_req = main[:, LEDGER.request]
            sim_1h = np.array([tier.get(int(q), 0) for q in view.req_source[sim_req]], np.int64)
            as_recorded = ((main[:, LEDGER.prompt_tokens] == view.recorded_prompt[sim_req])
                           & (main[:, LEDGER.cache_write_tokens] == np.maximum(view.recorded_cache[1][sim_req], 0)))
            sim_extra = prov.prices.write_1h_extra(np.where(as_recorded, sim_1h, 0))
            sim_cost, sim_input_cost = sim_cost + sim_extra, sim_input_cost + sim_extra
        else:
            sim_extra = None
        # the provider's own misses: expected cost and band (what the cache model billed can miss)
        miss = resolve(miss_profiles, view.harness, view.harness_version, serving_provider(view),
                       exclude=None if name == "in_sample" else view.continuity_id)
        band = miss_band(main, view, prov, miss, engine=engine, extra_usd=sim_extra,
                         cold=cold.get(view.continuity_id, ()))
        output_cost = float(sim_cost.sum() - sim_input_cost.sum())
        sim["cache_read"] = int(round(band.cache_read_tokens))
        sim["cache_write"] = int(round(band.cache_write_tokens))
        recorded = {"prompt": int(rec_prompt.sum()), "cache_read": int(rec_read.sum()),
                    "cache_write": int(rec_write.sum()), "output": int(rec_out.sum())}
        row = {"continuity_id": view.continuity_id, "harness": view.harness, "line": name,
               "line_source": line.source, "model": prov.model, "requests": int(has.sum()),
               "output_unknown_requests": len(unknown or ())}
        for k in ("prompt", "cache_read", "cache_write", "output"):
            row[f"recorded_{k}_tokens"] = recorded[k]
            row[f"simulated_{k}_tokens"] = sim[k]
            row[f"{k}_error_pct"] = _pct(sim[k], recorded[k])
        for k, s_, r_ in (("input_cost", band.expected_usd - output_cost, rec_input_cost),
                          ("cost", band.expected_usd, rec_cost)):
            row[f"recorded_{k}_usd"] = float(r_.sum())
            row[f"simulated_{k}_usd"] = float(s_)
            row[f"{k}_error_pct"] = _pct(float(s_), float(r_.sum()))
        row["simulated_cost_hits_usd"] = band.hits_usd
        row["cost_hits_error_pct"] = _pct(band.hits_usd, float(rec_cost.sum()))
        row["simulated_cost_p10_usd"] = band.p10_usd
        row["simulated_cost_p90_usd"] = band.p90_usd
        row["cost_p10_error_pct"] = _pct(band.p10_usd, float(rec_cost.sum()))
        row["cost_p90_error_pct"] = _pct(band.p90_usd, float(rec_cost.sum()))
        row["cache_miss_profile"] = miss.source if miss is not None else None
        row["cache_miss_expected"] = band.expected_misses
        # the compaction calls apart (not in the totals above): what the log recorded for them
        # (workbench.sources.compaction_calls) against the replay's compaction calls
        calls = recorded_calls.get(view.continuity_id, [])
        c = {k: np.array([e[k] for e in calls], np.int64) for k in ("input", "cache_read", "cache_write", "output")}
        row["compaction_calls_recorded"] = len(calls)
        row["recorded_compaction_cost_usd"] = float(prov.prices.cost(
            c["input"] + c["cache_read"] + c["cache_write"], c["cache_read"], c["cache_write"], c["input"],
            c["output"]).sum()) if calls else 0.0
        row["compaction_calls_simulated"] = len(comp)
        row["simulated_compaction_cost_usd"] = float(prov.prices.cost(
            comp[:, LEDGER.prompt_tokens], comp[:, LEDGER.cache_read_tokens], comp[:, LEDGER.cache_write_tokens],
            comp[:, LEDGER.uncached_tokens], comp[:, LEDGER.output_tokens]).sum())
        rows.append(row)
    return pl.DataFrame(rows, infer_schema_length=None) if rows else pl.DataFrame(
        schema={"continuity_id": pl.String, "harness": pl.String, "line": pl.String})


def _recorded_usage(view):
    """The log's prompt, cache read, cache write and output per request the replay anchored
    (arrays in request order; what :class:`~workbench.engine.accounting.Recorded` read, a
    value the log does not give counted as 0)."""
    has = view.recorded_prompt >= 0
    read, write = (np.maximum(a[has], 0) for a in view.recorded_cache)
    return view.recorded_prompt[has], read, write, np.maximum(view.recorded_output[has], 0)


def _pct(sim, rec):
    return None if not rec else round((sim - rec) / rec * 100.0, 3)


def harness_totals(totals):
    """The totals summed per harness and line, with their errors (what the acceptance
    figures and the report quote)."""
    import polars as pl

    if not totals.height or "recorded_prompt_tokens" not in totals.columns:
        return pl.DataFrame()
    sums = [pl.col(f"{w}_{k}").sum() for k in ("prompt_tokens", "cache_read_tokens", "input_cost_usd", "cost_usd")
            for w in ("recorded", "simulated")]
    band = [pl.col(c).sum() for c in ("simulated_cost_hits_usd", "simulated_cost_p10_usd", "simulated_cost_p90_usd")
            if c in totals.columns]
    g = totals.group_by("harness", "line").agg(pl.len().alias("logs"), pl.col("requests").sum(), *sums, *band)
    g = g.with_columns(
        ((pl.col(f"simulated_{k}") - pl.col(f"recorded_{k}")) / pl.col(f"recorded_{k}") * 100)
        .round(2).alias(f"{k.rsplit('_', 1)[0]}_error_pct")
        for k in ("prompt_tokens", "cache_read_tokens", "input_cost_usd", "cost_usd")
    )
    if band:  # the per-log bands summed (a bound on the pooled band: draws of logs are independent)
        g = g.with_columns(
            ((pl.col(f"simulated_{k}") - pl.col("recorded_cost_usd")) / pl.col("recorded_cost_usd") * 100)
            .round(2).alias(f"{k.removesuffix('_usd')}_error_pct")
            for k in ("cost_hits_usd", "cost_p10_usd", "cost_p90_usd"))
    return g.sort("harness", "line")


def _unanchored_positions(preset) -> list[str]:
    """Where the preset compacts without the log's usage (``loo_unanchored``), per recorded
    automatic compaction: the position error and how many are within ±WITHIN_REQUESTS."""
    bare = preset.filter((preset["line"] == "loo_unanchored") & preset["within"].is_not_null())
    out = [f"  without the log's usage (loo_unanchored): {bare['within'].sum()} of {bare.height} recorded "
           f"automatic compaction(s) within ±{WITHIN_REQUESTS} requests"]
    for r in bare.iter_rows(named=True):
        auto = [q for q, t in zip(r["recorded_compactions"], r["recorded_triggers"], strict=True) if t == "auto"]
        first = r["simulated_compactions"][0] if r["simulated_compactions"] else None
        delta = r["first_auto_delta_requests"]
        where = ("none (no compaction)" if first is None
                 else f"{first} ({delta:+d} request{'' if abs(delta) == 1 else 's'})")
        out.append(f"    {r['continuity_id']} [{r['release_line']}: {r['line_source']}] recorded {auto[0]}, "
                   f"preset {where}")
    early = preset.filter((preset["line"] == "loo_unanchored") & preset["within"].is_null() & preset["compacted_early"])
    if early.height:
        out.append(f"    before a manual compaction or on a log that recorded none: {', '.join(early['continuity_id'])}")
    return out


def render_predictive(preset, totals) -> str:
    """Plain text: where each preset compacted against the log, then totals per harness."""
    lines = ["Harness presets (release-matched, no flags) against the compactions the logs recorded:"]
    for r in preset.filter(preset["line"] != "loo_unanchored").iter_rows(named=True):
        if not r["recorded_compactions"] and not r["simulated_compactions"]:
            continue
        rec = ", ".join(f"{q} ({t})" for q, t in zip(r["recorded_compactions"], r["recorded_triggers"], strict=True))
        verdict = (f"within ±{WITHIN_REQUESTS}" if r["within"] else "MISSED" if r["within"] is False
                   else "before the recorded one" if r["compacted_early"]
                   else "no compaction" if not r["simulated_compactions"] else "after the recorded one")
        lines.append(f"  {r['continuity_id']} [{r['release_line']}, {r['line']}: {r['line_source']}] recorded "
                     f"{rec or 'none'}; preset {', '.join(map(str, r['simulated_compactions'])) or 'none'} "
                     f"({verdict})")
    lines.extend(_unanchored_positions(preset))
    quiet = preset.filter((preset["line"] == "in_sample") & (preset["recorded_compactions"].list.len() == 0))
    lines.append(f"  {quiet.height} log(s) recorded no compaction; the preset compacted on "
                 f"{quiet.filter(quiet['simulated_compactions'].list.len() > 0).height} of them")
    g = harness_totals(totals)
    if g.height:
        import io

        from workbench.util.tables import emit

        def pct(v) -> str:  # no recorded figure to compare with (0 recorded): no error to give
            return "–" if v is None or not math.isfinite(v) else f"{round(v, 2) or 0.0:+.2f}"  # no "-0.00"

        errors = ("prompt_error_pct", "cache_read_error_pct", "input_cost_error_pct", "cost_error_pct",
                  *(c for c in ("cost_p10_error_pct", "cost_p90_error_pct", "cost_hits_error_pct") if c in g.columns))
        buf = io.StringIO()
        emit(g.to_dicts(), ["harness", "line", "logs", "requests", *errors], fmt="table", file=buf,
             title="as-recorded totals against the recorded usage (error %; cost: expected under the "
                   "provider's cache misses, its p10-p90 band, and with every read the cache model allows)",
             headers={"prompt_error_pct": "prompt %", "cache_read_error_pct": "cache read %",
                      "input_cost_error_pct": "input cost %", "cost_error_pct": "cost %",
                      "cost_p10_error_pct": "p10 %", "cost_p90_error_pct": "p90 %",
                      "cost_hits_error_pct": "no misses %"},
             display={c: pct for c in errors})
        lines.append(buf.getvalue().rstrip("\n"))
    return "\n".join(lines)
