"""Fidelity: replaying the recorded behaviour of a real log against its recorded usage.

:func:`fidelity_table` replays the ``as-recorded`` preset (trigger ``recorded`` + strategy
``recorded``: compact exactly where the log recorded a compaction boundary and keep the
log's own summary events) on every continuity of an imported dataset that holds recorded
usage or a recorded compaction boundary, and compares, request by request:

* **prompt tokens**: recorded ``usage_input + usage_cache_read + usage_cache_write``
  (schema convention) against the simulated main call's ``prompt_tokens``, uncalibrated
  and calibrated with the import manifest's per-continuity line
  (``manifest["import"]["calibration"][continuity_id]``: recorded ≈ a + b·counted; only
  lines with status ``ok`` are used, otherwise ``calibrated_*`` is null);
* **cache read / cache write**: the unseen fixed prefix ``a`` (system prompt, tool
  schemas) sits at the front of every prompt, so it is read whenever anything is read:
  ``calibrated_cache_read = a + b·read`` when the simulation read anything, else 0;
  ``calibrated_cache_write = calibrated_prompt − calibrated_cache_read`` when the
  simulation wrote anything (explicit caches), else 0; the rest is uncached input. The
  cache-hit share (read / prompt) needs no calibration and is compared as well;
* **output tokens**: the tokens of the request's output events (the ledger's
  ``output_tokens``) against ``usage_output``;
* **compaction position**: the request at which the simulation placed each compaction
  (the checkpoint's ``source_request``) against the request the log recorded it at (the
  ``request`` of the COMPACTION event: the first request after the boundary); for
  Claude Code, the boundary's ``preTokens`` against the simulated context right before
  the boundary (every context row before it, raw and calibrated).

* **run-level usage** (``run_level``, one row per continuity whose log records totals for
  the whole run: SWE-agent's ``info.model_stats``, aider's, Cline's, opencode's costs; the
  import manifest's ``import.run_usage``): recorded tokens sent against the simulated prompt
  tokens summed over every call (and calibrated where the continuity has a fitted line),
  tokens received against the simulated output, API calls against the simulated calls, the
  recorded cost against the simulated one (priced for ``simulated_model``, which is the
  preset's default when the log names no model: then the cost is not comparable and the
  ``note`` says so).

Request indices are the continuity's own (the ``request`` column of the events, the
ledger's ``source_request``); recorded usage sits on events with ``usage_input >= 0``.

Result (a dict): ``requests`` (one row per recorded request with usage: ``recorded_*``,
``simulated_*``, ``calibrated_*``, signed ``*_error_pct``, absolute ``*_ape`` and a
``note``), ``compactions`` (one row per recorded boundary request and per simulated
checkpoint, outer-joined on the request), ``continuities`` and ``summary`` (per source
format: requests compared, median/p90 absolute percentage errors, totals, compaction
requests recorded vs simulated and whether they match, preTokens vs simulated), and
``run_level`` and ``config``. APEs are ``|simulated − recorded| / recorded · 100``, null where the recorded
value is 0. Nothing here is tuned to the logs: where the engine cannot reproduce a log
the error is reported.

The findings on the bundled real logs (why each figure is what it is, the measured table
and how to measure it) are in ``docs/fidelity-findings.md``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from workbench.rundir import wire as W

POLICY = "as-recorded"
# a recorded output of at most this many tokens, for a request whose output events hold
# more, is a stream snapshot (Claude Code's message_start value), not the real output
OUTPUT_PLACEHOLDER_MAX = 1


def _ape(sim, rec):
    """Polars expression: absolute percentage error, null where the recorded value is 0."""
    import polars as pl

    return pl.when(rec > 0).then((sim - rec).abs() / rec * 100.0).otherwise(None)


def _signed(sim, rec):
    import polars as pl

    return pl.when(rec > 0).then((sim - rec) / rec * 100.0).otherwise(None)


def _calib(x, a, b):
    return None if x is None or a is None else a + b * x


def _calibrations(ds, tokenizer: str) -> dict[str, dict[str, Any]]:
    """Per continuity id: status, intercept, factor (only fitted lines are used)."""
    reports = (ds.manifest.get("import") or {}).get("calibration") or {}
    out = {}
    for cid, rep in reports.items():
        status = rep.get("status", "missing")
        usable = (status == "ok" and rep.get("tokenizer") == tokenizer
                  and rep.get("intercept") is not None and rep.get("factor") is not None)
        if status == "ok" and rep.get("tokenizer") != tokenizer:
            status = f"calibrated for {rep.get('tokenizer')}, not {tokenizer}"
        out[cid] = {
            "calibration_status": status,
            "intercept": float(rep["intercept"]) if usable else None,
            "factor": float(rep["factor"]) if usable else None,
            "calibration_ape_median_pct": rep.get("ape_median_pct"),
            "calibration_cv_ape_median_pct": rep.get("cv_ape_median_pct"),
        }
    return out


def fidelity_table(dataset, *, engine: str = "kernel", tokenizer: str = "cl100k",
                   policy: str = POLICY, price_as: str | None = None, accounting: str = "provider",
                   line_source: str = "own", lines: dict | None = None,
                   profiles: dict | None = None) -> dict[str, Any]:
    """Replay ``policy`` (default ``as-recorded``) and compare it with the recorded usage.

    ``dataset``: an imported dataset (path or :class:`~workbench.continuity.dataset.Dataset`).
    ``accounting``: ``provider`` replays in provider tokens (the ``calibrated_*`` columns
    are then the simulated values themselves), ``counted`` in counted tokens with the line
    applied afterwards (the import's per-continuity fit); ``line_source``, ``lines``
    (continuity id -> :class:`~workbench.engine.accounting.Line`) and ``profiles`` choose
    the lines (:class:`~workbench.engine.accounting.Accountant`).
    Returns ``{"requests", "compactions", "continuities", "summary", "config"}`` (polars
    frames and a dict); see the module docstring for the columns and what they mean.
    """
    import polars as pl

    from workbench.continuity.dataset import Dataset, load_dataset
    from workbench.continuity.enums import EventKind, Origin
    from workbench.continuity.schema import USAGE_COLUMNS
    from workbench.engine.accounting import Accountant
    from workbench.engine.presets import get_policy
    from workbench.engine.provider import resolve_provider
    from workbench.engine.run import accounted, ledger_frame, prepare_dataset, replay, stable_run_id
    from workbench.evaluate.fidelity_runs import run_level_frame
    from workbench.rundir.event_frames import events_frame
    from workbench.sources.claude_code import usage_placeholders
    from workbench.sources.compaction_calls import calls_by_boundary, parents_of_calls

    ds = dataset if isinstance(dataset, Dataset) else load_dataset(dataset)
    pol = get_policy(policy) if isinstance(policy, str) else policy
    conts = ds.continuities()
    ids = dict(zip(conts["continuity"].to_list(), conts["continuity_id"].to_list(), strict=True))
    fmt_of = dict(zip(conts["continuity_id"].to_list(), conts["source_format"].to_list(), strict=True))
    call_of = parents_of_calls(ds.manifest)  # compaction calls recorded as continuities
    ev = ds.events(columns=["continuity", "seq", "kind", "flags", "origin", "request", *USAGE_COLUMNS,
                            "compact_trigger", "compact_pre_tokens"])
    cid_expr = pl.col("continuity").replace_strict(ids, return_dtype=pl.String).alias("continuity_id")
    # a background call's usage (Codex's compaction request) is no request of the conversation:
    # the compactions frame shows it
    usage = ev.filter((pl.col("usage_input") >= 0) & (pl.col("origin") != int(Origin.BACKGROUND))
                      ).with_columns(cid_expr)
    bounds = ev.filter(pl.col("kind") == int(EventKind.COMPACTION)).with_columns(cid_expr)
    runs = {r["continuity_id"]: r for r in ((ds.manifest.get("import") or {}).get("run_usage") or {})
            .get("by_continuity", [])}
    index_of = {cid: c for c, cid in ids.items()}
    with_runs = {index_of[cid] for cid in runs if cid in index_of}
    compared = sorted(set(usage["continuity"].to_list()) | set(bounds["continuity"].to_list()))
    # replayed (run-level-only ones feed run_level); a compaction call is its parent's call
    selected = sorted(c for c in set(compared) | with_runs if ids[c] not in call_of)
    acct = Accountant(accounting, profiles, line_source, tokenizer, overrides=lines)
    run_id = stable_run_id(ds.manifest, [pol], tokenizer, 0, None, acct)
    config = {"run_id": run_id, "policy": pol.name, "engine": engine, "tokenizer": tokenizer,
              "dataset": str(ds.path), "continuities": [ids[c] for c in selected],
              "accounting": acct.describe(), "lines": {}}
    cal = _calibrations(ds, tokenizer)

    # ---- replay -------------------------------------------------------------------
    inputs = {inp.continuity: inp for inp in prepare_dataset(ds, tokenizer) if inp.continuity in set(selected)}
    ledgers, events = [], []
    for c in selected:
        rule, inp, line = accounted(acct, inputs[c], pol)
        inputs[c] = inp  # in the tokens replayed (the compaction frame reads them)
        config["lines"][inp.continuity_id] = line.as_dict()
        if line.source != "counted":  # the line is in the replay: nothing to apply afterwards
            cal[inp.continuity_id] = {**cal.get(inp.continuity_id, {}), "calibration_status": line.source,
                                      "intercept": line.prefix, "factor": line.factor, "applied": True}
        prov = resolve_provider(rule, continuity_model=inp.model, continuity_window=inp.context_window,
                                price_as=price_as)
        led, evm = replay(inp, rule, prov, engine)
        ledgers.append(ledger_frame(led, inp, pol, prov, run_id))
        events.append(events_frame(evm, inp, pol, run_id))
    ledger = (pl.concat(ledgers, how="vertical") if ledgers else None)
    sim_events = pl.concat(events, how="diagonal_relaxed") if events else None

    requests = _request_frame(usage, ledger, fmt_of, cal, inputs, call_of, usage_placeholders(ds.manifest))
    compactions = _compaction_frame(bounds, sim_events, ledger, usage, fmt_of, cal, inputs,
                                    calls_by_boundary(ds.manifest))
    continuities = _continuity_frame(requests, compactions, ledger, cal, fmt_of, compared, ids)
    summary = _summary(requests, compactions, ledger, fmt_of, key="source_format")
    model_of = dict(zip(conts["continuity_id"].to_list(), conts["model"].to_list(), strict=True))
    run_level = run_level_frame(runs, ledger, fmt_of, cal, model_of)
    return {"requests": requests, "compactions": compactions, "continuities": continuities,
            "summary": summary, "run_level": run_level, "config": config}


# ------------------------------------------------------------------ per request

def _request_frame(usage, ledger, fmt_of, cal, inputs, call_of, placeholders):
    import polars as pl

    rec = (usage.group_by("continuity", "continuity_id", "request", maintain_order=True)
           .agg(pl.len().alias("usage_events"),
                pl.col("usage_input").sum().alias("recorded_input"),
                pl.col("usage_cache_read").clip(lower_bound=0).sum().alias("recorded_cache_read"),
                pl.col("usage_cache_write").clip(lower_bound=0).sum().alias("recorded_cache_write"),
                pl.col("usage_output").clip(lower_bound=0).sum().alias("recorded_output"))
           .with_columns(pl.col("request").cast(pl.Int64),
                         (pl.col("recorded_input") + pl.col("recorded_cache_read")
                          + pl.col("recorded_cache_write")).alias("recorded_prompt")))
    if ledger is not None and ledger.height:
        main = (ledger.filter(pl.col("call_kind") == "main")
                .sort("continuity_id", "call")
                .with_columns((pl.col("ts_ms") - pl.col("ts_ms").shift(1).over("continuity_id"))
                              .truediv(1000.0).alias("gap_s"))
                .select("continuity_id", pl.col("source_request").alias("request"), "call",
                        pl.col("prompt_tokens").alias("simulated_prompt"),
                        pl.col("input_tokens").alias("simulated_input"),
                        pl.col("cached_input_tokens").alias("simulated_cache_read"),
                        pl.col("cache_write_tokens").alias("simulated_cache_write"),
                        pl.col("output_tokens").alias("simulated_output"),
                        pl.col("cache_loss").alias("simulated_cache_loss"),
                        pl.col("compacted").alias("simulated_compaction"), "gap_s"))
    else:
        main = pl.DataFrame(schema={"continuity_id": pl.String, "request": pl.Int64, "call": pl.Int64,
                                    "simulated_prompt": pl.Int64, "simulated_input": pl.Int64,
                                    "simulated_cache_read": pl.Int64, "simulated_cache_write": pl.Int64,
                                    "simulated_output": pl.Int64, "simulated_cache_loss": pl.String,
                                    "simulated_compaction": pl.Boolean, "gap_s": pl.Float64})
    df = rec.join(main, on=["continuity_id", "request"], how="left")
    cal_df = pl.DataFrame({
        "continuity_id": list(cal), "intercept": [v["intercept"] for v in cal.values()],
        "factor": [v["factor"] for v in cal.values()],
        "calibration_status": [v["calibration_status"] for v in cal.values()],
        "_applied": [bool(v.get("applied")) for v in cal.values()],
    }, schema={"continuity_id": pl.String, "intercept": pl.Float64, "factor": pl.Float64,
               "calibration_status": pl.String, "_applied": pl.Boolean})
    df = df.join(cal_df, on="continuity_id", how="left").with_columns(
        pl.col("continuity_id").replace_strict(fmt_of, return_dtype=pl.String).alias("source_format"),
        pl.col("calibration_status").fill_null("missing"))
    # a line already in the replay (provider accounting) is not applied a second time
    applied = pl.col("_applied").fill_null(False)
    a = pl.when(applied).then(0.0).otherwise(pl.col("intercept"))
    b = pl.when(applied).then(1.0).otherwise(pl.col("factor"))
    sp, sr, sw = pl.col("simulated_prompt"), pl.col("simulated_cache_read"), pl.col("simulated_cache_write")
    flagged = pl.DataFrame([(cid, int(r), True) for cid, reqs in placeholders.items() for r in reqs], orient="row",
                           schema={"continuity_id": pl.String, "request": pl.Int64, "_import_placeholder": pl.Boolean})
    df = df.join(flagged, on=["continuity_id", "request"], how="left")  # the import's per-release rule
    df = df.with_columns((a + b * sp).alias("calibrated_prompt"))
    none = sp.is_null() | a.is_null() | b.is_null()  # nothing simulated, or no fitted line
    df = df.with_columns(
        pl.when(none).then(None).when(sr > 0)
        .then(pl.min_horizontal(a + b * sr, pl.col("calibrated_prompt"))).otherwise(0.0)
        .alias("calibrated_cache_read"))
    df = df.with_columns(
        pl.when(none).then(None).when(sw > 0)
        .then(pl.col("calibrated_prompt") - pl.col("calibrated_cache_read")).otherwise(0.0)
        .alias("calibrated_cache_write"))
    df = df.with_columns((pl.col("calibrated_prompt") - pl.col("calibrated_cache_read")
                          - pl.col("calibrated_cache_write")).alias("calibrated_input"))
    # errors
    rp, rr, rw, ro = (pl.col(c) for c in ("recorded_prompt", "recorded_cache_read",
                                          "recorded_cache_write", "recorded_output"))
    df = df.with_columns(
        _signed(pl.col("calibrated_prompt"), rp).alias("prompt_error_pct"),
        _ape(pl.col("calibrated_prompt"), rp).alias("prompt_ape"),
        _signed(sp.cast(pl.Float64), rp).alias("prompt_uncalibrated_error_pct"),
        _ape(sp.cast(pl.Float64), rp).alias("prompt_uncalibrated_ape"),
        _ape(pl.col("calibrated_cache_read"), rr).alias("cache_read_ape"),
        _ape(pl.col("calibrated_cache_write"), rw).alias("cache_write_ape"),
        _ape(pl.col("simulated_output").cast(pl.Float64), ro).alias("output_ape"),
        pl.when(rp > 0).then(rr / rp * 100.0).otherwise(None).alias("recorded_cache_hit_pct"),
        pl.when(sp > 0).then(sr / sp * 100.0).otherwise(None).alias("simulated_cache_hit_pct"),
        (((ro <= OUTPUT_PLACEHOLDER_MAX) & (pl.col("simulated_output") > ro)).fill_null(False)
         | pl.col("_import_placeholder").fill_null(False)).alias("recorded_output_placeholder"),
    ).with_columns(
        (pl.col("simulated_cache_hit_pct") - pl.col("recorded_cache_hit_pct")).alias("cache_hit_error_pp"),
    )
    # notes
    replayed = {inputs[c].continuity_id: inputs[c].n_requests for c in inputs}
    notes = []
    for cid, req, sim, status, placeholder in df.select(
            "continuity_id", "request", "simulated_prompt", "calibration_status",
            "recorded_output_placeholder").iter_rows():
        parts = []
        if cid in call_of:
            parts.append(f"compaction call of {call_of[cid][0]} (request {call_of[cid][1]}): compared as "
                         "that compaction's call, never replayed on its own")
        elif req < 0:
            parts.append("usage without a request index")
        elif sim is None:
            if replayed.get(cid, 0) == 0:
                parts.append("not replayed: the continuity has no model-visible output")
            else:
                parts.append("not replayed: no model-visible output for this request")
        if status != "ok" and not status.startswith(("own fit", "profile")):
            parts.append(f"no calibration ({status})")
        if placeholder:
            parts.append("recorded output is a stream snapshot (<= 1 token, or a placeholder of its release)")
        notes.append("; ".join(parts) or None)
    df = df.with_columns(pl.Series("note", notes, dtype=pl.String),
                         pl.col("simulated_compaction").fill_null(False))
    cols = ["continuity_id", "source_format", "request", "call", "gap_s",
            "recorded_prompt", "recorded_input", "recorded_cache_read", "recorded_cache_write",
            "recorded_output",
            "simulated_prompt", "simulated_input", "simulated_cache_read", "simulated_cache_write",
            "simulated_output", "simulated_cache_loss", "simulated_compaction",
            "calibration_status", "intercept", "factor",
            "calibrated_prompt", "calibrated_input", "calibrated_cache_read", "calibrated_cache_write",
            "prompt_error_pct", "prompt_ape", "prompt_uncalibrated_error_pct", "prompt_uncalibrated_ape",
            "cache_read_ape", "cache_write_ape", "recorded_cache_hit_pct", "simulated_cache_hit_pct",
            "cache_hit_error_pp", "output_ape", "recorded_output_placeholder", "usage_events", "note"]
    return df.select(cols).sort("continuity_id", "request")


# ------------------------------------------------------------------ compactions

def _compaction_frame(bounds, sim_events, ledger, usage, fmt_of, cal, inputs, recorded_calls):
    import polars as pl

    from workbench.continuity.enums import TRIGGER_NAMES

    rows: dict[tuple[str, int], dict[str, Any]] = {}
    # recorded: boundaries, grouped by the request that first follows them
    for cid, seq, req, trig, pre in bounds.select("continuity_id", "seq", "request", "compact_trigger",
                                                  "compact_pre_tokens").iter_rows():
        key = (cid, int(req) if req >= 0 else -1 - int(seq))  # no following request: its own row
        r = rows.setdefault(key, {"continuity_id": cid, "recorded_request": int(req) if req >= 0 else None,
                                  "recorded_boundaries": 0})
        r["recorded_boundaries"] += 1
        r["boundary_seq"] = int(seq)
        r["trigger"] = TRIGGER_NAMES.get(int(trig), str(trig))
        r["recorded_pre_tokens"] = int(pre) if pre >= 0 else None
    # the recorded prompt of the last request with usage before each boundary
    rec_usage = {(cid, int(rq)): (int(i + r_ + w), int(r_)) for cid, rq, i, r_, w in usage.select(
        "continuity_id", "request", "usage_input", pl.col("usage_cache_read").clip(lower_bound=0),
        pl.col("usage_cache_write").clip(lower_bound=0)).iter_rows()}
    rec_prompt = {k: v[0] for k, v in rec_usage.items()}
    for r in rows.values():
        cid = r["continuity_id"]
        limit = r["recorded_request"] if r["recorded_request"] is not None else 1 << 62
        before = [q for (c, q) in rec_prompt if c == cid and 0 <= q < limit]
        r["recorded_prompt_before"] = rec_prompt[(cid, max(before))] if before else None
    # simulated checkpoints
    if sim_events is not None and sim_events.height and "event_type" in sim_events.columns:
        cps = sim_events.filter(pl.col("event_type") == W.CHECKPOINT_EVENT)
        for cid, req, ri, tb, ta, item, span_tokens, to_seq, kind in cps.select(
                "continuity_id", "source_request", "request", "tokens_before", "tokens_after",
                "item_tokens", "span_tokens", "to_seq", "summary_kind").iter_rows():
            key = (cid, int(req))
            r = rows.setdefault(key, {"continuity_id": cid, "recorded_request": None,
                                      "recorded_boundaries": 0})
            r.update({"simulated_request": int(req), "simulated_request_index": int(ri),
                      "simulated_checkpoints": r.get("simulated_checkpoints", 0) + 1,
                      "simulated_context_before": int(tb), "simulated_context_after": int(ta),
                      "simulated_summary_tokens": int(item), "simulated_span_tokens": int(span_tokens),
                      "simulated_to_seq": to_seq, "simulated_summary_kind": kind})
    summarizer_calls = {}
    if ledger is not None and ledger.height:
        for cid, req, prompt, read in ledger.filter(pl.col("call_kind") == "compaction").select(
                "continuity_id", "source_request", "prompt_tokens", "cached_input_tokens").iter_rows():
            summarizer_calls[(cid, int(req))] = (int(prompt), int(read))
    by_id = {inp.continuity_id: inp for inp in inputs.values()}
    out = []
    for (cid, _), r in sorted(rows.items(), key=lambda kv: (kv[0][0], kv[1].get("boundary_seq", -1),
                                                            kv[1].get("simulated_request", -1))):
        c = cal.get(cid, {})
        a, b = (0.0, 1.0) if c.get("applied") else (c.get("intercept"), c.get("factor"))
        sim_req = r.get("simulated_request")
        pre_sim = None
        inp = by_id.get(cid)
        if sim_req is not None and inp is not None:
            p = int(inp.req_first_row[r["simulated_request_index"]])
            anchor = r.get("boundary_seq")
            if anchor is not None:
                b_row = int(np.searchsorted(inp.seq, anchor))
            else:
                b_row = int(np.searchsorted(inp.seq, r["simulated_to_seq"])) + 1 if r.get("simulated_to_seq") is not None else p
            vis = inp.visible | inp.is_summary
            after = int(inp.tokens[b_row:p][vis[b_row:p]].sum()) if b_row < p else 0
            pre_sim = r["simulated_context_before"] - after
        summ_sim, summ_sim_read = summarizer_calls.get((cid, sim_req), (None, None))
        summ_rec, summ_rec_read = recorded_calls.get((cid, r.get("boundary_seq", -1)), (None, None))
        pre_cal = _calib(pre_sim, a, b)
        rec_pre = r.get("recorded_pre_tokens")
        out.append({
            "continuity_id": cid, "source_format": fmt_of.get(cid),
            "trigger": r.get("trigger"), "boundary_seq": r.get("boundary_seq"),
            "recorded_boundaries": r["recorded_boundaries"],
            "recorded_request": r["recorded_request"], "simulated_request": sim_req,
            "simulated_checkpoints": r.get("simulated_checkpoints", 0),
            "match": r["recorded_request"] is not None and sim_req == r["recorded_request"],
            "recorded_pre_tokens": rec_pre, "recorded_prompt_before": r.get("recorded_prompt_before"),
            "simulated_pre_tokens": pre_sim, "calibrated_pre_tokens": pre_cal,
            "pre_tokens_error_pct": (None if pre_cal is None or not rec_pre else (pre_cal - rec_pre) / rec_pre * 100.0),
            "simulated_context_before": r.get("simulated_context_before"),
            "simulated_context_after": r.get("simulated_context_after"),
            "simulated_summary_tokens": r.get("simulated_summary_tokens"),
            "simulated_summary_kind": r.get("simulated_summary_kind"),
            "recorded_summarizer_prompt": summ_rec, "simulated_summarizer_prompt": summ_sim,
            "calibrated_summarizer_prompt": _calib(summ_sim, a, b),
            "recorded_summarizer_cache_read": summ_rec_read,
            "simulated_summarizer_cache_read": summ_sim_read,
        })
    schema = {"continuity_id": pl.String, "source_format": pl.String, "trigger": pl.String,
              "boundary_seq": pl.Int64, "recorded_boundaries": pl.Int64, "recorded_request": pl.Int64,
              "simulated_request": pl.Int64, "simulated_checkpoints": pl.Int64, "match": pl.Boolean,
              "recorded_pre_tokens": pl.Int64, "recorded_prompt_before": pl.Int64,
              "simulated_pre_tokens": pl.Int64, "calibrated_pre_tokens": pl.Float64,
              "pre_tokens_error_pct": pl.Float64, "simulated_context_before": pl.Int64,
              "simulated_context_after": pl.Int64, "simulated_summary_tokens": pl.Int64,
              "simulated_summary_kind": pl.String, "recorded_summarizer_prompt": pl.Int64,
              "simulated_summarizer_prompt": pl.Int64, "calibrated_summarizer_prompt": pl.Float64,
              "recorded_summarizer_cache_read": pl.Int64, "simulated_summarizer_cache_read": pl.Int64}
    return pl.DataFrame(out, schema=schema)


# ------------------------------------------------------------------ summaries

def _q(col: str, q: float):
    import polars as pl

    return pl.col(col).drop_nulls().quantile(q, interpolation="linear")


def _aggregates(requests, key: str):
    """Request-level aggregates grouped by ``key`` (source_format or continuity_id)."""
    import polars as pl

    cmp_ = pl.col("simulated_prompt").is_not_null()
    f = requests.with_columns(cmp_.alias("_cmp"))
    c = f.filter(pl.col("_cmp"))
    rec = f.group_by(key).agg(
        pl.len().alias("requests_recorded"),
        pl.col("_cmp").sum().cast(pl.Int64).alias("requests_compared"),
        (~pl.col("_cmp")).sum().cast(pl.Int64).alias("requests_not_replayed"),
        pl.col("recorded_prompt").sum().alias("recorded_prompt_tokens"),
        pl.col("recorded_input").sum().alias("recorded_input_tokens"),
        pl.col("recorded_cache_read").sum().alias("recorded_cache_read_tokens"),
        pl.col("recorded_cache_write").sum().alias("recorded_cache_write_tokens"),
        pl.col("recorded_output").sum().alias("recorded_output_tokens"),
    )
    sim = c.group_by(key).agg(
        pl.col("calibrated_prompt").is_not_null().sum().cast(pl.Int64).alias("requests_calibrated"),
        pl.col("recorded_prompt").sum().alias("compared_recorded_prompt_tokens"),
        pl.col("simulated_prompt").sum().alias("simulated_prompt_tokens"),
        pl.col("calibrated_prompt").sum().alias("calibrated_prompt_tokens"),
        pl.col("recorded_cache_read").sum().alias("compared_recorded_cache_read_tokens"),
        pl.col("simulated_cache_read").sum().alias("simulated_cache_read_tokens"),
        pl.col("calibrated_cache_read").sum().alias("calibrated_cache_read_tokens"),
        pl.col("simulated_cache_write").sum().alias("simulated_cache_write_tokens"),
        pl.col("recorded_output").sum().alias("compared_recorded_output_tokens"),
        pl.col("simulated_output").sum().alias("simulated_output_tokens"),
        pl.col("prompt_ape").drop_nulls().median().alias("prompt_ape_median"),
        _q("prompt_ape", 0.9).alias("prompt_ape_p90"),
        pl.col("prompt_error_pct").drop_nulls().median().alias("prompt_error_pct_median"),
        pl.col("prompt_uncalibrated_ape").drop_nulls().median().alias("prompt_uncalibrated_ape_median"),
        _q("prompt_uncalibrated_ape", 0.9).alias("prompt_uncalibrated_ape_p90"),
        pl.col("cache_read_ape").drop_nulls().median().alias("cache_read_ape_median"),
        _q("cache_read_ape", 0.9).alias("cache_read_ape_p90"),
        pl.col("cache_hit_error_pp").abs().drop_nulls().median().alias("cache_hit_abs_error_pp_median"),
        pl.col("cache_hit_error_pp").abs().drop_nulls().quantile(0.9, interpolation="linear")
        .alias("cache_hit_abs_error_pp_p90"),
        (pl.col("recorded_cache_read") == 0).sum().cast(pl.Int64).alias("cache_misses_recorded"),
        (pl.col("simulated_cache_read") == 0).sum().cast(pl.Int64).alias("cache_misses_simulated"),
        ((pl.col("recorded_cache_read") == 0) & (pl.col("simulated_cache_read") == 0))
        .sum().cast(pl.Int64).alias("cache_misses_both"),
        pl.col("cache_write_ape").drop_nulls().median().alias("cache_write_ape_median"),
        _q("cache_write_ape", 0.9).alias("cache_write_ape_p90"),
        pl.col("output_ape").drop_nulls().median().alias("output_ape_median"),
        _q("output_ape", 0.9).alias("output_ape_p90"),
        (pl.col("simulated_output").sum() / pl.col("recorded_output").sum()).alias("output_total_ratio"),
        pl.col("recorded_output_placeholder").sum().cast(pl.Int64).alias("output_placeholders"),
        pl.col("output_ape").filter(~pl.col("recorded_output_placeholder")).drop_nulls().median()
        .alias("output_ape_median_without_placeholders"),
        pl.col("output_ape").filter(~pl.col("recorded_output_placeholder")).drop_nulls()
        .quantile(0.9, interpolation="linear").alias("output_ape_p90_without_placeholders"),
    )
    return rec.join(sim, on=key, how="left")


def _compaction_aggregates(compactions, key: str):
    import polars as pl

    return compactions.sort("continuity_id", "boundary_seq", "simulated_request").group_by(
        key, maintain_order=True).agg(
        pl.col("recorded_boundaries").sum().cast(pl.Int64).alias("compactions_recorded"),
        pl.col("simulated_checkpoints").sum().cast(pl.Int64).alias("compactions_simulated"),
        pl.col("match").sum().cast(pl.Int64).alias("compactions_matched"),
        pl.col("recorded_request").filter(pl.col("recorded_boundaries") > 0).alias("compaction_requests_recorded"),
        pl.col("simulated_request").drop_nulls().alias("compaction_requests_simulated"),
        pl.col("recorded_pre_tokens").drop_nulls().alias("pre_tokens_recorded"),
        pl.col("simulated_pre_tokens").filter(pl.col("recorded_pre_tokens").is_not_null()).alias("pre_tokens_simulated"),
        pl.col("calibrated_pre_tokens").filter(pl.col("recorded_pre_tokens").is_not_null()).alias("pre_tokens_calibrated"),
        pl.col("pre_tokens_error_pct").abs().drop_nulls().median().alias("pre_tokens_ape_median"),
    )


def _finish(frame, key: str):
    import polars as pl

    n = pl.col("compactions_recorded")
    counts = [c for c in ("compactions_recorded", "compactions_simulated", "compactions_matched",
                          "simulated_requests_without_usage", "requests_recorded", "requests_compared",
                          "requests_not_replayed", "requests_calibrated") if c in frame.columns]
    return frame.with_columns(pl.col(c).fill_null(0) for c in counts).with_columns(
        ((n == pl.col("compactions_simulated")) & (n == pl.col("compactions_matched"))).alias("compactions_match"),
    ).sort(key)


def _summary(requests, compactions, ledger, fmt_of, key: str):
    import polars as pl

    agg = _aggregates(requests, key)
    extra = _simulated_without_usage(requests, ledger, key, fmt_of)
    comp = _compaction_aggregates(compactions, key)
    conts = requests.group_by(key).agg(pl.col("continuity_id").n_unique().cast(pl.Int64).alias("continuities"),
                                       pl.col("continuity_id").filter(pl.col("simulated_prompt").is_not_null())
                                       .n_unique().cast(pl.Int64).alias("continuities_replayed"))
    out = conts.join(agg, on=key, how="full", coalesce=True).join(extra, on=key, how="left")
    out = out.join(comp, on=key, how="full", coalesce=True)
    return _finish(out, key)


def _simulated_without_usage(requests, ledger, key, fmt_of):
    """Main calls the simulation made for requests the log has no usage for."""
    import polars as pl

    if ledger is None or not ledger.height:
        return pl.DataFrame(schema={key: pl.String, "simulated_requests_without_usage": pl.Int64})
    main = ledger.filter(pl.col("call_kind") == "main").select(
        "continuity_id", pl.col("source_request").alias("request"))
    extra = main.join(requests.select("continuity_id", "request"), on=["continuity_id", "request"], how="anti")
    extra = extra.with_columns(
        pl.col("continuity_id").replace_strict(fmt_of, return_dtype=pl.String).alias("source_format"))
    return extra.group_by(key).agg(pl.len().cast(pl.Int64).alias("simulated_requests_without_usage"))


def _continuity_frame(requests, compactions, ledger, cal, fmt_of, selected, ids):
    import polars as pl

    base = pl.DataFrame({
        "continuity_id": [ids[c] for c in selected],
        "source_format": [fmt_of[ids[c]] for c in selected],
    }, schema={"continuity_id": pl.String, "source_format": pl.String})
    cal_rows = pl.DataFrame([{"continuity_id": ids[c], **{k: v for k, v in cal.get(ids[c], {}).items()
                                                          if k != "applied"}}
                             for c in selected],
                            schema={"continuity_id": pl.String, "calibration_status": pl.String,
                                    "intercept": pl.Float64, "factor": pl.Float64,
                                    "calibration_ape_median_pct": pl.Float64,
                                    "calibration_cv_ape_median_pct": pl.Float64})
    agg = _aggregates(requests, "continuity_id")
    extra = _simulated_without_usage(requests, ledger, "continuity_id", fmt_of)
    comp = _compaction_aggregates(compactions, "continuity_id")
    out = (base.join(cal_rows, on="continuity_id", how="left")
           .join(agg, on="continuity_id", how="left")
           .join(extra, on="continuity_id", how="left")
           .join(comp, on="continuity_id", how="left"))
    return _finish(out, "continuity_id")


# ------------------------------------------------------------------ rendering

def render_summary(result: dict[str, Any]) -> str:
    """A short plain-text table of the per-source figures (for benchmarks and notebooks)."""
    s = result["summary"]
    lines = [f"{'source':<16}{'compared':>10}{'prompt APE med/p90':>22}{'uncal. med':>12}"
             f"{'cache-read APE med/p90':>26}{'hit |pp| med':>14}{'output APE med/p90':>22}"
             f"{'compactions rec/sim/match':>28}"]

    def f(v, nd=1):
        return "-" if v is None else f"{v:.{nd}f}"

    for r in s.iter_rows(named=True):
        lines.append(
            f"{r['source_format']:<16}{str(r['requests_compared'] or 0) + '/' + str(r['requests_recorded'] or 0):>10}"
            f"{f(r['prompt_ape_median']) + ' / ' + f(r['prompt_ape_p90']) + ' %':>22}"
            f"{f(r['prompt_uncalibrated_ape_median']) + ' %':>12}"
            f"{f(r['cache_read_ape_median']) + ' / ' + f(r['cache_read_ape_p90']) + ' %':>26}"
            f"{f(r['cache_hit_abs_error_pp_median']):>14}"
            f"{f(r['output_ape_median']) + ' / ' + f(r['output_ape_p90']) + ' %':>22}"
            f"{str(r['compactions_recorded']) + '/' + str(r['compactions_simulated']) + '/' + str(r['compactions_matched']):>28}")
    def n(v):  # a count the log or the replay does not give
        return "-" if v is None else str(v)

    def usd(v):
        return "-" if v is None else f"${v:.4f}"

    runs = result.get("run_level")
    for r in runs.iter_rows(named=True) if runs is not None else ():
        err = r["tokens_sent_error_pct"]
        lines.append(f"  run {r['continuity_id']} ({r['source']}): tokens sent {n(r['recorded_tokens_sent'])} vs "
                     f"simulated prompt {n(r['simulated_prompt_tokens'])}"
                     + ("" if err is None else f" ({f(err)} %)")
                     + f", received {n(r['recorded_tokens_received'])} vs {n(r['simulated_output_tokens'])}, calls "
                     f"{n(r['recorded_api_calls'])} vs {n(r['simulated_calls'])}, cost {usd(r['recorded_cost_usd'])} vs "
                     f"{usd(r['simulated_cost_usd'])}" + (f" [{r['note']}]" if r["note"] else ""))
    comp = result["compactions"]
    for r in comp.iter_rows(named=True):
        lines.append(f"  compaction {r['continuity_id']}: {r['trigger']} boundary -> recorded request "
                     f"{r['recorded_request']}, simulated {r['simulated_request']}"
                     f" ({'match' if r['match'] else 'MISMATCH'}); preTokens {r['recorded_pre_tokens']}"
                     f" vs simulated {r['simulated_pre_tokens']} (calibrated {f(r['calibrated_pre_tokens'], 0)},"
                     f" {f(r['pre_tokens_error_pct'])} %)")
    return "\n".join(lines)

