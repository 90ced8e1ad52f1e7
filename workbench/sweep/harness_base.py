"""The pieces every harness snippet is built from (:mod:`workbench.sweep.harness_config`
renders them): keys with their provenance, code blocks, and the threshold helpers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Key:
    name: str
    value: Any
    provenance: str  # documented | source | inferred
    where: str  # the file / API / environment it goes to


@dataclass(frozen=True)
class Block:
    format: str  # toml | json | yaml | shell | python | http
    title: str
    text: str


@dataclass
class HarnessSnippet:
    harness: str
    blocks: list[Block] = field(default_factory=list)
    keys: list[Key] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def text(self) -> str:
        out = [f"# {self.harness}: the chosen thresholds in its own keys"]
        for b in self.blocks:
            out += ["", f"## {b.title} ({b.format})", b.text.rstrip()]
        if self.keys:
            out += ["", "## provenance"]
            out += [f"- {k.name} = {k.value!r}: {k.provenance} ({k.where})" for k in self.keys]
        if self.notes:
            out += ["", "## notes"] + [f"- {n}" for n in self.notes]
        return "\n".join(out) + "\n"


def threshold_of(policy, window: int) -> int | None:
    t = policy.trigger
    if t.kind != "tokens":
        return None
    return int(t.threshold(window))


def not_tokens(policy, harness: str) -> str:
    return (f"the policy's trigger is {policy.trigger.rule_id()}, not a token threshold; {harness} "
            "only takes a token threshold, so nothing below reproduces it")


def never_compacts(policy) -> bool:
    """The policy never compacts (no trigger, or nothing replaces the span)."""
    return policy.trigger.kind == "none" or policy.compaction.kind == "none"


def threshold_fraction(policy, threshold: int, window: int) -> float:
    """The threshold as a share of the window: the policy's own fraction when it has one (no
    rounding through tokens), else threshold / window to 4 places."""
    t = policy.trigger
    if t.fraction and not t.tokens:
        return float(t.fraction)
    return round(threshold / window, 4)


def whole_prompt_notes(policy, harness: str) -> list[str]:
    """A note when the policy's threshold counts only the body but the harness counts the
    whole prompt (no scope key)."""
    if policy.trigger.scope != "body":
        return []
    return [f"the policy's threshold counts the prompt body only (trigger.scope = body); {harness} compares "
            "its threshold with the whole prompt and has no key to change that, so it compacts earlier"]


# ---- harnesses ----------------------------------------------------------------------------------
