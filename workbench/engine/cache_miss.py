"""The provider's own cache misses: a model fitted from recorded usage, and the cost band it
gives a replay.

The replay's cache model (``kernel_nb._account_impl``, ``reference.py``) reads the longest
common prefix with the previous call whenever the TTL allows. Real providers miss inside the
TTL: the bundled Claude Code 2.0.76 session (624a4a58, Bedrock) reads back nothing, or only
the ~23k-token system prefix, on 12 of its 50 requests that came 5-194 s after the previous
one, and re-writes the rest at 1.25x the input price; the Codex rollout reads 0 on 17 of 66.
Such misses are a property of the harness's traffic and the provider, not of the policy, so
they are fitted from the logs' recorded usage per harness × release line × provider:

* a recorded request is **observed** when the request before it was recorded too, came
  within the provider's TTL, sent at least :data:`MIN_PREVIOUS` tokens and no recorded
  compaction lies between them (a compaction changes the prefix on purpose);
* it is a **miss** when its recorded cache read is below :data:`MISS_READ_FRACTION` of the
  smaller of the two prompts, and the miss **kept the prefix** when it read anything at all;
* requests are split by what the log shows before them (:func:`request_classes`): a tool
  loop (tool results only) or a new user turn (a user message that is not a tool result).

The chance of a miss per class and the chance a miss keeps the prefix are the counts pooled
over the logs of a group, shrunk toward the wider group (release line → harness → provider)
with a weight of :data:`PRIOR_WEIGHT` requests (:func:`resolve`); at the widest group the
rate over all classes is shrunk toward "no miss" with :data:`BASE_WEIGHT` requests and each
class's rate toward that pooled rate with :data:`PRIOR_WEIGHT` (the class is one more level:
on 4 observed Bedrock requests, 2 per class, a per-class "no miss" prior of 10 each halved the
chance the pooled counts give). The fitted file holds each
log's counts, so the profile of any group *without* a given log (leave-one-log-out, which the
fidelity audit uses for its predictive line) is computed from the same file.

:func:`miss_band` applies a profile to a replay's ledger: every main call the cache model
billed with a read (not one billed as the log recorded it) misses with the profile's chance;
on a miss it reads the prefix (``view.prefix_tokens``) or nothing and writes the rest (on a
provider that bills no writes, the rest is uncached input). The pass
(:mod:`workbench.engine.cache_miss_nb`, twin :mod:`workbench.engine.cache_miss_reference`)
gives the expected cost and :data:`N_DRAWS` seeded draws; the band is their p10-p90.

A model switch is a rule, not a chance: Anthropic's prompt cache is per model, so a request
served by another model than the one before it (a skill's ``model:``, ``/model``; the
import's ``model_runs``, :func:`cold_requests`) reads nothing and writes its whole prompt
(ae4a77f8's request 5, opus-4-6 to haiku-4-5: read 0, wrote 39,413). Such requests are left
out of the fitted counts (until issue 28's third pass this one was the Anthropic API's only
"miss") and priced cold by :func:`miss_band` whatever the profile.

Where it applies: imported logs whose harness and provider have a profile (the fidelity audit).
Generated continuities have no harness traffic to fit: their replays are unchanged.

>>> doc = {"prior_weight": 0.0, "base_weight": 0.0,
...        "logs": {"a": {"harness": "h", "release_line": "1.0", "provider": "p",
...        "requests": [8, 2], "misses": [2, 0], "kept_prefix": 1}}}
>>> prof = resolve(doc, "h", "1.0.3", "p")
>>> prof.p_miss, prof.p_prefix
((0.25, 0.0), 0.5)
>>> doc["base_weight"], doc["prior_weight"] = 10.0, 20.0  # 2 in 10 pooled: 2 / 20 = 0.1, then per class
>>> [round(p, 4) for p in resolve(doc, "h", "1.0.3", "p").p_miss]  # (2 + 20 x 0.1) / 28, (0 + 2) / 22
[0.1429, 0.0909]
"""

