"""Evidence Gateway: one API (GraphQL + REST) over shared resolvers."""

import sys

__version__ = "0.2.0"

# httpx imports its command-line client whenever click, rich and pygments are installed, and
# they are (rich draws the CLI's progress bars): about 4 MB of resident memory in every process
# that sends a webhook or checks a URL, for a command nobody runs in it. A module that is None
# in ``sys.modules`` fails to import, which httpx expects (it then defines a stub instead).
if "httpx" not in sys.modules:
    sys.modules["httpx._main"] = None  # type: ignore[assignment]
