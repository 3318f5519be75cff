"""Helpers of the disk-cache tests that import a user module written into a folder, here and in
a fresh Python process (where only the disk cache can serve compiled code)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any


def imported(folder: Path, module: str) -> ModuleType:
    """The user module freshly imported; it stays in sys.modules (guards name its globals by
    module) until the next import replaces it."""
    sys.modules.pop(module, None)
    sys.path.insert(0, str(folder))
    try:
        __import__(module)
        return sys.modules[module]
    finally:
        sys.path.remove(str(folder))


def run_fresh(script: str, **env: str) -> Any:
    """What `script`, run by a new Python process (with `env` added to this one's
    environment), prints as JSON on its last line."""
    proc = subprocess.run([sys.executable, "-c", script], env={**os.environ, **env},
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])
