"""Reproduce published results: ``workbench replicate NAME`` runs the shipped study
``simulations/replications/NAME.yaml`` and sets the measured figures beside the published
ones.

A study names a dataset recipe (task-sized generated continuities), the paper's strategies
as presets, how each setting bills each model, and the published figures with their
intervals and sources. Two settings: ``paper`` (the conditions the paper billed under) and
``cached`` (the same study at providers that bill prompt caching). Every figure is a ratio:
a strategy's cost over the raw agent's (all instances summed, i.e. a ratio of mean instance
costs, as the paper's Table 1 gives them), a share of cost, or one strategy's cost over
another's. Nothing is fitted to the published figures: the dataset follows published
trajectory shape only (:mod:`workbench.synth.swe_bench`).

The table ``replication.parquet`` has exactly the columns of :data:`COLUMNS`; the reasons a
figure cannot be reproduced are in ``replication.json`` and printed beside the table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.errors import WorkbenchError

COLUMNS = ("study", "setting", "model", "strategy", "measured_ratio", "published_ratio",
           "published_low", "published_high", "within")
SETTINGS = ("paper", "cached")
STUDY_DIR = Path("simulations") / "replications"
RAW = "raw"
SUMMARY_SHARE = "llm-summary-generation-share"
_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")
_PROVIDER_KEYS = {"cache", "granularity", "min_cacheable", "ttl_s"}


class StudyError(WorkbenchError):
    """A study file that cannot be run (the message names the file and the key)."""


@dataclass(frozen=True)
class Study:
    name: str
    path: Path
    spec: dict[str, Any]

    @property
    def models(self) -> dict[str, dict]:
        return self.spec["models"]

    @property
    def strategies(self) -> dict[str, str]:
        return self.spec["strategies"]

    @property
    def published(self) -> dict[str, Any]:
        return self.spec["published"]


def study_path(name: str, root: Path | None = None) -> Path:
    """The shipped study file of ``name`` (a name, never a path)."""
    if not _NAME.match(name):
        raise StudyError(f"{name!r}: a study is named by lowercase letters, digits and '-' "
                         f"(the file {STUDY_DIR}/NAME.yaml)")
    return (root or Path.cwd()) / STUDY_DIR / f"{name}.yaml"


def known_studies(root: Path | None = None) -> list[str]:
    d = (root or Path.cwd()) / STUDY_DIR
    return sorted(p.stem for p in d.glob("*.yaml")) if d.is_dir() else []


def load_study(name: str, root: Path | None = None) -> Study:
    import yaml

    path = study_path(name, root)
    if not path.is_file():
        known = ", ".join(known_studies(root)) or "none"
        raise StudyError(f"{path}: no such study (known: {known})")
    try:
        spec = yaml.safe_load(path.read_text())
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        raise StudyError(f"{path}{where}: not valid YAML ({e})") from None
    _validate(spec, path)
    return Study(name=name, path=path, spec=spec)


def _validate(spec: Any, path: Path) -> None:
    from workbench.engine.presets import PRESETS

    def need(cond: bool, what: str) -> None:
        if not cond:
            raise StudyError(f"{path}: {what}")

    need(isinstance(spec, dict), "expected a mapping at the top level")
    for key in ("study", "dataset", "strategies", "models", "published"):
        need(key in spec, f"missing key {key!r}")
    need(isinstance(spec["strategies"], dict) and RAW in spec["strategies"],
         f"'strategies' must map names to presets and name the baseline {RAW!r}")
    for strategy, preset in spec["strategies"].items():
        need(preset in PRESETS, f"strategies.{strategy}: unknown preset {preset!r}")
    for model, m in spec["models"].items():
        need(isinstance(m, dict) and "engine" in m and "window" in m,
             f"models.{model}: needs 'engine' (genai-prices model and provider) and 'window'")
        for setting in SETTINGS:
            bill = m.get(setting) or {}
            extra = set(bill.get("cache", {})) - _PROVIDER_KEYS
            need(not extra, f"models.{model}.{setting}.cache: unknown keys {sorted(extra)}")
            need(not bill.get("prices") or bool(bill.get("source")),
                 f"models.{model}.{setting}: prices need a 'source'")
    pub = spec["published"]
    for model in pub.get("cost", {}):
        need(model in spec["models"], f"published.cost.{model}: not a model of the study")
        need(RAW in pub["cost"][model], f"published.cost.{model}: needs the {RAW!r} cost")


# ---------------------------------------------------------------------------------------
# published figures


@dataclass(frozen=True)
class Published:
    model: str
    strategy: str
    ratio: float
    low: float | None
    high: float | None
    source: str


def published_figures(study: Study) -> list[Published]:
    """Every published figure as a ratio with its interval (None where none was published).
    A cost ratio's interval is the paired bootstrap interval of the cost difference over the
    raw cost: ``1 + bound / raw``."""
    pub = study.published
    out: list[Published] = []
    for model, costs in pub.get("cost", {}).items():
        raw = float(costs[RAW])
        cis = pub.get("cost_diff_ci", {}).get(model, {})
        for strategy, cost in costs.items():
            if strategy == RAW:
                continue
            ci = cis.get(strategy)
            out.append(Published(model, strategy, float(cost) / raw,
                                 None if ci is None else 1.0 + float(ci[0]) / raw,
                                 None if ci is None else 1.0 + float(ci[1]) / raw,
                                 pub.get("cost_source", "") + ("; interval: " + pub.get("cost_diff_ci_source", "")
                                                                if ci is not None else "")))
    for model, share in pub.get("summary_share", {}).items():
        out.append(Published(model, SUMMARY_SHARE, float(share), None, None, pub.get("summary_share_source", "")))
    hybrid = pub.get("hybrid")
    if hybrid:
        for other, ratio in hybrid["vs"].items():
            out.append(Published(hybrid["model"], f"hybrid-vs-{other}", float(ratio), None, None,
                                 pub.get("hybrid_source", "")))
    return out


# ---------------------------------------------------------------------------------------
# replay


def paper_price_table(model: str, prices: dict[str, Any]):
    """A :class:`~workbench.engine.pricing.PriceTable` from a study's $-per-million prices:
    a number, or ``[[start, price], ...]`` tiers by the call's context (the first from 0).
    Cache writes are billed as uncached input (the paper's tables bill none apart)."""
    from workbench.engine.pricing import Component, PriceTable

    def component(value) -> Component:
        if isinstance(value, int | float):
            return Component(float(value) / 1e6)
        tiers = sorted((int(s), float(p) / 1e6) for s, p in value)
        if not tiers or tiers[0][0] != 0:
            raise StudyError(f"{model}: a tiered price starts at 0 tokens")
        return Component(tiers[0][1], tuple(tiers[1:]))

    uncached = component(prices["input"])
    return PriceTable(model=f"{model} (paper's price table)", provider="paper", input=uncached,
                      cache_read=component(prices.get("cached_input", prices["input"])),
                      cache_write=uncached, output=component(prices["output"]))


def _policies(study: Study, model: str, setting: str):
    from workbench.engine.presets import get_policy

    m = study.models[model]
    overrides = {"provider.model": m["engine"]["model"], "provider.provider": m["engine"]["provider"],
                 "provider.context_window": int(m["window"])}
    overrides.update({f"provider.{k}": v for k, v in ((m.get(setting) or {}).get("cache") or {}).items()})
    need = needed_strategies(study, model)
    return [get_policy(preset, overrides, rename=strategy) for strategy, preset in study.strategies.items()
            if strategy in need]


@dataclass
class Measured:
    """Per (model, setting): each strategy's total cost and its summary calls' cost."""

    cost: dict[str, float] = field(default_factory=dict)
    summary_cost: dict[str, float] = field(default_factory=dict)
    cache_read_share: dict[str, float] = field(default_factory=dict)  # of the agent's prompt tokens
    priced_as: str = ""


def needed_strategies(study: Study, model: str) -> set[str]:
    """The strategies a published figure of ``model`` compares (and the raw agent)."""
    need = {RAW}
    for p in published_figures(study):
        if p.model != model:
            continue
        if p.strategy == SUMMARY_SHARE:
            need.add("llm-summary")
        elif p.strategy.startswith("hybrid-vs-"):
            need |= {"hybrid", p.strategy.removeprefix("hybrid-vs-")}
        else:
            need.add(p.strategy)
    return need & set(study.strategies)


def turn_scale(study: Study, model: str, strategy: str) -> float:
    """How much longer than the profile's mean the tasks of ``strategy`` on ``model`` are:
    1 when the study keeps one trajectory per task for every strategy; with
    ``trajectories.lengths: published``, the published mean turns of that model under that
    strategy (under the raw agent when none is published) over the profile's mean."""
    from workbench.synth.swe_bench import SHAPE

    spec = study.spec.get("trajectories") or {}
    if spec.get("lengths", "fixed") == "fixed":
        return 1.0
    if spec["lengths"] != "published":
        raise StudyError(f"{study.path}: trajectories.lengths must be 'fixed' or 'published'")
    turns = spec["mean_turns"][model]
    return round(float(turns.get(strategy, turns[RAW])) / SHAPE["turns_mean"].value, 3)


def measure(study: Study, datasets, *, progress=None) -> dict[tuple[str, str], Measured]:
    """Replay the study's strategies for every model and setting, each strategy on the
    dataset of its trajectory lengths (``datasets(scale)``). Replays with the same provider
    rules and lengths are shared; the paper setting's own price tables re-price the ledger."""
    import polars as pl

    from workbench.engine.run import prepare_dataset, simulate

    tokenizer = study.spec.get("tokenizer", "cl100k")
    prepared: dict[float, tuple] = {}
    ledgers: dict[tuple, Any] = {}
    out: dict[tuple[str, str], Measured] = {}
    for model, m in study.models.items():
        for setting in SETTINGS:
            parts = []
            for pol in _policies(study, model, setting):
                scale = turn_scale(study, model, pol.name)
                if scale not in prepared:
                    ds = datasets(scale)
                    prepared[scale] = (ds, prepare_dataset(ds, tokenizer))
                key = (scale, pol)
                if key not in ledgers:
                    ds, inputs = prepared[scale]
                    if progress:
                        progress(f"replaying {pol.name} for {model} ({setting}) on {len(inputs)} tasks "
                                 f"(turns x{scale})")
                    res = simulate(ds, [pol], inputs=inputs, keep_inputs=True, tokenizer=tokenizer)
                    ledgers[key] = res.ledger.select("policy", "call_kind", "prompt_tokens", "input_tokens",
                                                     "cached_input_tokens", "cache_write_tokens",
                                                     "output_tokens", "cost_usd")
                parts.append(ledgers[key])
            ledger = pl.concat(parts)
            prices = (m.get(setting) or {}).get("prices")
            priced = f"{m['engine']['model']} at {m['engine']['provider']} (genai-prices)"
            if prices:
                table = paper_price_table(model, prices)
                cost = table.cost(ledger["prompt_tokens"].to_numpy(), ledger["cached_input_tokens"].to_numpy(),
                                  ledger["cache_write_tokens"].to_numpy(), ledger["input_tokens"].to_numpy(),
                                  ledger["output_tokens"].to_numpy())
                ledger = ledger.with_columns(pl.Series("cost_usd", cost))
                priced = table.model
            main = pl.col("call_kind") == "main"
            by = ledger.group_by("policy").agg(
                pl.col("cost_usd").sum().alias("cost"),
                pl.col("cost_usd").filter(pl.col("call_kind") == "compaction").sum().alias("summary"),
                (pl.col("cached_input_tokens").filter(main).sum()
                 / pl.col("prompt_tokens").filter(main).sum()).alias("read"))
            meas = Measured(priced_as=priced)
            for row in by.iter_rows(named=True):
                meas.cost[row["policy"]] = float(row["cost"])
                meas.summary_cost[row["policy"]] = float(row["summary"])
                meas.cache_read_share[row["policy"]] = float(row["read"] or 0.0)
            out[(model, setting)] = meas
    return out


def measured_ratio(meas: Measured, strategy: str) -> float | None:
    """The measured counterpart of a published figure (see :func:`published_figures`)."""
    if strategy == SUMMARY_SHARE:
        total = meas.cost.get("llm-summary")
        return meas.summary_cost["llm-summary"] / total if total else None
    if strategy.startswith("hybrid-vs-"):
        other = strategy.removeprefix("hybrid-vs-")
        return meas.cost["hybrid"] / meas.cost[other] if meas.cost.get(other) else None
    raw = meas.cost.get(RAW)
    return meas.cost[strategy] / raw if raw and strategy in meas.cost else None


def table(study: Study, measured: dict[tuple[str, str], Measured]) -> list[dict[str, Any]]:
    """One row per (setting, published figure), in :data:`COLUMNS` order, plus ``note``."""
    rows = []
    for setting in SETTINGS:
        for p in published_figures(study):
            value = measured_ratio(measured[(p.model, setting)], p.strategy)
            within = (None if value is None or p.low is None or p.high is None
                      else bool(p.low <= value <= p.high))
            rows.append({"study": study.name, "setting": setting, "model": p.model, "strategy": p.strategy,
                         "measured_ratio": value, "published_ratio": p.ratio, "published_low": p.low,
                         "published_high": p.high, "within": within,
                         "note": _note(study, setting, p, value, within)})
    return rows


def _note(study: Study, setting: str, p: Published, value: float | None, within: bool | None) -> str:
    if value is None:
        return "not measured: the replay has no such strategy"
    gap = value - p.ratio
    if within is True:
        head = f"in the published interval [{p.low:.2f}, {p.high:.2f}] ({gap:+.2f} from {p.ratio:.2f})"
    elif within is False:
        side = p.low if value < p.low else p.high
        head = (f"outside the published interval [{p.low:.2f}, {p.high:.2f}] by {abs(value - side):.2f} "
                f"({gap:+.2f} from {p.ratio:.2f})")
    else:
        head = f"no interval published; {gap:+.3f} from {p.ratio:.3f} ({gap / p.ratio:+.0%})"
    if setting == "cached":
        head += "; the paper did not bill this provider's caching: a prediction, not a replication"
    if within is True:
        return head
    limits = study.spec.get("limits", {})
    shared = "all" if p.strategy in study.strategies else None  # the cost ratios
    said = [limits[k].strip() for k in (p.strategy, p.model, shared) if k and limits.get(k)]
    return ". ".join([head, *said])


def rankings(rows: list[dict[str, Any]],
             measured_costs: dict[tuple[str, str], Measured] | None = None) -> list[dict[str, Any]]:
    """Per setting and model: the strategies (masking, LLM-Summary) ordered cheapest first,
    measured and published, whether the orders agree, and for the cached setting why its
    measured order differs from the paper setting's (``change``)."""
    out = []
    keys = sorted({(r["setting"], r["model"]) for r in rows})
    for setting, model in keys:
        cost_rows = [r for r in rows if r["setting"] == setting and r["model"] == model
                     and r["strategy"] != SUMMARY_SHARE and not r["strategy"].startswith("hybrid-vs-")
                     and r["measured_ratio"] is not None]
        order = [r["strategy"] for r in sorted(cost_rows, key=lambda r: r["measured_ratio"])]
        published = [r["strategy"] for r in sorted(cost_rows, key=lambda r: r["published_ratio"])]
        ratios = sorted(r["measured_ratio"] for r in cost_rows)
        out.append({"setting": setting, "model": model, "measured_order": order,
                    "published_order": published, "same": order == published, "change": "",
                    "margin": ratios[1] - ratios[0] if len(ratios) > 1 else None})
    if measured_costs is not None:
        paper = {r["model"]: r["measured_order"] for r in out if r["setting"] == "paper"}
        for r in out:
            if r["setting"] == "cached" and paper.get(r["model"]) not in (None, r["measured_order"]):
                r["change"] = _rank_change(measured_costs[(r["model"], "cached")], paper[r["model"]],
                                           r["measured_order"])
    return out


def _rank_change(meas: Measured, before: list[str], after: list[str]) -> str:
    """Why a strategy moved between the paper setting and the cached one: the share of the
    agent's prompt tokens each strategy reads from the cache."""
    reads = ", ".join(f"{s} {meas.cache_read_share.get(s, 0.0):.0%}" for s in [RAW, *after])
    return (f"{' < '.join(before)} in the paper setting, {' < '.join(after)} with caching "
            f"({meas.priced_as}). Prompt tokens read from the cache: {reads}. Observation masking "
            "replaces the observation leaving its window on every turn, so the prompt after it is "
            "new to the cache each call, while LLM-Summary keeps its prefix between summaries and "
            "the raw agent only appends: the cache discount reaches far less of masking's prompt.")


# ---------------------------------------------------------------------------------------
# the command's work


def study_dataset(study: Study, root: Path, scale: float = 1.0, *, progress=None):
    """The study's dataset under ``datasets/replications/NAME`` (``NAME-xSCALE`` for tasks
    stretched by ``scale``): generated from the recipe, or the one there already when it
    was generated from the same recipe."""
    from workbench.continuity.dataset import load_dataset
    from workbench.synth.generate import GeneratorConfig, generate_dataset

    recipe = dict(study.spec["dataset"])
    cfg = GeneratorConfig(profile=recipe.pop("profile"), continuities=int(recipe.pop("continuities", 1)),
                          seed=int(recipe.pop("seed", 0)), events=int(recipe.pop("events", 20_000)),
                          facts=0, secrets=0, hard_negatives=0,  # a cost study: no planted labels
                          tokenizers=(study.spec.get("tokenizer", "cl100k"),), turn_scale=scale)
    if recipe:
        raise StudyError(f"{study.path}: dataset: unknown keys {sorted(recipe)}")
    out = root / "datasets" / "replications" / (study.name if scale == 1.0 else f"{study.name}-x{scale:.3f}")
    if (out / "manifest.json").is_file():
        import dataclasses

        ds = load_dataset(out)
        want = dataclasses.asdict(cfg.resolved())
        have = {"turn_scale": 1.0, **ds.manifest.get("source", {}).get("generator", {})}
        if {k: have.get(k) for k in want} == {k: (list(v) if isinstance(v, tuple) else v) for k, v in want.items()}:
            return ds
    if progress:
        progress(f"generating {cfg.continuities} {cfg.profile} tasks into {out}")
    return generate_dataset(cfg, out)


def replicate(name: str, out: Path | None = None, *, root: Path | None = None, force: bool = False,
              progress=None):
    """Run study ``name``; write ``replication.parquet`` and ``replication.json`` into ``out``
    (default ``reports/replications/NAME``, a workbench audit directory). Returns the rows
    (with ``note``), the rankings and the output directory."""
    import orjson
    import polars as pl

    from workbench.rundir import Kind, check_output, replace_dir
    from workbench.util.provenance import git_revision, package_versions

    root = root or Path.cwd()
    study = load_study(name, root)
    out = Path(out) if out is not None else root / "reports" / "replications" / name
    check_output(out, Kind.AUDIT, force=force)  # before any work
    made: dict[float, Any] = {}

    def datasets(scale: float):
        if scale not in made:
            made[scale] = study_dataset(study, root, scale, progress=progress)
        return made[scale]

    measured = measure(study, datasets, progress=progress)
    ds = datasets(1.0) if 1.0 in made else next(iter(made.values()))
    rows = table(study, measured)
    ranks = rankings(rows, measured)
    frame = pl.DataFrame([{c: r[c] for c in COLUMNS} for r in rows], schema={
        "study": pl.String, "setting": pl.String, "model": pl.String, "strategy": pl.String,
        "measured_ratio": pl.Float64, "published_ratio": pl.Float64, "published_low": pl.Float64,
        "published_high": pl.Float64, "within": pl.Boolean})
    doc = {"study": name, "title": study.spec.get("title"), "citation": study.spec.get("citation"),
           "study_file": str(study.path.relative_to(root)) if study.path.is_relative_to(root) else study.path.name,
           "dataset": {"recipe": study.spec["dataset"], "continuities": ds.manifest["counts"]["continuities"],
                       "paths": {str(k): str(v.path) for k, v in sorted(made.items())}},
           "trajectories": study.spec.get("trajectories", {"lengths": "fixed"}),
           "priced_as": {f"{m}|{s}": v.priced_as for (m, s), v in measured.items()},
           "billing": {m: {s: spec.get(s) or {} for s in SETTINGS} | {"engine": spec["engine"]}
                       for m, spec in study.models.items()},
           "costs_usd": {f"{m}|{s}": v.cost for (m, s), v in measured.items()},
           "published_sources": {p.strategy + "|" + p.model: p.source for p in published_figures(study)},
           "limits": study.spec.get("limits", {}), "rows": rows, "rankings": ranks,
           "git_revision": git_revision(), "versions": package_versions()}
    with replace_dir(out, Kind.AUDIT, force=force) as tmp:
        frame.write_parquet(tmp / "replication.parquet", compression="zstd")
        (tmp / "replication.json").write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS))
    return rows, ranks, out


