"""The facts a real agent log names, found deterministically (no planted labels): what a
compaction of that log could keep or lose.

On a synthetic continuity the facts are planted and labelled; on an imported log the log's
own contents stand in for them (docs/targets.md, Retention on real logs). :func:`log_facts`
returns one row per fact: ``kind``, ``value``, ``first_seq`` / ``last_seq`` (its first and
last mention), ``mentions`` (the events that mention it), and for ``task`` facts the
``task_role`` (``todo``, ``request``, ``next_step``) and the todo item's latest ``status``.

Where facts come from (every rule is literal; nothing is guessed from prose):

* Sources are the conversational events: messages, tool calls, tool results and reasoning.
  Recorded summaries and compaction boundaries are what is measured, never a source;
  harness-injected records (``META`` flag) and side effects are not the agent's work.
* ``path``: values of path keys of a tool call's JSON input (``file_path``, ``path``,
  ``notebook_path``, ``filePath``, ``file``, ``filename``, ``file_name``, ``dir``,
  ``directory``, ``target_file``, ``absolute_path``), the files of an ``apply_patch``
  (``*** Update File: X``), Cline/Roo tool markup in messages (``<path>X</path>``,
  ``[read_file for 'X']``), the files a tool result says it created or updated, and the
  words of a shell command that are paths (an explicit ``/``, ``./`` or ``~/`` prefix, or a
  file name with an extension; ``/dev/*`` excluded). A relative path that ends exactly one
  longer path of the log is that file (one fact, the longer path).
* ``command``: the first line of a shell tool's command (``command`` / ``cmd`` of a tool
  named like a shell: Bash, exec_command, terminal, ...; a non-JSON tool call of an agent
  whose tools are shell words, as SWE-agent's; ``<execute_command><command>`` markup),
  whitespace collapsed.
* ``url``: ``http(s)://`` URLs in tool inputs and in user and assistant messages (tool
  outputs — fetched pages, package listings — are not what the agent chose to use).
* ``error``: in tool results and messages, exception type names (``ValueError``,
  ``ENOENT``-style codes excluded) and the text of lines that start like an error
  (``Error:``, ``error[E0382]:``, ``FAILED``, ``fatal:``, ``KeyError:``); plus the first line of a tool
  result the log flags as an error. Tools print code as well as errors, so in a tool's
  output an exception name counts only where it is reported — opening its line (a
  traceback's last line, ``E   KeyError``, ``** (KeyError)``) or on a log line of level error
  or warning — and an error-like line ending like code (``,`` ``;`` ``{`` ``(``) does not;
  numbered lines (``  12→``, a file's contents as a read tool shows them) are skipped.
* ``number``: in tool inputs and user/assistant messages: ports (``localhost:8080``,
  ``port 5432``), versions (``1.2.3``, ``v0.125.0``) and issue / PR references (``#1234``).
* ``identifier``: code spans (backticks) in user and assistant messages that look like a
  symbol (snake_case, camelCase, dotted or ``::`` names, a call ``name()`` — kept as ``name`` —,
  CONSTANTS), the
  identifier-like ``pattern`` of a search tool, and the names declared (``def``, ``class``,
  ``function``, ``interface``, ``type``, ``struct``, ``enum``, ``defmodule``, ``fn``,
  ``func``) in text a tool call writes.
* ``task`` (the task state): the items of todo / plan tools — TodoWrite, write_todos,
  update_plan, Roo's ``update_todo_list`` and Cline's ``task_progress`` checklists,
  ExitPlanMode's plan — with the status of the latest list that names them; every user
  request (a user message the user typed: not a tool result, an environment report or a
  local-command echo; its first 300 characters); and each assistant message's last stated
  next step (a sentence opening with "Next", "Now I'll", "Let me", "I'll", "I will", "Let's").

A value is one fact per (kind, value); ``mentions`` counts the source events whose text
holds the value exactly (at least the events it was extracted from).

>>> import polars as pl
>>> ev = pl.DataFrame({"seq": [0, 1, 2], "kind": [1, 2, 3], "role": [2, 3, 4], "flags": [0, 0, 0],
...     "request": [0, 0, 1], "name": [None, "Bash", "Bash"],
...     "text": ["Fix `parse_args` please", '{"command": "pytest tests/test_cli.py"}',
...              "E   ValueError: bad"]})
>>> f = log_facts(ev)
>>> sorted(zip(f["kind"], f["value"]))  # doctest: +NORMALIZE_WHITESPACE
[('command', 'pytest tests/test_cli.py'), ('error', 'ValueError'), ('identifier', 'parse_args'),
 ('path', 'tests/test_cli.py'), ('task', 'Fix `parse_args` please')]
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from workbench.continuity.enums import EventFlag, EventKind, Role

KINDS = ("path", "identifier", "command", "error", "url", "number", "task")
TASK_ROLES = ("todo", "request", "next_step")
SOURCE_KINDS = (int(EventKind.MESSAGE), int(EventKind.TOOL_CALL), int(EventKind.TOOL_RESULT),
                int(EventKind.REASONING))
REQUEST_CHARS = 300

PATH_KEYS = ("file_path", "path", "notebook_path", "filePath", "file", "filename", "file_name", "dir",
             "directory", "target_file", "absolute_path")
SHELL_TOOLS = frozenset(("bash", "shell", "exec_command", "execute_bash", "terminal", "execute_command",
                         "run_shell_command", "local_shell", "run_terminal_cmd", "cmd", "powershell"))
# SWE-agent style tools whose text is an agent command, not a shell line
AGENT_COMMANDS = frozenset(("edit", "create", "open", "submit", "find_file", "search_file", "search_dir", "goto",
                            "scroll_up", "scroll_down", "insert", "str_replace_editor", "finish", "think"))
SEARCH_TOOLS = frozenset(("grep", "search_file_content", "search_files", "search_dir", "search_file",
                          "codebase_search", "rg"))

_URL = re.compile(r"https?://[^\s\"'<>`)\]}]+")
_URL_TAIL = ".,;:!?'\""
_EXT = r"\.[A-Za-z][A-Za-z0-9]{0,5}"
_PATH_WORD = re.compile(rf"^(?:~/|\./|\.\./|/)?[\w.@+-]+(?:/[\w.@+-]+)*(?:{_EXT})?/?$")
_HAS_EXT = re.compile(rf"[\w-]{_EXT}$")
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", re.M)
_XML_PATH = re.compile(r"<path>([^<\n]{1,300})</path>")
_FOR_PATH = re.compile(r"^\[\w+ for '([^'\n]{1,300})'\]", re.M)
_WROTE_PATH = re.compile(r"(?:File created successfully at|The file) ([^\s`'\"]+?)(?=:?\s|$)")
_XML_COMMAND = re.compile(r"<execute_command>\s*<command>([^<]{1,2000})</command>")
_EXC_NAME = re.compile(r"\b([A-Z][A-Za-z0-9]*(?:Error|Exception|Exit|Interrupt|Warning|Fault))\b")
_ERROR_LINE = re.compile(r"^\s*((?:(?:error|Error|ERROR|fatal|FATAL|panic)(?:\[\w+\])?:|FAILED\s|FAIL\s|"
                         r"Traceback \(most recent call last\)|[A-Z][A-Za-z0-9]*(?:Error|Exception):).*)$", re.M)
_NUMBERED = re.compile(r"^\s*\d+(?:→|\t)")
_REPORTED_AT = re.compile(r"^\s*(?:E\s+|\*\*\s*\(|\(|%|\[|Uncaught\s+|raised\s+)?$")
_LOG_LEVEL = re.compile(r"\[(?i:error|warning|warn|fatal)\]|\b(?:ERROR|WARN|WARNING|FATAL)\b")
_CODE_END = re.compile(r"[,;{(\[]\s*$")
_PORT = re.compile(r"(?:\b(?:localhost|127\.0\.0\.1|0\.0\.0\.0)|\bport)[\s:=]{1,3}(\d{2,5})\b", re.I)
_VERSION = re.compile(r"(?<![\w.])v?\d+\.\d+\.\d+(?:-(?:alpha|beta|rc|dev|pre|canary|next)\.?\d*)?(?![\w.-])")
_ISSUE = re.compile(r"(?<![\w&])#\d{2,}\b")
_CODE_SPAN = re.compile(r"`([^`\n]{2,80})`")
_IDENT = re.compile(r"^[A-Za-z_$][\w$]*(?:(?:\.|::|#)[A-Za-z_$][\w$]*)*(?:\(\))?$")
_CAMEL = re.compile(r"[a-z][A-Z]")
# a declaration at the start of a code line, followed by what only code puts there (prose
# such as "type safety" or "class of bugs" is not one)
_DECL = re.compile(r"^[ \t]*(?:(?:export|pub(?:\(crate\))?|public|private|protected|static|async|abstract|"
                   r"final|default|declare)\s+)*(?:def|class|function|interface|type|struct|enum|defmodule|defp?|"
                   r"fn|func)\s+([A-Za-z_][\w.]*\w)\s*(?=[({<=:]|\bdo\b|\bextends\b|\bimplements\b)", re.M)
_CHECK_ITEM = re.compile(r"^\s*(?:[-*]\s*)?\[([ xX\-~])\]\s+(.+?)\s*$", re.M)
_PLAN_ITEM = re.compile(r"^\s*(?:[-*]|\d+[.)])\s+(.+?)\s*$", re.M)
_NEXT_STEP = re.compile(r"(?:^|(?<=[.!?:]\s)|(?<=\n))((?:Next,?|Now,? I'll|Now I will|Now let me|Let me|I'll|I will|"
                        r"Let's)\s[^\n]{3,200}?[.!:])(?=\s|$)")
_WORD = re.compile(r"\w+", re.U)
_FILE_EXTS = frozenset(("py", "ts", "tsx", "js", "jsx", "md", "json", "yaml", "yml", "toml", "ex", "exs", "rs", "go",
                        "java", "rb", "c", "h", "cpp", "hpp", "cs", "sh", "txt", "html", "css", "lock", "cfg", "ini",
                        "xml", "sql", "mjs", "cjs", "kt", "swift", "php", "vue", "svelte", "heex", "eex", "pl"))
_USER_NOISE = ("<environment_details>", "<local-command", "<command-name>", "Caveat: The messages below",
               "[Request interrupted", "<system-reminder>", "<user-prompt-submit-hook>")
_RESULT_HEADER = re.compile(r"^\[[\w ]+(?: for [^\]]*)?\] Result:")
_STATUS = {" ": "pending", "x": "completed", "X": "completed", "-": "in_progress", "~": "in_progress"}


@dataclass(frozen=True)
class Mention:
    """One extraction: ``kind`` ``value`` at ``seq`` (``role``/``status`` for task facts)."""

    kind: str
    value: str
    seq: int
    task_role: str | None = None
    status: str | None = None


def _json(text: str) -> Any:
    t = text.lstrip()
    if not t.startswith(("{", "[")):
        return None
    try:
        return orjson.loads(t)
    except orjson.JSONDecodeError:
        return None


def _collapse(s: str) -> str:
    return " ".join(s.split())


def _clean_path(p: str) -> str | None:
    p = p.strip().strip("'\"`")
    if not p or "\n" in p or len(p) > 300 or p.startswith("/dev/") or "://" in p or p in (".", "..", "/", "~"):
        return None
    return p


def _command_paths(command: str) -> Iterator[str]:
    for word in command.replace(";", " ").replace("|", " ").replace("&&", " ").split():
        w = word.strip("'\"`()")
        if w.startswith("-") or "=" in w or "*" in w or "$" in w or not _PATH_WORD.match(w):
            continue
        explicit = w.startswith(("/", "./", "../", "~/"))
        ext = _HAS_EXT.search(w)
        if explicit or (ext and w.rsplit(".", 1)[-1].lower() in _FILE_EXTS):
            p = _clean_path(w)
            if p and not re.fullmatch(r"[\d.]+", p):
                yield p


def _is_identifier(span: str) -> bool:
    s = span.strip()
    if not _IDENT.match(s) or len(s) < 3:
        return False
    base = s[:-2] if s.endswith("()") else s
    last = base.rsplit(".", 1)[-1]
    if "." in base and last.lower() in _FILE_EXTS:  # a file name, not a symbol
        return False
    return ("_" in base.strip("_") or bool(_CAMEL.search(base)) or "." in base or "::" in base or "#" in base
            or s.endswith("()") or (base.isupper() and len(base) >= 4))


def _symbol(span: str) -> str:
    """A symbol's name: ``f()`` and ``f`` are one identifier."""
    s = span.strip()
    return s[:-2] if s.endswith("()") else s


