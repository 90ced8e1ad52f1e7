"""Structure checks for parsed records: a record of the wrong shape raises
:class:`Malformed` (the caller turns it into ``ctx.bad_record``, naming file, line and
place); ``want_*`` / ``opt_*`` validate one value; :func:`opt_int` reads a token count.

>>> opt_int(12.0, "usage.input_tokens")
12
>>> want_dict([], "messages[3]")
Traceback (most recent call last):
...
workbench.sources.checks.Malformed: messages[3]: is a list, not an object
"""

from __future__ import annotations

import math
from typing import Any


class Malformed(Exception):
    """A record has the wrong structure; turned into ``ctx.bad_record`` by the caller.

    ``where`` names the place (``messages[3].tool_calls``); ``""`` when the message says it.
    """

    def __init__(self, where: str, message: str, expected: str):
        super().__init__(f"{where}: {message}" if where else message)
        self.message = f"{where}: {message}" if where else message
        self.expected = expected


def type_name(v: Any) -> str:
    if v is None:
        return "null"
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean",
            int: "a number", float: "a number"}.get(type(v), type(v).__name__)


def want_dict(v: Any, where: str, expected: str = "a JSON object") -> dict:
    if not isinstance(v, dict):
        raise Malformed(where, f"is {type_name(v)}, not an object", expected)
    return v


def want_list(v: Any, where: str, expected: str = "a JSON list") -> list:
    if not isinstance(v, list):
        raise Malformed(where, f"is {type_name(v)}, not a list", expected)
    return v


def want_str(v: Any, where: str, expected: str = "a string") -> str:
    if not isinstance(v, str):
        raise Malformed(where, f"is {type_name(v)}, not a string", expected)
    return v


def opt_dict(v: Any, where: str) -> dict | None:
    return None if v is None else want_dict(v, where, "an object or null")


def opt_list(v: Any, where: str) -> list | None:
    return None if v is None else want_list(v, where, "a list or null")


def opt_str(v: Any, where: str) -> str | None:
    return None if v is None else want_str(v, where, "a string or null")


def str_or_none(v: Any) -> str | None:
    """``v`` when it is a string, else None (never raises)."""
    return v if isinstance(v, str) else None


def pick(d: Any, /, **types: type | tuple[type, ...]) -> dict[str, Any]:
    """The entries of ``d`` (if a dict) named in ``types`` whose values have that type
    (a boolean is not a number), in the order of ``types``: metadata copied as recorded."""
    if not isinstance(d, dict):
        return {}
    out = {}
    for key, typ in types.items():
        v = d.get(key)
        wanted = typ if isinstance(typ, tuple) else (typ,)
        if isinstance(v, wanted) and not (isinstance(v, bool) and bool not in wanted):
            out[key] = v
    return out


def opt_id(v: Any, where: str) -> str | None:
    """An id: a string (or an integer, stringified); null → None."""
    if v is None:
        return None
    if isinstance(v, int) and not isinstance(v, bool):
        return str(v)
    return want_str(v, where, "a string id")


def opt_int(v: Any, where: str, expected: str | None = None) -> int | None:
    """A token count: null/absent → None; an integral number in [0, 2**62) → int; anything
    else is Malformed (``expected`` overrides the description of what was wanted)."""
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise Malformed(where, f"is {type_name(v)}, not a number", expected or "an integer token count")
    if isinstance(v, float):
        if not math.isfinite(v) or v != int(v):
            raise Malformed(where, f"is {v!r}, not an integer", expected or "an integer token count")
        v = int(v)
    if v < 0 or v >= 2**62:
        raise Malformed(where, f"is {v}, out of range", expected or "a non-negative token count")
    return v
