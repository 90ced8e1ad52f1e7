import orjson
import pyarrow as pa
import pytest

from workbench.continuity.dataset import load_dataset, write_dataset
from workbench.continuity.enums import EventFlag, EventKind
from workbench.errors import DatasetError, ValidationError
from workbench.synth.generate import GeneratorConfig, build_continuity, generate_dataset


def _continuities(n):
    return pa.table({"continuity": pa.array([0], pa.int32()), "continuity_id": ["c"],
                     "parent": pa.array([-1], pa.int32()), "source_format": ["test"],
                     "context_window": pa.array([-1], pa.int64()), "n_events": pa.array([n], pa.int64())})


def _events(**overrides):
    c = build_continuity(GeneratorConfig(profile="chat", events=50, seed=1, facts=0, secrets=0, hard_negatives=0))
    t = c.events
    for name, values in overrides.items():
        t = t.set_column(t.column_names.index(name), name, pa.array(values, t.schema.field(name).type))
    return t


def test_manifest_records_source_files_counts_tokenizers_and_version(tmp_path):
    ds = generate_dataset(GeneratorConfig(profile="chat", events=500, seed=1), tmp_path / "d")
    m = orjson.loads((ds.path / "manifest.json").read_bytes())
    assert m["schema_version"] == 1
    assert m["tokenizers"] == ["cl100k", "approx"]
    assert set(m["files"]) == {"events.parquet", "continuities.parquet", "facts.parquet", "secrets.parquet"}
    assert all(len(f["sha256"]) == 64 for f in m["files"].values())
    assert m["counts"]["events"] == 500
    assert m["source"]["format"] == "synthetic"
    assert m["source"]["generator"]["seed"] == 1


def test_seq_must_strictly_increase(tmp_path):
    seq = list(range(50))
    seq[10] = seq[9]
    with pytest.raises(ValidationError, match="strictly increasing.*row 10"):
        write_dataset(tmp_path / "x", events=_events(seq=seq), continuities=_continuities(50),
                      tokenizers=["cl100k", "approx"], source={"format": "test"})
    assert not (tmp_path / "x").exists()  # nothing half-written


def test_unknown_kinds_are_rejected_and_opaque_is_fine(tmp_path):
    kinds = _events().column("kind").to_pylist()
    kinds[3] = 99
    with pytest.raises(ValidationError, match="unknown event kind code 99"):
        write_dataset(tmp_path / "x", events=_events(kind=kinds), continuities=_continuities(50),
                      tokenizers=["cl100k", "approx"], source={"format": "test"})
    kinds[3] = EventKind.OPAQUE
    write_dataset(tmp_path / "y", events=_events(kind=kinds), continuities=_continuities(50),
                  tokenizers=["cl100k", "approx"], source={"format": "test"})


def test_unpaired_tool_events_must_be_flagged_and_are_counted(tmp_path):
    t = _events()
    kinds = t.column("kind").to_pylist()
    flags = t.column("flags").to_pylist()
    pair = t.column("pair_seq").to_pylist()
    assert kinds[5] == EventKind.MESSAGE and pair[5] == -1
    kinds[5] = EventKind.TOOL_CALL
    with pytest.raises(ValidationError, match="UNPAIRED"):
        write_dataset(tmp_path / "x", events=_events(kind=kinds, pair_seq=pair, flags=flags),
                      continuities=_continuities(50), tokenizers=["cl100k", "approx"], source={"format": "test"})
    flags[5] |= EventFlag.UNPAIRED
    ds = write_dataset(tmp_path / "y", events=_events(kind=kinds, pair_seq=pair, flags=flags),
                       continuities=_continuities(50), tokenizers=["cl100k", "approx"], source={"format": "test"})
    assert ds.manifest["validation"]["unpaired_calls"] >= 1
    assert ds.events().height == 50  # flagged, never dropped


def test_loading_errors_name_the_problem(tmp_path):
    with pytest.raises(DatasetError, match="not a dataset"):
        load_dataset(tmp_path)
    ds = generate_dataset(GeneratorConfig(profile="chat", events=100, seed=1), tmp_path / "d")
    m = orjson.loads((ds.path / "manifest.json").read_bytes())
    m["schema_version"] = 99
    (ds.path / "manifest.json").write_bytes(orjson.dumps(m))
    with pytest.raises(DatasetError, match="schema_version 99"):
        load_dataset(ds.path)
