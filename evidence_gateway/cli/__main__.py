"""``python -m evidence_gateway.cli``."""

from evidence_gateway.cli import main

raise SystemExit(main())
