"""Continuity Workbench: replay agent continuities through compaction policies.

``import workbench as wb`` is the front door (:mod:`workbench.api`): ``wb.load_dataset``,
``wb.generate``, ``wb.import_logs``, ``wb.policies``, ``wb.get_policy``, ``wb.simulate``,
``wb.evaluate``, ``wb.audit`` (``.conformance``, ``.determinism``, ``.fidelity``,
``.redaction``), ``wb.inspect_compaction``, ``wb.context_bundle``, ``wb.sweep``, ``wb.tune``,
``wb.report``, ``wb.redact`` and ``wb.figures``. Importing the package is cheap
on purpose: these names, and numba, polars and pyarrow behind them, are loaded when first
used (PEP 562).

>>> import workbench
>>> workbench.__version__
'0.1.0'
>>> callable(workbench.simulate)
True
"""

import sys as _sys
import types as _types

__version__ = "0.1.0"

_API = ("load_dataset", "generate", "import_logs", "policies", "get_policy", "simulate", "evaluate", "audit",
        "inspect_compaction", "context_bundle", "sweep", "tune", "report", "redact")
# modules a notebook reaches through the front door: wb.figures.sawtooth(...)
_MODULES = {"figures": "workbench.report.figures"}

__all__ = ["__version__", *_API, *_MODULES]


def __getattr__(name: str):
    if name in _API:
        from workbench import api

        return getattr(api, name)
    if name in _MODULES:
        import importlib

        return importlib.import_module(_MODULES[name])
    raise AttributeError(f"module 'workbench' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)


class _Shared:
    """A front-door function whose name is also a subpackage's (``wb.evaluate`` and
    ``workbench.evaluate``, likewise ``report`` and ``sweep``): calling it calls
    :mod:`workbench.api`'s function (whose name, docstring and signature it carries); any
    other attribute is the subpackage's, so ``import workbench.evaluate.pipeline as p``
    still finds the module."""

    def __init__(self, name: str):
        import functools

        from workbench import api  # standard library imports only: the package stays cheap

        self._name = name
        functools.update_wrapper(self, getattr(api, name))

    def __call__(self, *args, **kwargs):
        return self.__wrapped__(*args, **kwargs)

    def __get__(self, instance, owner=None):
        # never bound (a module attribute is no class attribute); defining it makes
        # inspect.isroutine true, so help(workbench) lists the name under FUNCTIONS with
        # the signature of the function it wraps, not under DATA
        return self

    def __getattr__(self, attr: str):
        if attr.startswith("__"):
            raise AttributeError(attr)
        import importlib

        return getattr(importlib.import_module(f"workbench.{self._name}"), attr)

    def __repr__(self) -> str:
        return repr(self.__wrapped__)


class _FrontDoor(_types.ModuleType):
    """The package's module type: importing ``workbench.evaluate`` (or ``report``, ``sweep``)
    makes the import system bind the subpackage on the package, which would turn
    ``wb.evaluate`` into a module after its first call; that binding is declined for the
    front door's names (the subpackage stays in ``sys.modules``, and :class:`_Shared`
    reaches its attributes)."""

    def __setattr__(self, name, value):
        if name in _API and isinstance(value, _types.ModuleType):
            return
        super().__setattr__(name, value)


_SHARED = ("evaluate", "report", "sweep")  # front-door names that are subpackages too
for _name in _SHARED:
    globals()[_name] = _Shared(_name)
del _name
_sys.modules[__name__].__class__ = _FrontDoor
