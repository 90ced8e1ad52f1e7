"""Anthropic Messages API content blocks as events, shared by the formats that log them
(Claude Code records, Cline / Roo Code ``api_conversation_history.json``).

One event per block: ``text`` -> MESSAGE; ``thinking`` / ``redacted_thinking`` -> REASONING;
``tool_use`` / ``server_tool_use`` / ``mcp_tool_use`` -> TOOL_CALL (``call_id`` = block id,
``name`` = tool, ``text`` = the input as JSON); ``tool_result`` / ``*_tool_result`` ->
TOOL_RESULT (``call_id`` = ``tool_use_id``, ERROR when ``is_error``, text flattened,
``name`` = the called tool when known; role ASSISTANT inside an assistant message: server
tools); ``image`` / ``document`` -> MESSAGE with a placeholder such as ``[image:
image/png, 1234 base64 chars]``; any other block -> OPAQUE (text = the block's JSON). A
string content is one MESSAGE; an empty block list one empty MESSAGE.

>>> [e["kind"].name for e in content_block_events(
...     [{"type": "text", "text": "hi"}, {"type": "tool_use", "id": "t1", "name": "ls", "input": {}}],
...     assistant=True, base={"flags": 0}, tool_names={})]
['MESSAGE', 'TOOL_CALL']
"""

from __future__ import annotations

from typing import Any

from workbench.continuity.enums import EventFlag, EventKind, Origin, Role
from workbench.sources.checks import Malformed, str_or_none, type_name
from workbench.sources.values import dumps, flatten_content, media_placeholder


def content_block_events(content: Any, *, assistant: bool, base: dict,
                         tool_names: dict[str, str], where: str = "message.content") -> list[dict]:
    """One event spec (``EventRows.add`` keyword arguments, ``base`` merged in) per block of
    an Anthropic message ``content`` (a string or a list of blocks); see the module
    docstring. ``tool_names`` (call id -> tool name) is filled by tool_use blocks and read
    by tool_result blocks, across messages; ``where`` names the content in errors."""
    if isinstance(content, str):
        return [{**base, "kind": EventKind.MESSAGE, "text": content}]
    if not isinstance(content, list):
        raise Malformed("", f"{where} is {type_name(content)}",
                        "message.content as a string or a list of content blocks")
    if not content:
        return [{**base, "kind": EventKind.MESSAGE, "text": ""}]
    specs = []
    for block in content:
        if not isinstance(block, dict):
            specs.append({**base, "kind": EventKind.MESSAGE if isinstance(block, str) else EventKind.OPAQUE,
                          "text": block if isinstance(block, str) else dumps(block)})
            continue
        t = block.get("type")
        if t == "text":
            specs.append({**base, "kind": EventKind.MESSAGE, "text": str_or_none(block.get("text")) or ""})
        elif t == "thinking":
            specs.append({**base, "kind": EventKind.REASONING, "name": "thinking",
                          "text": str_or_none(block.get("thinking")) or ""})
        elif t == "redacted_thinking":
            specs.append({**base, "kind": EventKind.REASONING, "name": "redacted_thinking", "text": None})
        elif t in ("tool_use", "server_tool_use", "mcp_tool_use"):
            cid = str_or_none(block.get("id"))
            name = str_or_none(block.get("name"))
            if cid is not None and name is not None:
                tool_names[cid] = name
            specs.append({**base, "kind": EventKind.TOOL_CALL, "call_id": cid, "name": name,
                          "text": dumps(block.get("input"))})
        elif t == "tool_result" or (isinstance(t, str) and t.endswith("_tool_result")):
            cid = str_or_none(block.get("tool_use_id"))
            flags = base["flags"] | (int(EventFlag.ERROR) if block.get("is_error") is True else 0)
            # a tool result is an input even inside an assistant record (server tools)
            spec = {**base, "kind": EventKind.TOOL_RESULT, "call_id": cid, "flags": flags,
                    "role": Role.TOOL, "origin": Origin.TOOL,
                    "name": tool_names.get(cid) if cid is not None else None,
                    "text": flatten_content(block.get("content"))}
            if assistant:  # server tool results are produced inside the model call
                spec["role"] = Role.ASSISTANT
            specs.append(spec)
        elif t in ("image", "document"):
            specs.append({**base, "kind": EventKind.MESSAGE, "name": t, "text": media_placeholder(block)})
        else:
            specs.append({**base, "kind": EventKind.OPAQUE, "name": f"block:{t}" if isinstance(t, str) else "block",
                          "text": dumps(block)})
    return specs
