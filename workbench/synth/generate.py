"""Seeded, byte-for-byte reproducible synthetic continuities.

Structure is built with numpy in a handful of vectorised passes (no per-event Python),
so 10 M events take seconds; text comes from seeded pools (:mod:`.text`) and is only
materialised when asked for. Planted facts and secrets (and hard negatives) are written
into chosen events and recorded in side tables with character spans.

>>> from workbench.synth.generate import GeneratorConfig, build_continuity
>>> c = build_continuity(GeneratorConfig(profile="coding", events=500, seed=1))
>>> c.events.num_rows
500
"""

from __future__ import annotations

import functools
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np

from workbench.continuity.enums import EventFlag, EventKind, Origin, Role
from workbench.errors import WorkbenchError
from workbench.synth.profiles import MEMORY, PROFILES, SIDE, SYSTEM, Profile
from workbench.synth.text import CLASS_ID, build_pool

TEXT_MODES = ("auto", "full", "labels-only")
SECRET_FAMILIES = ("core", "all")
FULL_TEXT_LIMIT = 2_000_000  # "auto" materialises text up to this many events
EPOCH_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z: a fixed start keeps output reproducible


@dataclass(frozen=True)
class GeneratorConfig:
    profile: str = "coding"
    events: int = 20_000
    seed: int = 0
    text: str = "auto"
    tokenizers: tuple[str, ...] | None = None
    facts: int | None = None  # default: scales with size
    secrets: int | None = None
    hard_negatives: int | None = None
    continuity_id: str | None = None
    # > 1: that many task-sized continuities (one episode each, e.g. one SWE-bench
    # instance); ``events`` is then ignored, each continuity has its episode's length
    continuities: int = 1
    # lognormal profiles: every episode's turns times this (the same tasks, each stretched),
    # e.g. to a strategy's published mean trajectory length
    turn_scale: float = 1.0
    #: "core": the formats the datasets were always planted with; "all" adds the vendor
    #: families of docs/redaction-coverage.md and their hard negatives (a separate option so
    #: that every existing dataset draws exactly what it drew before)
    secret_families: str = "core"
    #: plant an evolving task state (a todo list whose items move from open to done, and the
    #: next step: :mod:`workbench.synth.task_state`); off by default, so that every existing
    #: dataset draws exactly what it drew before
    task_state: bool = False

    def resolved(self) -> GeneratorConfig:
        if self.profile not in PROFILES:
            raise WorkbenchError(f"unknown profile {self.profile!r}; known: {', '.join(PROFILES)}")
        if self.text not in TEXT_MODES:
            raise WorkbenchError(f"--text must be one of {', '.join(TEXT_MODES)}")
        if self.events < 2:
            raise WorkbenchError("--events must be at least 2")
        if self.continuities < 1:
            raise WorkbenchError("--continuities must be at least 1")
        if self.turn_scale != 1.0 and (self.turn_scale <= 0 or PROFILES[self.profile].steps_sigma <= 0):
            raise WorkbenchError(f"turn_scale {self.turn_scale}: must be > 0, and the profile "
                                 f"{self.profile!r} must draw lognormal turns (e.g. swe-bench)")
        if self.secret_families not in SECRET_FAMILIES:
            raise WorkbenchError(f"secret_families must be one of {', '.join(SECRET_FAMILIES)}")
        from workbench.tokens.tokenizers import DEFAULT_TOKENIZERS

        n = self.events
        return replace(
            self,
            tokenizers=self.tokenizers or DEFAULT_TOKENIZERS,
            facts=self.facts if self.facts is not None else int(min(400, max(4, n // 2_000))),
            secrets=self.secrets if self.secrets is not None else int(min(1_200, max(8, n // 400))),
            hard_negatives=(self.hard_negatives if self.hard_negatives is not None
                            else int(min(400, max(4, n // 1_000)))),
            continuity_id=self.continuity_id or f"synthetic-{self.profile}-s{self.seed}",
        )


def _generator_record(cfg: GeneratorConfig) -> dict:
    """The config as a dataset records it; options at their defaults (``continuities``,
    ``turn_scale``, ``secret_families``, ``task_state``) are left out, so the metadata of a dataset generated
    as before the options existed stays byte-identical."""
    rec = asdict(cfg)
    for key, default in (("continuities", 1), ("turn_scale", 1.0), ("secret_families", "core"),
                         ("task_state", False)):
        if rec[key] == default:
            del rec[key]
    return rec


@dataclass
class SyntheticContinuity:
    events: object  # pyarrow.Table in the canonical schema
    facts: object
    secrets: object
    actors: list[str]
    config: GeneratorConfig
    text_mode: str
    meta: dict = field(default_factory=dict)


def _pattern_tables(profile: Profile):
    """Turn patterns as padded 2-D arrays: [turn type, position] -> attribute."""
    turns = (profile.open_turn, profile.close_turn, *profile.work_turns)
    width = max(len(t) for t in turns)
    shape = (len(turns), width)
    kind = np.zeros(shape, np.int8)
    role = np.zeros(shape, np.int8)
    origin = np.zeros(shape, np.int8)
    tclass = np.zeros(shape, np.int16)
    out = np.zeros(shape, bool)
    for t, pattern in enumerate(turns):
        for p, (k, r, o, c, is_out) in enumerate(pattern):
            kind[t, p], role[t, p], origin[t, p] = k, r, o
            tclass[t, p], out[t, p] = CLASS_ID[c], is_out
    lengths = np.array([len(t) for t in turns], np.int64)
    return kind, role, origin, tclass, out, lengths


def _episode_steps(rng, profile: Profile, n: int, scale: float = 1.0) -> np.ndarray:
    """Work turns of ``n`` episodes. Lognormal profiles draw the episode's turns (work
    turns + the closing turn, as a trajectory's turn count includes its final answer),
    times ``scale``."""
    if profile.steps_sigma <= 0:
        return rng.integers(profile.steps_min, profile.steps_max + 1, n)
    turns = np.rint(rng.lognormal(np.log(profile.steps_median), profile.steps_sigma, n) * scale)
    return np.clip(turns - 1, profile.steps_min, profile.steps_max).astype(np.int64)


def _expand_turns(rng, profile: Profile, target: int, episodes: int | None = None, scale: float = 1.0):
    """Sample episodes until they hold at least ``target`` events; return turn types."""
    kind, role, origin, tclass, out, lengths = _pattern_tables(profile)
    weights = np.asarray(profile.work_weights, float)
    weights = weights / weights.sum()
    mean_work = float((lengths[2:] * weights).sum())
    mean_ep = lengths[0] + lengths[1] + mean_work * (profile.steps_min + profile.steps_max) / 2
    if episodes is not None:  # exactly this many whole episodes, whatever their length
        steps = _episode_steps(rng, profile, episodes, scale)
        types = 2 + rng.choice(len(weights), size=int((steps + 2).sum()), p=weights)
        ep_start = np.concatenate(([0], np.cumsum(steps + 2)[:-1]))
        types[ep_start] = 0
        types[ep_start + steps + 1] = 1
        return types, (kind, role, origin, tclass, out, lengths)
    turn_chunks = []
    total = 0
    while total < target:
        n_ep = int(target / mean_ep * 1.2) + 2
        steps = _episode_steps(rng, profile, n_ep, scale)
        n_turns = int((steps + 2).sum())
        types = 2 + rng.choice(len(weights), size=n_turns, p=weights)
        ep_start = np.concatenate(([0], np.cumsum(steps + 2)[:-1]))
        types[ep_start] = 0
        types[ep_start + steps + 1] = 1
        turn_chunks.append(types)
        total += int(lengths[types].sum())
    return np.concatenate(turn_chunks), (kind, role, origin, tclass, out, lengths)


def build_structure(cfg: GeneratorConfig, rng, episodes: int | None = None) -> dict[str, np.ndarray]:
    """All fixed-width columns for ``cfg.events`` events (text classes, not text); with
    ``episodes``, for exactly that many whole episodes (``cfg.events`` is then ignored)."""
    profile = PROFILES[cfg.profile]
    n = cfg.events
    # events before side-effect expansion: enough that after adding them we reach n
    base_target = int(np.ceil((n - 1) / (1.0 + profile.side_effects_mean + profile.memory_write_rate))) + 64
    turn_types, (K, R, ORIG, C, OUT, L) = _expand_turns(rng, profile, base_target, episodes, cfg.turn_scale)
    counts = L[turn_types]
    turn_of = np.repeat(np.arange(turn_types.size, dtype=np.int64), counts)
    first = np.repeat(np.cumsum(counts) - counts, counts)
    pos = np.arange(turn_of.size, dtype=np.int64) - first
    tt = turn_types[turn_of]
    kind, role, origin, tclass, is_out = K[tt, pos], R[tt, pos], ORIG[tt, pos], C[tt, pos], OUT[tt, pos]

    # an occasional tool result never arrives: the call stays unpaired
    drop = (kind == EventKind.TOOL_RESULT) & (rng.random(kind.size) < profile.interrupt_rate)
    keep = ~drop
    kind, role, origin, tclass, is_out, turn_of = (a[keep] for a in (kind, role, origin, tclass, is_out, turn_of))

    # dense side effects and background memory writes after base events
    if profile.side_effects_mean > 0 or profile.memory_write_rate > 0:
        n_side = (rng.geometric(1.0 / (1.0 + profile.side_effects_mean), kind.size) - 1
                  if profile.side_effects_mean > 0 else np.zeros(kind.size, np.int64))
        n_mem = (rng.random(kind.size) < profile.memory_write_rate).astype(np.int64)
        group = 1 + n_side + n_mem
        base_idx = np.repeat(np.arange(kind.size), group)
        within = np.arange(base_idx.size) - np.repeat(np.cumsum(group) - group, group)
        is_base = within == 0
        is_mem = within == (1 + np.repeat(n_side, group))
        is_mem &= np.repeat(n_mem, group) > 0
        is_side = ~is_base & ~is_mem

        def spread(a, side_val, mem_val):
            b = a[base_idx].copy()
            b[is_side] = side_val
            b[is_mem] = mem_val
            return b

        kind = spread(kind, SIDE[0], MEMORY[0])
        role = spread(role, SIDE[1], MEMORY[1])
        origin = spread(origin, SIDE[2], MEMORY[2])
        tclass = spread(tclass, CLASS_ID[SIDE[3]], CLASS_ID[MEMORY[3]])
        is_out = spread(is_out, False, False)
        turn_of = turn_of[base_idx]

    if episodes is not None:
        n = kind.size + 1
    # a system prompt first, then cut to exactly n events
    kind = np.concatenate(([SYSTEM[0]], kind))[:n].astype(np.int8)
    role = np.concatenate(([SYSTEM[1]], role))[:n].astype(np.int8)
    origin = np.concatenate(([SYSTEM[2]], origin))[:n].astype(np.int8)
    tclass = np.concatenate(([CLASS_ID[SYSTEM[3]]], tclass))[:n].astype(np.int16)
    is_out = np.concatenate(([False], is_out))[:n]
    turn_of = np.concatenate(([-1], turn_of))[:n]

    # requests: a run of model outputs is one request; inputs feed the next request
    visible = (kind != EventKind.SIDE_EFFECT) & (kind != EventKind.MEMORY_WRITE)
    vis_idx = np.flatnonzero(visible)
    v_out = is_out[vis_idx]
    starts = v_out & ~np.concatenate(([False], v_out[:-1]))
    started = np.cumsum(starts)  # requests started up to and including this event
    n_requests = int(started[-1]) if started.size else 0
    v_req = np.where(v_out, started - 1, started)
    v_req = np.where(v_req >= n_requests, -1, v_req)  # trailing inputs no request sees
    request = np.full(n, -1, np.int32)
    request[vis_idx] = v_req

    # actors: users and agents rotate per episode turn; harness/background have their own
    profile_actors = [*profile.user_actors, *profile.agent_actors, "harness", "summarizer"]
    actor = np.zeros(n, np.int16)
    nu, na = len(profile.user_actors), len(profile.agent_actors)
    tmod = np.maximum(turn_of, 0)
    actor[origin == Origin.USER] = (tmod[origin == Origin.USER] % nu)
    agentish = (origin == Origin.AGENT) | (origin == Origin.TOOL)
    actor[agentish] = nu + (tmod[agentish] // 3) % na
    actor[origin == Origin.HARNESS] = nu + na
    actor[origin == Origin.SYSTEM] = nu + na
    actor[origin == Origin.BACKGROUND] = nu + na + 1

    # timestamps: think time before user turns, latency before each request, tool time
    gaps = np.full(n, 0.05)  # side effects: tens of milliseconds
    user_turn = (kind == EventKind.MESSAGE) & (role == Role.USER)
    gaps[user_turn] = rng.lognormal(np.log(profile.think_median_s), profile.think_sigma, int(user_turn.sum()))
    first_out = is_out & ~np.concatenate(([False], is_out[:-1]))
    gaps[first_out] = rng.lognormal(np.log(profile.model_median_s), 0.6, int(first_out.sum()))
    later_out = is_out & ~first_out
    gaps[later_out] = rng.lognormal(np.log(0.3), 0.5, int(later_out.sum()))
    results = kind == EventKind.TOOL_RESULT
    gaps[results] = rng.lognormal(np.log(profile.tool_median_s), 1.0, int(results.sum()))
    gaps[0] = 0.0
    ts_ms = EPOCH_MS + np.cumsum(np.round(gaps * 1000.0).astype(np.int64))

    # tool pairing: a call and its result share a turn
    call_rows = np.flatnonzero(kind == EventKind.TOOL_CALL)
    result_rows = np.flatnonzero(results)
    _, ci, ri = np.intersect1d(turn_of[call_rows], turn_of[result_rows], return_indices=True)
    pair_seq = np.full(n, -1, np.int64)
    pair_seq[call_rows[ci]] = result_rows[ri]
    pair_seq[result_rows[ri]] = call_rows[ci]
    flags = np.where(is_out, EventFlag.OUTPUT, 0).astype(np.int32)
    unpaired = ((kind == EventKind.TOOL_CALL) | results) & (pair_seq < 0)
    flags[unpaired] |= EventFlag.UNPAIRED

    return {
        "seq": np.arange(n, dtype=np.int64), "kind": kind, "role": role, "origin": origin,
        "actor": actor, "flags": flags, "request": request, "pair_seq": pair_seq,
        "ts_ms": ts_ms, "tclass": tclass, "turn": turn_of, "actors": profile_actors,
    }


@functools.lru_cache(maxsize=4)
def _pool(seed: int, tokenizers: tuple[str, ...]):
    """The text pool of a seed, as an Arrow array, with each tokenizer's counts (computed
    once for all continuities of a dataset)."""
    import pyarrow as pa

    from workbench.tokens.tokenizers import count_texts

    pool = build_pool(seed)
    pool_arr = pa.array(pool.texts, type=pa.large_string())
    return pool, pool_arr, {tok: count_texts(pool_arr, tok) for tok in tokenizers}


def task_seed(seed: int, index: int) -> int:
    """The structure seed of task-sized continuity ``index`` of a dataset seeded ``seed``."""
    return int(np.random.SeedSequence([seed, 0x7A5C, index]).generate_state(1)[0])


def build_continuity(cfg: GeneratorConfig, *, episodes: int | None = None,
                     pool_seed: int | None = None) -> SyntheticContinuity:
    """One continuity of ``cfg.events`` events, or with ``episodes`` of that many whole
    episodes (task-sized); ``pool_seed`` (default ``cfg.seed``) seeds the text pool, so
    the continuities of one dataset share it."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from workbench.continuity.schema import events_schema, token_column
    from workbench.synth.planting import plant_labels
    from workbench.tokens.tokenizers import count_texts

    asked, cfg = cfg, cfg.resolved()
    rng = np.random.default_rng([cfg.seed, 0xC0DE])
    st = build_structure(cfg, rng, episodes)
    n = int(st["seq"].size)
    if episodes is not None:  # default label counts scale with the events actually made
        cfg = replace(asked, events=n).resolved()
    pool, pool_arr, pool_token_counts = _pool(cfg.seed if pool_seed is None else pool_seed, cfg.tokenizers)
    cls = st["tclass"].astype(np.int64)
    pool_idx = pool.class_start[cls] + rng.integers(0, 1 << 30, n) % pool.class_size[cls]
    text_mode = cfg.text if cfg.text != "auto" else ("full" if n <= FULL_TEXT_LIMIT else "labels-only")

    planted = plant_labels(cfg, st, pool, pool_idx, np.random.default_rng([cfg.seed, 0x5EC]))
    token_cols = {}
    for tok in cfg.tokenizers:
        counts = pool_token_counts[tok][pool_idx]
        if planted.rows.size:
            counts[planted.rows] = count_texts(planted.texts, tok)
        token_cols[token_column(tok)] = counts.astype(np.int32)

    pool_chars = pc.utf8_length(pool_arr).to_numpy().astype(np.int32)
    chars = pool_chars[pool_idx]
    if text_mode == "full":
        from workbench.synth.gather_nb import gather_strings

        # planted rows point past the pool, into the planted texts appended to it
        source = pool_arr
        idx = pool_idx
        if planted.rows.size:
            source = pa.concat_arrays([pool_arr, pa.array(planted.texts, type=pa.large_string())])
            idx = pool_idx.copy()
            idx[planted.rows] = len(pool.texts) + np.arange(planted.rows.size)
        text = gather_strings(source, idx)
    else:  # labels-only: text only where something was planted
        texts = np.full(n, None, dtype=object)
        texts[planted.rows] = planted.texts
        text = pa.array(texts, type=pa.large_string())
    if planted.rows.size:
        chars[planted.rows] = pc.utf8_length(pa.array(planted.texts, type=pa.large_string())).to_numpy()
        st["flags"][planted.rows] |= EventFlag.PLANTED

    call_like = (st["kind"] == EventKind.TOOL_CALL) | (st["kind"] == EventKind.TOOL_RESULT)
    turn_str = pc.cast(pa.array(st["turn"]), pa.string())
    call_id = pc.if_else(pa.array(call_like), pc.binary_join_element_wise("call_", turn_str, ""),
                         pa.scalar(None, pa.string()))
    tool_names = ("bash", "str_replace_editor", "read_file", "grep", "run_tests")
    name = pc.if_else(pa.array(st["kind"] == EventKind.TOOL_CALL),
                      pa.array(tool_names).take(pa.array(np.maximum(st["turn"], 0) % len(tool_names))),
                      pa.scalar(None, pa.string()))

    cols = {
        "continuity": np.zeros(n, np.int32), "seq": st["seq"], "kind": st["kind"],
        "role": st["role"], "origin": st["origin"], "actor": st["actor"], "flags": st["flags"],
        "request": st["request"], "pair_seq": st["pair_seq"], "ts_ms": st["ts_ms"],
        "chars": chars,
    }
    sentinel_cols = ("usage_input", "usage_cache_read", "usage_cache_write", "usage_output",
                     "compact_pre_tokens")
    schema = events_schema(cfg.tokenizers)
    arrays = []
    for f in schema:
        if f.name in cols:
            arrays.append(pa.array(cols[f.name], type=f.type))
        elif f.name in token_cols:
            arrays.append(pa.array(token_cols[f.name], type=f.type))
        elif f.name in sentinel_cols or f.name in ("source_file", "source_line"):
            arrays.append(pa.array(np.full(n, -1, dtype=f.type.to_pandas_dtype())))
        elif f.name == "compact_trigger":
            arrays.append(pa.array(np.zeros(n, np.int8)))
        elif f.name == "call_id":
            arrays.append(call_id)
        elif f.name == "name":
            arrays.append(name)
        elif f.name == "text":
            arrays.append(text)
        else:  # message_id, raw: synthetic events have no source record
            arrays.append(pa.nulls(n, f.type))
    events = pa.Table.from_arrays(arrays, schema=schema)
    return SyntheticContinuity(events=events, facts=planted.facts, secrets=planted.secrets,
                               actors=st["actors"], config=cfg, text_mode=text_mode)


def generate_dataset(cfg: GeneratorConfig, out: str | Path, *, progress: bool = False,
                     force: bool = False):
    """Generate and write a dataset; returns the loaded :class:`Dataset`. ``out`` may be
    new, empty or a dataset the workbench wrote (checked before any work)."""
    from workbench.rundir import Kind, check_output, exclusive

    check_output(out, Kind.DATASET, force=force)
    with exclusive(out):
        return _generate(cfg.resolved(), out, force)


def _generate(cfg: GeneratorConfig, out: str | Path, force: bool):

    import pyarrow as pa

    from workbench.continuity.dataset import write_dataset

    parts = build_continuities(cfg)
    k = len(parts)
    continuities = pa.table({
        "continuity": pa.array(range(k), pa.int32()),
        "continuity_id": [c.config.continuity_id for c in parts],
        "parent": pa.array([-1] * k, pa.int32()),
        "source_format": ["synthetic"] * k,
        "source_file": pa.array([None] * k, pa.string()),
        "profile": [cfg.profile] * k,
        "model": ["claude-sonnet-4-5"] * k,
        "provider": ["anthropic"] * k,
        "context_window": pa.array([200_000] * k, pa.int64()),
        "n_events": pa.array([c.events.num_rows for c in parts], pa.int64()),
    })
    text_modes = sorted({c.text_mode for c in parts})
    return write_dataset(
        out, events=pa.concat_tables([c.events for c in parts]), continuities=continuities,
        tokenizers=list(cfg.tokenizers),
        source={"format": "synthetic", "generator": _generator_record(cfg),
                "profile_description": PROFILES[cfg.profile].description},
        facts=pa.concat_tables([c.facts for c in parts]), secrets=pa.concat_tables([c.secrets for c in parts]),
        extra={"actors": parts[0].actors, "text": text_modes[0] if len(text_modes) == 1 else "mixed"},
        force=force,
    )


def build_continuities(cfg: GeneratorConfig) -> list[SyntheticContinuity]:
    """The dataset's continuities: one of ``cfg.events`` events, or ``cfg.continuities``
    task-sized ones (one episode each, structure seeded per task, one shared text pool),
    numbered 0.. in the ``continuity`` columns of events and label tables."""
    import pyarrow as pa

    asked, cfg = cfg, cfg.resolved()
    if cfg.continuities == 1:
        return [build_continuity(cfg)]

    def numbered(table, i):
        at = table.schema.get_field_index("continuity")
        return table.set_column(at, table.schema.field(at),
                                pa.array(np.full(table.num_rows, i), table.schema.field(at).type))

    parts = []
    for i in range(cfg.continuities):
        # label counts left unset scale with each task's own length
        sub = replace(asked, seed=task_seed(cfg.seed, i), tokenizers=cfg.tokenizers, continuities=1,
                      continuity_id=f"{cfg.continuity_id}-t{i:04d}")
        c = build_continuity(sub, episodes=1, pool_seed=cfg.seed)
        c.events, c.facts, c.secrets = numbered(c.events, i), numbered(c.facts, i), numbered(c.secrets, i)
        parts.append(c)
    return parts
