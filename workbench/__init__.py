"""Continuity Workbench: replay agent continuities through compaction policies.

Importing the package is cheap on purpose: numba, polars and pyarrow are imported by
the submodules that need them, when they are first used.

>>> import workbench
>>> workbench.__version__
'0.1.0'
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
