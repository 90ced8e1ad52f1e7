"""HTTP backend against a stub OpenAI-compatible server on 127.0.0.1, and cassettes."""

from __future__ import annotations

import dataclasses
import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from workbench.errors import WorkbenchError
from workbench.summarize import (
    CassetteError,
    CassetteMissError,
    EndpointError,
    InvalidProviderInputError,
    SpanEvent,
    SummaryRequest,
    TransientEndpointError,
    artifact_document,
    get_summarizer,
)
from workbench.summarize.cassette import Cassette, cassette_key
from workbench.summarize.http import HttpSummarizer, build_compact_input, strip_item_id

API_KEY = "sk-test-not-a-real-key-0123456789"


class Stub:
    """A scripted OpenAI-compatible server. ``script[path]`` is a list of replies, consumed
    in order (the last one repeats): ``(status, body)``, ``(status, body, delay_s)`` or
    ``"drop"`` (close the connection without answering)."""

    def __init__(self):
        self.script: dict[str, list] = {}
        self.requests: list[tuple[str, dict, dict]] = []
        self.lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                n = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(n) or b"{}")
                path = self.path.removeprefix("/v1")
                with stub.lock:
                    stub.requests.append((path, body, dict(self.headers)))
                    replies = stub.script.get(path) or [(404, {"error": {"message": "no route"}})]
                    reply = replies.pop(0) if len(replies) > 1 else replies[0]
                if reply == "drop":
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                status, payload, *rest = reply
                if rest:
                    time.sleep(rest[0])
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    if status == 429:
                        self.send_header("Retry-After", "0.5")
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.02,), daemon=True)
        self.thread.start()
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def count(self, path: str) -> int:
        with self.lock:
            return sum(1 for p, _, _ in self.requests if p == path)

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def stub():
    s = Stub()
    yield s
    s.stop()


class Sleeps(list):
    def __call__(self, seconds):
        self.append(seconds)


def closed_port_url() -> str:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return f"http://127.0.0.1:{port}/v1"


