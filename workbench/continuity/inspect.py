"""What is in a dataset, as a stable dictionary (``workbench inspect --json``) or a table.

The JSON keys are documented in the README and only ever added to, never renamed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from workbench.continuity.dataset import load_dataset
from workbench.continuity.enums import (
    KIND_NAMES,
    ROLE_NAMES,
    TRIGGER_NAMES,
    EventFlag,
    EventKind,
)
from workbench.continuity.schema import USAGE_COLUMNS, token_column


def _counts(series) -> dict[str, int]:
    vc = series.value_counts(sort=True)
    name = vc.columns[0]
    return {str(k): int(v) for k, v in zip(vc[name].to_list(), vc["count"].to_list(), strict=True)}


def inspect_dataset(path: str | Path) -> dict[str, Any]:
    import polars as pl

    ds = load_dataset(path)
    cols = ["continuity", "seq", "kind", "role", "flags", "request", "compact_trigger",
            "compact_pre_tokens", *USAGE_COLUMNS, *[token_column(t) for t in ds.tokenizers]]
    ev = ds.events(columns=cols)
    conts = ds.continuities()
    ids = dict(zip(conts["continuity"].to_list(), conts["continuity_id"].to_list(), strict=True))

    kinds = ev.select(pl.col("kind").replace_strict(KIND_NAMES, return_dtype=pl.String))
    roles = ev.filter(pl.col("role") > 0).select(
        pl.col("role").replace_strict(ROLE_NAMES, return_dtype=pl.String))
    per_cont = (ev.group_by("continuity")
                .agg(pl.len().alias("events"),
                     pl.col("request").filter(pl.col("request") >= 0).n_unique().alias("requests"))
                .sort("continuity"))
    req_counts = dict(zip(per_cont["continuity"].to_list(), per_cont["requests"].to_list(), strict=True))
    ev_counts = dict(zip(per_cont["continuity"].to_list(), per_cont["events"].to_list(), strict=True))

    usage = ev.filter(pl.col("usage_input") >= 0)
    recorded = {
        "requests_with_usage": usage.height,
        "input": int(usage["usage_input"].sum()),
        "cache_read": int(usage["usage_cache_read"].clip(lower_bound=0).sum()),
        "cache_write": int(usage["usage_cache_write"].clip(lower_bound=0).sum()),
        "output": int(usage["usage_output"].clip(lower_bound=0).sum()),
    }
    comp = ev.filter(pl.col("kind") == EventKind.COMPACTION)
    compactions = [
        {"continuity_id": ids[c], "seq": int(s), "trigger": TRIGGER_NAMES.get(int(t), str(t)),
         "pre_tokens": int(p) if p >= 0 else None}
        for c, s, t, p in comp.select("continuity", "seq", "compact_trigger", "compact_pre_tokens").iter_rows()
    ]
    tool = ev.filter(pl.col("kind").is_in([EventKind.TOOL_CALL, EventKind.TOOL_RESULT]))
    unpaired = tool.filter((pl.col("flags") & EventFlag.UNPAIRED) != 0)
    info: dict[str, Any] = {
        "schema_version": ds.manifest["schema_version"],
        "name": ds.name,
        "path": str(ds.path),
        "source_format": ds.manifest.get("source", {}).get("format"),
        "text": ds.manifest.get("text", "full"),
        "continuities": [
            {"continuity_id": r["continuity_id"], "parent": ids.get(r["parent"]),
             "source_format": r["source_format"], "model": r["model"],
             "context_window": r["context_window"] if r["context_window"] >= 0 else None,
             "events": int(ev_counts.get(r["continuity"], 0)),
             "requests": int(req_counts.get(r["continuity"], 0))}
            for r in conts.iter_rows(named=True)
        ],
        "events": {"total": ev.height, "by_kind": _counts(kinds["kind"]),
                   "by_role": _counts(roles["role"]) if roles.height else {}},
        "requests": int(sum(req_counts.values())),
        "tokens": {t: int(ev[token_column(t)].sum()) for t in ds.tokenizers},
        "recorded_usage": recorded,
        "compactions": compactions,
        "summaries": int((ev["kind"] == EventKind.SUMMARY).sum()),
        "tool_events": {
            "calls": int((tool["kind"] == EventKind.TOOL_CALL).sum()),
            "results": int((tool["kind"] == EventKind.TOOL_RESULT).sum()),
            "unpaired_calls": int((unpaired["kind"] == EventKind.TOOL_CALL).sum()),
            "unpaired_results": int((unpaired["kind"] == EventKind.TOOL_RESULT).sum()),
        },
        "labels": _labels(ds),
    }
    info["run_usage"] = _run_usage(ds.manifest)
    if "import" in ds.manifest:
        imp = ds.manifest["import"]
        info["import"] = {"on_error": imp.get("on_error"), "skipped_total": imp.get("skipped_total", 0)}
    return info


def _run_usage(manifest: dict[str, Any]) -> dict[str, Any]:
    """Totals a log records for a whole run (SWE-agent's model_stats, aider's costs...), as
    the import wrote them (``workbench.sources.run_usage``); none for other datasets."""
    found = (manifest.get("import") or {}).get("run_usage")
    if isinstance(found, dict):
        return found
    return {"continuities": 0, "tokens_sent": None, "tokens_received": None, "api_calls": None,
            "cost_usd": None, "by_continuity": []}


def _labels(ds) -> dict[str, Any]:
    from workbench.synth.task_state import TASK_KIND, role_of

    labelled = ds.facts()
    # the task state (generate --task-state) apart from the planted facts, by role
    facts = labelled.filter(labelled["kind"] != TASK_KIND)
    task = labelled.filter(labelled["kind"] == TASK_KIND)["answer"].to_list()
    secrets = ds.secrets()
    pos = secrets.filter(~secrets["negative"]).unique("secret_id", keep="first", maintain_order=True)
    neg = secrets.filter(secrets["negative"])
    return {
        "facts": {"total": facts.height, "by_kind": _counts(facts["kind"]) if facts.height else {}},
        "task_state": {"total": len(task), "by_kind": {r: n for r in ("open", "done", "next_step")
                                                       if (n := sum(1 for a in task if role_of(a) == r))}},
        "secrets": {
            "total": pos.height,
            "by_kind": _counts(pos["kind"]) if pos.height else {},
            "by_context": _counts(pos["context"]) if pos.height else {},
            "by_transform": _counts(pos["transform"]) if pos.height else {},
        },
        "hard_negatives": {"total": neg.height, "by_kind": _counts(neg["kind"]) if neg.height else {}},
    }


def render_text(info: dict[str, Any]) -> None:
    """Print ``info`` for people: on a terminal cells fold to fit; piped, nothing is cut."""
    from rich.table import Table

    from workbench.util.tables import console, print_table

    con = console()
    con.print(f"[bold]{info['name']}[/bold]  ({info['path']}, source {info['source_format']}, "
              f"schema v{info['schema_version']}, text {info['text']})")
    t = Table("continuity", "parent", "format", "model", "window", "events", "requests", title="Continuities")
    for c in info["continuities"]:
        t.add_row(c["continuity_id"], c["parent"] or "", c["source_format"], c["model"] or "",
                  f"{c['context_window']:,}" if c["context_window"] else "", f"{c['events']:,}",
                  f"{c['requests']:,}")
    print_table(t)
    t = Table("kind", "events", title=f"Events ({info['events']['total']:,})")
    for k, v in info["events"]["by_kind"].items():
        t.add_row(k, f"{v:,}")
    print_table(t)
    tok = ", ".join(f"{k} {v:,}" for k, v in info["tokens"].items())
    con.print(f"requests {info['requests']:,}; tokens: {tok}")
    te = info["tool_events"]
    con.print(f"tool calls {te['calls']:,}, results {te['results']:,}, unpaired calls "
              f"{te['unpaired_calls']}, unpaired results {te['unpaired_results']}")
    u = info["recorded_usage"]
    if u["requests_with_usage"]:
        con.print(f"recorded usage over {u['requests_with_usage']:,} requests: input {u['input']:,}, "
                  f"cache read {u['cache_read']:,}, cache write {u['cache_write']:,}, output {u['output']:,}")
    else:
        con.print("recorded usage: none")
    ru = info.get("run_usage") or {}
    if ru.get("continuities"):

        def fig(v, spec="{:,}"):
            return "?" if v is None else spec.format(v)

        con.print(f"run-level usage of {ru['continuities']} continuities: tokens sent {fig(ru['tokens_sent'])}, "
                  f"received {fig(ru['tokens_received'])}, calls {fig(ru['api_calls'])}, "
                  f"cost ${fig(ru['cost_usd'], '{:,.4f}')}")
    for c in info["compactions"]:
        con.print(f"compaction: {c['continuity_id']} seq {c['seq']} trigger {c['trigger']} "
                  f"preTokens {c['pre_tokens'] if c['pre_tokens'] is not None else '?'}")
    con.print(f"summaries: {info['summaries']}")
    lab = info["labels"]
    keys = ("facts", "task_state", "secrets", "hard_negatives")
    if any(lab.get(key, {}).get("total") for key in keys):
        t = Table("label", "total", "by kind", title="Planted labels")
        for key in keys:
            if key == "task_state" and not lab[key]["total"]:
                continue  # planted only with generate --task-state
            by = ", ".join(f"{k} {v}" for k, v in lab[key]["by_kind"].items())
            t.add_row(key.replace("_", " "), str(lab[key]["total"]), by)
        print_table(t)
    if "import" in info:
        con.print(f"import: on_error={info['import']['on_error']}, skipped {info['import']['skipped_total']}")
