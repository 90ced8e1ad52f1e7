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


# ------------------------------------------------- every release's '> Tokens:' format

# Whole sessions of aider's own tests/fixtures/chat-history.md (datasets/bundled/SOURCES.md).
# Hand counts with a throwaway plain-``re`` script: sessions = '# aider chat started at'
# lines, usage lines = lines starting '> Tokens:', sums of the 'N sent' / 'N received' /
# 'N cache hit'+'N cached' / 'N cache write' counts (k = x1000) and of the '$X request|message'
# costs; "input" applies the module's rule (a line whose cache counts exceed 'sent' keeps
# 'sent' as the uncached input, else sent - hit - write).
REAL_HISTORIES = {
    # file: (sessions, usage lines, input, cache read, cache write, output, cost)
    "chat-history-2024-08-05.md": (12, 10, 128_288, 0, 0, 5_120, 0.4219),   # '5,244 sent ... request'
    "chat-history-2024-08-13.md": (4, 5, 18_591, 0, 0, 2_589, 0.008),       # '... message, ... session'
    "chat-history-2024-08-19.md": (50, 38, 278_368, 112_388, 14_930, 1_008, 0.0449308),  # cached / hit / write
    "chat-history-2024-08-20.md": (26, 23, 94_233, 31_144, 53_865, 2_769, 0.11471),      # '1.6k sent'
}


@pytest.mark.parametrize("name", sorted(REAL_HISTORIES))
def test_real_histories_count_every_usage_line(recorded_dir, name):
    sessions, lines, inp, read, write, out, cost = REAL_HISTORIES[name]
    conts, ctx = parse(recorded_dir / "aider" / name, "aider")
    assert len(conts) == sessions and not ctx.skipped
    usage = [(c.rows.cols["usage_input"][i], c.rows.cols["usage_cache_read"][i],
              c.rows.cols["usage_cache_write"][i], c.rows.cols["usage_output"][i])
             for c in conts for i in range(len(c.rows)) if c.rows.cols["kind"][i] == EventKind.USAGE]
    assert len(usage) == lines
    assert sum(u[0] for u in usage) == inp and sum(u[3] for u in usage) == out
    assert sum(max(u[1], 0) for u in usage) == read and sum(max(u[2], 0) for u in usage) == write
    totals = [c.meta["run_usage"] for c in conts if "run_usage" in c.meta]
    assert sum(t["api_calls"] for t in totals) == lines
    assert sum(t["cost_usd"] or 0.0 for t in totals) == pytest.approx(cost, abs=1e-9)  # None: no Cost clause
    for c in conts:
        check_structure(c)


def test_real_history_request_format_session(recorded_dir):
    conts, _ = parse(recorded_dir / "aider/chat-history-2024-08-05.md", "aider")
    by_id = {c.continuity_id: c for c in conts}
    # lines 103-217: one reply, '> Tokens: 5,244 sent, 604 received. Cost: $0.02 request, $0.02 session.'
    c = by_id["aider-2024-08-05T19:33:32"]
    assert c.meta == {"harness_version": "v0.47.2-dev", "run_usage": {
        "source": "aider '> Tokens:' lines", "tokens_sent": 5_244, "tokens_received": 604, "api_calls": 1,
        "cost_usd": 0.02, "session_cost_usd": 0.02, "approximate": False}}
    cols = c.rows.cols
    [u] = [i for i in range(len(c.rows)) if cols["kind"][i] == EventKind.USAGE]
    assert (cols["usage_input"][u], cols["usage_cache_read"][u], cols["usage_output"][u]) == (5_244, -1, 604)
    assert cols["request"][u] == 0 and cols["source_line"][u] == 209
    # the last session (lines 1680-2705): 8 lines, $0.04 + 0.08 + 0.05 + 0.04 + 0.04 + 0.05 x 3,
    # the last one printing '$0.40 session'; 8,985 + 13,371 + ... + 14,490 sent
    ru = by_id["aider-2024-08-06T08:47:10"].meta["run_usage"]
    assert (ru["api_calls"], ru["tokens_sent"], ru["tokens_received"]) == (8, 110_478, 4_432)
    assert ru["cost_usd"] == pytest.approx(0.40) and ru["session_cost_usd"] == 0.40
    assert by_id["aider-2024-08-06T08:47:10"].rows.cols["request"].count(-1) < len(by_id["aider-2024-08-06T08:47:10"].rows)


def test_cache_forms_of_august_2024(recorded_dir):
    from workbench.sources.aider_usage import read_tokens_line

    lines = {ln.rstrip(): read_tokens_line(ln).usage() for ln in
             (recorded_dir / "aider/chat-history-2024-08-19.md").read_text(encoding="utf-8").splitlines()
             if ln.startswith("> Tokens:")}
    # dev build printing the Anthropic prompt without its cache hits: 194 < 9,474
    assert lines["> Tokens: 194 sent, 9,474 cached, 7 received. Cost: $0.000057 message, "
                 "$0.000057 session, cache costs not available."] == (194, 9_474, -1, 7)
    assert lines["> Tokens: 194 sent, 9,474 cache write, 7 received. Cost: $0.0000088 message, "
                 "$0.0000088 session."] == (194, 0, 9_474, 7)
    # DeepSeek: the hits are part of the prompt
    assert lines["> Tokens: 21,539 sent, 320 cached, 9 received. Cost: $0.0030 message, "
                 "$0.0030 session."] == (21_219, 320, -1, 9)
    assert lines["> Tokens: 23,172 sent, 10,496 cache hit, 9 received."] == (12_676, 10_496, 0, 9)
    assert lines["> Tokens: 529 sent, 90 received, cache costs not included. Cost: $0.00024 message, "
                 "$0.00024 session."] == (529, -1, -1, 90)