def chat_reply(text: str, model: str = "stub-model") -> dict:
    return {"id": "chatcmpl-1", "object": "chat.completion", "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150}}


def compact_reply(*encrypted: str) -> dict:
    output = [{"id": "msg_keep", "type": "message", "role": "user",
               "content": [{"type": "input_text", "text": "Fix the importer."}]}]
    output += [{"id": f"cmp_{i}", "type": "compaction", "encrypted_content": e}
               for i, e in enumerate(encrypted)]
    return {"id": "resp_1", "object": "response.compaction", "created_at": 1767225600,
            "output": output, "usage": {"input_tokens": 900, "output_tokens": 80}}


NOT_PERSISTED = {"error": {"message": "Item with id 'rs_abc' not found. Items are not persisted "
                                      "when `store` is set to false. Try again with `store` set "
                                      "to true, or remove this item from your input.",
                           "type": "invalid_request_error", "code": None}}


def request(n: int = 0, target: int = 200) -> SummaryRequest:
    events = (
        SpanEvent(10 + n, "message", "user", f"Please fix the importer (round {n})."),
        SpanEvent(11 + n, "reasoning", "assistant", "Thinking about the reader."),
        SpanEvent(12 + n, "tool_call", "assistant", json.dumps(
            {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "read_file",
             "arguments": "{\"path\": \"src/reader.py\"}"})),
        SpanEvent(13 + n, "tool_result", "tool", json.dumps(
            {"type": "function_call_output", "id": "fco_1", "call_id": "call_1",
             "output": "def read(): ..."})),
        SpanEvent(14 + n, "tool_call", "assistant", json.dumps(
            {"type": "function_call", "id": "fc_2", "name": "run_tests", "arguments": "{}"})),
        SpanEvent(15 + n, "tool_result", "tool", "3 passed"),
        SpanEvent(16 + n, "message", "assistant", "Fixed; the tests pass."),
    )
    return SummaryRequest("cont-h", f"art-{n}", 10 + n, 16 + n, events, None, target)


# --------------------------------------------------------------------------- chat


def test_chat_completions_happy_path(stub):
    stub.script["/chat/completions"] = [(200, chat_reply("## Summary\nThe importer was fixed."))]
    s = get_summarizer("http", base_url=stub.base_url, model="stub-model", api_key=API_KEY)
    res = s.summarize(request(target=321))
    assert res.text == "## Summary\nThe importer was fixed."
    assert res.backend == "http" and not res.opaque and res.ok
    assert res.diagnostics["usage"]["total_tokens"] == 150
    assert res.diagnostics["finish_reason"] == "stop"
    (path, body, headers), = stub.requests
    assert path == "/chat/completions"
    assert body["model"] == "stub-model" and body["max_tokens"] == 321
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert "Please fix the importer" in body["messages"][1]["content"]
    assert headers["Authorization"] == f"Bearer {API_KEY}"
    assert artifact_document(request(), res)["provenance"]["produced_by"] == "http:stub-model"


def test_chat_previous_summary_and_purpose_shape_the_prompt(stub):
    stub.script["/chat/completions"] = [(200, chat_reply("ok"))]
    s = HttpSummarizer(stub.base_url, "m")
    req = request()
    s.summarize(dataclasses.replace(req, previous_summary="EARLIER", purpose="flush"))
    body = stub.requests[-1][1]
    assert "memory notes" in body["messages"][0]["content"]
    assert body["messages"][1]["content"].startswith("Previous summary:\nEARLIER")


@pytest.mark.parametrize("status", [400, 401, 404, 422])
def test_chat_errors_raise_endpoint_errors_without_retry(stub, status):
    stub.script["/chat/completions"] = [(status, {"error": {"message": "nope"}})]
    s = HttpSummarizer(stub.base_url, "m", sleep=Sleeps())
    with pytest.raises(EndpointError) as info:
        s.summarize(request())
    assert info.value.status == status and not isinstance(info.value, TransientEndpointError)
    assert isinstance(info.value, WorkbenchError)
    assert stub.count("/chat/completions") == 1


def test_malformed_answers_are_endpoint_errors(stub):
    stub.script["/chat/completions"] = [(200, b"<html>not json</html>"), (200, {"choices": []})]
    s = HttpSummarizer(stub.base_url, "m")
    with pytest.raises(EndpointError, match="not JSON"):
        s.summarize(request())
    with pytest.raises(EndpointError, match="choices"):
        s.summarize(request())


# --------------------------------------------------------------------------- compact


def test_compact_returns_every_compaction_item_opaque(stub):
    stub.script["/responses/compact"] = [(200, compact_reply("QUJD" * 10, "WFla" * 25, "enc3"))]
    s = HttpSummarizer(stub.base_url, "gpt-x", mode="compact")
    res = s.summarize(request())
    assert res.opaque and res.ok
    assert res.text == "[compaction items: 3, 144 bytes encrypted]"
    d = res.diagnostics
    assert d["compaction_items"] == 3 and d["latest_compaction_index"] == 3
    assert d["window"] == compact_reply("QUJD" * 10, "WFla" * 25, "enc3")["output"]
    assert d["encrypted_bytes"] == 144 and len(d["encrypted_sha256"]) == 3
    # the request: ids stripped, call_id kept, id copied into call_id for a call with only id
    (_, body, _), = stub.requests
    items = body["input"]
    assert body["model"] == "gpt-x"
    assert all("id" not in it for it in items)
    assert [it.get("type") for it in items] == ["message", "function_call", "function_call_output",
                                                "function_call", "function_call_output", "message"]
    assert items[1]["call_id"] == "call_1" and items[2]["call_id"] == "call_1"
    assert items[3]["call_id"] == "fc_2" and items[4] == {
        "type": "function_call_output", "call_id": "fc_2", "output": "3 passed"}
    assert d["dropped_reasoning"] == 1 and d["stripped_ids"] == 3
    one = HttpSummarizer(stub.base_url, "gpt-x", mode="compact")
    stub.script["/responses/compact"] = [(200, compact_reply("abcd"))]
    assert one.summarize(request()).text == "[compaction item: 4 bytes encrypted]"


def test_compact_window_can_be_chained_through_previous_summary(stub):
    stub.script["/responses/compact"] = [(200, compact_reply("first")), (200, compact_reply("second"))]
    s = HttpSummarizer(stub.base_url, "m", mode="compact")
    first = s.summarize(request(0))
    req = request(10)
    nxt = dataclasses.replace(req, previous_summary=json.dumps(first.diagnostics["window"]))
    s.summarize(nxt)
    items = stub.requests[-1][1]["input"]
    assert items[1] == {"type": "compaction", "encrypted_content": "first"}   # id stripped
    assert all("id" not in it for it in items)


def test_build_compact_input_converts_other_tool_shapes():
    events = (
        SpanEvent(1, "tool_call", "assistant", json.dumps(
            {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}})),
        SpanEvent(2, "tool_result", "user", json.dumps(
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "a.py"}]})),
        SpanEvent(3, "tool_call", "assistant", json.dumps(
            {"id": "call_9", "type": "function", "function": {"name": "grep", "arguments": "{}"}})),
        SpanEvent(4, "tool_result", "tool", json.dumps({"tool_call_id": "call_9", "content": "hit"})),
        SpanEvent(5, "tool_result", "tool", "orphan output"),
        SpanEvent(6, "tool_call", "assistant", "free-form call text"),
    )
    items, stats = build_compact_input(events, "plain earlier summary")
    assert items[0]["role"] == "user" and "plain earlier summary" in items[0]["content"][0]["text"]
    assert items[1] == {"type": "function_call", "call_id": "toolu_1", "name": "Bash",
                        "arguments": "{\"command\":\"ls\"}"}
    assert items[2] == {"type": "function_call_output", "call_id": "toolu_1", "output": "a.py"}
    assert items[3]["call_id"] == "call_9" and items[4]["call_id"] == "call_9"
    assert items[5]["type"] == "message"          # an output without a call stays a message
    assert items[6] == {"type": "function_call", "call_id": "call_6", "name": "tool",
                        "arguments": "free-form call text"}
    assert stats["unpaired_calls"] == 1
    assert strip_item_id({"type": "custom_tool_call", "id": "ctc_1"}) == (
        {"type": "custom_tool_call", "call_id": "ctc_1"}, True)
    assert strip_item_id({"type": "message", "id": "msg_1"}) == ({"type": "message"}, True)