from __future__ import annotations

import functools
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

PACKAGED = Path(__file__).with_name("cache_miss_profiles.json")
SCHEMA = "workbench.cache_miss_profile/1"
CLASSES = ("tool_loop", "user_turn")
TOOL_LOOP, USER_TURN = 0, 1
MISS_READ_FRACTION = 0.5  # a read below half of what the previous call left cached is a miss
MIN_PREVIOUS = 1024  # below this the previous prompt may not have been cacheable at all
PRIOR_WEIGHT = 20.0  # requests' worth of the wider group's rate a group's rate is shrunk toward
# requests' worth of "no miss" (the cache model's own behaviour) the provider's rate is shrunk
# toward: a provider seen on a handful of requests is not given their raw rate
BASE_WEIGHT = 10.0
N_DRAWS = 400
BAND = (0.1, 0.9)


def release_line(version: str | None) -> str:
    """``2.0.76`` → ``2.0``; unknown → ``any``."""
    if not version:
        return "any"
    parts = str(version).split(".")
    return ".".join(parts[:2]) if len(parts) >= 2 else parts[0]


def serving_provider(inp) -> str:
    """The provider that served the log's calls, as far as the cache goes: Anthropic's models
    served by Amazon Bedrock answer with message ids ``msg_bdrk_…`` (both bundled Bedrock
    sessions, 624a4a58 and 9eda1058, miss far more often than the Anthropic API's: 15 of 56
    requests against 1 of 236), so they are their own provider ``anthropic-bedrock``."""
    from workbench.engine.pricing import infer_provider

    provider = inp.provider or infer_provider(inp.model or "")
    if provider == "anthropic" and inp.n_requests:
        ids = inp.message_id.gather(np.asarray(inp.req_first_row, np.int64)) \
            if hasattr(inp.message_id, "gather") else [inp.message_id[i] for i in inp.req_first_row]
        if any(isinstance(m, str) and m.startswith("msg_bdrk_") for m in ids):
            return "anthropic-bedrock"
    return provider


def request_classes(inp) -> np.ndarray:
    """Per request: :data:`USER_TURN` when the events since the previous request's output hold
    a user message that is not a tool result, else :data:`TOOL_LOOP`."""
    n_req = inp.n_requests
    out = np.full(n_req, TOOL_LOOP, np.int64)
    if n_req == 0:
        return out
    first = np.asarray(inp.req_first_row, np.int64)
    users = np.flatnonzero(np.asarray(inp.is_user_message) & ~np.asarray(inp.is_tool_result))
    # the request each user message leads to: the first request whose first output row follows it
    req = np.searchsorted(first, users, side="right")
    out[np.unique(req[req < n_req])] = USER_TURN
    return out


def observations(inp, ttl_s: float, cold=()) -> dict[str, np.ndarray]:
    """Per request of ``inp`` (counted tokens are fine: only recorded usage is read):
    ``observed``, ``miss``, ``kept_prefix`` (bool) and ``cls``; see the module docstring.
    ``cold``: requests (source indices) that switched model: not observed (a cache belongs to
    one model, so they miss by rule, not by chance)."""
    n_req = inp.n_requests
    cls = request_classes(inp)
    observed, miss, kept = (np.zeros(n_req, bool) for _ in range(3))
    if inp.recorded_prompt is None or n_req == 0:
        return {"observed": observed, "miss": miss, "kept_prefix": kept, "cls": cls}
    prompt = np.asarray(inp.recorded_prompt, np.int64)
    read = np.asarray(inp.recorded_cache[0], np.int64) if inp.recorded_cache is not None else np.full(n_req, -1)
    bounds = np.flatnonzero(inp.is_boundary)
    first = np.asarray(inp.req_first_row, np.int64)
    prev = -1
    for r in range(n_req):
        if prompt[r] < 0:
            continue
        if prev >= 0 and read[r] >= 0 and prompt[prev] >= MIN_PREVIOUS and int(inp.req_source[r]) not in cold \
                and (inp.req_ts[r] - inp.req_ts[prev]) <= ttl_s * 1000.0 \
                and not ((bounds > first[prev]) & (bounds < first[r])).any():
            observed[r] = True
            if read[r] < MISS_READ_FRACTION * min(prompt[prev], prompt[r]):
                miss[r] = True
                kept[r] = read[r] > 0
        prev = r
    return {"observed": observed, "miss": miss, "kept_prefix": kept, "cls": cls}


