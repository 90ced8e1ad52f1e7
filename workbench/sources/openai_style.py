"""OpenAI-style ``{role, content, tool_calls}`` messages as events, shared by the formats
that log them (OpenAI message lists, the OpenHands SDK call log, SWE-agent,
mini-swe-agent, OpenHands): :func:`message_events`, :func:`parse_tool_calls`,
:func:`call_event`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from workbench.continuity.enums import EventKind, Origin, Role
from workbench.sources.builder import Builder
from workbench.sources.checks import (
    Malformed,
    opt_dict,
    opt_id,
    opt_str,
    type_name,
    want_dict,
    want_list,
)
from workbench.sources.values import content_text, dumps


def parse_tool_calls(tool_calls: Any, where: str) -> list[tuple[str | None, str | None, str | None]]:
    """(id, name, arguments) from an OpenAI ``tool_calls`` list or its JSON-encoded string."""
    if tool_calls is None:
        return []
    if isinstance(tool_calls, str):
        try:
            tool_calls = orjson.loads(tool_calls)
        except orjson.JSONDecodeError:
            raise Malformed(where, "is a string that is not JSON",
                            "a list of tool calls (or its JSON encoding)") from None
    calls = want_list(tool_calls, where, "a list of tool calls")
    out = []
    for j, tc in enumerate(calls):
        w = f"{where}[{j}]"
        tc = want_dict(tc, w, "a tool call object {id, type, function: {name, arguments}}")
        fn = tc.get("function")
        if fn is None and "name" in tc:  # flattened variant {id, name, arguments}
            fn = tc
        fn = want_dict(fn, f"{w}.function", "an object {name, arguments}")
        name = opt_str(fn.get("name"), f"{w}.function.name")
        args = fn.get("arguments")
        if args is not None and not isinstance(args, str):
            args = dumps(args)
        out.append((opt_id(tc.get("id"), f"{w}.id"), name, args))
    return out


def call_event(cid: str, name: str | None, args: str | None, request: int | None,
               output: bool, **kw: Any) -> dict[str, Any]:
    return dict(kind=EventKind.TOOL_CALL, role=Role.ASSISTANT, origin=Origin.AGENT,
                call_id=cid, name=name, text=args, request=request, output=output, **kw)


def role_and_text(m: Any, where: str, expected: str) -> tuple[dict, str, str | None]:
    """(message, role, content text) of a ``{role, content}`` message."""
    m = want_dict(m, where, expected)
    role = m.get("role")
    if not isinstance(role, str):
        raise Malformed(f"{where}.role", f"is {type_name(role)}, not a string", "a role string")
    return m, role, content_text(m.get("content"), f"{where}.content")


def system_message(text: str | None) -> dict[str, Any]:
    return dict(kind=EventKind.MESSAGE, role=Role.SYSTEM, origin=Origin.SYSTEM, text=text)


@dataclass
class MessageState:
    """Cross-message state: legacy function_call pairing and synthetic ids."""

    n_synth: int = 0
    open_function: str | None = None

    def synth(self, prefix: str = "call") -> str:
        self.n_synth += 1
        return f"{prefix}-{self.n_synth}"


_ROLES = {"system": Role.SYSTEM, "developer": Role.DEVELOPER, "user": Role.USER}


def message_events(m: Any, where: str, b: Builder, st: MessageState, *,
                   assistant_is_request: bool = True) -> list[dict[str, Any]]:
    """Events for one OpenAI-style message. Validates fully before anything is added.

    ``assistant_is_request=False`` (e.g. the history inside one recorded LLM call) maps
    assistant messages as plain inputs, not as outputs of new requests.
    """
    m, role, text = role_and_text(m, where, "a message object {role, content}")
    name = m.get("name") if isinstance(m.get("name"), str) else None
    if role in _ROLES:
        origin = Origin.USER if role == "user" else Origin.SYSTEM
        return [dict(kind=EventKind.MESSAGE, role=_ROLES[role], origin=origin, text=text, name=name)]
    if role == "assistant":
        # validate before taking a request number
        reasoning = m.get("reasoning_content")
        if reasoning is None and isinstance(m.get("reasoning"), str):
            reasoning = m["reasoning"]
        reasoning = opt_str(reasoning, f"{where}.reasoning_content")
        fc = opt_dict(m.get("function_call"), f"{where}.function_call")
        calls = parse_tool_calls(m.get("tool_calls"), f"{where}.tool_calls")
        fc_name = None if fc is None else opt_str(fc.get("name"), f"{where}.function_call.name")
        req = b.new_request() if assistant_is_request else None
        out = assistant_is_request
        evs: list[dict[str, Any]] = []
        if reasoning:
            evs.append(dict(kind=EventKind.REASONING, role=Role.ASSISTANT, origin=Origin.AGENT,
                            text=reasoning, request=req, output=out))
        if text or not (calls or fc is not None):
            evs.append(dict(kind=EventKind.MESSAGE, role=Role.ASSISTANT, origin=Origin.AGENT,
                            text=text, name=name, request=req, output=out))
        for cid, cname, args in calls:
            evs.append(call_event(cid or st.synth(), cname, args, req, out))
        if fc is not None:
            cid = st.synth("fn")
            st.open_function = cid
            args = fc.get("arguments")
            evs.append(call_event(cid, fc_name, args if isinstance(args, str) or args is None
                                  else dumps(args), req, out))
        return evs
    if role == "tool":
        cid = opt_id(m.get("tool_call_id"), f"{where}.tool_call_id")
        return [dict(kind=EventKind.TOOL_RESULT, role=Role.TOOL, origin=Origin.TOOL,
                     call_id=cid, name=name, text=text)]
    if role == "function":
        cid, st.open_function = st.open_function, None
        return [dict(kind=EventKind.TOOL_RESULT, role=Role.TOOL, origin=Origin.TOOL,
                     call_id=cid, name=name, text=text)]
    return [dict(kind=EventKind.OPAQUE, name=f"role:{role}"[:200])]
