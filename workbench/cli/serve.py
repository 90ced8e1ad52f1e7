"""``serve-model``: a local OpenAI-compatible model server (llama.cpp) in the foreground, for
``--summarizer http --summarizer-base-url`` offline (:mod:`workbench.summarize.local_server`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from workbench.cli._app import command, fail, say


@command(name="serve-model")
def serve_model(
    model: Annotated[Path | None, typer.Option(help="a GGUF model file (default: SmolLM2-135M-Instruct, "
                                                    "shipped by the local-llm extra)")] = None,
    port: Annotated[int | None, typer.Option(min=1, max=65535, help="port on 127.0.0.1 (default: a free one)")] = None,
    threads: Annotated[int | None, typer.Option(min=1, help="CPU threads the model uses (default: the idle cores, 1 or 2)")] = None,
    measure: Annotated[bool, typer.Option("--measure/--no-measure", help="measure tokens/s on a short "
                                                                         "prompt before serving")] = True,
) -> None:
    """Serve a local model (llama.cpp's OpenAI-compatible server) on 127.0.0.1 until Ctrl-C.

    Needs the local-llm extra: `make local-llm`."""
    import signal

    from workbench.summarize.local_server import LocalModelServer

    def stop_on(signum, frame):  # `kill` or a closed terminal: stop the server as Ctrl-C does
        raise KeyboardInterrupt

    server = LocalModelServer(model, port=port, threads=threads)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, stop_on)
    try:
        server.start()
        say(f"serving {server.model.name} ({server.threads} threads) at {server.base_url}")
        say(f"  use it with: --summarizer http --summarizer-base-url {server.base_url}")
        if measure:
            say(server.describe_throughput())
        say("Ctrl-C stops the server")
        code = server.process.wait()
        raise fail(f"the model server stopped by itself (status {code}):\n{server.log_tail()}", 1)
    except KeyboardInterrupt:
        server.stop()
        say("stopped the model server")
    finally:
        server.stop()
