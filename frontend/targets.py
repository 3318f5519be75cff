"""What the frontend can be asked to compile besides a Cell, a bound method and a function."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class FunctionWithRoot:
    """A plain function compiled with `root` (a Cell holding the cells and Parameters it reaches
    through its globals and closures) as the object its arrays are read from by path, though
    the function takes no `self`."""
    function: Any
    root: Any