def _url(u: str) -> str | None:
    u = u.rstrip(_URL_TAIL + "\\")
    return None if "${" in u or "{{" in u else u


def _url_mention(u: str, seq: int) -> Iterator[Mention]:
    if url := _url(u):
        yield Mention("url", url, seq)


def _todo_items(tool: str, inp: Any) -> list[tuple[str, str]] | None:
    """(item, status) of a todo/plan tool's input, or None when the call is no such tool."""
    if not isinstance(inp, dict):
        return None
    todos = inp.get("todos")
    if isinstance(todos, list):
        items = []
        for t in todos:
            if isinstance(t, dict):
                text = t.get("content") or t.get("description") or t.get("step") or t.get("text")
                if isinstance(text, str) and text.strip():
                    items.append((_collapse(text), str(t.get("status") or "pending")))
        return items
    if isinstance(todos, str):
        return [(_collapse(m.group(2)), _STATUS[m.group(1)]) for m in _CHECK_ITEM.finditer(todos)]
    plan = inp.get("plan")
    if isinstance(plan, list):
        return [(_collapse(p["step"]), str(p.get("status") or "pending")) for p in plan
                if isinstance(p, dict) and isinstance(p.get("step"), str) and p["step"].strip()]
    if isinstance(plan, str) and tool.lower() in ("exitplanmode", "exit_plan_mode"):
        return [(_collapse(m.group(1)), "pending") for m in _PLAN_ITEM.finditer(plan)]
    return None


