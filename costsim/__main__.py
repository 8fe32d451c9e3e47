"""Allow ``python -m costsim``."""

from costsim.cli.main import main

raise SystemExit(main())