def cold_requests(manifest: dict[str, Any]) -> dict[str, set[int]]:
    """Per continuity id of an imported dataset, the requests served by another model than
    the one before (the import's ``model_runs``): their cache is cold (Anthropic's prompt
    cache is per model)."""
    from workbench.sources.claude_code import MODEL_RUNS

    metas = ((manifest or {}).get("import") or {}).get("continuities") or {}
    return {cid: {int(r) for r, _m in m[MODEL_RUNS][1:]} for cid, m in metas.items()
            if isinstance(m, dict) and m.get(MODEL_RUNS)}


def fit_miss_profiles(inputs, *, fitted_from: str = "", cold: dict[str, set] | None = None) -> dict[str, Any]:
    """The profile document of a dataset's prepared inputs (``prepare_dataset``): each
    imported log's counts per class (the groups are pooled when resolved). ``cold``: per
    continuity id, the requests that switched model (:func:`cold_requests`)."""
    from workbench.engine.provider import CACHE_RULES

    logs: dict[str, Any] = {}
    for inp in inputs:
        if inp.harness is None or inp.recorded_prompt is None or not (inp.recorded_prompt >= 0).any():
            continue
        provider = serving_provider(inp)
        ttl_s = CACHE_RULES.get(provider.split("-")[0], (None, 300.0, 1))[1]
        obs = observations(inp, ttl_s, (cold or {}).get(inp.continuity_id, ()))
        if not obs["observed"].any():
            continue
        cls, seen = obs["cls"], obs["observed"]
        logs[inp.continuity_id] = {
            "harness": inp.harness, "release_line": release_line(inp.harness_version), "provider": provider,
            "requests": [int((seen & (cls == c)).sum()) for c in range(len(CLASSES))],
            "misses": [int((obs["miss"] & (cls == c)).sum()) for c in range(len(CLASSES))],
            "kept_prefix": int(obs["kept_prefix"].sum()),
        }
    return {"schema": SCHEMA, "fitted_from": fitted_from, "classes": list(CLASSES),
            "read_fraction": MISS_READ_FRACTION, "min_previous": MIN_PREVIOUS, "prior_weight": PRIOR_WEIGHT,
            "base_weight": BASE_WEIGHT, "logs": dict(sorted(logs.items()))}


@dataclass(frozen=True)
class MissProfile:
    """The chance of a miss per request class and the chance a miss keeps the prefix."""

    p_miss: tuple[float, ...]
    p_prefix: float
    source: str  # the narrowest group with logs, e.g. "claude_code@2.0/anthropic"
    logs: int  # logs pooled at that group
    requests: int
    misses: int

    def as_dict(self) -> dict[str, Any]:
        return {"p_miss": dict(zip(CLASSES, (round(p, 4) for p in self.p_miss), strict=True)),
                "p_prefix": round(self.p_prefix, 4), "source": self.source, "logs": self.logs,
                "requests": self.requests, "misses": self.misses}


