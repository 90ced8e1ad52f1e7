"""The replay engine: policies, a pure-Python reference engine and a numba kernel engine
with one semantics (see ``reference.py`` for the readable statement of it).

Who owns what:

* ``policy.py``, ``presets.py``, ``provider.py``: policies, their registry, and their
  lowering against a provider to the kernel's ``(kinds, params)``; ``pricing.py`` prices
  from genai-prices, ``pricing_nb.py`` the one price rule.
* ``prepare.py``: a continuity as replay arrays (``ReplayInput``).
* ``reference.py`` (the oracle) and ``kernel.py`` + ``kernel_nb.py`` (the compiled
  simulator: records for one configuration, totals under ``prange`` for many).
* ``enums.py`` (codes) and ``records.py`` (ledger/event/totals layouts): what both
  engines and the tables share.
* ``metrics.py`` (+ ``metrics_nb.py``): the summary columns.
* ``run.py``: ``simulate`` and ``summarize``, the API everything else calls.
"""
