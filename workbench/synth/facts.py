"""Planted facts: short statements a later probe can check for survival.

``plant_fact(rng, fact_no)`` draws one fact of a kind chosen round-robin by ``fact_no``
(so every kind appears in small plans), writes it as a transcript sentence and returns a
:class:`PlantedFact` whose ``answer`` is the exact substring ``text[start:end]`` that must
survive compaction for the probe to be answerable. Answers are distinctive (dates, ports,
full names, codenames, paths, numbers with units removed) and never secret-shaped, so a
redactor must leave them alone.

>>> import numpy as np
>>> f = plant_fact(np.random.default_rng(3), 0)
>>> f.text[f.start:f.end] == f.answer
True
>>> plant_fact(np.random.default_rng(3), 0) == f
True
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

Rng = np.random.Generator


@dataclass(frozen=True)
class PlantedFact:
    fact_id: str
    kind: str
    text: str
    start: int
    end: int
    probe: str   # a question whose answer is ``answer``
    answer: str  # the exact string that must survive


def _pick(rng: Rng, seq):
    return seq[int(rng.integers(len(seq)))]


_FIRST = ("Alice", "Bogdan", "Chiara", "Dmitri", "Esther", "Farid", "Greta", "Hiroshi", "Ines",
          "Jonas", "Kemi", "Lucía", "Mateo", "Nadia", "Oskar", "Priya", "Quentin", "Rosa")
_LAST = ("Moreau", "Okafor", "Lindqvist", "Tanaka", "Haddad", "Kowalski", "Brennan", "Duarte",
         "Nakamura", "Osei", "Varga", "Whitfield", "Ibarra", "Castellano")
_PROJECTS = ("billing-service migration", "search reindex", "checkout v2 rollout",
             "ledger sync rewrite", "SSO cutover", "Postgres 16 upgrade", "mobile push pipeline",
             "data retention job")
_CODE_A = ("Copper", "Silent", "Amber", "Northern", "Glass", "Paper", "Iron", "Velvet", "Hollow",
           "Crimson", "Quiet", "Salt")
_CODE_B = ("Finch", "Harbor", "Lantern", "Otter", "Meridian", "Kestrel", "Orchard", "Comet",
           "Thistle", "Beacon", "Marlin", "Juniper")
_ENVS = ("staging", "production", "qa", "canary", "dev")
_SYSTEMS = ("database", "Redis cache", "metrics gateway", "message broker", "admin API")
_DIRS = ("src/billing", "services/ledger", "pkg/scheduler", "app/models", "lib/ingest",
         "internal/auth", "web/src/checkout", "tools/migrations")
_FILES = ("retry_policy.py", "rate_limiter.go", "invoice_totals.ts", "cutover_plan.md",
          "schema_v7.sql", "feature_flags.yaml", "backfill_job.rs", "pricing_rules.json")
_CONSTS = (("request timeout", "ms", 800, 9000), ("batch size", "rows", 200, 5000),
           ("retry limit", "attempts", 3, 12), ("cache TTL", "seconds", 60, 7200),
           ("rate limit", "requests per minute", 120, 2400), ("max upload size", "MB", 16, 512))
_MONTHS = ("01", "02", "03", "04", "05", "06", "07", "08", "09", "10", "11", "12")


def _date(rng: Rng) -> str:
    return f"2026-{_pick(rng, _MONTHS)}-{int(rng.integers(1, 29)):02d}"


def _name(rng: Rng) -> str:
    return f"{_pick(rng, _FIRST)} {_pick(rng, _LAST)}"


def _fact_date(rng):
    d = _date(rng)
    what, question = _pick(rng, (
        ("deploy freeze starts", "When does the deploy freeze start?"),
        ("contract with the CDN vendor ends", "When does the contract with the CDN vendor end?"),
        ("SOC 2 audit fieldwork begins", "When does the SOC 2 audit fieldwork begin?"),
        ("old billing API is switched off", "When is the old billing API switched off?"),
    ))
    t = _pick(rng, (f"Heads up: the {what} on {{A}}, so plan merges accordingly.",
                    f"Per the ops calendar, the {what} on {{A}}."))
    return t, d, question


def _fact_port(rng):
    port = str(int(rng.integers(1025, 65000)))
    env, system = _pick(rng, _ENVS), _pick(rng, _SYSTEMS)
    t = _pick(rng, (f"Note that the {env} {system} port is {{A}}, not the default.",
                    f"The {env} {system} listens on port {{A}} behind the bastion."))
    return t, port, f"Which port does the {env} {system} use?"


def _fact_owner(rng):
    who, proj = _name(rng), _pick(rng, _PROJECTS)
    t = _pick(rng, (f"{{A}} owns the {proj}; route questions to them.",
                    f"For the {proj}, the owner is {{A}} (on call this week too)."))
    return t, who, f"Who owns the {proj}?"


def _fact_codename(rng):
    code = f"{_pick(rng, _CODE_A)} {_pick(rng, _CODE_B)}"
    proj = _pick(rng, _PROJECTS)
    t = _pick(rng, (f"Internally the {proj} is codenamed {{A}}; use that in ticket titles.",
                    f"Reminder: the codename for the {proj} is {{A}}."))
    return t, code, f"What is the codename of the {proj}?"


def _fact_path(rng):
    path = f"{_pick(rng, _DIRS)}/{_pick(rng, _FILES)}"
    topic = _pick(rng, ("the retry logic", "the cutover checklist", "the rate limiter",
                        "the pricing rules", "the backfill job"))
    t = _pick(rng, (f"The source of truth for {topic} is {{A}}, edit only that file.",
                    f"I moved {topic} into {{A}} during the refactor."))
    return t, path, f"Which file holds {topic}?"


def _fact_constant(rng):
    name, unit, lo, hi = _pick(rng, _CONSTS)
    val = str(int(rng.integers(lo, hi)))
    svc = _pick(rng, ("ingest worker", "public API", "export service", "search backend"))
    t = _pick(rng, (f"We agreed to set the {svc} {name} to {{A}} {unit}.",
                    f"Decision: {svc} {name} = {{A}} {unit} until the load test is done."))
    return t, val, f"What is the {svc} {name} (in {unit})?"


def _fact_version(rng):
    ver = f"{int(rng.integers(1, 6))}.{int(rng.integers(0, 20))}.{int(rng.integers(0, 30))}"
    lib = _pick(rng, ("the payments SDK", "protobuf", "the internal auth client", "OpenSSL"))
    t = f"Pin {lib} to version {{A}}; newer releases break the build."
    return t, ver, f"Which version of {lib} must be pinned?"


def _fact_ticket(rng):
    ticket = f"{_pick(rng, ('OPS', 'BILL', 'SRCH', 'SEC', 'PLAT'))}-{int(rng.integers(100, 9999))}"
    what = _pick(rng, ("the flaky checkout test", "the memory leak in the worker",
                       "the expired TLS certificate", "the duplicate invoice bug"))
    t = f"Track {what} under {{A}} so the postmortem can link it."
    return t, ticket, f"Which ticket tracks {what}?"


def _fact_host(rng):
    host = (f"{_pick(rng, ('db', 'cache', 'mq', 'search', 'etl'))}-"
            f"{_pick(rng, _ENVS)}-{int(rng.integers(1, 40))}.acme.internal")
    role = _pick(rng, ("primary replica", "failover target", "batch runner", "bastion"))
    t = f"The current {role} is {{A}}; do not reboot it during business hours."
    return t, host, f"Which host is the current {role}?"


FACT_KINDS: dict[str, Callable[[Rng], tuple[str, str, str]]] = {
    "date": _fact_date,
    "port": _fact_port,
    "owner": _fact_owner,
    "codename": _fact_codename,
    "file_path": _fact_path,
    "numeric_constant": _fact_constant,
    "version": _fact_version,
    "ticket": _fact_ticket,
    "hostname": _fact_host,
}


def plant_fact(rng: Rng, fact_no: int, kind: str | None = None) -> PlantedFact:
    """Fact number ``fact_no`` (kind round-robin unless given), deterministic in ``rng``."""
    kinds = tuple(FACT_KINDS)
    kind = kind or kinds[fact_no % len(kinds)]
    template, answer, probe = FACT_KINDS[kind](rng)
    start = template.index("{A}")
    text = template.replace("{A}", answer)
    return PlantedFact(fact_id=f"fact-{fact_no:05d}", kind=kind, text=text, start=start,
                       end=start + len(answer), probe=probe, answer=answer)