def resolve(doc: dict[str, Any], harness: str | None, version: str | None, provider: str,
            exclude: str | None = None) -> MissProfile | None:
    """The profile of a log of ``harness`` at ``version`` on ``provider``, pooled from the
    document's logs but ``exclude`` (leave-one-log-out); None when no log of the provider is left."""
    weight = float(doc.get("prior_weight", PRIOR_WEIGHT))
    base = float(doc.get("base_weight", BASE_WEIGHT))
    line = release_line(version)
    levels = [("provider", lambda e: e["provider"] == provider, provider),
              ("harness", lambda e: e["provider"] == provider and e["harness"] == harness,
               f"{harness}/{provider}"),
              ("release", lambda e: e["provider"] == provider and e["harness"] == harness
               and e["release_line"] == line, f"{harness}@{line}/{provider}")]
    k = len(CLASSES)
    p_miss, p_prefix, found, pooled = None, None, None, None
    for _level, keep, name in levels:
        ids = [cid for cid, e in (doc.get("logs") or {}).items() if cid != exclude and keep(e)]
        if not ids:
            continue
        if ids == pooled:  # the same logs as the wider group: no new evidence (not counted twice)
            found = (name, *found[1:])
            continue
        pooled = ids
        entries = [doc["logs"][cid] for cid in ids]
        n = np.sum([e["requests"] for e in entries], axis=0).astype(np.float64)
        m = np.sum([e["misses"] for e in entries], axis=0).astype(np.float64)
        kept = float(sum(e["kept_prefix"] for e in entries))
        if p_miss is None:
            # the widest level: its rate over all classes shrunk toward the cache model's own
            # "no miss" (``base`` requests' worth in all, not per class), each class's rate
            # shrunk toward that with ``weight`` like any narrower group (a class seen on a
            # couple of requests is not given its raw rate, nor a share of "no miss" per class)
            pooled_rate = m.sum() / (n.sum() + base) if n.sum() + base > 0 else 0.0
            with np.errstate(invalid="ignore", divide="ignore"):  # a class never seen, weight 0: pooled
                p_miss = np.where(n + weight > 0, (m + weight * pooled_rate) / (n + weight), pooled_rate)
            p_prefix = kept / m.sum() if m.sum() else 0.0
        else:
            p_miss = (m + weight * p_miss) / (n + weight)
            p_prefix = (kept + weight * p_prefix) / (m.sum() + weight)
        found = (name, len(entries), int(n.sum()), int(m.sum()))
    if found is None:
        return None
    return MissProfile(tuple(float(p) for p in p_miss[:k]), float(p_prefix), *found)


def load_miss_profiles(path: str | Path | None = None) -> dict[str, Any]:
    """The profile document at ``path`` (the packaged one by default, read once)."""
    if path is None:
        return _packaged()
    return _read(Path(path))


@functools.cache
def _packaged() -> dict[str, Any]:
    return _read(PACKAGED)


def _read(p: Path) -> dict[str, Any]:
    from workbench.util.atomic import read_owned_json

    return read_owned_json(p, schema=SCHEMA, what="cache-miss profile")


def write_miss_profiles(doc: dict[str, Any], path: str | Path) -> Path:
    """Write atomically; only a new path or a cache-miss profile file may be replaced."""
    from workbench.util.atomic import write_owned_json

    return write_owned_json(path, doc, schema=SCHEMA, what="cache-miss profile", example="cache_miss.json",
                            option="--cache-miss-out")


@dataclass(frozen=True)
class CostBand:
    """A replay's cost under a miss model: the cost with the replay's own reads (``hits``),
    the expected cost, its p10 and p90, and the expected cache read and write tokens."""

    hits_usd: float
    expected_usd: float
    p10_usd: float
    p90_usd: float
    cache_read_tokens: float
    cache_write_tokens: float
    expected_misses: float
    eligible: int  # calls that could miss
    # the drawn totals the quantiles come from (kept to add replays up: :func:`total_band`);
    # not part of the figures (``as_dict``, equality)
    draws: Any = field(default=None, repr=False, compare=False)

    def as_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__ if k != "draws"}