def read_replication(path: str | Path) -> dict[str, Any]:
    """What ``workbench report replication`` shows, read from a replication directory:
    ``published`` (one row per published figure), ``measured`` (every row with its
    difference from the published figure and its note), ``rankings`` (paper beside cached,
    with the reason for each change) and the ``doc`` itself."""
    import orjson
    import polars as pl

    path = Path(path)
    frame = pl.read_parquet(path / "replication.parquet")
    doc = orjson.loads((path / "replication.json").read_bytes())
    notes = pl.DataFrame([{k: r[k] for k in ("setting", "model", "strategy", "note")} for r in doc["rows"]],
                         schema={"setting": pl.String, "model": pl.String, "strategy": pl.String, "note": pl.String})
    measured = frame.join(notes, on=["setting", "model", "strategy"], how="left").with_columns(
        (pl.col("measured_ratio") - pl.col("published_ratio")).alias("difference"))
    published = frame.filter(pl.col("setting") == SETTINGS[0]).select(
        "model", "strategy", "published_ratio", "published_low", "published_high")
    by = {(r["setting"], r["model"]): r for r in doc["rankings"]}
    models = list(dict.fromkeys(r["model"] for r in doc["rankings"]))
    rankings = pl.DataFrame([{
        "model": m, "published": " < ".join(by[("paper", m)]["published_order"]),
        "paper setting": " < ".join(by[("paper", m)]["measured_order"]),
        "same as published": by[("paper", m)]["same"],
        "cached setting": " < ".join(by[("cached", m)]["measured_order"]),
        "why it changed": by[("cached", m)]["change"] or "unchanged"} for m in models])
    return {"published": published, "measured": measured, "rankings": rankings, "doc": doc}