@pytest.mark.parametrize("status", [404, 405, 410, 501])
def test_unsupported_compact_endpoint_is_negative_cached_for_the_session(stub, status):
    stub.script["/responses/compact"] = [(status, {"error": {"message": "Not Found"}})]
    s = HttpSummarizer(stub.base_url, "m", mode="compact", sleep=Sleeps())
    first = s.summarize(request(0))
    assert first.diagnostics["status"] == "unsupported_endpoint" and not first.ok
    assert first.diagnostics["http_status"] == status
    assert stub.count("/responses/compact") == 1
    for n in (1, 2):
        later = s.summarize(request(n))
        assert later.diagnostics["status"] == "skipped_unsupported_endpoint"
        assert later.opaque and later.text == ""
    assert stub.count("/responses/compact") == 1          # no request after the first
    assert s.unsupported_endpoints == {"cont-h": {"/responses/compact": status}}
    assert s.stats["skipped"] == 2
    # the negative cache belongs to the session: a new instance asks again
    HttpSummarizer(stub.base_url, "m", mode="compact").summarize(request(0))
    assert stub.count("/responses/compact") == 2


def test_the_negative_cache_is_per_provider_session_not_per_summarizer(stub):
    """One summarizer serves an audit's many sessions (continuity x policy): a 404 in one
    session skips that session's later calls only; another session asks the endpoint."""
    stub.script["/responses/compact"] = [(404, {"error": {"message": "Not Found"}}), (200, compact_reply("ok"))]
    s = HttpSummarizer(stub.base_url, "m", mode="compact", sleep=Sleeps())
    a, b = (dataclasses.replace(request(0), session=name) for name in ("codex-remote/c1", "holon-openai/c1"))
    assert s.summarize(a).diagnostics["status"] == "unsupported_endpoint"
    assert s.summarize(a).diagnostics["status"] == "skipped_unsupported_endpoint"
    other = s.summarize(b)
    assert other.ok and other.diagnostics["compaction_items"] == 1
    assert stub.count("/responses/compact") == 2
    assert s.unsupported_endpoints == {"codex-remote/c1": {"/responses/compact": 404}}
    # without a session, a request's session is its continuity
    assert dataclasses.replace(request(0), session="").provider_session == "cont-h"


def test_items_not_persisted_is_invalid_input_and_not_negative_cached(stub):
    stub.script["/responses/compact"] = [(404, NOT_PERSISTED), (200, compact_reply("ok"))]
    s = HttpSummarizer(stub.base_url, "m", mode="compact", sleep=Sleeps())
    with pytest.raises(InvalidProviderInputError, match="not persisted") as info:
        s.summarize(request())
    assert info.value.status == 404 and isinstance(info.value, WorkbenchError)
    assert s.unsupported_endpoints == {}
    res = s.summarize(request())                    # the endpoint is still tried
    assert res.ok and stub.count("/responses/compact") == 2


