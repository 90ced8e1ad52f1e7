"""HTTP summarizer for an OpenAI-compatible endpoint, with record/replay cassettes.

Two modes:

* ``chat``: ``POST {base_url}/chat/completions`` with a system summarization prompt and the
  rendered span as the user message, ``max_tokens = target_tokens``; the answer's text is
  the summary.
* ``compact``: ``POST {base_url}/responses/compact`` with Responses input items built from
  the span (:func:`build_compact_input`: provider-generated top-level item ids stripped,
  ``call_id`` kept, copied from ``id`` for tool calls that only have an id). The returned
  window may hold several ``compaction`` items (Holon §6); the result is opaque, its text a
  placeholder (``[compaction item: N bytes encrypted]``) and the raw window sits in
  ``diagnostics["window"]``. To chain, pass ``json.dumps(result.diagnostics["window"])``
  as the next request's ``previous_summary``.

Endpoint failures follow Holon §5. A provider session is the request's
(``SummaryRequest.provider_session``: one continuity under one policy), not the instance
(one audit summarizes many sessions):

* 404/405/410/501 from the compact route negative-cache it for that session; the call gets a
  result with ``diagnostics["status"] == "unsupported_endpoint"`` and every later call of
  the session returns ``"skipped_unsupported_endpoint"`` without a request (another session
  asks again);
* a 4xx whose body says the request items are not persisted raises
  :class:`InvalidProviderInputError` and caches nothing;
* transient failures (connection reset/refused, timeouts, 408/409/429/500/502/503/504) are
  retried with bounded exponential backoff (``sleep`` is injectable) and never cached;
  when retries run out :class:`TransientEndpointError` is raised;
* any other error status raises :class:`EndpointError`.

With a cassette (:mod:`workbench.summarize.cassette`) final answers are recorded and
replayed by request hash, so a replay gives byte-identical results without a network.
A summary sample (``sample`` > 0: ``--summary-samples``) is the same chat request with
``seed`` = the sample and a temperature, so each sample is a cassette entry of its own.
"""

from __future__ import annotations

import http.client
import ipaddress
import json
import re
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from workbench.summarize.base import (
    STATUS_OK,
    STATUS_SKIPPED_UNSUPPORTED,
    STATUS_UNSUPPORTED,
    EndpointError,
    InvalidProviderInputError,
    SpanEvent,
    SummarizerConfigError,
    SummaryRequest,
    SummaryResult,
    TransientEndpointError,
    check_request,
    render_span,
)
from workbench.summarize.cassette import Cassette, canonical_json, cassette_key

CHAT_PATH = "/chat/completions"
COMPACT_PATH = "/responses/compact"
MODES = ("chat", "compact")
#: statuses after which the compact route is negative-cached for the session (Holon §5)
UNSUPPORTED_STATUSES = frozenset({404, 405, 410, 501})
#: statuses retried with backoff, never cached
TRANSIENT_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504})
NOT_PERSISTED_MARKERS = ("not persisted", "not_persisted")
PLACEHOLDER_RE = re.compile(r"\[compaction items?: [^\]]*encrypted\]")
#: the temperature of a summary sample (``sample`` > 0) when none is configured
SAMPLE_TEMPERATURE = 1.0
#: seconds to wait for one answer when none is configured: a hosted API answers in seconds;
#: a server on this machine (a loopback address) may be a small model on a busy CPU: at load
#: 12 on 2 cores SmolLM2-135M wrote 0.2-0.5 tokens/s, one summary took minutes, and a
#: timed-out request is still computed by a one-model server while its retry waits
DEFAULT_TIMEOUT_S = 60.0
LOOPBACK_TIMEOUT_S = 900.0