def _user_request(text: str) -> str | None:
    t = text.strip()
    if not t or t.startswith(_USER_NOISE) or _RESULT_HEADER.match(t) or t.startswith("<files>"):
        return None
    m = re.search(r"<(?:task|user_message|feedback)>\s*(.*?)\s*</(?:task|user_message|feedback)>", t, re.S)
    if m:
        t = m.group(1)
    elif t.startswith("<"):  # other tool/harness markup
        return None
    t = _collapse(t)
    return t[:REQUEST_CHARS] or None


def event_mentions(seq: int, kind: int, role: int, flags: int, name: str | None,
                   text: str | None) -> Iterator[Mention]:
    """Every fact one event names (the rules of the module docstring)."""
    if not text or kind not in SOURCE_KINDS or flags & int(EventFlag.META):
        return
    tool = (name or "").lower()
    if kind == EventKind.TOOL_CALL:
        inp = _json(text)
        items = _todo_items(tool, inp)
        if items is not None:
            for item, status in items:
                yield Mention("task", item, seq, "todo", status)
            return
        if isinstance(inp, dict):
            yield from _tool_input_mentions(seq, tool, inp)
        else:
            first = text.strip().split("\n", 1)[0].strip()
            for m in _PATCH_FILE.finditer(text):
                yield Mention("path", m.group(1).strip(), seq)
            if first and tool not in AGENT_COMMANDS and tool != "apply_patch" and not first.startswith("***"):
                yield Mention("command", _collapse(first), seq)
                yield from (Mention("path", p, seq) for p in _command_paths(first))
            elif tool in ("open", "create", "find_file") and first:
                parts = first.split()
                if len(parts) > 1 and (p := _clean_path(parts[1])):
                    yield Mention("path", p, seq)
        for u in _URL.findall(text):
            yield from _url_mention(u, seq)
        yield from _number_mentions(seq, text)
        return
    if kind == EventKind.TOOL_RESULT:
        for m in _WROTE_PATH.finditer(text[:2000]):
            if p := _clean_path(m.group(1)):
                yield Mention("path", p, seq)
        yield from _error_mentions(seq, text, flagged=bool(flags & int(EventFlag.ERROR)))
        return
    # messages and reasoning
    for m in _XML_PATH.finditer(text):
        if p := _clean_path(m.group(1)):
            yield Mention("path", p, seq)
    for m in _FOR_PATH.finditer(text):
        if p := _clean_path(m.group(1)):
            yield Mention("path", p, seq)
    for m in _XML_COMMAND.finditer(text):
        first = m.group(1).strip().split("\n", 1)[0]
        if first:
            yield Mention("command", _collapse(first), seq)
    for m in re.finditer(r"<update_todo_list>\s*<todos>(.*?)</todos>", text, re.S):
        for c in _CHECK_ITEM.finditer(m.group(1)):
            yield Mention("task", _collapse(c.group(2)), seq, "todo", _STATUS[c.group(1)])
    for m in re.finditer(r"<task_progress>(.*?)</task_progress>", text, re.S):
        for c in _CHECK_ITEM.finditer(m.group(1)):
            yield Mention("task", _collapse(c.group(2)), seq, "todo", _STATUS[c.group(1)])
    if kind == EventKind.MESSAGE and role in (Role.USER, Role.ASSISTANT):
        if role == Role.USER and _RESULT_HEADER.match(text.lstrip()):
            yield from _error_mentions(seq, text, flagged=False)  # a Cline/Roo tool result
            return
        for u in _URL.findall(text):
            yield from _url_mention(u, seq)
        yield from _number_mentions(seq, text)
        for m in _CODE_SPAN.finditer(text):
            if _is_identifier(m.group(1)):
                yield Mention("identifier", _symbol(m.group(1)), seq)
        yield from _error_mentions(seq, text, flagged=False, output=False)
        if role == Role.USER:
            if req := _user_request(text):
                yield Mention("task", req, seq, "request")
        else:
            steps = _NEXT_STEP.findall(text)
            if steps:
                yield Mention("task", _collapse(steps[-1]), seq, "next_step")


