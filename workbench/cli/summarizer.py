"""The summarizer options shared by ``simulate --evaluate`` and ``audit redaction``.

The HTTP backend's key is read from the environment variable ``--summarizer-key-env``
names (default: the provider's usual one), never from the command line, and never
written to a run: what the run records is the variable's name.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

import typer

from workbench.errors import WorkbenchError

Summarizer = Annotated[str, typer.Option("--summarizer", help="modelled | calibrated (modelled, with keep "
                                        "probabilities fitted on real summaries) | extractive | recorded | http")]
BaseUrl = Annotated[str | None, typer.Option("--summarizer-base-url", help="http: an OpenAI-compatible "
                                                  "endpoint, e.g. http://127.0.0.1:8080/v1")]
Model = Annotated[str | None, typer.Option("--summarizer-model", help="http: the model to ask")]
KeyEnv = Annotated[str | None, typer.Option("--summarizer-key-env", help="http: environment variable "
                                                 "holding the API key (default OPENAI_API_KEY; "
                                                 "none needed for a local server)")]
Cassette = Annotated[Path | None, typer.Option("--summarizer-cassette", help="http: JSONL cassette; "
                                                    "answers are recorded there and replayed offline")]
Mode = Annotated[str, typer.Option("--summarizer-mode", help="http: chat | compact")]
Timeout = Annotated[float | None, typer.Option("--summarizer-timeout", min=0.001,
                                               help="http: seconds to wait for one answer (default 60, or "
                                                    "900 for a server on this machine: a small local model on "
                                                    "a busy CPU may need minutes)")]
Baseline = Annotated[bool, typer.Option("--baseline/--no-baseline",
                                        help="also measure detect-secrets as the SR-1 redactor")]
JudgeProbes = Annotated[bool, typer.Option("--judge-probes/--no-judge-probes",
                                           help="http: ask the endpoint each dropped fact's probe question "
                                                "of its compaction's summary (cached in the cassette)")]
Samples = Annotated[int, typer.Option("--summary-samples", min=1, max=100,
                                      help="write every summary this many times (modelled: new seeds; "
                                           "http: temperature samples) and report the spread of "
                                           "retention, leaks and summary length")]

Draws = Annotated[str, typer.Option("--draws", help="modelled/calibrated: policy (each policy draws its own "
                                                   "summaries) | shared (common random numbers: policies "
                                                   "that compact a span alike write the same summary)")]

Filler = Annotated[bool, typer.Option("--filler/--no-filler",
                                      help="modelled/calibrated: fill each summary with its span's sentences up "
                                           "to its size (the default); --no-filler: a summary is its decided "
                                           "lines alone (kept facts, copied secrets, carried lines), the fast "
                                           "profile for sweeps and large runs, with figures of its own")]

DEFAULT_KEY_ENV = "OPENAI_API_KEY"


def summarizer_options(summarizer: str = "modelled", *, base_url: str | None = None,
                       model: str | None = None, key_env: str | None = None,
                       cassette: Path | None = None, mode: str = "chat",
                       baseline: bool = True, timeout: float | None = None,
                       draws: str = "policy", filler: bool = True) -> dict[str, Any]:
    """Keyword arguments of :func:`workbench.audits.redaction_audit`, checked (the backend
    is built once here, so a bad option fails before any work)."""
    from workbench.summarize.settings import DRAWS, split_draws

    options = _options(summarizer, base_url=base_url, model=model, key_env=key_env,
                       cassette=cassette, mode=mode, baseline=baseline, timeout=timeout)
    if draws != DRAWS[0]:  # (the default is not written: runs made before the option read the same)
        options["summarizer_options"] = {**options.get("summarizer_options", {}), "draws": draws}
    if not filler:  # (split_draws refuses it for a summarizer that writes no filler)
        options["summarizer_options"] = {**options.get("summarizer_options", {}), "filler": False}
    _, backend_options = split_draws(summarizer, options.get("summarizer_options"))
    if options["summarizer"] != "recorded":
        from workbench.summarize import get_summarizer

        get_summarizer(options["summarizer"], **backend_options)
    return options


def _options(summarizer: str, *, base_url, model, key_env, cassette, mode, baseline, timeout) -> dict[str, Any]:
    http_only = {"--summarizer-base-url": base_url, "--summarizer-model": model,
                 "--summarizer-key-env": key_env, "--summarizer-cassette": cassette,
                 "--summarizer-timeout": timeout}
    if summarizer != "http":
        given = [k for k, v in http_only.items() if v is not None]
        if given:
            raise WorkbenchError(f"{', '.join(given)} only apply to --summarizer http "
                                 f"(the summarizer is {summarizer!r})")
        return {"summarizer": summarizer, "baseline": baseline}
    if not base_url:
        raise WorkbenchError("--summarizer http needs --summarizer-base-url (an OpenAI-compatible "
                             "endpoint such as http://127.0.0.1:8080/v1)")
    options: dict[str, Any] = {"base_url": base_url, "mode": mode}
    if model:
        options["model"] = model
    if cassette is not None:
        options["cassette"] = str(cassette)
    if timeout is not None:
        options["timeout"] = float(timeout)
    name = key_env or DEFAULT_KEY_ENV
    key = os.environ.get(name)
    if key:
        options["api_key"] = key
    elif key_env:  # asked for a variable that is not set: say so rather than call unauthenticated
        raise WorkbenchError(f"--summarizer-key-env {key_env}: the environment variable {key_env} is not set")
    return {"summarizer": "http", "summarizer_options": options, "baseline": baseline}
