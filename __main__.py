"""`python -m amber`: the amber command (see `cli/`)."""
from .cli import main

raise SystemExit(main())