def _tool_input_mentions(seq: int, tool: str, inp: dict) -> Iterator[Mention]:
    for key in PATH_KEYS:
        v = inp.get(key)
        if isinstance(v, str) and (p := _clean_path(v)):
            yield Mention("path", p, seq)
    shell = tool in SHELL_TOOLS or tool.endswith("_shell") or tool.startswith("bash")
    for key in ("command", "cmd"):
        v = inp.get(key)
        if isinstance(v, list) and all(isinstance(x, str) for x in v):
            v = v[-1] if len(v) >= 3 and v[0].endswith("sh") and v[1] in ("-c", "-lc") else " ".join(v)
        if shell and isinstance(v, str) and v.strip():
            first = _collapse(v.strip().split("\n", 1)[0])
            yield Mention("command", first, seq)
            yield from (Mention("path", p, seq) for p in _command_paths(first))
    patch = inp.get("patch") or inp.get("input")
    if isinstance(patch, str):
        for m in _PATCH_FILE.finditer(patch):
            yield Mention("path", m.group(1).strip(), seq)
    pattern = inp.get("pattern") or inp.get("query") or inp.get("regex")
    if tool in SEARCH_TOOLS and isinstance(pattern, str):
        for part in pattern.split("|"):
            if _is_identifier(part):
                yield Mention("identifier", _symbol(part), seq)
    for key in ("content", "new_string", "file_text", "new_str", "text", "code"):
        v = inp.get(key)
        if isinstance(v, str):
            for m in _DECL.finditer(v):
                if len(m.group(1)) >= 3:
                    yield Mention("identifier", m.group(1), seq)
    for v in inp.values():
        if isinstance(v, str):
            for u in _URL.findall(v):
                yield from _url_mention(u, seq)


