import numpy as np
import polars as pl
import pyarrow.parquet as pq
import pytest

from workbench.continuity.enums import EventFlag, EventKind, Role
from workbench.errors import WorkbenchError
from workbench.synth.generate import GeneratorConfig, build_continuity, generate_dataset
from workbench.synth.secrets import json_unescape
from workbench.util.atomic import sha256_file


def frame(profile, events, seed=0, **kw):
    c = build_continuity(GeneratorConfig(profile=profile, events=events, seed=seed, **kw))
    return c, pl.from_arrow(c.events)


def test_same_seed_same_bytes(tmp_path):
    cfg = GeneratorConfig(profile="multi-actor", events=3000, seed=42)
    a = generate_dataset(cfg, tmp_path / "a")
    b = generate_dataset(cfg, tmp_path / "b")
    for f in ("events.parquet", "facts.parquet", "secrets.parquet", "continuities.parquet"):
        assert sha256_file(a.path / f) == sha256_file(b.path / f), f
    c = generate_dataset(GeneratorConfig(profile="multi-actor", events=3000, seed=43), tmp_path / "c")
    assert sha256_file(a.path / "events.parquet") != sha256_file(c.path / "events.parquet")


def test_coding_profile_is_shaped_like_swe_agent_runs():
    _, df = frame("coding", 30_000, seed=7, facts=0, secrets=0, hard_negatives=0)
    visible = df.filter(pl.col("kind") != EventKind.SIDE_EFFECT)
    share = visible.filter(pl.col("kind") == EventKind.TOOL_RESULT)["tokens_cl100k"].sum() / visible["tokens_cl100k"].sum()
    assert 0.80 <= share <= 0.88, share  # observations ~84% of tokens
    # episodes: a user task, 40-250 tool turns, a final answer
    tasks = np.flatnonzero((df["kind"] == EventKind.MESSAGE).to_numpy() & (df["role"] == Role.USER).to_numpy())
    calls = np.cumsum((df["kind"] == EventKind.TOOL_CALL).to_numpy())
    turns_per_task = np.diff(calls[tasks])
    assert turns_per_task.min() >= 40 * 0.9 and turns_per_task.max() <= 250


def test_long_running_profile_is_dense_with_side_effects():
    _, df = frame("long-running", 20_000, seed=3, facts=0, secrets=0, hard_negatives=0)
    kinds = df["kind"].to_numpy()
    assert (kinds == EventKind.SIDE_EFFECT).mean() > 0.6
    assert (kinds == EventKind.MEMORY_WRITE).sum() > 10
    # side effects never start requests
    assert (df.filter(pl.col("kind") == EventKind.SIDE_EFFECT)["request"] == -1).all()


def test_multi_actor_profile_has_several_people_and_agents():
    c, df = frame("multi-actor", 10_000, seed=5, facts=0, secrets=0, hard_negatives=0)
    users = df.filter(pl.col("role") == Role.USER)["actor"].unique().to_list()
    agents = df.filter(pl.col("role") == Role.ASSISTANT)["actor"].unique().to_list()
    assert len(users) == 3 and len(agents) == 2
    assert set(c.actors) >= {"alice", "bob", "carol", "planner", "coder", "summarizer"}


def test_timestamps_have_gaps_that_matter_for_cache_ttls():
    _, df = frame("coding", 20_000, seed=11, facts=0, secrets=0, hard_negatives=0)
    ts = df["ts_ms"].to_numpy()
    gaps = np.diff(ts)
    assert (gaps >= 0).all()
    assert (gaps > 300_000).sum() >= 5  # beyond Anthropic's 5-minute TTL
    assert (gaps > 3_600_000).sum() >= 1  # beyond the 1-hour TTL


def test_tool_pairs_and_an_occasional_unpaired_tail():
    _, df = frame("coding", 20_000, seed=2, facts=0, secrets=0, hard_negatives=0)
    calls = df.filter(pl.col("kind") == EventKind.TOOL_CALL)
    paired = calls.filter(pl.col("pair_seq") >= 0)
    unpaired = calls.filter((pl.col("flags") & EventFlag.UNPAIRED) != 0)
    assert unpaired.height >= 1 and paired.height > 0.95 * calls.height
    results = df.filter(pl.col("kind") == EventKind.TOOL_RESULT)
    assert (results["pair_seq"] < results["seq"]).all()
    # a pair shares its call id
    by_seq = dict(zip(df["seq"].to_list(), df["call_id"].to_list(), strict=True))
    assert all(by_seq[s] == by_seq[p] for s, p in zip(paired["seq"], paired["pair_seq"], strict=True))


def test_planted_labels_point_at_their_text(tmp_path):
    ds = generate_dataset(GeneratorConfig(profile="coding", events=40_000, seed=9), tmp_path / "d")
    text = ds.events(columns=["text"])["text"]
    facts = ds.facts()
    assert facts.height >= 10
    for r in facts.iter_rows(named=True):
        assert text[r["seq"]][r["start"]:r["end"]] == r["answer"]
    secrets = ds.secrets()
    plain = secrets.filter(pl.col("transform") == "none")
    assert plain.height > 0
    for r in plain.iter_rows(named=True):
        surface = text[r["seq"]][r["start"]:r["end"]]
        # (in a JSON string the label spans the escaped value: a PEM block's \n escapes)
        assert r["value"] in surface or surface in r["value"] or json_unescape(surface) == r["value"]
    split = secrets.filter(pl.col("transform") == "split_messages")
    assert split.height % 2 == 0 and set(split["part"].to_list()) <= {1, 2}
    assert secrets.filter(pl.col("negative")).height >= 10
    counts = ds.manifest["counts"]
    assert counts["secrets"] == secrets.filter(~pl.col("negative"))["secret_id"].n_unique()
    flagged = ds.events(columns=["flags"])["flags"].to_numpy() & EventFlag.PLANTED
    assert set(np.flatnonzero(flagged)) == set(facts["seq"].to_list()) | set(secrets["seq"].to_list())


def test_a_million_events_round_trip_through_parquet(tmp_path):
    cfg = GeneratorConfig(profile="coding", events=1_000_000, seed=1)
    c = build_continuity(cfg)
    ds = generate_dataset(cfg, tmp_path / "big")
    back = pq.read_table(ds.path / "events.parquet")
    assert back.num_rows == 1_000_000
    assert back.equals(c.events)
    assert ds.manifest["text"] == "full"


def test_labels_only_mode_keeps_text_only_where_planted():
    c, df = frame("chat", 5000, seed=1, text="labels-only")
    has_text = df["text"].is_not_null().to_numpy()
    planted = (df["flags"].to_numpy() & EventFlag.PLANTED) != 0
    assert (has_text == planted).all() and planted.any()
    # token counts exist for every event
    assert (df["tokens_cl100k"] > 0).sum() > 0.99 * df.height


def test_bad_configs_are_clear_errors():
    with pytest.raises(WorkbenchError, match="unknown profile"):
        GeneratorConfig(profile="poetry").resolved()
    with pytest.raises(WorkbenchError, match="at least 2"):
        GeneratorConfig(events=1).resolved()


def test_string_gather_kernel_matches_its_twin():
    import numpy as np

    from workbench.synth.gather_nb import gather_strings, gather_strings_py

    pool = ["", "a", "héllo wörld", "x" * 1000, "🙂 emoji"]
    idx = np.random.default_rng(0).integers(0, len(pool), 500)
    assert gather_strings(pool, idx).to_pylist() == gather_strings_py(pool, idx)
