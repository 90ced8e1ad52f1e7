"""Conformance checks: RFC 0012 (memory compaction profile), RIP ADR-0011 (deterministic cut
points) and RFC 0080 (memory capability model) over the workbench's simulated runs.

* :mod:`~workbench.conformance.schemas` — JSON Schemas (draft 2020-12) of the wire shapes,
  ``validate(kind, obj)``, ``to_wire(row)`` for ``events.parquet`` rows;
* :mod:`~workbench.conformance.invariants` — ADR-0011 / RFC 0012 invariants on every run:
  ``check_invariants(events, dataset_events)`` -> findings frame + pass/fail;
* :mod:`~workbench.conformance.two_layer` — the two compaction layers' rules (Holon's
  provider window vs local checkpoint), each with the items it examined;
* :mod:`~workbench.conformance.scenarios` — the three RFC 0012 conformance scenarios
  (event emitted + outputId readable, SR-1 carry-forward, provenance tag);
* :mod:`~workbench.conformance.capability` — RFC 0080's eight dimensions, the degraded
  projection, host profiles and the host × memoryShape degraded matrix.
"""

from workbench.conformance.capability import (
    DIMENSIONS,
    HOST_PROFILES,
    MEMORY_SHAPES,
    degraded_matrix,
    degraded_projection,
    dimensions,
    host_caps_for_policy,
)
from workbench.conformance.invariants import InvariantReport, check_invariants, check_result
from workbench.conformance.scenarios import (
    ScenarioResult,
    run_scenarios,
    scenario_event_emitted,
    scenario_provenance_tag,
    scenario_sr1_carry_forward,
    scenarios_frame,
)
from workbench.conformance.schemas import to_wire, validate

__all__ = [
    "DIMENSIONS", "HOST_PROFILES", "MEMORY_SHAPES", "InvariantReport", "ScenarioResult",
    "check_invariants", "check_result", "degraded_matrix", "degraded_projection", "dimensions",
    "host_caps_for_policy", "run_scenarios", "scenario_event_emitted", "scenario_provenance_tag",
    "scenario_sr1_carry_forward", "scenarios_frame", "to_wire", "validate",
]