def total_band(bands) -> CostBand:
    """The band of several replays' total (e.g. a configuration over every continuity of a
    dataset): expected figures add up; the quantiles are those of the summed draws (draw ``d``
    of each replay, seeded by its own continuity), never a sum of quantiles. One band is
    returned with the same figures.

    >>> a = CostBand(1.0, 2.0, 1.0, 3.0, 0.0, 0.0, 0.5, 1, draws=np.array([1.0, 3.0]))
    >>> b = CostBand(1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0, draws=np.array([1.0, 1.0]))
    >>> t = total_band([a, b])
    >>> (t.hits_usd, t.expected_usd, t.draws.tolist())
    (2.0, 3.0, [2.0, 4.0])
    """
    bands = list(bands)
    if not bands:
        raise ValueError("total_band needs at least one band")
    if any(b.draws is None for b in bands):
        raise ValueError("total_band needs the draws of every band (miss_band keeps them)")
    draws = np.sum([np.asarray(b.draws, np.float64) for b in bands], axis=0)
    expected = float(sum(b.expected_usd for b in bands))
    lo, hi = _quantiles(draws, expected)
    return CostBand(float(sum(b.hits_usd for b in bands)), expected, lo, hi,
                    float(sum(b.cache_read_tokens for b in bands)), float(sum(b.cache_write_tokens for b in bands)),
                    float(sum(b.expected_misses for b in bands)), int(sum(b.eligible for b in bands)), draws=draws)


def _quantiles(draws: np.ndarray, expected: float) -> tuple[float, float]:
    if not len(draws):
        return float(expected), float(expected)
    lo, hi = np.quantile(draws, BAND)
    return float(lo), float(hi)


def miss_band(rows, view, prov, profile: MissProfile | None, *, seed: int = 0, n_draws: int = N_DRAWS,
              engine: str = "kernel", extra_usd=None, cold=()) -> CostBand:
    """The cost band of ledger ``rows`` (main calls of one continuity's replay, a
    :data:`~workbench.engine.records.LEDGER` array) under ``profile`` (None: no misses).
    ``extra_usd``: $ per row added in every outcome (e.g. the 1-hour write tier of calls billed
    as recorded). ``cold``: requests (source indices) that switched model: they read nothing
    (a cache belongs to one model; the replay has one cache for the continuity). Draws are
    seeded by ``seed``, the continuity id and each call's request."""
    from workbench.engine import enums as E
    from workbench.engine.records import LEDGER

    rows = np.asarray(rows)
    prompt, read, write, uncached, output = (rows[:, getattr(LEDGER, c)].astype(np.int64) for c in (
        "prompt_tokens", "cache_read_tokens", "cache_write_tokens", "uncached_tokens", "output_tokens"))
    req = rows[:, LEDGER.request].astype(np.int64)
    extra = np.zeros(len(rows)) if extra_usd is None else np.asarray(extra_usd, np.float64)
    cost_hit = prov.prices.cost(prompt, read, write, uncached, output) + extra
    p = np.zeros(len(rows))
    survive = np.minimum(read, int(view.prefix_tokens))
    if profile is not None and len(rows):
        billed = view.billed_usage
        as_recorded = (billed[0][req] == prompt) if billed is not None else np.zeros(len(rows), bool)
        eligible = ((rows[:, LEDGER.call_kind] == E.CallKind.MAIN) & (rows[:, LEDGER.cache_loss] == E.CacheLoss.NONE)
                    & (read > 0) & ~as_recorded)
        p = np.where(eligible, np.asarray(profile.p_miss)[request_classes(view)[req]], 0.0)
        q = np.full(len(rows), profile.p_prefix)
    else:
        eligible = np.zeros(len(rows), bool)
        q = np.zeros(len(rows))
    if len(cold) and len(rows):
        switched = np.isin(np.asarray(view.req_source, np.int64)[req], np.fromiter(cold, np.int64)) & (read > 0)
        if view.billed_usage is not None:
            switched &= view.billed_usage[0][req] != prompt  # billed as recorded: the log's own read
        p, q, eligible = np.where(switched, 1.0, p), np.where(switched, 0.0, q), eligible | switched
    writes = prov.cache_mode in (E.CacheMode.EXPLICIT, E.CacheMode.AUTOMATIC_WRITES)

    def outcome(new_read):
        lost = read - new_read
        new_write = write + lost if writes else write
        return prov.prices.cost(prompt, new_read, new_write, prompt - new_read - new_write, output) + extra

    cost_prefix, cost_cold = outcome(survive), outcome(np.zeros_like(read))
    positions = np.asarray(view.req_source, np.int64)[req] if len(rows) else np.zeros(0, np.int64)
    key = (int(seed) ^ zlib.crc32(str(view.continuity_id).encode())) & 0xFFFFFFFF
    if engine == "reference":
        from workbench.engine.cache_miss_reference import miss_pass_reference

        expected, draws = miss_pass_reference(cost_hit, cost_prefix, cost_cold, p, q, positions, key, n_draws)
    else:
        from workbench.engine.cache_miss_nb import miss_pass_nb

        expected, draws = miss_pass_nb(cost_hit, cost_prefix, cost_cold, p, q, positions, key, n_draws)
    draws = np.asarray(draws, np.float64)
    lo, hi = _quantiles(draws, float(expected))
    exp_read = float(((1 - p) * read + p * q * survive).sum())
    lost = read - ((1 - p) * read + p * q * survive)
    exp_write = float((write + (lost if writes else 0.0)).sum())
    return CostBand(float(cost_hit.sum()), float(expected), lo, hi, exp_read, exp_write,
                    float(p.sum()), int(eligible.sum()), draws=draws)


