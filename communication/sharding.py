"""`shard_rows`: each rank's own rows of NumPy arrays (a dataset, or one global batch)."""
from __future__ import annotations

from typing import Any

import numpy as np


def shard_rows(*arrays: Any, rank: int | None = None, group_size: int | None = None) -> Any:
    """This rank's rows of each array: the `rank`-th of `group_size` equal contiguous blocks
    (default: this process's rank and the job's size). Every rank gets the same number of rows,
    `len // group_size`, so every rank runs the same number of steps; the last `len %
    group_size` rows are left out. One array gives one array, several a tuple (their lengths
    must agree)."""
    from .management import get_group_size, get_rank
    size = get_group_size() if group_size is None else group_size
    rank = get_rank() if rank is None else rank
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ValueError(f"shard_rows: group_size must be a positive int, got {size!r}")
    if isinstance(rank, bool) or not isinstance(rank, int) or not 0 <= rank < size:
        raise ValueError(f"shard_rows: rank must be an int in [0, {size}), got {rank!r}")
    if not arrays:
        raise TypeError("shard_rows: give at least one array")
    lengths = {len(a) for a in arrays}
    if len(lengths) != 1:
        raise ValueError(f"shard_rows: the arrays have different lengths {sorted(lengths)}")
    rows = lengths.pop() // size
    if rows == 0:
        raise ValueError(f"shard_rows: {len(arrays[0])} rows cannot give each of {size} ranks "
                         "one row")
    shards = tuple(np.asarray(a)[rank * rows:(rank + 1) * rows] for a in arrays)
    return shards[0] if len(shards) == 1 else shards
