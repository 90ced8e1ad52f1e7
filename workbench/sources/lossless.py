"""Lossless raw text: every source record is kept in the events' ``raw`` column so the
source can be rebuilt from a dataset.

* JSONL and text chunks: the raws joined (``roundtrip``);
* whole-file JSON documents: the document with its big arrays taken out
  (:class:`DocumentLayout`, the META ``document`` and ``layout`` events) plus one raw per
  element, put back together by :func:`rebuild_document`;
* a UTF-8 byte order mark is kept as a META ``bom`` event (:func:`add_bom_event`) and put
  back in front.

>>> roundtrip(["\\ufeff", '{"a":1}', '{"b":2}'])
'\\ufeff{"a":1}\\n{"b":2}'
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson

from workbench.continuity.enums import EventKind, Origin
from workbench.sources.base import ParseContext
from workbench.sources.values import dumps

if TYPE_CHECKING:  # the builder imports this module
    from workbench.sources.builder import Builder

BOM = "\ufeff"


def add_bom_event(ctx: ParseContext, add: Callable[..., int], **kw: Any) -> int | None:
    """When the file starts with a UTF-8 BOM (stripped by ``ctx.read_bytes``), add the META
    ``bom`` event whose raw is the BOM, once per file, before anything else; its row or None.

    :func:`roundtrip` puts the BOM back in front of the rebuilt text.
    """
    if not ctx.take_bom():
        return None
    return add(EventKind.META, origin=Origin.HARNESS, name="bom", raw=BOM, source_line=1, **kw)


def _ptr_parts(pointer: str) -> list[str]:
    if pointer == "":
        return []
    return [p.replace("~1", "/").replace("~0", "~") for p in pointer.split("/")[1:]]


def _ptr_key(key: str) -> str:
    return "/" + key.replace("~", "~0").replace("/", "~1")


@dataclass
class DocumentLayout:
    """What was taken out of a JSON document so it can be rebuilt from raws.

    ``entries``: ``{"array": pointer, "count": n}`` (the n next raws are that array's
    elements) or ``{"value": pointer}`` (the next raw is that value), in event order.
    """

    skeleton: Any
    entries: list[dict[str, Any]] = field(default_factory=list)

    def take_array(self, key: str | None) -> None:
        """Empty the array at top-level ``key`` (None: the document is the array)."""
        if key is None:
            n = len(self.skeleton)
            self.skeleton = []
            self.entries.append({"array": "", "count": n})
        else:
            n = len(self.skeleton[key])
            self.skeleton[key] = []
            self.entries.append({"array": _ptr_key(key), "count": n})

    def take_messages(self) -> list:
        """Take out the message list (the document itself, or its ``messages``); return it."""
        if isinstance(self.skeleton, list):
            msgs = self.skeleton
            self.take_array(None)
        else:
            msgs = self.skeleton["messages"]
            self.take_array("messages")
        return msgs

    def take_value(self, key: str) -> None:
        self.skeleton[key] = None
        self.entries.append({"value": _ptr_key(key)})

    def emit(self, b: Builder) -> None:
        b.add(EventKind.META, name="document", raw=dumps(self.skeleton))
        b.add(EventKind.META, name="layout", raw=dumps(self.entries))


def start_document(doc: Any) -> DocumentLayout:
    """A layout whose skeleton is a shallow copy of ``doc`` (arrays are emptied later)."""
    return DocumentLayout(skeleton=dict(doc) if isinstance(doc, dict) else list(doc))


def _raws(events_raw: Iterable[str | None]) -> tuple[str, list[str]]:
    """(the BOM or "", the non-null raws after the BOM marker)."""
    raws = [r for r in events_raw if r is not None]
    if raws and raws[0] == BOM:
        return BOM, raws[1:]
    return "", raws


def rebuild_document(events_raw: list[str | None]) -> Any:
    """Inverse of the document layout: the parsed JSON document (``== json.load(file)``)."""
    _, raws = _raws(events_raw)
    doc = orjson.loads(raws[0])
    layout = orjson.loads(raws[1])
    i = 2

    def put(pointer: str, value: Any) -> None:
        nonlocal doc
        parts = _ptr_parts(pointer)
        if not parts:
            doc = value
            return
        tgt = doc
        for p in parts[:-1]:
            tgt = tgt[int(p)] if isinstance(tgt, list) else tgt[p]
        if isinstance(tgt, list):
            tgt[int(parts[-1])] = value
        else:
            tgt[parts[-1]] = value

    for entry in layout:
        if "array" in entry:
            n = entry["count"]
            put(entry["array"], [orjson.loads(r) for r in raws[i:i + n]])
            i += n
        else:
            put(entry["value"], orjson.loads(raws[i]))
            i += 1
    if i != len(raws):
        raise ValueError(f"{len(raws) - i} raw values left over after rebuilding the document")
    return doc


def is_document_raws(events_raw: list[str | None]) -> bool:
    """True when the raws were written by the document layout (not JSONL lines)."""
    _, raws = _raws(events_raw)
    if len(raws) < 2:
        return False
    try:
        layout = orjson.loads(raws[1])
        orjson.loads(raws[0])
    except orjson.JSONDecodeError:
        return False
    if not isinstance(layout, list) or not all(
            isinstance(e, dict) and (("array" in e and isinstance(e.get("count"), int))
                                     or set(e) == {"value"}) for e in layout):
        return False
    need = sum(e["count"] if "array" in e else 1 for e in layout)
    return need == len(raws) - 2


def roundtrip(events_raw: Iterable[str | None], joiner: str = "\n", documents: bool = True) -> Any:
    """The source rebuilt from the raw column (all continuities of one file, in order).

    Raws written by the document layout (``documents=True``): the parsed document
    (``== json.load``; the BOM, like white space, is not part of the value). Otherwise the
    raws joined with ``joiner`` (JSONL: ``"\\n"``, giving the non-blank lines; text
    chunks: ``""``, giving the file), with a BOM marker event's BOM put back in front.
    """
    raws = list(events_raw)
    if documents and is_document_raws(raws):
        return rebuild_document(raws)
    bom, lines = _raws(raws)
    return bom + joiner.join(lines)