@pytest.mark.parametrize("status", [408, 409, 429, 500, 502, 503, 504])
def test_transient_status_then_success_is_retried(stub, status):
    stub.script["/responses/compact"] = [(status, {"error": {"message": "busy"}}),
                                         (200, compact_reply("enc"))]
    sleeps = Sleeps()
    s = HttpSummarizer(stub.base_url, "m", mode="compact", sleep=sleeps, backoff_base=0.25)
    res = s.summarize(request())
    assert res.ok and res.text == "[compaction item: 3 bytes encrypted]"
    assert stub.count("/responses/compact") == 2
    assert sleeps == [0.5 if status == 429 else 0.25]   # 429 honours Retry-After
    assert s.unsupported_endpoints == {} and s.stats["retries"] == 1


def test_transient_errors_exhaust_retries_with_bounded_backoff_and_never_cache(stub):
    stub.script["/responses/compact"] = [(503, {"error": {"message": "overloaded"}})]
    sleeps = Sleeps()
    s = HttpSummarizer(stub.base_url, "m", mode="compact", sleep=sleeps, max_retries=5,
                       backoff_base=1.0, backoff_max=4.0)
    with pytest.raises(TransientEndpointError) as info:
        s.summarize(request())
    assert info.value.attempts == 6 and info.value.status == 503
    assert sleeps == [1.0, 2.0, 4.0, 4.0, 4.0]
    assert stub.count("/responses/compact") == 6
    assert s.unsupported_endpoints == {}
    with pytest.raises(TransientEndpointError):
        s.summarize(request())
    assert stub.count("/responses/compact") == 12        # still asked: nothing cached


def test_timeouts_are_retried_then_raise(stub):
    stub.script["/chat/completions"] = [(200, chat_reply("late"), 0.6)]
    sleeps = Sleeps()
    s = HttpSummarizer(stub.base_url, "m", timeout=0.15, max_retries=2, sleep=sleeps,
                       backoff_base=0.1)
    t0 = time.perf_counter()
    with pytest.raises(TransientEndpointError, match="3 attempts") as info:
        s.summarize(request())
    assert time.perf_counter() - t0 < 3
    assert info.value.attempts == 3 and info.value.status is None
    assert stub.count("/chat/completions") == 3 and sleeps == [0.1, 0.2]


def test_timeout_then_success(stub):
    stub.script["/chat/completions"] = [(200, chat_reply("late"), 0.6), (200, chat_reply("fast"))]
    s = HttpSummarizer(stub.base_url, "m", timeout=0.15, sleep=Sleeps())
    assert s.summarize(request()).text == "fast"


def test_dropped_connection_then_success(stub):
    stub.script["/chat/completions"] = ["drop", (200, chat_reply("after reset"))]
    s = HttpSummarizer(stub.base_url, "m", sleep=Sleeps())
    assert s.summarize(request()).text == "after reset"
    assert stub.count("/chat/completions") == 2


def test_connection_refused_is_transient():
    sleeps = Sleeps()
    s = HttpSummarizer(closed_port_url(), "m", mode="compact", max_retries=3, sleep=sleeps)
    with pytest.raises(TransientEndpointError) as info:
        s.summarize(request())
    assert info.value.attempts == 4 and len(sleeps) == 3
    assert s.unsupported_endpoints == {}


def test_bad_http_options():
    from workbench.summarize import SummarizerConfigError

    for opts in ({"mode": "stream"}, {"timeout": 0}, {"max_retries": -1}):
        with pytest.raises(SummarizerConfigError):
            HttpSummarizer("http://127.0.0.1:9/v1", "m", **opts)
    with pytest.raises(SummarizerConfigError, match="base_url"):
        HttpSummarizer(None, "m").summarize(request())


# --------------------------------------------------------------------------- cassettes


def _run_all(s_chat, s_compact, s_gone):
    reqs = [request(n) for n in range(3)]
    out = [s_chat.summarize(r) for r in reqs]
    out += [s_compact.summarize(r) for r in reqs]
    out += [s_gone.summarize(r) for r in reqs[:2]]
    return reqs, out