PROMPTS = {
    "compaction": (
        "You are compacting the context of a long-running coding-agent session. Write a "
        "summary that lets the agent continue the work without the original messages. Use "
        "markdown with these sections: Primary request and intent; Key facts and decisions "
        "(exact values: names, dates, ports, versions, paths, tickets); Files and code; "
        "Errors and fixes; Problem solving; Pending tasks; Current work and next step. Be "
        "precise and concise. Never reproduce credentials, API keys, tokens, passwords or "
        "private keys, not even in part and not inside placeholders."),
    "merge": (
        "You are merging an earlier compaction summary with newer conversation events into "
        "one summary. Keep every fact from the earlier summary that still matters, add the "
        "new ones, and use the same sections: Primary request and intent; Key facts and "
        "decisions; Files and code; Errors and fixes; Problem solving; Pending tasks; "
        "Current work and next step. Never reproduce credentials or secrets."),
    "flush": (
        "Before the context is compacted, write durable memory notes: short markdown "
        "bullets with facts, decisions, file locations and open items worth remembering "
        "across sessions. Do not address the user. Never write credentials or secrets."),
}


# --------------------------------------------------------------------------- compact input


def _parse_obj(text: str) -> dict | None:
    t = text.strip()
    if not (t.startswith("{") and t.endswith("}")):
        return None
    try:
        obj = json.loads(t)
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None


def strip_item_id(item: dict) -> tuple[dict, bool]:
    """Holon §8: drop the provider-generated top-level ``id``; a tool call that has only
    an ``id`` keeps it as ``call_id`` first. Returns ``(new item, whether an id was dropped)``."""
    out = dict(item)
    if "id" not in out:
        return out, False
    if str(out.get("type", "")).endswith("_call") and not out.get("call_id"):
        out["call_id"] = out["id"]
    del out["id"]
    return out, True


def _as_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [c.get("text", "") if isinstance(c, dict) else str(c) for c in content]
        if all(isinstance(c, dict) and "text" in c for c in content):
            return "\n".join(parts)
    return canonical_json(content)


def _message(role: str, text: str) -> dict:
    role = role if role in ("user", "assistant", "system", "developer") else "user"
    part = "output_text" if role == "assistant" else "input_text"
    return {"type": "message", "role": role, "content": [{"type": part, "text": text}]}


def _tool_call_item(ev: SpanEvent) -> dict:
    obj = _parse_obj(ev.text)
    if obj is not None:
        t = str(obj.get("type", ""))
        if t.endswith("_call") or (t == "" and "call_id" in obj and "name" in obj):
            return dict(obj)
        if t == "tool_use" and "id" in obj:  # Anthropic content block
            return {"type": "function_call", "call_id": obj["id"], "name": obj.get("name", "tool"),
                    "arguments": canonical_json(obj.get("input", {}))}
        if t == "function" and isinstance(obj.get("function"), dict):  # chat tool_calls entry
            fn = obj["function"]
            return {"type": "function_call", "call_id": obj.get("id") or f"call_{ev.seq}",
                    "name": fn.get("name", "tool"), "arguments": _as_text(fn.get("arguments", ""))}
        if "name" in obj and ("arguments" in obj or "input" in obj):
            args = obj.get("arguments", obj.get("input"))
            return {"type": "function_call",
                    "call_id": obj.get("call_id") or obj.get("id") or f"call_{ev.seq}",
                    "name": obj["name"], "arguments": _as_text(args)}
    return {"type": "function_call", "call_id": f"call_{ev.seq}", "name": "tool",
            "arguments": ev.text}


def _tool_result_item(ev: SpanEvent, open_calls: list[str]) -> dict:
    obj = _parse_obj(ev.text)
    call_id = None
    output: Any = ev.text
    if obj is not None:
        t = str(obj.get("type", ""))
        if t.endswith("_call_output"):
            item = dict(obj)
            if item.get("call_id") in open_calls:
                open_calls.remove(item["call_id"])
            return item
        if t == "tool_result" and "tool_use_id" in obj:
            call_id, output = obj["tool_use_id"], obj.get("content", "")
        elif "tool_call_id" in obj:
            call_id, output = obj["tool_call_id"], obj.get("content", "")
    if call_id is None and open_calls:
        call_id = open_calls[0]
    if call_id is None:  # an output without a call in the span cannot be a tool item
        return _message("user", "Tool output:\n" + _as_text(output))
    if call_id in open_calls:
        open_calls.remove(call_id)
    return {"type": "function_call_output", "call_id": call_id, "output": _as_text(output)}


