"""Datasets that produce rows: `GeneratorDataset` (a random-access or iterable Python source)
and `NumpySlicesDataset` (arrays sliced along their first axis), with MindSpore's sampling:
`shuffle`, `num_samples` and `num_shards`/`shard_id`."""
from __future__ import annotations

import math
from typing import Any, Iterator, Sequence

import numpy as np

from . import config
from .engine import Dataset, Row, _count, _names

__all__ = ["MappableDataset", "GeneratorDataset", "NumpySlicesDataset"]


class Sampling:
    """Which rows of an indexable source one pass reads: all of them, in random order when
    shuffling; this shard's share (MindSpore's DistributedSampler: ceil(n / num_shards) rows
    each, rows taken round-robin from one order that every shard computes alike, wrapping
    around to pad the last ones); at most `num_samples` of them."""

    def __init__(self, what: str, shuffle: bool, num_samples: int | None,
                 num_shards: int | None, shard_id: int | None) -> None:
        if (num_shards is None) != (shard_id is None):
            raise ValueError(f"{what}: num_shards and shard_id go together (got num_shards="
                             f"{num_shards!r}, shard_id={shard_id!r})")
        if num_shards is not None:
            num_shards = _count(num_shards, f"{what}: num_shards", 1)
            shard_id = _count(shard_id, f"{what}: shard_id", 0)
            if shard_id >= num_shards:
                raise ValueError(f"{what}: shard_id must be in [0, {num_shards}), got {shard_id}")
        if num_samples is not None:
            num_samples = _count(num_samples, f"{what}: num_samples", 0) or None
        self.shuffle, self.num_samples = shuffle, num_samples
        self.num_shards, self.shard_id = num_shards, shard_id
        self.rng = config.new_generator() if shuffle else None

    def size(self, n: int) -> int:
        if self.num_shards is not None and n:
            n = math.ceil(n / self.num_shards)
        return n if self.num_samples is None else min(n, self.num_samples)

    def order(self, n: int) -> np.ndarray:
        """The row indices of one pass (a new order each pass when shuffling)."""
        order = self.rng.permutation(n) if self.shuffle else np.arange(n)
        if self.num_shards is not None and n:
            per = math.ceil(n / self.num_shards)
            order = order[np.arange(per * self.num_shards) % n][self.shard_id::self.num_shards]
        return order[:self.size(n)]


def _as_row(item: Any, columns: Sequence[str], what: str) -> Row:
    """A source's item as one value per column."""
    if isinstance(item, tuple) or (isinstance(item, list) and len(columns) > 1):
        values = tuple(item)
    else:
        values = (item,)
    if len(values) != len(columns):
        raise ValueError(f"{what}: the source gave {len(values)} value(s) for the "
                         f"{len(columns)} column(s) {list(columns)}")
    return tuple(np.asarray(v) for v in values)


class MappableDataset(Dataset):
    """A source with random access: `_source_len()` rows, `_source_row(i)` the i-th."""

    def __init__(self, what: str, columns: list[str], shuffle: bool | None,
                 num_samples: int | None, num_shards: int | None, shard_id: int | None) -> None:
        super().__init__()
        self.what, self.columns = what, columns
        self.sampling = Sampling(what, True if shuffle is None else bool(shuffle), num_samples,
                                 num_shards, shard_id)

    def _source_len(self) -> int:
        raise NotImplementedError

    def _source_row(self, index: int) -> Row:
        raise NotImplementedError

    def get_col_names(self) -> list[str]:
        return list(self.columns)

    def get_dataset_size(self) -> int:
        return self.sampling.size(self._source_len())

    def _rows(self) -> Iterator[Row]:
        for index in self.sampling.order(self._source_len()):
            yield self._source_row(int(index))


