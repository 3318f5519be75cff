"""MindSpore's `mindspore.dataset.config`: the dataset seed, which every shuffle and random
transform draws from, and the worker settings scripts set (kept, not used: amber's pipeline
runs in the calling thread)."""
from __future__ import annotations

import numpy as np

__all__ = ["set_seed", "get_seed", "set_num_parallel_workers", "get_num_parallel_workers",
           "set_prefetch_size", "get_prefetch_size"]

DEFAULT_SEED = 5489
"""MindSpore's default dataset seed (std::mt19937's): pipelines are reproducible unless a
script asks otherwise."""

_seed = DEFAULT_SEED
_drawn = 0
_settings = {"num_parallel_workers": 8, "prefetch_size": 16}


def set_seed(seed: int) -> None:
    """Seed every shuffle and random transform built after this call (MindSpore's
    `ds.config.set_seed`): the same script then gives the same rows in the same order."""
    global _seed, _drawn
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or not 0 <= seed < 2**32:
        raise ValueError(f"dataset.config.set_seed: seed must be an int in [0, 2**32), got "
                         f"{seed!r}")
    _seed, _drawn = int(seed), 0


def get_seed() -> int:
    """The dataset seed (5489 unless `set_seed` changed it)."""
    return _seed


def new_generator() -> np.random.Generator:
    """A generator for one shuffle or random transform: the n-th one built after `set_seed`
    gets the n-th stream of the seed, so a rebuilt pipeline repeats itself."""
    global _drawn
    _drawn += 1
    return np.random.default_rng([_seed, _drawn])


def _positive(name: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"dataset.config.set_{name}: expected a positive int, got {value!r}")
    return value


def set_num_parallel_workers(num: int) -> None:
    """Recorded for `get_num_parallel_workers`; amber's pipeline runs in one thread."""
    _settings["num_parallel_workers"] = _positive("num_parallel_workers", num)


def get_num_parallel_workers() -> int:
    return _settings["num_parallel_workers"]


def set_prefetch_size(size: int) -> None:
    """Recorded for `get_prefetch_size`; amber reads rows when the iterator asks for them."""
    _settings["prefetch_size"] = _positive("prefetch_size", size)


def get_prefetch_size() -> int:
    return _settings["prefetch_size"]
