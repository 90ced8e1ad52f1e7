"""The summarizer a policy's texts are written with: the run's summarizer and its options,
with the policy's own ``summarizer.model`` and ``summarizer.prompt`` on top (policy
parameters like any other, so a sweep can A/B them).

``summarizer.prompt`` names a text file holding the system prompt. Its path is taken from
the project directory (``root``, default: the current directory) and must stay inside it
(a policy or sweep spec is untrusted input, and the prompt is sent to the endpoint); the
file must be UTF-8 text of at most :data:`PROMPT_LIMIT` bytes. Only the HTTP summarizer
sends a prompt to a model: a policy that sets either field with another summarizer is an
error rather than a setting silently ignored.

A seeded summarizer's draws are keyed by the compaction they write (``draws``, an option of
every summarizer, taken off before the backend is built: :func:`split_draws`):

* ``policy`` (the default): by the compaction's position *and the policy's digest*, so two
  policies, or two configurations of a sweep, that compact a span alike still draw their
  summaries independently (the goldens are drawn so);
* ``shared``: by the compaction's position alone (continuity, artifact number, range; a
  flush by its request and range), common random numbers: two policies or configurations
  that compact alike write the same summary, so what differs between their figures is what
  their policies did, not the summarizer's luck. The summary and its redaction are then
  derived once for all of them (a sweep worker keeps them across configurations:
  :mod:`workbench.sweep.runner`).

>>> split_draws("modelled", {"draws": "shared", "p_copy_secret": 0.5})
('shared', {'p_copy_secret': 0.5})
>>> from workbench.engine.presets import get_policy
>>> policy_options("http", {"base_url": "http://127.0.0.1:8080/v1"},
...                get_policy("claude-code", {"summarizer.model": "qwen2.5-7b"}))
{'base_url': 'http://127.0.0.1:8080/v1', 'model': 'qwen2.5-7b'}
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from workbench.summarize.base import SummarizerConfigError

PROMPT_LIMIT = 64 * 1024
#: how a seeded summarizer's draws are keyed (see the module docstring); the first is the default
SHARED_DRAWS = "shared"
DRAWS = ("policy", SHARED_DRAWS)
#: the summarizers whose output is drawn per compaction (the others ignore the key)
DRAWN_SUMMARIZERS = ("modelled", "calibrated")


def prompt_path(path: str, *, root: str | Path | None = None) -> Path:
    """The prompt file ``path`` names, resolved inside ``root`` (symbolic links followed)."""
    base = Path(root) if root is not None else Path.cwd()
    candidate = Path(path)
    full = (candidate if candidate.is_absolute() else base / candidate).resolve()
    if not full.is_relative_to(base.resolve()):
        raise SummarizerConfigError(f"summarizer.prompt: {path!r} lies outside the project directory "
                                    f"{base.resolve()} (a prompt file must be inside it)")
    if not full.is_file():
        raise SummarizerConfigError(f"summarizer.prompt: {path!r} is not a file (looked at {full}); give a "
                                    "text file holding the system prompt, relative to the project directory")
    return full


def load_prompt(path: str, *, root: str | Path | None = None) -> str:
    """The system prompt in the file ``path`` names (see the module docstring)."""
    full = prompt_path(path, root=root)
    data = full.read_bytes()
    if len(data) > PROMPT_LIMIT:
        raise SummarizerConfigError(f"summarizer.prompt: {path!r} is {len(data):,} bytes; a prompt file may "
                                    f"hold at most {PROMPT_LIMIT:,}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SummarizerConfigError(f"summarizer.prompt: {path!r} is not UTF-8 text ({exc})") from None
    if not text.strip():
        raise SummarizerConfigError(f"summarizer.prompt: {path!r} is empty")
    return text.strip()


def split_draws(summarizer: str, options: dict[str, Any] | None) -> tuple[str, dict[str, Any]]:
    """``(draws, the backend's options)``: the ``draws`` option, checked, and the rest; a
    seeded summarizer's own options (``draws`` other than the default, ``filler``) are refused
    for the other summarizers, which would ignore them or fail on them in every run."""
    rest = dict(options or {})
    draws = rest.pop("draws", DRAWS[0])
    if draws not in DRAWS:
        raise SummarizerConfigError(f"draws must be one of {', '.join(DRAWS)}, got {draws!r}")
    if summarizer not in DRAWN_SUMMARIZERS:
        seeded = ' and '.join(DRAWN_SUMMARIZERS)
        if draws != DRAWS[0]:
            raise SummarizerConfigError(f"draws={draws!r}: the {summarizer!r} summarizer draws nothing per "
                                        f"compaction (only {seeded} do); drop the option")
        if "filler" in rest:
            raise SummarizerConfigError(f"filler: the {summarizer!r} summarizer writes no filler of its own "
                                        f"(only {seeded} do); drop the option")
    return draws, rest


def _set_fields(policy) -> list[str]:
    s = policy.summarizer
    return [f"summarizer.{k}" for k in ("prompt", "model") if getattr(s, k) is not None]


#: the summarizers that write a task-state checkpoint themselves (option ``task_state``)
TASK_STATE_SUMMARIZERS = ("modelled", "calibrated")


def policy_options(summarizer: str, options: dict[str, Any] | None, policy, *,
                   root: str | Path | None = None) -> dict[str, Any]:
    """The backend options ``policy``'s texts are written with. A policy whose summaries carry a
    task-state checkpoint (``compaction.task_state_tokens`` > 0) has the modelled summarizers
    keep every task-state fact (``task_state``); the HTTP one must be told by its prompt
    (``summarizer.prompt``); the others cannot write one, which is an error, not a setting
    silently ignored."""
    options = dict(options or {})
    if policy.compaction.task_state_tokens > 0:
        if summarizer in TASK_STATE_SUMMARIZERS:
            options["task_state"] = True
        elif not (summarizer == "http" and policy.summarizer.prompt is not None):
            raise SummarizerConfigError(
                f"policy {policy.name!r} writes a task-state checkpoint in every summary "
                f"(compaction.task_state_tokens); the {summarizer!r} summarizer cannot: evaluate with "
                f"--summarizer {' or '.join(TASK_STATE_SUMMARIZERS)}, or with http and a summarizer.prompt "
                "that asks for the task state")
    fields = _set_fields(policy)
    if not fields:
        return options
    if summarizer != "http":
        raise SummarizerConfigError(
            f"policy {policy.name!r} sets {' and '.join(fields)}, which only the http summarizer sends to "
            f"a model (the summarizer is {summarizer!r}): evaluate with --summarizer http, or drop them")
    s = policy.summarizer
    if s.model is not None:
        options["model"] = s.model
    if s.prompt is not None:
        options["system_prompt"] = load_prompt(s.prompt, root=root)
    return options


def describe(policy, *, root: str | Path | None = None) -> dict[str, Any]:
    """What a run records about ``policy``'s summarizer settings: the model, the prompt file
    and the sha256 of its text (empty when the policy sets neither)."""
    s = policy.summarizer
    out: dict[str, Any] = {}
    if s.model is not None:
        out["model"] = s.model
    if s.prompt is not None:
        out["prompt"] = s.prompt
        out["prompt_sha256"] = hashlib.sha256(load_prompt(s.prompt, root=root).encode()).hexdigest()
    return out


def sample_options(summarizer: str, options: dict[str, Any], sample: int) -> dict[str, Any]:
    """The options of summary sample ``sample`` (0: the run's own texts). The modelled
    summarizer draws a new sample from a new seed (the caller passes it); the HTTP
    summarizer is asked again with ``sample`` as the request's seed and a non-zero
    temperature (:class:`~workbench.summarize.http.HttpSummarizer`), so each sample is a
    request of its own in the cassette; the extractive one is deterministic."""
    if sample <= 0 or summarizer != "http":
        return options
    return {**options, "sample": int(sample)}


def prompt_digests(paths, *, root: str | Path | None = None) -> dict[str, str | None]:
    """``{path: sha256 of its prompt text}`` (None for a file that cannot be used: the runs
    that name it fail with the reason): what a sweep compares to know its evaluated runs
    were written with the prompts as they are now."""
    out: dict[str, str | None] = {}
    for path in sorted(set(paths)):
        try:
            out[path] = hashlib.sha256(load_prompt(path, root=root).encode()).hexdigest()
        except SummarizerConfigError:
            out[path] = None
    return out
