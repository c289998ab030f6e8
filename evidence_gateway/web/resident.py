"""Source text that start-up read and nothing needs to keep.

Pydantic reads the source files of the input models for their field docstrings (StrictInput's
``use_attribute_docstrings``), and ``linecache`` then holds those files' lines, with a few a
library inspected, for the life of the process: about 0.3 MB. A traceback reads a file again when
it needs a line; text generated at run time (SQLAlchemy's wrappers) has no file to read, so it
stays.
"""

from __future__ import annotations

import linecache


def forget_source_files() -> int:
    """Drop the cached lines of real files; how many files were dropped."""
    dropped = [name for name, entry in linecache.cache.items() if len(entry) == 4 and entry[1] is not None]
    for name in dropped:
        linecache.cache.pop(name, None)
    return len(dropped)
