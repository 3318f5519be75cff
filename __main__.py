"""`python -m amber`: the amber command (see `cli.py`)."""
from .cli import main

raise SystemExit(main())
