"""aider markdown chat histories: the bundled transcripts (hand counts), sessions,
commands and ``> Tokens:`` usage lines of every release format."""

from __future__ import annotations

import pytest
from format_checks import (
    NO_USAGE,
    check_structure,
    parse,
    stats,
)

from workbench.continuity.enums import EventFlag, EventKind, Role
from workbench.errors import SourceError


def test_aider_complex_change(recorded_dir):
    conts, _ = parse(recorded_dir / "aider/complex-change.md", "aider")
    assert len(conts) == 1  # no '# aider chat started at' header (grep)
    [c] = conts
    s = stats(c)
    # 10 '#### ' lines = 10 single-line user inputs, 1 of them '/add ...' with no reply
    # after it; 9 user turns are followed by a reply (one request each)
    assert s["message_roles"] == {"USER": 9, "ASSISTANT": 9}
    assert s["requests"] == 9
    # 10 groups of consecutive '> ' lines: 9 outputs + 1 '^C KeyboardInterrupt'; + the /add command
    assert s["kinds"]["SIDE_EFFECT"] == 11
    # 16 <div>/</div> lines: 1 inside the preamble (front matter + intro), 15 markup chunks
    assert s["kinds"]["OPAQUE"] == 16
    assert s["kinds"].get("USAGE", 0) == 0 and s["usage"] == NO_USAGE  # no Tokens lines
    assert c.continuity_id == "complex-change"
    check_structure(c)


def test_aider_sessions_tokens_and_commands(tmp_path):
    text = (
        "\n# aider chat started at 2024-05-01 10:00:00\n\n"
        "> /usr/bin/aider --model gpt-4o  \n> Aider v0.50.0  \n\n"
        "#### add a hello function  \n#### to hello.py  \n\n"
        "Here is the change:\n\n```python\n> not tool output, inside a fence\n#### nor a user line\n```\n\n"
        "> Tokens: 4.2k sent, 1.2k received. Cost: $0.02 message, $0.05 session.  \n"
        "> Applied edit to hello.py  \n\n"
        "#### /add foo.py  \n\n> Added foo.py to the chat  \n\n"
        "#### /ask why?  \n\nBecause.\n\n"
        "> Tokens: 12k sent, 1.5k cache write, 3.2k cache hit, 245 received. Cost: $0.01 message.  \n\n"
        "# aider chat started at 2024-05-01 11:30:00\n\n"
        "#### again  \n\nSure, partial reply\n```python\nprint(1)\n\n> ^C KeyboardInterrupt  \n\n"
        "#### thanks  \n\nWelcome.\n\n> Tokens: 1.5M sent, 12 received.  \n"
    )
    path = tmp_path / ".aider.chat.history.md"
    path.write_text(text, encoding="utf-8")
    conts, _ = parse(path, "aider")
    assert [c.continuity_id for c in conts] == ["aider-2024-05-01T10:00:00", "aider-2024-05-01T11:30:00"]
    from workbench.sources import aider

    assert aider.roundtrip([r for c in conts for r in c.rows.cols["raw"]]) == text
    a, b = conts
    ca = a.rows.cols
    users = [ca["text"][i] for i in range(len(a.rows)) if ca["kind"][i] == EventKind.MESSAGE and ca["role"][i] == Role.USER]
    assert users == ["add a hello function\nto hello.py", "/ask why?"]
    cmd = [i for i in range(len(a.rows)) if ca["name"][i] == "command"]
    assert [ca["kind"][i] for i in cmd] == [EventKind.SIDE_EFFECT, EventKind.MESSAGE]
    reply = next(i for i in range(len(a.rows)) if ca["role"][i] == Role.ASSISTANT)
    assert "#### nor a user line" in ca["text"][reply]
    usage = [(ca["request"][i], ca["usage_input"][i], ca["usage_cache_read"][i], ca["usage_cache_write"][i],
              ca["usage_output"][i]) for i in range(len(a.rows)) if ca["kind"][i] == EventKind.USAGE]
    # sent includes the cache tokens: 12,000 - 3,200 hit - 1,500 write = 7,300 uncached
    assert usage == [(0, 4200, -1, -1, 1200), (1, 7300, 3200, 1500, 245)]
    assert stats(a)["requests"] == 2
    s = stats(b)
    assert s["requests"] == 2 and s["usage"]["usage_input"] == 1_500_000 and s["usage"]["usage_output"] == 12
    cb = b.rows.cols
    intr = [i for i in range(len(b.rows)) if cb["name"][i] == "interrupt"]
    assert len(intr) == 1 and cb["flags"][intr[0]] & EventFlag.ERROR  # the unclosed fence ended there


def test_aider_tokens_line_parsing():
    from workbench.sources.aider import parse_tokens_line

    assert parse_tokens_line("> Tokens: 4.2k sent, 1.2k received. Cost: $0.02 message, $0.05 session.") == (4200, -1, -1, 1200)
    assert parse_tokens_line("> Tokens: 950 sent, 12 received.") == (950, -1, -1, 12)
    assert parse_tokens_line("> Tokens: 12k sent, 3.1k cache write, 8.0k cache hit, 1.1k received.") == (900, 8000, 3100, 1100)
    assert parse_tokens_line("> Tokens: 2.5M sent, 1k received.") == (2_500_000, -1, -1, 1000)


def test_aider_bad_tokens_line_fails_or_skips(tmp_path):
    path = tmp_path / "h.md"
    path.write_text("# aider chat started at 2024-01-01 00:00:00\n\n#### hi\n\nhello\n\n> Tokens: lots sent\n")
    with pytest.raises(SourceError) as exc:
        parse(path, "aider")
    assert ":7:" in str(exc.value) and "lots" in str(exc.value)
    conts, ctx = parse(path, "aider", on_error="skip")
    assert len(ctx.skipped) == 1 and ctx.skipped[0]["line"] == 7
    c = conts[0].rows.cols
    assert c["flags"][-1] & EventFlag.SKIPPED and c["raw"][-1] == "> Tokens: lots sent\n"