def test_tokens_lines_of_every_release():
    from workbench.sources.aider_usage import read_tokens_line

    t = read_tokens_line("> Tokens: 5,244 sent, 604 received. Cost: $0.02 request, $0.02 session.  ")
    assert (t.usage(), t.cost, t.cost_unit, t.session_cost, t.approximate) == ((5_244, -1, -1, 604), 0.02,
                                                                               "request", 0.02, False)
    t = read_tokens_line("> Tokens: 13,371 sent, 2,375 received. Cost: $0.08 request, $0.12 session.")
    assert t.usage() == (13_371, -1, -1, 2_375) and t.session_cost == 0.12
    t = read_tokens_line("> Tokens: 12,963 sent, 11,191 cache write, 1,270 cache hit, 105 received.")
    assert t.usage() == (502, 1_270, 11_191, 105) and t.cost is None
    t = read_tokens_line("> Tokens: 15k sent, 13k cache write, 1.6k cache hit, 133 received.")
    assert t.usage() == (400, 1_600, 13_000, 133) and t.approximate
    assert read_tokens_line("> Tokens: 1,234,567 sent, 1 received.").usage() == (1_234_567, -1, -1, 1)


@pytest.mark.parametrize("line, wrong", [
    ("> Tokens: 5,24 sent, 604 received.", "5,24 sent"),
    ("> Tokens: 12 sent, 3 sent, 4 received.", "given twice"),
    ("> Tokens: 12 sent, 4 received. Cost: 3 euros.", "cannot read cost"),
    ("> Tokens: 12 sent, 4 tokens received.", "4 tokens received"),
])
def test_unknown_tokens_forms_are_named(line, wrong):
    from workbench.sources.aider_usage import read_tokens_line
    from workbench.sources.checks import Malformed

    with pytest.raises(Malformed, match=wrong):
        read_tokens_line(line)


def _older_format_history(n_sessions: int, replies: int) -> tuple[str, int, int, int]:
    """An aider 0.47-style history: thousands separators and '$X request' costs."""
    parts, sent, received = [], 0, 0
    for s in range(n_sessions):
        parts.append(f"\n# aider chat started at 2024-08-05 {s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}\n\n"
                     "> /usr/bin/aider --model gpt-4o  \n> Aider v0.47.2-dev  \n\n")
        session = 0.0
        for r in range(replies):
            n_in, n_out = 1_000 + 37 * (s * replies + r), 150 + r
            sent, received, session = sent + n_in, received + n_out, session + 0.01
            reply = "\n".join(f"line {k} of the explanation, with `code` and words" for k in range(40))
            parts.append(f"#### question {r} of session {s}  \n\n{reply}\n\n"
                         f"> Tokens: {n_in:,} sent, {n_out:,} received. Cost: $0.01 request, ${session:.2f} session.  \n\n")
    return "".join(parts), n_sessions * replies, sent, received


def test_multi_megabyte_older_format_history_counts_every_usage_line(tmp_path):
    text, n_lines, sent, received = _older_format_history(300, 12)
    path = tmp_path / ".aider.chat.history.md"
    path.write_text(text, encoding="utf-8")
    assert path.stat().st_size > 3_000_000
    from workbench.sources.importer import import_paths

    ds = import_paths([path], tmp_path / "ds", tokenizers=("approx",))
    ev = ds.events(columns=["kind", "usage_input", "usage_output"])
    usage = ev.filter(ev["kind"] == int(EventKind.USAGE))
    assert usage.height == n_lines == 3_600
    assert int(usage["usage_input"].sum()) == sent and int(usage["usage_output"].sum()) == received
    runs = ds.manifest["import"]["continuities"]
    assert len(runs) == 300 and sum(r["run_usage"]["api_calls"] for r in runs.values()) == n_lines
    assert all(r["run_usage"]["session_cost_usd"] == 0.12 for r in runs.values())


def test_a_call_interrupted_before_its_reply_is_a_request(recorded_dir):
    # lines 150-164 of chat-history-2024-08-19.md: '#### hi', '^C again to exit', then
    # '> Tokens: 17,681 sent, 0 received.' with no reply in between
    conts, _ = parse(recorded_dir / "aider/chat-history-2024-08-19.md", "aider")
    [c] = [c for c in conts if c.continuity_id == "aider-2024-08-19T13:19:08"]
    cols = c.rows.cols
    [u] = [i for i in range(len(c.rows)) if cols["kind"][i] == EventKind.USAGE]
    assert (cols["request"][u], cols["usage_input"][u], cols["usage_output"][u], cols["source_line"][u]) == (0, 17_681, 0, 164)
    assert not any(cols["flags"][i] & EventFlag.OUTPUT for i in range(len(c.rows)))