def _number_mentions(seq: int, text: str) -> Iterator[Mention]:
    for m in _PORT.finditer(text):
        yield Mention("number", m.group(1), seq)
    for m in _VERSION.finditer(text):
        yield Mention("number", m.group(0), seq)
    for m in _ISSUE.finditer(text):
        yield Mention("number", m.group(0), seq)


def _error_mentions(seq: int, text: str, *, flagged: bool, output: bool = True) -> Iterator[Mention]:
    """Errors in a tool's ``output`` (strict: tools print code too) or in a message."""
    if flagged:
        first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
        if first:
            yield Mention("error", first[:200], seq)
    for line in text.splitlines():
        if _NUMBERED.match(line):
            continue  # a numbered listing is a file's contents (a Read result): code, not errors
        m = _ERROR_LINE.match(line)
        if m and len(m.group(1).strip()) >= 8 and not (output and _CODE_END.search(line)):
            yield Mention("error", m.group(1).strip()[:200], seq)
        for n in _EXC_NAME.finditer(line):
            # in output an exception name is an error when reported (it opens the line, as a
            # traceback's last line or `** (KeyError)` do, or the line is a log's error or
            # warning), not when code names it (`throw new FooError(`, `except FooError:`)
            if (not output or flagged or _REPORTED_AT.match(line[:n.start()])
                    or _LOG_LEVEL.search(line)):
                yield Mention("error", n.group(1), seq)


