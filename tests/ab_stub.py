"""A local OpenAI-compatible chat endpoint for tests: deterministic summaries that depend on
the system prompt and the model, so an A/B of prompts and models has something to find.

* a system prompt asking for "exact values" keeps the whole previous summary and the
  sentences carrying a value (a digit, a path, a capitalised word inside the sentence; not a
  stack frame), prose first (a sentence, not code); any other prompt keeps the first
  sentence of each user message and half the previous summary;
* ``*-large`` models write up to 4 characters a token of the budget, others a quarter of that;
* a request with a ``seed`` (a summary sample) shuffles which sentences fit the budget;
* a judged probe (system prompt "You answer questions ...") is answered with the summary
  line sharing the most words with the question.

``with SummarizingStub() as stub:`` serves ``stub.base_url`` on 127.0.0.1 from a thread;
``stub.requests`` lists the bodies it answered; ``stub.delay`` seconds pass before each answer
(a slow model).
"""

from __future__ import annotations

import json
import random
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

_HEADER = re.compile(r"^\[(\d+)\] (\S+) (.+):$")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_VALUE = re.compile(r"\d|/|\s[A-Z][a-z]")
_PROSE = re.compile(r"^[A-Z][^(){}\[\]`\"<>|]*[.;]$")
_FRAME = re.compile(r'File "|", line \d|^\s*at |\.py:\d|^[\w/.-]+:\d+')


def summarize(system: str, model: str, user: str, max_tokens: int, seed: int | None) -> str:
    keep_values = "exact values" in system.lower()
    budget = max_tokens * (4 if model.endswith("large") else 1)
    previous, _, rest = user.partition("Conversation events")
    previous = previous.removeprefix("Previous summary:\n").strip()
    carried = [ln for ln in previous.splitlines() if ln.startswith("- ")]
    if not keep_values:
        carried = carried[: len(carried) // 2]
    picked: list[str] = []
    role = kind = ""
    first_line = False
    for line in rest.splitlines()[1:]:
        m = _HEADER.match(line)
        if m:
            role, kind, first_line = m.group(2), m.group(3), True
            continue
        if not line.strip():
            continue
        sentences = [s.strip() for s in _SENTENCE.split(line) if s.strip()]
        if keep_values:
            picked += [s for s in sentences if _VALUE.search(s) and not _FRAME.search(s)]
        elif role == "user" and kind == "message" and first_line:
            picked += sentences[:1]
        first_line = False
    if seed is not None:
        random.Random(seed).shuffle(picked)
    if keep_values:  # prose before code and output (a stable sort: the order above within each)
        picked.sort(key=lambda s: not _PROSE.match(s))
    lines, used = [], 0
    for text in [ln.removeprefix("- ") for ln in carried] + picked:
        if used + len(text) + 3 > budget:
            continue
        lines.append("- " + text)
        used += len(text) + 3
    return "## Summary\n" + "\n".join(lines)


def answer(user: str) -> str:
    """A judged probe: the summary line sharing the most words with the question, or UNKNOWN."""
    summary, _, question = user.partition("\n\nQuestion: ")
    words = {w for w in re.findall(r"[a-z]{4,}", question.lower())} - {"which", "what", "does", "when", "with"}
    best, score = "UNKNOWN", 1
    for line in summary.splitlines():
        n = len(words & set(re.findall(r"[a-z]{4,}", line.lower())))
        if n > score:
            best, score = line.removeprefix("- "), n
    return best


class SummarizingStub:
    def __init__(self):
        self.requests: list[dict] = []
        self.delay = 0.0
        self.lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                time.sleep(stub.delay)
                with stub.lock:
                    stub.requests.append(body)
                if self.path.removeprefix("/v1") != "/chat/completions":
                    self._send(404, {"error": {"message": "no route"}})
                    return
                system = next((m["content"] for m in body["messages"] if m["role"] == "system"), "")
                user = next((m["content"] for m in body["messages"] if m["role"] == "user"), "")
                text = (answer(user) if system.startswith("You answer questions") else
                        summarize(system, body["model"], user, int(body.get("max_tokens", 256)), body.get("seed")))
                self._send(200, {"id": "chatcmpl-stub", "object": "chat.completion", "model": body["model"],
                                 "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                              "finish_reason": "stop"}],
                                 "usage": {"prompt_tokens": len(user) // 4, "completion_tokens": len(text) // 4}})

            def _send(self, status: int, payload: dict) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.02,), daemon=True)

    def __enter__(self) -> SummarizingStub:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


def closed_port_url() -> str:
    """An endpoint nobody listens on (a replay that called it would fail)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"