def test_cassette_record_then_replay_offline_is_byte_identical(stub, tmp_path):
    stub.script["/chat/completions"] = [(200, chat_reply(f"summary {i} — ünïcode")) for i in range(3)]
    stub.script["/responses/compact"] = [(200, compact_reply(f"enc-{i}", "x" * i)) for i in range(3)]
    path = tmp_path / "cassettes" / "summaries.jsonl"
    rec = {"cassette": path, "cassette_mode": "record", "api_key": API_KEY}
    gone_url = stub.base_url.replace("/v1", "/gone")
    # keys ignore the host, so the unsupported endpoint gets its own model (own bodies)
    reqs, recorded = _run_all(HttpSummarizer(stub.base_url, "m", **rec),
                              HttpSummarizer(stub.base_url, "m", mode="compact", **rec),
                              HttpSummarizer(gone_url, "m-old", mode="compact", **rec))
    n_requests = len(stub.requests)
    assert n_requests == 7                         # 3 chat + 3 compact + one 404, then cached
    assert [r.diagnostics["status"] for r in recorded[-2:]] == [
        "unsupported_endpoint", "skipped_unsupported_endpoint"]
    stub.stop()
    file_bytes = path.read_bytes()
    assert API_KEY not in file_bytes.decode()
    assert len(file_bytes.decode().strip().split("\n")) == 7   # the 404 is recorded too
    for mode in ("replay", "auto"):
        rep = {"cassette": path, "cassette_mode": mode}
        _, replayed = _run_all(HttpSummarizer(stub.base_url, "m", **rep),
                               HttpSummarizer(stub.base_url, "m", mode="compact", **rep),
                               HttpSummarizer(gone_url, "m-old", mode="compact", **rep))
        assert replayed == recorded
        for req, a, b in zip(reqs * 2, recorded, replayed, strict=False):
            da = json.dumps(artifact_document(req, a), sort_keys=True, ensure_ascii=False).encode()
            db = json.dumps(artifact_document(req, b), sort_keys=True, ensure_ascii=False).encode()
            assert da == db
        assert path.read_bytes() == file_bytes      # replays never write


def test_cassette_auto_records_missing_entries_and_file_is_order_independent(stub, tmp_path):
    stub.script["/chat/completions"] = [(200, chat_reply("s"))]
    a_path, b_path = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    sa = HttpSummarizer(stub.base_url, "m", cassette=a_path)      # default mode: auto
    sb = HttpSummarizer(stub.base_url, "m", cassette=Cassette(b_path, "auto"))
    for n in (0, 1, 2):
        sa.summarize(request(n))
    for n in (2, 0, 1):
        sb.summarize(request(n))
    assert stub.count("/chat/completions") == 6
    assert a_path.read_bytes() == b_path.read_bytes()
    sa.summarize(request(1))                                      # present: no request
    assert stub.count("/chat/completions") == 6 and sa.stats["cassette_hits"] == 1
    sa.summarize(request(7))                                      # missing: recorded
    assert stub.count("/chat/completions") == 7 and len(Cassette(a_path, "replay")) == 4


def test_replay_of_an_unknown_request_is_a_clear_error(stub, tmp_path):
    stub.script["/chat/completions"] = [(200, chat_reply("s"))]
    path = tmp_path / "c.jsonl"
    HttpSummarizer(stub.base_url, "m", cassette=path, cassette_mode="record").summarize(request(0))
    s = HttpSummarizer(stub.base_url, "m", cassette=path, cassette_mode="replay")
    body = s.chat_body(request(5))
    key = cassette_key("POST", "/chat/completions", body)
    with pytest.raises(CassetteMissError, match=key) as info:
        s.summarize(request(5))
    assert info.value.key == key and isinstance(info.value, WorkbenchError)
    assert stub.count("/chat/completions") == 1               # replay never called the server
    with pytest.raises(CassetteError, match="not found"):
        Cassette(tmp_path / "missing.jsonl", "replay")
    with pytest.raises(CassetteError, match="mode"):
        Cassette(path, "rewind")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"key": "k"}\n')
    with pytest.raises(CassetteError, match="bad.jsonl:1"):
        Cassette(bad, "replay")


def test_replay_without_base_url_works_offline(stub, tmp_path):
    stub.script["/responses/compact"] = [(200, compact_reply("e1", "e2"))]
    path = tmp_path / "c.jsonl"
    live = HttpSummarizer(stub.base_url, "m", mode="compact", cassette=path).summarize(request())
    offline = HttpSummarizer(None, "m", mode="compact", cassette=path,
                             cassette_mode="replay").summarize(request())
    assert offline == live and offline.diagnostics["compaction_items"] == 2


def test_cassette_key_is_canonical():
    a = cassette_key("POST", "/chat/completions", {"model": "m", "messages": [{"a": 1, "b": "é"}]})
    b = cassette_key("post", "/chat/completions", {"messages": [{"b": "é", "a": 1}], "model": "m"})
    c = cassette_key("POST", "/responses/compact", {"model": "m", "messages": [{"a": 1, "b": "é"}]})
    assert a == b != c and len(a) == 64


def test_an_opaque_placeholder_as_previous_summary_is_not_sent():
    items, stats = build_compact_input(request().events, "[compaction items: 2, 99 bytes encrypted]")
    assert items[0]["content"][0]["text"].startswith("Please fix the importer")
    assert stats["dropped_placeholder"] == 1
