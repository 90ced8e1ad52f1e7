"""The replay engine: policies, a pure-Python reference engine and a numba kernel engine
with one semantics (see ``reference.py`` for the readable statement of it).

Who owns what (every module of the package; ``tests/test_architecture.py`` checks the list):

* ``policy.py``, ``presets.py``, ``provider.py``: policies, their registry, and their
  one lowering against a provider to the configuration both engines read
  (``Policy.lower``: the ``Cfg`` and ``Param`` slots); ``policy_schema.py``
  the JSON Schema a policy spec is checked against before any work; ``thresholds.py`` the
  token thresholds of a policy's rules (compaction, flush).
* ``pricing.py`` prices from genai-prices, ``pricing_nb.py`` the one price rule.
* ``prepare.py``: a continuity as replay arrays (``ReplayInput``); ``accounting.py``
  replays it in the tokens its provider billed (calibrated or harness-profile accounting).
* ``reference.py`` (the oracle) and ``kernel.py`` + ``kernel_nb.py`` (the compiled
  simulator: records for one configuration, totals under ``prange`` for many).
* ``prompt_record.py``: what each call's prompt held, as both engines record it (the
  reference's recorder, the record, and ``PromptView``, how the evaluations read it).
* Rules with a module of their own, which the engines (and the evaluations) take their
  step from: ``checkpoints.py`` (ADR-0011 checkpoint selection),
  ``masking.py`` (masking by a bound), ``pruning.py`` (session pruning in one request's
  prompt), ``provider_window.py`` (the two compaction layers).
* ``enums.py`` (codes, and the one declaration of the lowered configuration and the
  kernel's state vector: ``ConfigSlots``/``ParamSlots``/``StateSlots``/``PromptSlots``, each
  slot named with its meaning, offsets derived; the prompt record's ``ShownColumns`` and
  ``AfterColumns``) and ``records.py`` (ledger/event/totals layouts): what both engines and
  the tables share.
* ``metrics.py`` (+ ``metrics_nb.py``): the summary columns.
* ``cache_miss.py``: the provider's own cache misses inside the TTL, fitted per harness,
  release line and serving provider; ``cache_miss_nb.py`` prices a replayed ledger under
  them (expected cost and seeded draws) after either engine, ``cache_miss_reference.py`` its
  plain-Python twin.
* ``run.py``: ``simulate`` and ``run_totals`` (summary rows only), the API everything else
  calls, both over the jobs of ``replay_jobs`` (providers, ``price_as``, notes resolved
  once); ``lean.py`` what keeps a large ``simulate`` within its memory budget. A run's
  event rows are built by :mod:`workbench.rundir.event_frames`, in the names of
  :mod:`workbench.rundir.wire`.
"""
