"""The ``evidence-gateway`` command line (a contract: scripts and docs rely on it).

``main`` is the entry point; ``main.py`` builds the parser, ``commands_*.py`` run the commands.
"""

from evidence_gateway.cli.main import build_parser, main

__all__ = ["build_parser", "main"]
