"""Declarative sweeps, their execution (process pool or Dask), resume, and tuning.

* :mod:`workbench.sweep.spec`      YAML spec -> runs with stable ids (mesa ``batch_run`` shape:
                                   a scalar is fixed, a list is swept, seeds are their own axis)
* :mod:`workbench.sweep.runner`    run table, atomic per-run results, resume, ``collect``
* :mod:`workbench.sweep.executors` ``serial`` | ``process`` | ``dask`` by name
* :mod:`workbench.sweep.tune`      constraints, best feasible configuration, Pareto front
* :mod:`workbench.sweep.harness_config`  the chosen thresholds in a harness's own keys
* :mod:`workbench.sweep.batch`     many configurations of one continuity in one compiled call

>>> from workbench.sweep.spec import SweepSpec
>>> spec = SweepSpec.from_dict({"dataset": "datasets/demo", "base": "claude-code",
...                             "parameters": {"trigger.reserve_tokens": [13_000, 33_000]},
...                             "seeds": [0, 1]})
>>> [(c["trigger.reserve_tokens"], s) for c, s in spec.points()]
[(13000, 0), (13000, 1), (33000, 0), (33000, 1)]

Nothing heavy is imported here: ``import workbench.sweep`` stays cheap.
"""
