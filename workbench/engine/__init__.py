"""The replay engine: policies, a pure-Python reference engine and a numba kernel engine
with one semantics (see ``reference.py`` for the readable statement of it)."""
