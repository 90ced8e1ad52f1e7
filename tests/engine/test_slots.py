"""The kernel's state vector is declared once (``enums.ConfigSlots``/``StateSlots``/
``PromptSlots``): offsets derived from the declaration, no two slots sharing a cell, every
slot documented, and no module numbering slots by hand."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from workbench.engine import enums as E
from workbench.engine.enums import (
    KEY_BASE,
    KEY_SIZE,
    N_AFTER,
    N_CACHE_KEYS,
    N_CFG,
    N_PARAMS,
    N_SHOWN,
    N_STATE,
    After,
    AfterColumns,
    Cfg,
    ConfigSlots,
    Param,
    ParamSlots,
    Prev,
    PromptSlots,
    Shown,
    ShownColumns,
    State,
    StateSlots,
    slot_meanings,
)

ENGINE = Path(E.__file__).parent


def _cells() -> dict[int, str]:
    """Every cell of the state vector -> the one slot that owns it (fails on a shared cell)."""
    owner: dict[int, str] = {}
    named = [(f"Cfg.{n}", v) for n, v in Cfg._asdict().items()]
    named += [(f"State.{n}", v) for n, v in State._asdict().items()]
    named += [(f"Prev[{k}].{n}", KEY_BASE + k * KEY_SIZE + v)
              for k in range(N_CACHE_KEYS) for n, v in Prev._asdict().items()]
    for name, cell in named:
        assert cell not in owner, f"{name} and {owner[cell]} share cell {cell}"
        owner[cell] = name
    return owner


def test_every_cell_has_one_owner_and_none_is_left_over():
    owner = _cells()
    assert sorted(owner) == list(range(N_STATE))


def test_offsets_follow_the_declaration():
    assert list(Cfg) == list(range(len(ConfigSlots._fields))) and len(Cfg) == N_CFG
    assert list(State) == list(range(N_CFG, N_CFG + len(StateSlots._fields)))
    assert State[-1] + 1 == KEY_BASE
    assert list(Prev) == list(range(len(PromptSlots._fields))) and len(Prev) == KEY_SIZE


def test_every_slot_has_a_one_line_meaning():
    for slots in (ConfigSlots, ParamSlots, StateSlots, PromptSlots, ShownColumns, AfterColumns):
        meanings = slot_meanings(slots)
        assert list(meanings) == list(slots._fields)
        for name, text in meanings.items():
            assert len(text.split()) >= 3 and "\n" not in text, f"{slots.__name__}.{name}: {text!r}"


def test_the_kernel_reads_the_state_vector_only_through_the_declaration():
    """A hand-numbered slot list (``(C_X, ...) = range(51)``) or a typed-in offset would let
    two slots share a cell again; the engines import the declared names instead."""
    for module in ("kernel_nb.py", "kernel.py"):
        source = (ENGINE / module).read_text()
        assert not re.search(r"\b(?:C|S|PK)_[A-Z][A-Z0-9_]*\b", source), module
        assert not re.search(r"^\s*(?:N_CFG|KEY_BASE|KEY_SIZE|N_STATE)\s*=", source, re.M), module


def test_the_lowering_fills_the_policy_slots_and_the_continuity_its_own():
    """``Policy.lower`` owns every configuration slot but the continuity's few
    (``kernel.CONTINUITY_SLOTS``), which it leaves 0 and ``with_continuity`` fills."""
    import polars as pl

    from workbench.engine.kernel import CONTINUITY_SLOTS, positions, with_continuity
    from workbench.engine.policy import Lowered, Policy
    from workbench.engine.prepare import prepare_continuity
    from workbench.synth.generate import GeneratorConfig, build_continuity

    c = build_continuity(GeneratorConfig(events=200, seed=3, facts=0, secrets=0, hard_negatives=0))
    inp = prepare_continuity(pl.from_arrow(c.events), continuity=0, continuity_id="x", tokenizer="cl100k")
    lowered = Policy("raw").lower(200_000, 1, 300_000.0, 1)
    assert isinstance(lowered, Lowered)
    assert lowered.cfg.shape == (N_CFG,) and lowered.cfg.dtype == np.int64
    assert lowered.params.shape == (N_PARAMS,) and lowered.params.dtype == np.float64
    assert not lowered.cfg[list(CONTINUITY_SLOTS)].any()
    cfg = with_continuity(lowered.cfg, positions(inp, False), 123)
    assert cfg[Cfg.PREFIX_TOKENS] == 123 and cfg[Cfg.FIRST_USER] == -1 and cfg[Cfg.TOKENS_NONNEG] == 1
    others = [i for i in range(N_CFG) if i not in CONTINUITY_SLOTS]
    assert np.array_equal(cfg[others], lowered.cfg[others])  # the policy's slots as lowered


def test_the_real_valued_slots_are_declared_once():
    assert list(Param) == list(range(len(ParamSlots._fields))) and len(Param) == N_PARAMS
    assert len(set(Param)) == N_PARAMS  # no two slots share a cell
    meanings = slot_meanings(ParamSlots)
    assert list(meanings) == list(ParamSlots._fields)
    assert all(len(text.split()) >= 3 for text in meanings.values())


def test_no_module_numbers_policy_slots_by_hand():
    """The policy's slots were hand-numbered ``K_*``/``P_*`` (``= range(41)``) and lowered a
    second time into the configuration; both engines now read the one declaration."""
    for path in ENGINE.glob("*.py"):
        source = path.read_text()
        assert not re.search(r"\b(?:K|P)_[A-Z][A-Z0-9_]*\b", source), path.name
        assert "N_KINDS" not in source, path.name
    assert not re.search(r"= range\(\d+\)", (ENGINE / "enums.py").read_text())


def test_the_prompt_record_columns_follow_their_declarations():
    """The record's call and event columns (kernel_nb writes them after the ledger's and the
    event's columns) are numbered from their declarations, one cell each."""
    assert list(Shown) == list(range(len(ShownColumns._fields))) == list(range(N_SHOWN))
    assert list(After) == list(range(len(AfterColumns._fields))) == list(range(N_AFTER))
