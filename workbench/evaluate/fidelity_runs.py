"""Fidelity at the level of a whole run: the totals a log records for a run (SWE-agent's
``info.model_stats``, aider's, Cline's, opencode's costs: the import manifest's
``import.run_usage``) against the replay's ledger of the same continuity. Used by
:func:`workbench.evaluate.fidelity.fidelity_table` (its ``run_level`` frame)."""

from __future__ import annotations

RUN_LEVEL_SCHEMA = {
    "continuity_id": "String", "source_format": "String", "source": "String", "recorded_model": "String",
    "simulated_model": "String", "recorded_tokens_sent": "Int64", "simulated_prompt_tokens": "Int64",
    "calibrated_prompt_tokens": "Float64", "tokens_sent_error_pct": "Float64",
    "calibrated_tokens_sent_error_pct": "Float64", "recorded_tokens_received": "Int64",
    "simulated_output_tokens": "Int64", "tokens_received_error_pct": "Float64",
    "recorded_api_calls": "Int64", "simulated_calls": "Int64", "simulated_main_calls": "Int64",
    "recorded_cost_usd": "Float64", "simulated_cost_usd": "Float64", "cost_error_pct": "Float64",
    "note": "String",
}


def _pct(sim, rec):
    return None if sim is None or not rec else (sim - rec) / rec * 100.0


def run_level_frame(runs, ledger, fmt_of, cal, model_of):
    """One row per continuity with run-level usage: its recorded totals against the replay's."""
    import polars as pl

    rows = []
    for cid, rec in runs.items():
        led = ledger.filter(pl.col("continuity_id") == cid) if ledger is not None else None
        replayed = led is not None and led.height > 0
        main = led.filter(pl.col("call_kind") == "main") if replayed else None
        prompt = int(led["prompt_tokens"].sum()) if replayed else None
        c = cal.get(cid, {})
        a, b = c.get("intercept"), c.get("factor")
        if c.get("applied"):  # replayed in provider tokens: the line is already in the prompts
            calibrated = float(prompt) if replayed else None
        else:
            calibrated = (float(a * main.height + b * main["prompt_tokens"].sum()
                                + led.filter(pl.col("call_kind") != "main")["prompt_tokens"].sum())
                          if replayed and a is not None else None)
        models = led["model"].unique().to_list() if replayed else []
        sim_cost = float(led["cost_usd"].sum()) if replayed else None
        notes = []
        if not replayed:
            notes.append("not replayed: the continuity has no model-visible output")
        if model_of.get(cid) is None and replayed:
            notes.append(f"the log names no model: priced as {', '.join(map(str, models))}, so the cost "
                         "is not comparable")
        rows.append({
            "continuity_id": cid, "source_format": fmt_of.get(cid), "source": rec.get("source"),
            "recorded_model": model_of.get(cid), "simulated_model": ", ".join(map(str, models)) or None,
            "recorded_tokens_sent": rec.get("tokens_sent"), "simulated_prompt_tokens": prompt,
            "calibrated_prompt_tokens": calibrated,
            "tokens_sent_error_pct": _pct(prompt, rec.get("tokens_sent")),
            "calibrated_tokens_sent_error_pct": _pct(calibrated, rec.get("tokens_sent")),
            "recorded_tokens_received": rec.get("tokens_received"),
            "simulated_output_tokens": int(led["output_tokens"].sum()) if replayed else None,
            "tokens_received_error_pct": _pct(int(led["output_tokens"].sum()) if replayed else None,
                                              rec.get("tokens_received")),
            "recorded_api_calls": rec.get("api_calls"),
            "simulated_calls": led.height if replayed else None,
            "simulated_main_calls": main.height if replayed else None,
            "recorded_cost_usd": rec.get("cost_usd"), "simulated_cost_usd": sim_cost,
            "cost_error_pct": _pct(sim_cost, rec.get("cost_usd")),
            "note": "; ".join(notes) or None,
        })
    return pl.DataFrame(rows, schema={k: getattr(pl, v) for k, v in RUN_LEVEL_SCHEMA.items()})