def build_compact_input(events: Sequence[SpanEvent], previous_summary: str | None = None, *,
                        include_reasoning: bool = False) -> tuple[list[dict], dict]:
    """Responses input items for ``/responses/compact``, and counts for diagnostics.

    Messages become ``message`` items, tool calls ``function_call`` (or their recorded
    provider item), tool results ``function_call_output`` paired by ``call_id``, events of
    kind ``compaction``/``provider_item`` (a JSON item) are passed through, reasoning is
    dropped unless ``include_reasoning`` (a stateless request cannot reference provider
    reasoning items). A ``previous_summary`` that is a JSON list of items (an earlier
    compaction window) is prepended as items; plain text becomes a user message. Every
    top-level ``id`` is stripped (:func:`strip_item_id`).
    """
    raw: list[dict] = []
    stats = {"dropped_reasoning": 0, "stripped_ids": 0, "unpaired_calls": 0}
    t = (previous_summary or "").strip()
    if PLACEHOLDER_RE.fullmatch(t):  # an opaque result's text says nothing: pass the window
        stats["dropped_placeholder"] = 1
        previous_summary = None
    if previous_summary:
        prev = None
        if t.startswith("[") or t.startswith("{"):
            try:
                prev = json.loads(t)
            except ValueError:
                prev = None
        if isinstance(prev, dict):
            prev = [prev]
        if isinstance(prev, list) and all(isinstance(x, dict) for x in prev):
            raw.extend(prev)
        else:
            raw.append(_message("user", "Summary of the earlier conversation:\n" + previous_summary))
    open_calls: list[str] = []
    for ev in events:
        if not ev.text.strip():
            continue
        if ev.kind == "tool_call":
            item = _tool_call_item(ev)
            cid = item.get("call_id") or item.get("id")
            if cid:
                open_calls.append(cid)
        elif ev.kind == "tool_result":
            item = _tool_result_item(ev, open_calls)
        elif ev.kind == "reasoning":
            if not include_reasoning:
                stats["dropped_reasoning"] += 1
                continue
            item = _message("assistant", ev.text)
        elif ev.kind in ("compaction", "provider_item") and _parse_obj(ev.text) is not None:
            item = _parse_obj(ev.text)
        else:
            item = _message(ev.role, ev.text)
        raw.append(item)
    items = []
    for it in raw:
        new, dropped = strip_item_id(it)
        stats["stripped_ids"] += dropped
        items.append(new)
    stats["unpaired_calls"] = len(open_calls)
    return items, stats


# --------------------------------------------------------------------------- transport


def _is_loopback(host: str | None) -> bool:
    if not host:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _transient_exc(exc: BaseException) -> bool:
    if isinstance(exc, urllib.error.HTTPError):
        return False
    if isinstance(exc, urllib.error.URLError):
        reason = exc.reason
        if isinstance(reason, BaseException):
            return _transient_exc(reason)
        return "timed out" in str(reason).lower()
    return isinstance(exc, (ConnectionError, TimeoutError, http.client.RemoteDisconnected,
                            http.client.IncompleteRead, http.client.BadStatusLine))


def _retry_after(headers) -> float | None:
    if headers is None:
        return None
    value = headers.get("Retry-After")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


def _not_persisted(body: str) -> bool:
    low = body.lower()
    return any(m in low for m in NOT_PERSISTED_MARKERS)