class GeneratorDataset(MappableDataset):
    """MindSpore's `GeneratorDataset(source, column_names, ...)`. `source` is random-access
    (`__getitem__` and `__len__`: sampled, shuffled by default, shardable), an iterable, or a
    callable returning an iterator (read in order; `shuffle` and sharding need random access).
    Each item is a tuple with one value per column (a single value for one column)."""

    def __init__(self, source: Any, column_names: Any = None, column_types: Any = None,
                 schema: Any = None, num_samples: int | None = None,
                 num_parallel_workers: int = 1, shuffle: bool | None = None,
                 sampler: Any = None, num_shards: int | None = None,
                 shard_id: int | None = None, python_multiprocessing: bool = True,
                 max_rowsize: Any = None) -> None:
        columns = _names(column_names, "GeneratorDataset: column_names")
        if columns is None:
            raise ValueError("GeneratorDataset: give column_names (a name for each value the "
                             "source yields)")
        if schema is not None or sampler is not None:
            raise NotImplementedError("GeneratorDataset: schema= and sampler= are not supported "
                                      "by amber; use column_names, shuffle, num_samples and "
                                      "num_shards/shard_id")
        self.source = source
        self._passes = 0
        self.random_access = hasattr(source, "__getitem__") and hasattr(source, "__len__")
        if not self.random_access:
            if not (hasattr(source, "__iter__") or callable(source)):
                raise TypeError(f"GeneratorDataset: source must be random-access (__getitem__ "
                                f"and __len__), iterable or a generator function, got "
                                f"{type(source).__name__}")
            if shuffle or num_shards is not None:
                raise ValueError("GeneratorDataset: shuffle and num_shards/shard_id need a "
                                 "random-access source (with __getitem__ and __len__)")
            shuffle = False
        super().__init__("GeneratorDataset", columns, shuffle, num_samples, num_shards,
                         shard_id)

    def _source_len(self) -> int:
        return len(self.source)

    def _source_row(self, index: int) -> Row:
        return _as_row(self.source[index], self.columns, self.what)

    def get_dataset_size(self) -> int:
        if self.random_access:
            return super().get_dataset_size()
        return sum(1 for _ in self._rows())

    def _rows(self) -> Iterator[Row]:
        if self.random_access:
            yield from super()._rows()
            return
        if callable(self.source) and not hasattr(self.source, "__iter__"):
            items = iter(self.source())
        else:
            items = iter(self.source)
            if items is self.source:  # NOTE: an iterator, not re-iterable: one pass only
                if self._passes:
                    raise RuntimeError("GeneratorDataset: the source is an iterator, already "
                                       "read by an earlier pass; pass the generator function "
                                       "itself (not its result) or a re-iterable object")
        self._passes += 1
        limit = self.sampling.num_samples
        for k, item in enumerate(items):
            if limit is not None and k >= limit:
                return
            yield _as_row(item, self.columns, self.what)


class NumpySlicesDataset(MappableDataset):
    """MindSpore's `NumpySlicesDataset(data, column_names, ...)`: `data` sliced along its first
    axis. A list is one column; a tuple one column per element; a dict one column per key
    (named by it). Default names are `column_0`, `column_1`, ... Shuffled by default."""

    def __init__(self, data: Any, column_names: Any = None, num_samples: int | None = None,
                 num_parallel_workers: int = 1, shuffle: bool | None = None,
                 sampler: Any = None, num_shards: int | None = None,
                 shard_id: int | None = None) -> None:
        if sampler is not None:
            raise NotImplementedError("NumpySlicesDataset: sampler= is not supported by amber")
        if isinstance(data, dict):
            arrays, names = [np.asarray(v) for v in data.values()], list(data.keys())
        elif isinstance(data, tuple):
            arrays, names = [np.asarray(v) for v in data], None
        else:
            arrays, names = [np.asarray(data)], None
        if any(a.ndim == 0 for a in arrays):
            raise ValueError("NumpySlicesDataset: every column needs a first axis to slice")
        lengths = {len(a) for a in arrays}
        if len(lengths) != 1:
            raise ValueError(f"NumpySlicesDataset: the columns have different lengths "
                             f"{sorted(lengths)}")
        given = _names(column_names, "NumpySlicesDataset: column_names")
        columns = given or names or [f"column_{k}" for k in range(len(arrays))]
        if len(columns) != len(arrays):
            raise ValueError(f"NumpySlicesDataset: {len(columns)} column name(s) for "
                             f"{len(arrays)} column(s)")
        self.arrays = arrays
        super().__init__("NumpySlicesDataset", [str(c) for c in columns], shuffle, num_samples,
                         num_shards, shard_id)

    def _source_len(self) -> int:
        return len(self.arrays[0])

    def _source_row(self, index: int) -> Row:
        return tuple(a[index] for a in self.arrays)

