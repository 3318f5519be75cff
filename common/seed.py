"""amber's global seed and the random generator that initializers and Dropout draw from.

`set_seed(n)` makes every later weight initialization and every newly built Dropout reproducible.
"""
from __future__ import annotations

import numpy as np

_seed: int | None = None
_generator: np.random.Generator = np.random.default_rng()


def set_seed(seed: int) -> None:
    """Reset the global generator to `seed`: later initializers and Dropout cells reproduce."""
    global _seed, _generator
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"set_seed: seed must be a non-negative int, got {seed!r}")
    _seed = int(seed)
    _generator = np.random.default_rng(_seed)


def get_seed() -> int | None:
    """The seed last passed to `set_seed`, or None when it was never called."""
    return _seed


def get_generator() -> np.random.Generator:
    """The global generator (seeded by `set_seed`; from OS entropy before the first call)."""
    return _generator


def spawn_generator() -> np.random.Generator:
    """A fresh generator seeded from the global one, for a cell that owns its random stream."""
    return np.random.default_rng(int(_generator.integers(2**63)))
