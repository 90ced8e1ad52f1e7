"""What every RFC 0012 conformance scenario shares: its names, its result, and the gate
that skips it when the host does not advertise compaction."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from workbench.conformance.capability import compaction_supported, host_caps_for_policy
from workbench.errors import WorkbenchError

PASS, FAIL, SKIP = "pass", "fail", "skip"
EVENT_EMITTED = "memory-compaction-event-emitted"
SR1_CARRY_FORWARD = "memory-compaction-sr1-carry-forward"
PROVENANCE_TAG = "memory-compaction-provenance-tag"
SCENARIOS = (EVENT_EMITTED, SR1_CARRY_FORWARD, PROVENANCE_TAG)
MAX_LISTED = 20  # problems listed in details (the count is always exact)


@dataclass
class ScenarioResult:
    name: str
    status: str  # pass | fail | skip
    details: dict[str, Any] = field(default_factory=dict)
    policy: str | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.status == PASS

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _policy_obj(policy, config: Mapping[str, Any] | None = None):
    from workbench.engine.policy import Policy
    from workbench.engine.presets import get_policy

    if policy is None or isinstance(policy, Policy):
        return policy
    name = str(policy)
    if config:
        try:
            return Policy.from_dict(config["policies"][name]["policy"])
        except (KeyError, TypeError):
            pass
    try:
        return get_policy(name)
    except WorkbenchError as exc:
        raise WorkbenchError(f"{exc} — for a renamed or custom policy pass config= (the run's "
                             "SimulationResult.config) or host_caps=") from None


def _policy_name(policy) -> str | None:
    return None if policy is None else getattr(policy, "name", str(policy))


def _gate(name: str, policy, host_caps, config) -> tuple[Mapping[str, Any] | None, ScenarioResult | None]:
    """The host caps to use, or a skip result when compaction is not advertised."""
    pname = _policy_name(policy)
    if host_caps is None:
        pol = _policy_obj(policy, config)
        if pol is None:
            return None, None  # ungated (no policy, no host document)
        host_caps = host_caps_for_policy(pol)
    if not compaction_supported(host_caps):
        return host_caps, ScenarioResult(name, SKIP, {"reason": "capability",
                                                      "message": "host does not advertise "
                                                      "capabilities.memory.compaction.supported: true"},
                                         pname)
    return host_caps, None


