"""Harness calibration profiles: ``recorded ≈ a + b·counted`` pooled per harness × model family.

A continuity's own line (:mod:`workbench.sources.calibrate`) needs enough requests with
recorded usage; a profile pools the lines of every log of one harness and model family so
that a short log, a log without usage, or a generated continuity replayed "as Claude Code
would send it" can be accounted in provider tokens too (:mod:`workbench.engine.accounting`).

* ``a`` (``prefix_tokens``): what the harness sends that the log does not hold (system
  prompt, tool schemas); ``b`` (``factor``): the provider's tokens per counted token.
* Each log weighs the same in a pooled fit, whatever its number of requests (Huber IRLS).
* Out of sample: every log is also predicted by the profile fitted **without** it (its
  family without it, else its harness without it): ``loo`` in the file, printed by
  ``workbench calibrate``. A log alone in its harness has no out-of-sample figure.

The package ships the profiles fitted on ``datasets/bundled`` (:data:`PACKAGED`);
``workbench calibrate DATASET --out profile.json`` refits them on a team's own logs and
``workbench simulate --calibration profile.json`` uses them.

>>> model_family("claude-sonnet-4-5-20250929"), model_family("litellm_proxy/gpt-5.5")
('claude-sonnet-4', 'gpt-5')
>>> model_family(None)
'*'
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

from workbench.errors import WorkbenchError

SCHEMA = "workbench.calibration-profiles.v1"
PACKAGED = Path(__file__).with_name("calibration_profiles.json")
ANY = "*"  # the pooled profile of a harness (every family)
_FAMILY = (
    (re.compile(r"^claude-(opus|sonnet|haiku)-(\d+)"), "claude-{0}-{1}"),
    (re.compile(r"^claude-(\d+)(?:[-.]\d+)?-(opus|sonnet|haiku)"), "claude-{1}-{0}"),
    (re.compile(r"^(gpt|gemini|o)-?(\d+)"), "{0}-{1}"),
)


def model_family(model: str | None) -> str:
    """A model's tokenizer family: vendor line and major version (``*`` when unknown)."""
    if not model:
        return ANY
    name = model.rsplit("/", 1)[-1].lower()
    name = re.sub(r"-\d{8}$", "", name)
    for pattern, form in _FAMILY:
        m = pattern.match(name)
        if m:
            return form.format(*m.groups())
    return re.sub(r"[-.]?\d+([-.]\d+)*$", "", name) or ANY