def replay_band(view, prov, ledger, *, doc: dict[str, Any] | None = None, engine: str = "kernel", cold=()):
    """``(band, profile)`` of one replay (every call of its ledger; only main calls can miss)
    under the profile of the log's harness, release line and serving provider in ``doc`` (the
    packaged document by default: fitted on the bundled logs, so a bundled log's own misses
    are in it); None for a generated continuity or one whose provider has no profile.
    ``cold``: the log's requests that switched model (:func:`cold_requests`)."""
    prof = view_profile(view, doc)
    if prof is None:
        return None
    return miss_band(ledger, view, prov, prof, engine=engine, cold=cold), prof


def view_profile(view, doc: dict[str, Any] | None = None) -> MissProfile | None:
    """The profile of a prepared continuity's harness, release line and serving provider in
    ``doc`` (the packaged document by default); None for a generated continuity (no harness
    traffic to fit) or a harness and provider without one."""
    if view.harness is None:
        return None
    return resolve(doc if doc is not None else load_miss_profiles(), view.harness, view.harness_version,
                   serving_provider(view))


def no_profile_message(harness: str | None, provider: str | None) -> str:
    """Why a replay has no band, as the tables say it: ``no band: no miss profile for
    <harness>/<provider>`` (``generated`` for a continuity no harness wrote; the provider as
    :func:`serving_provider` names it)."""
    return f"no band: no miss profile for {harness or 'generated'}/{provider or 'unknown'}"


def cost_band_frame(config: dict[str, Any]):
    """The cost bands a run's ``config.json`` holds (``cost_bands`` per policy and imported log)
    as one row each: policy, continuity, ``hits_usd`` (every cached read), ``expected_usd``,
    ``p10_usd``, ``p90_usd`` and the profile; empty for a run on generated data."""
    import polars as pl

    rows = [{"policy": name, "continuity_id": cid, "hits_usd": b["hits_usd"], "expected_usd": b["expected_usd"],
             "p10_usd": b["p10_usd"], "p90_usd": b["p90_usd"], "profile": b["profile"]["source"]}
            for name, entry in (config.get("policies") or {}).items()
            for cid, b in (entry.get("cost_bands") or {}).items()]
    schema = {"policy": pl.String, "continuity_id": pl.String, "hits_usd": pl.Float64, "expected_usd": pl.Float64,
              "p10_usd": pl.Float64, "p90_usd": pl.Float64, "profile": pl.String}
    return pl.DataFrame(rows, schema=schema)