def mentions_of(events) -> list[Mention]:
    """Every extraction over ``events`` (one continuity; columns seq, kind, role, flags,
    name, text), in seq order."""
    out: list[Mention] = []
    cols = [events[c].to_list() for c in ("seq", "kind", "role", "flags", "name", "text")]
    for seq, kind, role, flags, name, text in zip(*cols, strict=True):
        out.extend(event_mentions(int(seq), int(kind), int(role), int(flags), name, text))
    return out


def _dedupe(ms: Iterable[Mention]) -> list[Mention]:
    seen: set[tuple[str, str, int]] = set()
    out = []
    for m in ms:
        key = (m.kind, m.value, m.seq)
        if key not in seen:
            seen.add(key)
            out.append(m)
    return out


def log_facts(events, *, after_seq: int = -1, before_seq: int | None = None):
    """One row per (kind, value) of one continuity's ``events``: see the module docstring.

    Only the events with ``after_seq < seq < before_seq`` are read (a compaction's span): a
    todo item's ``status`` is then the one it had at ``before_seq``."""
    import polars as pl

    from workbench.evaluate.matching import PatternIndex

    window = pl.col("seq") > after_seq
    if before_seq is not None:
        window &= pl.col("seq") < before_seq
    src = events.filter(pl.col("kind").is_in(SOURCE_KINDS) & window).sort("seq")
    ms = _dedupe(mentions_of(src))
    facts: dict[tuple[str, str], dict[str, Any]] = {}
    for m in ms:
        f = facts.setdefault((m.kind, m.value), {"kind": m.kind, "value": m.value, "seqs": set(),
                                                 "task_role": m.task_role, "status": None})
        f["seqs"].add(m.seq)
        if m.status is not None:
            f["status"] = m.status  # the latest list's status (mentions come in seq order)
    _merge_path_suffixes(facts)
    # a literal value is mentioned wherever its text appears, not only where a rule fired
    literal = [k for k in facts if k[0] != "task"]
    owners: dict[str, list[int]] = {}
    for i, (_, v) in enumerate(literal):
        owners.setdefault(v, []).append(i)
    index = PatternIndex(owners)
    if literal:
        for seq, text, flags in zip(src["seq"].to_list(), src["text"].to_list(), src["flags"].to_list(),
                                    strict=True):
            if text and not flags & int(EventFlag.META):
                for i in index.keys_in(text):
                    facts[literal[i]]["seqs"].add(int(seq))
    rows = []
    for f in facts.values():
        seqs = sorted(f["seqs"])
        rows.append({"kind": f["kind"], "value": f["value"], "first_seq": seqs[0], "last_seq": seqs[-1],
                     "mentions": len(seqs), "mention_seqs": seqs, "task_role": f["task_role"],
                     "status": f["status"]})
    frame = pl.DataFrame(rows, schema=fact_schema())
    return frame.sort("first_seq", "kind", "value")