def _points(ds, tokenizer: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    from workbench.sources.calibrate import calibration_points

    cols = ["continuity", "seq", "kind", "role", "origin", "flags", "request", "name", "usage_input",
            "usage_cache_read", "usage_cache_write", f"tokens_{tokenizer}"]
    events = ds.events(columns=cols).sort("continuity", "seq").to_arrow()
    conts = ds.continuities().sort("continuity")
    ids = conts["continuity_id"].to_list()
    by, _excluded = calibration_points(events, ids, tokenizer)
    return {ids[c]: (np.asarray(x, np.float64), np.asarray(y, np.float64)) for c, (x, y) in by.items()}


def _usable(report: dict[str, Any] | None) -> bool:
    """A log's points may join a profile: its own fit is a tokenizer line, or it is too
    short to fit one (its few points are still real); never a not-meaningful source."""
    status = (report or {}).get("status", "")
    return status == "ok" or status.startswith("too few requests")


def _fit(groups: dict[str, tuple[np.ndarray, np.ndarray]]) -> dict[str, Any] | None:
    from workbench.sources.calibrate import PLAUSIBLE_FACTOR, robust_line

    if not groups:
        return None
    xs = np.concatenate([x for x, _ in groups.values()])
    ys = np.concatenate([y for _, y in groups.values()])
    w = np.concatenate([np.full(x.size, 1.0 / x.size) for x, _ in groups.values()])
    if xs.size < 3:
        return None
    a, b = robust_line(xs, ys, weights=w)
    lo, hi = PLAUSIBLE_FACTOR
    if not (np.isfinite(a) and lo <= b <= hi):
        return None
    ape = np.abs(a + b * xs - ys) / ys * 100
    return {"prefix_tokens": round(float(a), 1), "factor": round(float(b), 4), "logs": sorted(groups),
            "requests": int(xs.size), "ape_median_pct": round(float(np.median(ape)), 2),
            "ape_p90_pct": round(float(np.percentile(ape, 90)), 2)}


def fit_profiles(ds, tokenizer: str = "cl100k") -> dict[str, Any]:
    """Profiles of an imported dataset, with each log's in-sample and leave-one-log-out
    errors (the document ``workbench calibrate`` writes)."""
    calibration = (ds.manifest.get("import") or {}).get("calibration") or {}
    if not calibration:
        raise WorkbenchError(f"{ds.path}: not an imported dataset (its manifest has no import "
                             "calibration); calibrate real logs: `workbench import LOGS --out DIR` first")
    points = _points(ds, tokenizer)
    meta: dict[str, tuple[str, str]] = {}
    for row in ds.continuities().iter_rows(named=True):
        cid = row["continuity_id"]
        if _usable(calibration.get(cid)) and cid in points:
            meta[cid] = (row["source_format"], model_family(row["model"]))
    by_harness: dict[str, dict[str, dict[str, tuple]]] = {}
    for cid, (harness, family) in meta.items():
        by_harness.setdefault(harness, {}).setdefault(family, {})[cid] = points[cid]
    profiles: dict[str, dict[str, Any]] = {}
    for harness, families in sorted(by_harness.items()):
        pooled = {cid: p for fam in families.values() for cid, p in fam.items()}
        out = {ANY: _fit(pooled)}
        out.update({fam: _fit(group) for fam, group in sorted(families.items()) if fam != ANY})
        profiles[harness] = {k: v for k, v in out.items() if v is not None}
    from workbench.sources.compaction_calls import compaction_call_ids
    from workbench.tokens.unlogged import growth_points, model_switches

    growth, attached = growth_points(ds, tokenizer)
    skip = compaction_call_ids(ds.manifest)  # one call of its parent, not a conversation that grows
    served = _first_served(ds)
    switches = model_switches(ds)
    logs: dict[str, Any] = {}
    for cid, (harness, family) in sorted(meta.items()):
        x, y = points[cid]
        own = calibration[cid]
        entry: dict[str, Any] = {"harness": harness, "family": family, "requests": int(x.size),
                                 "own": ({"prefix_tokens": own["intercept"], "factor": own["factor"],
                                          "ape_median_pct": own["ape_median_pct"]}
                                         if own.get("status") == "ok" else None)}
        family_others = {c: p for c, p in by_harness[harness].get(family, {}).items() if c != cid}
        harness_others = {c: p for fam in by_harness[harness].values() for c, p in fam.items() if c != cid}
        for name, group in ((f"{harness}/{family}", family_others), (f"{harness}/{ANY}", harness_others)):
            line = _fit(group)
            if line is not None:
                ape = np.abs(line["prefix_tokens"] + line["factor"] * x - y) / y * 100
                entry["loo"] = {"profile": name, "prefix_tokens": line["prefix_tokens"],
                                "factor": line["factor"], "fitted_on": line["logs"],
                                "ape_median_pct": round(float(np.median(ape)), 2),
                                "ape_p90_pct": round(float(np.percentile(ape, 90)), 2)}
                break
        else:
            entry["loo"] = None
        entry["loo_unanchored"] = _unanchored_fit(cid, harness, growth, meta, skip, served)
        if entry["loo_unanchored"] is not None:
            entry["loo_unanchored"]["attachments"] = [list(a) for a in attached.get(cid, [])]
            entry["loo_unanchored"]["switches"] = [[s, bool(no)] for s, no in switches.get(cid, [])]
        logs[cid] = entry
    return {"schema": SCHEMA, "tokenizer": tokenizer,
            "fitted_from": {"dataset": ds.name,
                            "files": {k: v.get("sha256") for k, v in ds.manifest.get("files", {}).items()}},
            "profiles": profiles, "logs": logs}


def _first_served(ds) -> dict[str, tuple[bool, bool]]:
    """Per continuity id: (its first request served by a model without tool search, a
    sub-agent), for :func:`workbench.tokens.unlogged.tool_search_offset`."""
    from workbench.sources.claude_code import MODEL_RUNS
    from workbench.tokens.unlogged import searches_tools

    metas = (ds.manifest.get("import") or {}).get("continuities") or {}
    out = {}
    for cid, model, parent in ds.continuities().select("continuity_id", "model", "parent").iter_rows():
        runs = (metas.get(cid) or {}).get(MODEL_RUNS)
        first = runs[0][1] if runs else model
        out[cid] = (not searches_tools(first), parent is not None and parent >= 0)
    return out


def _unanchored_fit(cid: str, harness: str, growth: dict[str, tuple], meta: dict[str, tuple[str, str]],
                    skip: set[str], served: dict[str, tuple[bool, bool]] | None = None) -> dict[str, Any] | None:
    """The line a replay without this log's usage uses (the audit's ``loo_unanchored``): the
    growth model (:func:`workbench.tokens.unlogged.fit_growth`: unseen prefix, factor and
    per-request framing, with attachments and dropped thinking) fitted on the other logs of
    its harness (every model family: the increments need long logs), with the prefix a model
    without tool search carries (``tool_search_tokens``, from the other logs' first requests;
    ``served``: :func:`_first_served`). Only for the harnesses
    whose unlogged content was checked (:data:`~workbench.tokens.unlogged.GROWTH_HARNESSES`);
    the others keep their ``loo`` line."""
    from workbench.tokens.unlogged import GROWTH_HARNESSES, fit_growth, predict, tool_search_offset

    if harness not in GROWTH_HARNESSES:
        return None
    others = {c: growth[c] for c, (h, _f) in meta.items()
              if h == harness and c != cid and c in growth and c not in skip}
    fit = fit_growth(others)
    if fit is None or cid not in growth:
        return None
    served = served or {}
    firsts = {c: (float(p[1][0] - fit["factor"] * p[0][0]), *served[c]) for c, p in others.items()
              if p[0].size and c in served}
    fit["tool_search_tokens"] = round(tool_search_offset(firsts), 1)
    sent, rec, k, stretch = growth[cid]
    ape = np.abs(predict(fit, sent, k, stretch) - rec) / rec * 100
    return {"profile": f"{harness}/growth", **fit, "ape_median_pct": round(float(np.median(ape)), 2),
            "ape_p90_pct": round(float(np.percentile(ape, 90)), 2)}


def load_profiles(path: str | Path | None = None) -> dict[str, Any]:
    """A profiles document (the packaged one by default), checked."""
    import orjson

    p = Path(path) if path is not None else PACKAGED
    try:
        doc = orjson.loads(p.read_bytes())
    except FileNotFoundError:
        raise WorkbenchError(f"{p}: no such calibration profile file") from None
    except orjson.JSONDecodeError as exc:
        raise WorkbenchError(f"{p}: not JSON ({exc}); write one with `workbench calibrate DATASET --out FILE`") from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA or not isinstance(doc.get("profiles"), dict):
        raise WorkbenchError(f"{p}: not a calibration profile file (expected \"schema\": \"{SCHEMA}\" "
                             "and \"profiles\"); write one with `workbench calibrate DATASET --out FILE`")
    for harness, fams in doc["profiles"].items():
        for fam, prof in (fams or {}).items():
            try:
                a, b = float(prof["prefix_tokens"]), float(prof["factor"])
            except (KeyError, TypeError, ValueError):
                raise WorkbenchError(f"{p}: profiles.{harness}.{fam} needs numeric prefix_tokens and "
                                     "factor") from None
            if not (a >= 0 and 0 < b < 10):
                raise WorkbenchError(f"{p}: profiles.{harness}.{fam}: prefix_tokens {a} must be >= 0 "
                                     f"and factor {b} in (0, 10)")
    doc["_path"] = str(p)
    return doc


def profile_for(doc: dict[str, Any], harness: str | None, family: str) -> tuple[str, dict[str, Any]] | None:
    """``(name, profile)`` for a harness and model family: the family's own, else the
    harness's pooled one; None when the document has neither."""
    fams = (doc.get("profiles") or {}).get(harness or "") or {}
    for fam in (family, ANY):
        if fam in fams:
            return f"{harness}/{fam}", fams[fam]
    return None


def write_profiles(doc: dict[str, Any], path: str | Path) -> Path:
    """Write a profiles document atomically; only a new path or a profiles file the
    workbench wrote may be replaced (anything else is refused, never overwritten)."""
    from workbench.util.atomic import write_owned_json

    body = {k: v for k, v in doc.items() if not k.startswith("_")}
    return write_owned_json(path, body, schema=SCHEMA, what="calibration profile", example="calibration.json",
                            option="--out")
