"""Runtime warnings attributed to the user's line (the first frame outside amber's runtime)."""
from __future__ import annotations

import os
import sys
import warnings

_HERE = os.path.dirname(os.path.abspath(__file__))


def warn_user(message: str, category: type[Warning] = RuntimeWarning) -> None:
    """`warnings.warn` pointing at the innermost caller outside this package."""
    frame, level = sys._getframe(1), 2  # NOTE: level 1 would be this function itself
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_HERE):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)