def _merge_path_suffixes(facts: dict[tuple[str, str], dict[str, Any]]) -> None:
    """A relative path that ends a longer one (``scripts/x.sh`` of ``/repo/scripts/x.sh``) is
    that file: its mentions join the longer path's when exactly one longer path ends with it."""
    paths = [v for k, v in facts if k == "path"]
    for short in sorted(paths, key=len, reverse=True):
        longer = [p for p in paths if len(p) > len(short) and p.endswith("/" + short.lstrip("./"))]
        if len(longer) == 1:
            facts[("path", longer[0])]["seqs"] |= facts.pop(("path", short))["seqs"]
            paths.remove(short)


def fact_schema():
    import polars as pl

    return {"kind": pl.String, "value": pl.String, "first_seq": pl.Int64, "last_seq": pl.Int64,
            "mentions": pl.Int64, "mention_seqs": pl.List(pl.Int64), "task_role": pl.String, "status": pl.String}


def dataset_log_facts(dataset):
    """The facts of every log of an imported dataset in the planted-facts table's shape
    (``facts.parquet``: continuity, seq, start, end, fact_id, kind, probe, answer), so the
    retention evaluations probe them as they probe planted facts, with ``mention_seqs``
    (every event that names the fact) beside them.

    A fact is placed at its first mention (``start``/``end``: where its value is in that
    event's text; ``0, 0`` when the value is a normalised form, such as a collapsed
    command). The task state counted is the todo items and the user requests (a stated next
    step is superseded by the next one, so it is not a fact to retain)."""
    import polars as pl

    ev = dataset.events(columns=["continuity", "seq", "kind", "role", "flags", "name", "text"])
    rows = []
    for (cont,), part in ev.partition_by("continuity", as_dict=True, maintain_order=True).items():
        part = part.sort("seq")
        texts = dict(zip(part["seq"].to_list(), part["text"].to_list(), strict=True))
        facts = log_facts(part).filter(pl.col("task_role").is_null() | (pl.col("task_role") != "next_step"))
        named_in_summaries = _summary_mentions(part, facts["value"].to_list())
        for i, f in enumerate(facts.iter_rows(named=True)):
            seq = f["first_seq"]
            at = (texts.get(seq) or "").find(f["value"])
            start, end = (at, at + len(f["value"])) if at >= 0 else (0, 0)
            rows.append({"continuity": int(cont), "seq": seq, "start": start, "end": end,
                         "fact_id": f"log-{int(cont)}-{i:05d}", "kind": f["kind"],
                         "probe": f"Which {f['kind']} did the session name at event {seq}?",
                         "answer": f["value"],
                         "mention_seqs": sorted({*f["mention_seqs"], *named_in_summaries.get(f["value"], ())})})
    schema = {"continuity": pl.Int32, "seq": pl.Int64, "start": pl.Int32, "end": pl.Int32, "fact_id": pl.String,
              "kind": pl.String, "probe": pl.String, "answer": pl.String, "mention_seqs": pl.List(pl.Int64)}
    return pl.DataFrame(rows, schema=schema)


def _summary_mentions(events, values: list[str]) -> dict[str, list[int]]:
    """value -> seqs of the recorded SUMMARY events whose text holds it."""
    import polars as pl

    from workbench.evaluate.matching import PatternIndex

    summaries = events.filter(pl.col("kind") == int(EventKind.SUMMARY))
    if summaries.height == 0 or not values:
        return {}
    index = PatternIndex.of_values(values)
    out: dict[str, list[int]] = {}
    for seq, text in zip(summaries["seq"].to_list(), summaries["text"].to_list(), strict=True):
        for key in index.keys_in(text or ""):
            out.setdefault(index.values[key], []).append(int(seq))
    return out
