"""Offset maps of the views of :mod:`workbench.redaction.normalize`: each sends a span of a
view back to the smallest span of the text the view was derived from, composing through
``parent`` (a decoded view of a normalised view of a text maps onto the text)."""

from __future__ import annotations

from bisect import bisect_right


class ViewMap:
    """Base: maps ``[a, b)`` in a view to ``[a', b')`` in the text it was derived from."""

    __slots__ = ("parent",)

    def __init__(self, parent: ViewMap | None = None):
        self.parent = parent

    def _local(self, a: int, b: int) -> tuple[int, int]:  # pragma: no cover - abstract
        raise NotImplementedError

    def span(self, a: int, b: int) -> tuple[int, int]:
        a, b = self._local(a, b)
        return self.parent.span(a, b) if self.parent is not None else (a, b)


class WholeMap(ViewMap):
    """Every span maps to one fixed source span (a decoded base64/hex run)."""

    __slots__ = ("start", "end")

    def __init__(self, start: int, end: int, parent: ViewMap | None = None):
        super().__init__(parent)
        self.start, self.end = start, end

    def _local(self, a, b):
        return self.start, self.end


class SegmentMap(ViewMap):
    """Identity except at recorded segments: ``view[vs:ve]`` came from ``source[os:oe]``.

    Segments are sorted and disjoint in both coordinates; deletions have ``vs == ve``.
    A span is mapped character by character: its first character's source start and its
    last character's source end, so characters deleted from inside the span (zero-width
    joiners inside a key) are covered too.
    """

    __slots__ = ("_vs", "_ve", "_os", "_oe", "offset")

    def __init__(self, segments: list[tuple[int, int, int, int]], offset: int = 0,
                 parent: ViewMap | None = None):
        super().__init__(parent)
        self._vs = [s[0] for s in segments]
        self._ve = [s[1] for s in segments]
        self._os = [s[2] for s in segments]
        self._oe = [s[3] for s in segments]
        self.offset = offset

    def _char(self, i: int) -> tuple[int, int]:
        k = bisect_right(self._vs, i) - 1
        # skip deletions and segments that end at or before i
        if k < 0:
            return i, i + 1
        if i < self._ve[k]:
            return self._os[k], self._oe[k]
        o = self._oe[k] + (i - self._ve[k])
        return o, o + 1

    def point(self, i: int) -> int:
        """Source position of view position ``i`` (a boundary, not a character)."""
        k = bisect_right(self._vs, i) - 1
        if k < 0:
            return i
        if i < self._ve[k]:
            return self._os[k]
        return self._oe[k] + (i - self._ve[k])

    def _local(self, a, b):
        if b <= a:
            p = self.point(a) + self.offset
            return p, p
        return self._char(a)[0] + self.offset, self._char(b - 1)[1] + self.offset
