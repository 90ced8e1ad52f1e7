"""The canonical continuity format: the Arrow schema, datasets on disk, enums, pairing of
tool calls and results, validation, and ``inspect``."""
