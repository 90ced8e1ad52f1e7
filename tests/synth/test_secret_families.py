"""The generator option that plants the vendor families of docs/redaction-coverage.md: off
by default (every dataset draws what it drew before), on with ``secret_families="all"``."""

from __future__ import annotations

import pytest

from workbench.errors import WorkbenchError
from workbench.synth.generate import GeneratorConfig, _generator_record, build_continuity
from workbench.synth.secrets.negatives import NEGATIVE_KINDS
from workbench.synth.secrets.registry import SECRET_FORMATS
from workbench.synth.secrets.vendors import VENDOR_FORMATS, VENDOR_NEGATIVE_KINDS


def _kinds(cfg: GeneratorConfig) -> tuple[set[str], set[str]]:
    t = build_continuity(cfg).secrets.to_pydict()
    pos = {k for k, n in zip(t["kind"], t["negative"], strict=True) if not n}
    neg = {k for k, n in zip(t["kind"], t["negative"], strict=True) if n}
    return pos, neg


def test_default_plants_the_core_families_only():
    cfg = GeneratorConfig(events=1500, seed=3, secrets=300, hard_negatives=60)
    pos, neg = _kinds(cfg)
    assert pos <= set(SECRET_FORMATS) and neg <= set(NEGATIVE_KINDS)
    explicit = build_continuity(GeneratorConfig(events=1500, seed=3, secrets=300,
                                                hard_negatives=60, secret_families="core"))
    assert explicit.secrets.equals(build_continuity(cfg).secrets)
    assert "secret_families" not in _generator_record(cfg.resolved())


def test_all_plants_vendor_families_and_their_negatives():
    cfg = GeneratorConfig(events=1500, seed=3, secrets=300, hard_negatives=60,
                          secret_families="all")
    pos, neg = _kinds(cfg)
    assert len(pos & set(VENDOR_FORMATS)) > 20
    assert neg & set(VENDOR_NEGATIVE_KINDS)
    assert _generator_record(cfg.resolved())["secret_families"] == "all"


def test_unknown_family_set_is_refused():
    with pytest.raises(WorkbenchError, match="secret_families"):
        GeneratorConfig(secret_families="vendors").resolved()
