"""Child processes that die with their parent.

A worker of a sweep's process pool is told by the kernel to die when its parent does
(``prctl(PR_SET_PDEATHSIG, SIGKILL)``, Linux), so ``kill -9`` of a sweep leaves no worker
running on. Elsewhere (no prctl) the worker checks its parent at start only.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal

_PR_SET_PDEATHSIG = 1


def die_with_parent(parent_pid: int) -> bool:
    """Ask to be killed when ``parent_pid`` exits; exit now if it is already gone. Returns
    whether the kernel took the request."""
    armed = False
    name = ctypes.util.find_library("c")
    if name is not None:
        try:
            libc = ctypes.CDLL(name, use_errno=True)
            armed = libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
        except (OSError, AttributeError):
            armed = False
    # the parent may have died before the request was made: then we were re-parented already
    if os.getppid() != parent_pid:
        os._exit(1)
    return armed
