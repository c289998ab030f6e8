"""Fewer malloc arenas for a long-running process.

glibc gives each thread that allocates while another holds an arena one of its own, up to eight
per core, and keeps what it reserved there. A server has threads for SQLite connections, its row
readers and the event loop's executor: after a load each had left its arena behind, several MB
of resident memory between them (docs/performance.md, issue 29). Two arenas serve these threads:
they mostly wait on SQLite or the GIL, not on the allocator. An operator's own
``MALLOC_ARENA_MAX`` is left as it is.
"""

from __future__ import annotations

import ctypes
import os

ARENAS = 2
_M_ARENA_MAX = -8  # glibc's mallopt parameter (malloc.h)


def cap_arenas() -> bool:
    """At most ``ARENAS`` arenas in this process (glibc only) and in the processes it starts
    (uvicorn's workers read the variable when they start); True when this process's were capped."""
    if "MALLOC_ARENA_MAX" in os.environ:
        return False
    os.environ["MALLOC_ARENA_MAX"] = str(ARENAS)
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc (musl, macOS): the allocator has its own policy
        return False
    return bool(mallopt(_M_ARENA_MAX, ARENAS))
