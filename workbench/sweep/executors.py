"""Executors by name: ``serial`` (in-process), ``process`` (local process pool, the
default) and ``dask`` (a ``distributed`` scheduler, or a LocalCluster started for you).

An executor runs one picklable function over small task mappings and yields the results
as they complete (any order). It keeps at most ``window`` tasks in flight so that a
sweep of a million runs never materialises a million futures.

>>> from workbench.sweep.executors import get_executor
>>> with get_executor("serial") as ex:
...     sorted(ex.imap_unordered(abs, [-2, 1, -3]))
[1, 2, 3]
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from workbench.errors import WorkbenchError


class ExecutorError(WorkbenchError):
    """The executor itself failed (a worker process died, the scheduler is unreachable)."""


def _cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _worker_init(numba_threads: int, parent_pid: int) -> None:
    from workbench.util.processes import die_with_parent

    die_with_parent(parent_pid)  # a killed sweep leaves no worker behind
    # before numba is imported in the worker: no oversubscription of the machine's cores
    os.environ.setdefault("NUMBA_NUM_THREADS", str(max(1, numba_threads)))


class Executor:
    name = "base"
    workers = 1

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        pass

    def imap_unordered(self, fn: Callable[[Any], Any], tasks: Iterable[Any]) -> Iterator[Any]:
        raise NotImplementedError

    def describe(self) -> str:
        return f"{self.name} ({self.workers} worker{'s' if self.workers != 1 else ''})"


class SerialExecutor(Executor):
    """Runs tasks one after another in this process (debugging, tiny sweeps, tests)."""

    name = "serial"

    def imap_unordered(self, fn, tasks):
        for t in tasks:
            yield fn(t)


class ProcessExecutor(Executor):
    """A local process pool (``spawn``: no fork of a process holding numba/polars threads)."""

    name = "process"

    def __init__(self, workers: int | None = None, *, window: int | None = None,
                 start_method: str = "spawn"):
        self.workers = max(1, int(workers or _cpu_count()))
        self.window = window or 2 * self.workers
        self.start_method = start_method
        self._pool = None

    def _ensure(self):
        if self._pool is None:
            import multiprocessing as mp
            from concurrent.futures import ProcessPoolExecutor

            threads = max(1, _cpu_count() // self.workers)
            self._pool = ProcessPoolExecutor(max_workers=self.workers,
                                             mp_context=mp.get_context(self.start_method),
                                             initializer=_worker_init, initargs=(threads, os.getpid()))
        return self._pool

    def imap_unordered(self, fn, tasks):
        from concurrent.futures import FIRST_COMPLETED, wait
        from concurrent.futures.process import BrokenProcessPool

        pool = self._ensure()
        it = iter(tasks)
        pending: set = set()
        try:
            for t in it:
                pending.add(pool.submit(fn, t))
                if len(pending) >= self.window:
                    break
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for fut in done:
                    yield fut.result()
                for t in it:
                    pending.add(pool.submit(fn, t))
                    if len(pending) >= self.window:
                        break
        except BrokenProcessPool as exc:
            raise ExecutorError(f"a worker process died ({exc}); completed runs are kept, "
                                "re-run the sweep to resume") from None
        finally:
            for fut in pending:
                fut.cancel()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


class DaskExecutor(Executor):
    """Tasks on a ``distributed`` cluster. ``scheduler`` is an address (``tcp://host:8786``),
    a ``distributed.Client``, or ``None`` for a LocalCluster of ``workers`` processes."""

    name = "dask"

    def __init__(self, scheduler: Any = None, *, workers: int | None = None, window: int | None = None):
        self.scheduler = scheduler
        self._n = workers
        self._window = window
        self._client = None
        self._owns_client = False
        self._cluster = None
        self._scratch: Path | None = None

    def _ensure(self):
        if self._client is not None:
            return self._client
        try:
            from distributed import Client, LocalCluster
        except ImportError as exc:  # pragma: no cover - dask is a dependency
            raise ExecutorError(f"--executor dask needs dask[distributed]: {exc}") from None
        if isinstance(self.scheduler, Client):
            self._client = self.scheduler
        elif self.scheduler:
            try:
                self._client = Client(self.scheduler, timeout="20s")
            except OSError as exc:
                raise ExecutorError(f"cannot reach the Dask scheduler at {self.scheduler}: {exc}") from None
            self._owns_client = True
        else:
            n = max(1, int(self._n or _cpu_count()))
            # the scheduler's and workers' scratch space in a directory of ours, removed at
            # close (by default it is $TMPDIR/dask-scratch-space, left behind)
            self._scratch = Path(tempfile.mkdtemp(prefix="workbench-dask-"))
            self._cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                         dashboard_address=None, host="127.0.0.1",
                                         local_directory=str(self._scratch),
                                         scheduler_kwargs={"local_directory": str(self._scratch)})
            self._client = Client(self._cluster)
            self._owns_client = True
        return self._client

    @property
    def workers(self) -> int:  # type: ignore[override]
        if self._client is None:
            return int(self._n or 0) or 1
        return max(1, len(self._client.scheduler_info().get("workers", {})))

    def imap_unordered(self, fn, tasks):
        from distributed import as_completed

        client = self._ensure()
        # a deep window: each task is a scheduler round trip (~10 ms), keep many in flight
        window = self._window or max(64, 16 * self.workers)
        it = iter(tasks)
        ac = as_completed(with_results=True)  # results are gathered in batches, not one round trip each

        def submit(t) -> None:
            key = None
            if isinstance(t, dict) and "run_id" in t:
                key = f"{getattr(fn, '__name__', 'task')}-{t['run_id']}"
            ac.add(client.submit(fn, t, key=key, pure=False))

        for n, t in enumerate(it, start=1):
            submit(t)
            if n >= window:
                break
        try:
            results = iter(ac)
            while True:
                try:
                    fut, result = next(results)
                except StopIteration:
                    break
                except Exception as exc:  # KilledWorker, CommClosedError, ...
                    raise ExecutorError(f"a Dask task failed: {type(exc).__name__}: {exc}; "
                                        "completed runs are kept, re-run the sweep to resume") from None
                fut.release()
                yield result
                for t in it:
                    submit(t)
                    break
        finally:
            for fut in list(ac.futures):
                fut.cancel()

    def describe(self) -> str:
        where = self._client.scheduler.address if self._client is not None else (self.scheduler or "LocalCluster")
        return f"dask at {where} ({self.workers} workers)"

    def close(self) -> None:
        if self._client is not None and self._owns_client:
            self._client.close()
        self._client = None
        if self._cluster is not None:
            self._cluster.close()
            self._cluster = None
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None


EXECUTORS: dict[str, type[Executor]] = {"serial": SerialExecutor, "process": ProcessExecutor,
                                        "dask": DaskExecutor}


def get_executor(executor: str | Executor = "process", *, workers: int | None = None,
                 scheduler: Any = None) -> Executor:
    """An executor by name (``serial`` | ``process`` | ``dask``), or the instance given."""
    if isinstance(executor, Executor):
        return executor
    if executor not in EXECUTORS:
        raise ExecutorError(f"unknown executor {executor!r}; choose one of {', '.join(EXECUTORS)}")
    if executor == "dask":
        return DaskExecutor(scheduler, workers=workers)
    if scheduler is not None:
        raise ExecutorError("--scheduler is only for --executor dask")
    if executor == "process":
        return ProcessExecutor(workers)
    return SerialExecutor()
