"""The cost band of a sweep's configurations: the expected cost and its p10-p90 under the
provider's own cache misses (:mod:`workbench.engine.cache_miss`), for the ``sweep`` table,
``tune`` and the threshold-sweep report (issue 28).

The miss pass needs a per-call ledger (each main call's prompt, read and write, its prices,
its request's class, whether it was billed as the log recorded it), which the batch engine
does not keep. So each configuration is replayed once more with the per-call kernel and
priced by :func:`~workbench.engine.cache_miss.replay_band`, the function ``simulate`` uses;
the bands of a dataset's continuities are added up by
:func:`~workbench.engine.cache_miss.total_band` (quantiles of the summed draws). That is exact
(for one log, the same figures ``simulate`` gives for the same configuration) and cheap: one
structural replay per configuration and continuity. The ledger does not depend on the seed,
nor on the engine (the kernel equals the reference, parity-tested): one band per configuration.

Every complete configuration gets its band while replaying them all stays within
:data:`BUDGET_EVENTS` events; above it only the configurations asked for (``tune``: the rows
it shows, the chosen one and the preset as shipped), and a note says how many. A dataset none
of whose continuities has a miss profile (generated data, or a harness and provider never
fitted) gets no band columns, only the note ``no band: no miss profile for <harness>/<provider>``.

>>> from workbench.sweep.bands import BAND_COLUMNS
>>> BAND_COLUMNS
('cost_expected_usd', 'cost_p10_usd', 'cost_p90_usd')
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.sweep.tune import BAND_COLUMNS

# replayed events for a band of every configuration (a few seconds of the per-call kernel);
# above it only the configurations a table shows
BUDGET_EVENTS = 20_000_000


@dataclass
class SweepBands:
    """Bands per configuration (``frame``: ``config_index`` and :data:`BAND_COLUMNS`; None when
    no continuity has a profile), what to say about them, and the preset as shipped."""

    frame: Any
    notes: list[str] = field(default_factory=list)
    # the base preset as it ships: {"config_index": int | None (not a configuration of the
    # sweep), "cost_usd", *BAND_COLUMNS}; None when not asked for or without a band
    shipped: dict[str, Any] | None = None
    profiles: tuple[str, ...] = ()  # the profile each priced continuity resolved to


def policy_band(inputs, policy, cold: dict[str, set[int]] | None = None):
    """The :class:`~workbench.engine.cache_miss.CostBand` of ``policy`` over prepared
    continuities, replayed as a sweep run replays them (the default accounting); a continuity
    without a profile adds its replay's cost to every draw. ``cold``: per continuity, the
    requests that switched model (``cache_miss.cold_requests`` of the dataset's manifest, as
    ``simulate`` passes them). Returns ``(band, profile sources)``."""
    from workbench.engine.cache_miss import miss_band, replay_band, total_band
    from workbench.engine.run import accountant, replay, replay_jobs

    inputs = list(inputs)
    parts, sources = [], []
    for job in replay_jobs(inputs, [policy], accountant()):
        led, _ = replay(job.view, job.rule, job.provider, "kernel")
        found = replay_band(job.view, job.provider, led,
                            cold=(cold or {}).get(inputs[job.input_index].continuity_id, ()))
        if found is None:
            parts.append(miss_band(led, job.view, job.provider, None))
        else:
            parts.append(found[0])
            sources.append(found[1].source)
    return total_band(parts), tuple(sources)


def _read_sweep(sweep_dir: Path):
    """``(spec, dataset, prepared inputs or None, why not)`` of a sweep directory; inputs are
    prepared only for an imported dataset (generated data has no profile: nothing to replay)."""
    import orjson

    from workbench.continuity.dataset import load_dataset
    from workbench.engine.cache_miss import no_profile_message, serving_provider, view_profile
    from workbench.rundir import names
    from workbench.sweep.runner import load_prepared
    from workbench.sweep.spec import SweepSpec, dataset_files

    meta = orjson.loads((sweep_dir / names.SWEEP).read_bytes())
    spec = SweepSpec.from_dict(meta["spec"])
    where = (meta.get("dataset") or {}).get("path") or spec.dataset.path
    try:
        ds = load_dataset(where)
    except Exception as exc:  # a dataset moved or removed since: the sweep's tables stand without a band
        return spec, None, None, f"no band: the sweep's dataset {where} cannot be read ({exc})"
    if dataset_files(ds) != ((meta.get("dataset") or {}).get("files") or {}):
        return spec, ds, None, f"no band: the dataset {where} changed since the sweep ran (its file hashes differ)"
    if not ds.manifest.get("import"):
        providers = sorted({p or "unknown" for p in ds.continuities()["provider"].to_list()}) or ["unknown"]
        return spec, ds, None, "; ".join(no_profile_message(None, p) for p in providers)
    _, inputs = load_prepared(str(Path(ds.path).resolve()), spec.tokenizer)
    if not any(view_profile(inp) is not None for inp in inputs):
        return spec, ds, None, "; ".join(sorted({no_profile_message(inp.harness, serving_provider(inp))
                                                 for inp in inputs}))
    return spec, ds, inputs, None


def sweep_bands(sweep_dir: str | Path, agg, *, only: Iterable[int] | None = None, shipped: bool = False,
                budget: int = BUDGET_EVENTS) -> SweepBands:
    """The band of every complete configuration of the aggregated sweep ``agg`` (see
    :func:`workbench.sweep.runner.aggregate`), or, when that would replay more than ``budget``
    events, of those in ``only`` (config indices). ``shipped``: also the band of the base preset
    as it ships (its configuration when the sweep has one, else a replay of the preset)."""
    import polars as pl

    from workbench.sweep.tune import shipped_mask

    sweep_dir = Path(sweep_dir)
    from workbench.engine.cache_miss import cold_requests

    spec, ds, inputs, why = _read_sweep(sweep_dir)
    if inputs is None:
        return SweepBands(None, [why])
    cold = cold_requests(ds.manifest)
    complete = agg.filter(pl.col("complete"))["config_index"].to_list() if agg.height else []
    is_shipped = shipped_mask(agg, spec) if shipped else [False] * agg.height
    shipped_index = next((int(i) for i, s in zip(agg["config_index"], is_shipped, strict=True) if s), None)
    events = sum(inp.n for inp in inputs)
    notes = []
    chosen = complete
    if only is not None and len(complete) * events > budget:
        wanted = {int(i) for i in only} | ({shipped_index} if shipped_index is not None else set())
        chosen = [i for i in complete if i in wanted]
        notes.append(f"cost band for {len(chosen)} of {len(complete)} configurations (the ones shown): all of "
                     f"them would replay {len(complete) * events:,} events, over {budget:,}")
    configurations = spec.configurations()
    base = spec.base_policy()
    digests = dict(zip(agg["config_index"].to_list(), agg["policy_digest"].to_list(), strict=True)) \
        if "policy_digest" in agg.columns else {}
    rows, sources, stale = [], set(), []
    for ci in chosen:
        policy = base.with_overrides(configurations[ci])
        if digests.get(ci) not in (None, policy.digest()):  # results of another version of the policy
            stale.append(ci)
            continue
        band, found = policy_band(inputs, policy, cold)
        sources.update(found)
        rows.append({"config_index": ci, **_columns(band)})
    if stale:
        notes.append(f"no band for configuration(s) {', '.join(map(str, stale))}: the policy sweep.json "
                     "gives is not the one its runs recorded (run the sweep again)")
    schema = {"config_index": pl.Int64, **dict.fromkeys(BAND_COLUMNS, pl.Float64)}
    frame = pl.DataFrame(rows, schema=schema)
    out = SweepBands(frame, notes, profiles=tuple(sorted(sources)))
    if shipped:
        if shipped_index is not None and shipped_index in chosen:
            row = frame.filter(pl.col("config_index") == shipped_index).row(0, named=True)
            cost = agg.filter(pl.col("config_index") == shipped_index)["cost_usd"].item()
            out.shipped = {**row, "cost_usd": cost}
        elif shipped_index is None:
            band, _ = policy_band(inputs, base, cold)
            out.shipped = {"config_index": None, "cost_usd": band.hits_usd, **_columns(band)}
    return out


def _columns(band) -> dict[str, float]:
    return dict(zip(BAND_COLUMNS, (band.expected_usd, band.p10_usd, band.p90_usd), strict=True))


def with_bands(frame, bands: SweepBands | None):
    """``frame`` (one row per configuration) with the band columns right after ``cost_usd``
    (null for a configuration without a band); unchanged when no band applies."""
    if bands is None or bands.frame is None:
        return frame
    joined = frame.drop([c for c in BAND_COLUMNS if c in frame.columns]).join(
        bands.frame, on="config_index", how="left")
    cols = [c for c in frame.columns if c not in BAND_COLUMNS]
    at = cols.index("cost_usd") + 1 if "cost_usd" in cols else len(cols)
    return joined.select([*cols[:at], *BAND_COLUMNS, *cols[at:]])


def describe(band: dict[str, Any]) -> str:
    """``expected $E (p10 $L - p90 $H)`` of a row with the band columns."""
    e, lo, hi = (band.get(c) for c in BAND_COLUMNS)
    if e is None:
        return "no band"
    return f"expected ${e:,.4f} (p10 ${lo:,.4f} – p90 ${hi:,.4f}, provider cache misses)"


def tune_with_bands(sweep_dir: str | Path, agg, objective: str = "cost_usd", constraints=(),
                    direction: str = "min", *, top: int = 10, missing: str = "error"):
    """:func:`workbench.sweep.tune.tune` of the aggregated sweep ``agg`` with the band columns
    on its configurations (the shown ones at least: :func:`sweep_bands`) and the band's notes;
    ranking on a band column (objective or constraint) prices every configuration first.
    Returns ``(TuneResult, SweepBands)``."""
    from dataclasses import replace

    import polars as pl

    from workbench.sweep.tune import parse_constraint, shown_configs, tune

    cons = [parse_constraint(c) for c in constraints]
    if objective in BAND_COLUMNS or any(c.metric in BAND_COLUMNS for c in cons):
        bands = sweep_bands(sweep_dir, agg, shipped=True)
        result = tune(with_bands(agg, bands), objective, cons, direction, missing=missing)
    else:
        result = tune(agg, objective, cons, direction, missing=missing)
        bands = sweep_bands(sweep_dir, agg, only=shown_configs(result, top), shipped=True)
        configs = with_bands(result.configs, bands)
        best = result.best
        if best is not None and "config_index" in configs.columns:
            best = configs.filter(pl.col("config_index") == best["config_index"]).row(0, named=True)
        result = replace(result, configs=configs, best=best)
    result.notes = [*result.notes, *bands.notes]
    return result, bands
