"""Seeded pools of transcript-like text, one pool per text class.

Events draw their text from a pool by index, so a 10 M-event continuity needs only a few
thousand distinct strings, each tokenized once. Pools are a pure function of the seed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

_WORDS = [
    "the", "function", "returns", "value", "when", "config", "is", "missing", "so", "we", "fall",
    "back", "to", "default", "and", "log", "a", "warning", "before", "retrying", "request", "with",
    "backoff", "cache", "layer", "stores", "parsed", "result", "keyed", "by", "path", "test",
    "fails", "because", "fixture", "creates", "temp", "directory", "without", "cleanup", "parser",
    "handles", "nested", "blocks", "but", "drops", "trailing", "comment", "migration", "adds",
    "column", "index", "on", "user", "id", "scheduler", "runs", "job", "every", "minute", "queue",
    "worker", "picks", "task", "marks", "done", "updates", "status", "field", "response",
    "includes", "pagination", "cursor", "client", "should", "follow", "next", "link", "until",
    "empty", "page", "arrives",
]
_IDENTS = ("parse_config", "load_state", "UserRepository", "fetch_page", "retry_with_backoff",
           "CacheEntry", "validate_schema", "render_template", "compute_digest", "SessionManager",
           "handle_request", "build_index", "TokenBucket", "apply_migration", "serialize_event")
_FILES = ("src/app/config.py", "src/app/cache.py", "tests/test_parser.py", "lib/queue/worker.ts",
          "pkg/server/handler.go", "src/models/user.py", "docs/usage.md", "setup.cfg",
          "src/utils/retry.py", "tests/conftest.py", "web/src/App.tsx", "Cargo.toml")
_TOOLS = ("bash", "str_replace_editor", "read_file", "grep", "run_tests", "web_search", "edit_file")


def _sentence(rng, lo, hi):
    n = int(rng.integers(lo, hi))
    words = [_WORDS[i] for i in rng.integers(0, len(_WORDS), n)]
    return " ".join(words).capitalize() + "."


def _paragraph(rng, sentences):
    return " ".join(_sentence(rng, 6, 18) for _ in range(sentences))


def _code_block(rng, lines):
    out = []
    for _ in range(lines):
        ident = _IDENTS[int(rng.integers(len(_IDENTS)))]
        form = int(rng.integers(5))
        indent = "    " * int(rng.integers(0, 3))
        if form == 0:
            out.append(f"{indent}def {ident}(self, value, *, timeout={int(rng.integers(1, 60))}):")
        elif form == 1:
            out.append(f"{indent}result = {ident}(payload[{int(rng.integers(0, 99))}])")
        elif form == 2:
            out.append(f"{indent}if not {ident}.is_valid():")
        elif form == 3:
            out.append(f"{indent}    raise ValueError(\"{_sentence(rng, 3, 7)}\")")
        else:
            out.append(f"{indent}return {ident}")
    return "\n".join(out)


def _observation(rng, size):
    kind = int(rng.integers(4))
    path = _FILES[int(rng.integers(len(_FILES)))]
    if kind == 0:  # file view with line numbers
        body = _code_block(rng, size)
        return "\n".join(f"{i + 1:>4}  {line}" for i, line in enumerate(body.split("\n")))
    if kind == 1:  # test run
        lines = [f"{path}::test_{_IDENTS[int(rng.integers(len(_IDENTS)))].lower()}_{i} "
                 f"{'PASSED' if rng.random() < 0.8 else 'FAILED'}" for i in range(size)]
        lines.append(f"==== {int(rng.integers(1, 9))} failed, {size} passed in {rng.random() * 9:.2f}s ====")
        return "\n".join(lines)
    if kind == 2:  # grep output
        return "\n".join(f"{_FILES[int(rng.integers(len(_FILES)))]}:{int(rng.integers(1, 900))}:"
                         f"    {_IDENTS[int(rng.integers(len(_IDENTS)))]}(value)" for _ in range(size))
    return "Traceback (most recent call last):\n" + "\n".join(
        f'  File "{_FILES[int(rng.integers(len(_FILES)))]}", line {int(rng.integers(1, 500))}, in '
        f"{_IDENTS[int(rng.integers(len(_IDENTS)))]}" for _ in range(size // 2 + 1)
    ) + f"\nValueError: {_sentence(rng, 4, 10)}"


def _tool_call(rng):
    tool = _TOOLS[int(rng.integers(len(_TOOLS)))]
    path = _FILES[int(rng.integers(len(_FILES)))]
    if tool == "bash":
        return f'{{"command": "cd /repo && python -m pytest {path} -x -q"}}'
    if tool == "grep":
        return f'{{"pattern": "{_IDENTS[int(rng.integers(len(_IDENTS)))]}", "path": "src/"}}'
    return f'{{"path": "/repo/{path}", "view_range": [{int(rng.integers(1, 200))}, {int(rng.integers(200, 400))}]}}'


def _side_effect(rng):
    kinds = ("progress", "file_snapshot", "hook", "telemetry", "index_update")
    k = kinds[int(rng.integers(len(kinds)))]
    return f'{{"type": "{k}", "path": "{_FILES[int(rng.integers(len(_FILES)))]}", "n": {int(rng.integers(1, 10_000))}}}'


# text class id -> (name, generator(rng, size_hint))
TEXT_CLASSES: tuple[tuple[str, object], ...] = (
    ("system", lambda rng, s: "You are a careful software engineering agent. " + _paragraph(rng, 12 + s)),
    ("user_task", lambda rng, s: _paragraph(rng, 2 + s)),
    ("thought", lambda rng, s: _paragraph(rng, 1 + s)),
    ("tool_call", lambda rng, s: _tool_call(rng)),
    ("observation", lambda rng, s: _observation(rng, 12 + 8 * s)),
    ("chat_user", lambda rng, s: _paragraph(rng, 1 + s)),
    ("chat_assistant", lambda rng, s: _paragraph(rng, 2 + 2 * s)),
    ("reasoning", lambda rng, s: _paragraph(rng, 1 + s)),
    ("side_effect", lambda rng, s: _side_effect(rng)),
    ("memory", lambda rng, s: "Remember: " + _sentence(rng, 6, 16)),
    # appended last, so the pools of the classes above stay byte-identical: a SWE-agent
    # thought, longer than a chat thought (the swe-bench profile's observation share)
    ("swe_thought", lambda rng, s: _paragraph(rng, 2 + s)),
)
CLASS_ID = {name: i for i, (name, _) in enumerate(TEXT_CLASSES)}


@dataclass(frozen=True)
class TextPool:
    """All pooled strings (flat) plus, per class, the slice of the flat pool it owns."""

    texts: list[str]
    class_start: np.ndarray  # int64 [n_classes]
    class_size: np.ndarray  # int64 [n_classes]


def build_pool(seed: int, per_class: int = 256) -> TextPool:
    rng = np.random.default_rng([seed, 0x7E47])
    texts: list[str] = []
    starts, sizes = [], []
    for _, gen in TEXT_CLASSES:
        starts.append(len(texts))
        # size hints skewed small with a long tail, so token counts vary realistically
        hints = np.minimum(rng.geometric(0.25, per_class) - 1, 40)
        texts.extend(gen(rng, int(h)) for h in hints)
        sizes.append(per_class)
    return TextPool(texts, np.asarray(starts, np.int64), np.asarray(sizes, np.int64))