class HttpSummarizer:
    """OpenAI-compatible summarizer; its negative cache is kept per provider session."""

    name = "http"

    def __init__(self, base_url: str | None = None, model: str = "gpt-4.1-mini", *,
                 mode: str = "chat", api_key: str | None = None, timeout: float | None = None,
                 max_retries: int = 4, backoff_base: float = 0.5, backoff_max: float = 8.0,
                 sleep: Callable[[float], None] = time.sleep,
                 cassette: Cassette | str | Path | None = None, cassette_mode: str = "auto",
                 system_prompt: str | None = None, temperature: float | None = None,
                 extra_body: dict | None = None, headers: dict | None = None,
                 include_reasoning: bool = False, proxies: dict | None = None,
                 seed: int | None = None, sample: int = 0):
        # ``seed`` is accepted and ignored (determinism comes from the cassette), so a
        # caller can pass one seed to whichever backend the registry builds. ``sample`` > 0
        # asks for another sample of the same summary (chat mode): the request carries it
        # as its ``seed`` and a temperature (``temperature``, else SAMPLE_TEMPERATURE)
        if mode not in MODES:
            raise SummarizerConfigError(f"unknown http mode {mode!r}; known: {', '.join(MODES)}")
        if timeout is not None and timeout <= 0:
            raise SummarizerConfigError(f"timeout must be > 0 seconds, got {timeout}")
        if max_retries < 0:
            raise SummarizerConfigError(f"max_retries must be >= 0, got {max_retries}")
        self.base_url = base_url.rstrip("/") if base_url else None
        self.model = model
        self.mode = mode
        self.max_retries = int(max_retries)
        self.backoff_base = float(backoff_base)
        self.backoff_max = float(backoff_max)
        self._sleep = sleep
        if cassette is not None and not isinstance(cassette, Cassette):
            cassette = Cassette(cassette, cassette_mode)
        self.cassette: Cassette | None = cassette
        if sample < 0:
            raise SummarizerConfigError(f"sample must be >= 0, got {sample}")
        self.sample = int(sample)
        self.system_prompt = system_prompt
        self.temperature = temperature
        self.extra_body = dict(extra_body or {})
        self.include_reasoning = include_reasoning
        self._headers = {"Content-Type": "application/json", "Accept": "application/json",
                         **(headers or {})}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        host = urllib.parse.urlsplit(self.base_url).hostname if self.base_url else None
        if timeout is None:
            timeout = LOOPBACK_TIMEOUT_S if _is_loopback(host) else DEFAULT_TIMEOUT_S
        self.timeout = float(timeout)
        if proxies is None and _is_loopback(host):
            proxies = {}
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler(proxies))
        self._lock = threading.Lock()
        self._unsupported: dict[tuple[str, str], int] = {}   # negative cache: (session, path) -> status
        self.stats = {"requests": 0, "retries": 0, "cassette_hits": 0, "recorded": 0,
                      "skipped": 0}

    def __repr__(self) -> str:
        return f"HttpSummarizer({self.base_url!r}, model={self.model!r}, mode={self.mode!r})"

    @property
    def unsupported_endpoints(self) -> dict[str, dict[str, int]]:
        """The negative cache: provider session -> {endpoint path -> status that put it there}."""
        out: dict[str, dict[str, int]] = {}
        with self._lock:
            for (session, path), status in self._unsupported.items():
                out.setdefault(session, {})[path] = status
        return out

    # ------------------------------------------------------------------ api

    def summarize(self, request: SummaryRequest) -> SummaryResult:
        check_request(request)
        if self.mode == "chat":
            return self._chat(request)
        return self._compact(request)

    def chat_body(self, req: SummaryRequest) -> dict:
        """The exact ``/chat/completions`` body sent for ``req`` (no randomness, no time)."""
        prompt = self.system_prompt or PROMPTS[req.purpose]
        parts = []
        if req.previous_summary:
            parts.append(f"Previous summary:\n{req.previous_summary}")
        parts.append(f"Conversation events {req.from_seq}-{req.to_seq}:\n\n{render_span(req.events)}")
        parts.append(f"Write the {'memory notes' if req.purpose == 'flush' else 'summary'} "
                     f"in at most about {req.target_tokens} tokens.")
        body = {"model": self.model,
                "messages": [{"role": "system", "content": prompt},
                             {"role": "user", "content": "\n\n".join(parts)}],
                "max_tokens": max(1, int(req.target_tokens))}
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if self.sample:
            body["temperature"] = SAMPLE_TEMPERATURE if self.temperature is None else self.temperature
            body["seed"] = self.sample
        body.update(self.extra_body)
        return body

    def compact_body(self, req: SummaryRequest) -> tuple[dict, dict]:
        items, stats = build_compact_input(req.events, req.previous_summary,
                                           include_reasoning=self.include_reasoning)
        body = {"model": self.model, "input": items}
        body.update(self.extra_body)
        return body, stats

    # ------------------------------------------------------------------ modes

    def ask(self, system: str, user: str, *, max_tokens: int = 64) -> str:
        """One chat question through the same transport and cassette (the LLM-judged
        probes ask the endpoint about a summary): the answer's text."""
        body = {"model": self.model, "messages": [{"role": "system", "content": system},
                                                  {"role": "user", "content": user}],
                "max_tokens": max(1, int(max_tokens))}
        if self.temperature is not None:
            body["temperature"] = self.temperature
        return self._chat_answer(body)[0]

    def _chat(self, req: SummaryRequest) -> SummaryResult:
        content, choice, data, key = self._chat_answer(self.chat_body(req))
        diag = {"status": STATUS_OK, "endpoint": CHAT_PATH, "model": data.get("model", self.model),
                "finish_reason": choice.get("finish_reason"), "usage": data.get("usage"),
                "request_key": key, "target_tokens": req.target_tokens}
        return SummaryResult(text=content, backend=self.name, diagnostics=diag)

    def _chat_answer(self, body: dict) -> tuple[str, dict, dict, str]:
        """``(text, choice, answer, cassette key)`` of a ``/chat/completions`` request."""
        status, text, key = self._exchange(CHAT_PATH, body)
        if not 200 <= status < 300:
            raise EndpointError(f"POST {CHAT_PATH} returned {status}: {text[:300]}",
                                status=status, endpoint=CHAT_PATH, body=text[:2000])
        data = self._json(text, CHAT_PATH, status)
        try:
            choice = data["choices"][0]
            content = choice["message"]["content"]
        except (KeyError, IndexError, TypeError) as exc:
            raise EndpointError(f"POST {CHAT_PATH}: no choices[0].message.content in the answer",
                                status=status, endpoint=CHAT_PATH, body=text[:2000]) from exc
        if content is None:
            raise EndpointError(f"POST {CHAT_PATH}: the answer has no text content",
                                status=status, endpoint=CHAT_PATH, body=text[:2000])
        return _as_text(content), choice, data, key

    def _compact(self, req: SummaryRequest) -> SummaryResult:
        session = req.provider_session
        with self._lock:
            cached = self._unsupported.get((session, COMPACT_PATH))
            if cached is not None:
                self.stats["skipped"] += 1
        if cached is not None:
            return SummaryResult(text="", backend=self.name, opaque=True, diagnostics={
                "status": STATUS_SKIPPED_UNSUPPORTED, "endpoint": COMPACT_PATH,
                "http_status": cached, "session": session})
        body, stats = self.compact_body(req)
        status, text, key = self._exchange(COMPACT_PATH, body)
        if 400 <= status < 500 and _not_persisted(text):
            raise InvalidProviderInputError(
                f"POST {COMPACT_PATH} returned {status}: the provider says request items are "
                f"not persisted (invalid provider input; the endpoint is not negative-cached): "
                f"{text[:300]}", status=status, endpoint=COMPACT_PATH, body=text[:2000])
        if status in UNSUPPORTED_STATUSES:
            with self._lock:
                self._unsupported[(session, COMPACT_PATH)] = status
            return SummaryResult(text="", backend=self.name, opaque=True, diagnostics={
                "status": STATUS_UNSUPPORTED, "endpoint": COMPACT_PATH, "http_status": status, "session": session,
                "request_key": key, "body": text[:500]})
        if not 200 <= status < 300:
            raise EndpointError(f"POST {COMPACT_PATH} returned {status}: {text[:300]}",
                                status=status, endpoint=COMPACT_PATH, body=text[:2000])
        data = self._json(text, COMPACT_PATH, status)
        window = data.get("output") if isinstance(data, dict) else None
        if not isinstance(window, list):
            raise EndpointError(f"POST {COMPACT_PATH}: the answer has no 'output' item list",
                                status=status, endpoint=COMPACT_PATH, body=text[:2000])
        comp = [i for i, it in enumerate(window)
                if isinstance(it, dict) and it.get("type") == "compaction"]
        if not comp:
            raise EndpointError(f"POST {COMPACT_PATH}: the returned window holds no compaction item",
                                status=status, endpoint=COMPACT_PATH, body=text[:2000])
        import hashlib

        payloads = [str(window[i].get("encrypted_content", "")).encode("utf-8") for i in comp]
        n_bytes = sum(len(p) for p in payloads)
        placeholder = (f"[compaction item: {n_bytes} bytes encrypted]" if len(comp) == 1 else
                       f"[compaction items: {len(comp)}, {n_bytes} bytes encrypted]")
        diag = {"status": STATUS_OK, "endpoint": COMPACT_PATH,
                "model": data.get("model", self.model), "window": window,
                "window_items": len(window), "compaction_items": len(comp),
                "latest_compaction_index": comp[-1], "encrypted_bytes": n_bytes,
                "encrypted_sha256": [hashlib.sha256(p).hexdigest() for p in payloads],
                "usage": data.get("usage"), "request_key": key,
                "input_items": len(body["input"]), **stats}
        return SummaryResult(text=placeholder, backend=self.name, opaque=True, diagnostics=diag)

    # ------------------------------------------------------------------ transport

    @staticmethod
    def _json(text: str, path: str, status: int):
        try:
            return json.loads(text)
        except ValueError as exc:
            raise EndpointError(f"POST {path}: the answer is not JSON: {text[:200]!r}",
                                status=status, endpoint=path, body=text[:2000]) from exc

    def _exchange(self, path: str, body: dict) -> tuple[int, str, str]:
        """``(status, response text, cassette key)``: from the cassette when it may replay
        and holds the request, else from the endpoint (recorded when a cassette is set)."""
        key = cassette_key("POST", path, body)
        cas = self.cassette
        if cas is not None and cas.may_replay:
            entry = cas.get(key) if cas.may_call else cas.require(key, "POST", path)
            if entry is not None:
                with self._lock:
                    self.stats["cassette_hits"] += 1
                return entry.status, entry.response, key
        status, text = self._call(path, body)
        if cas is not None:
            cas.record(key, "POST", path, status, text, request=body)
            with self._lock:
                self.stats["recorded"] += 1
        return status, text, key

    def _call(self, path: str, body: dict) -> tuple[int, str]:
        if not self.base_url:
            raise SummarizerConfigError(
                "the http summarizer needs base_url to call the endpoint (or a cassette in "
                "mode 'replay' that holds every request)")
        url = self.base_url + path
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        last = ""
        last_status: int | None = None
        for attempt in range(self.max_retries + 1):
            wait = None
            try:
                status, text, headers = self._post_once(url, data)
            except Exception as exc:  # noqa: BLE001 - classified right below
                if not _transient_exc(exc):
                    raise EndpointError(f"POST {path} failed: {exc}", endpoint=path) from exc
                last, last_status = f"{type(exc).__name__}: {exc}", None
            else:
                if status not in TRANSIENT_STATUSES:
                    return status, text
                last, last_status = f"status {status}: {text[:200]}", status
                wait = _retry_after(headers)
            if attempt == self.max_retries:
                break
            delay = min(self.backoff_max, self.backoff_base * (2 ** attempt))
            if wait is not None:
                delay = min(self.backoff_max, max(delay, wait))
            with self._lock:
                self.stats["retries"] += 1
            self._sleep(delay)
        attempts = self.max_retries + 1
        raise TransientEndpointError(
            f"POST {path} failed after {attempts} attempts (transient; not cached): {last}",
            attempts=attempts, status=last_status, endpoint=path)

    def _post_once(self, url: str, data: bytes):
        with self._lock:
            self.stats["requests"] += 1
        req = urllib.request.Request(url, data=data, headers=self._headers, method="POST")
        try:
            with self._opener.open(req, timeout=self.timeout) as resp:
                return resp.status, resp.read().decode("utf-8", "replace"), resp.headers
        except urllib.error.HTTPError as exc:
            try:
                text = exc.read().decode("utf-8", "replace")
            except (OSError, http.client.HTTPException):
                text = ""
            finally:
                exc.close()
            return exc.code, text, exc.headers
