"""The dataset pipeline: `Dataset` and the operations that make a new dataset from one
(`map`, `batch`, `shuffle`, `repeat`, `take`, `skip`, `project`, `rename`), and the iterators
over it. Plain NumPy in the calling thread: a row is a tuple of arrays, one per column, read
lazily when the iterator asks for it. Sources live in sources.py and loaders.py."""
from __future__ import annotations

import math
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from ..common.tensor import Tensor
from . import config

__all__ = ["Dataset"]

Row = tuple


def _names(value: str | Sequence[str] | None, what: str) -> list[str] | None:
    if value is None:
        return None
    names = [value] if isinstance(value, str) else list(value)
    if not names or not all(isinstance(n, str) for n in names):
        raise TypeError(f"{what}: expected a column name or a list of them, got {value!r}")
    return names


def _count(value: Any, what: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise ValueError(f"{what}: expected an int >= {minimum}, got {value!r}")
    return int(value)


class Dataset:
    """A pipeline node: its column names, its rows (`_rows()`, one pass = one epoch) and the
    number of rows in a pass. Methods build new nodes; nothing is read until iteration."""

    def __init__(self, children: Sequence[Dataset] = ()) -> None:
        self.children = list(children)

    # -- what a node provides ------------------------------------------------------------------
    def get_col_names(self) -> list[str]:
        """The column names, in row order."""
        return list(self.children[0].get_col_names())

    def get_dataset_size(self) -> int:
        """The number of rows (batches after `batch`) in one pass."""
        return self.children[0].get_dataset_size()

    def _rows(self) -> Iterator[Row]:
        raise NotImplementedError

    # -- building the pipeline -----------------------------------------------------------------
    def map(self, operations: Any = None, input_columns: Any = None, output_columns: Any = None,
            num_parallel_workers: int | None = None, python_multiprocessing: bool = False,
            **options: Any) -> Dataset:
        """Apply `operations` (a callable or a list, in order) to `input_columns` (default:
        the first column) of every row. As many outputs as inputs replace them in place
        (named `output_columns`, default the input names); a different number comes first,
        before the columns not read."""
        _refuse(options, "map", ("cache", "callbacks", "max_rowsize", "offload"))
        return MapDataset(self, operations, _names(input_columns, "map: input_columns"),
                          _names(output_columns, "map: output_columns"))

    def batch(self, batch_size: int, drop_remainder: bool = False,
              num_parallel_workers: int | None = None, **options: Any) -> Dataset:
        """Stack `batch_size` consecutive rows column by column (`np.stack`); the last, shorter
        batch is kept unless `drop_remainder`."""
        _refuse(options, "batch", ("per_batch_map", "input_columns", "output_columns",
                                   "pad_info", "python_multiprocessing", "max_rowsize"))
        return BatchDataset(self, _count(batch_size, "batch: batch_size", 1),
                            bool(drop_remainder))

    def shuffle(self, buffer_size: int) -> Dataset:
        """Rows in random order through a buffer of `buffer_size` rows (a buffer at least the
        dataset's size shuffles it uniformly); a new order each pass."""
        return ShuffleDataset(self, _count(buffer_size, "shuffle: buffer_size", 2))

    def repeat(self, count: int | None = None) -> Dataset:
        """Each pass runs `count` passes of this dataset (None or -1: without end)."""
        if count is None or count == -1:
            return RepeatDataset(self, None)
        return RepeatDataset(self, _count(count, "repeat: count", 1))

    def take(self, count: int = -1) -> Dataset:
        """The first `count` rows (-1: all)."""
        if count == -1:
            return self
        return TakeDataset(self, _count(count, "take: count", 1))

    def skip(self, count: int) -> Dataset:
        """All rows but the first `count`."""
        return SkipDataset(self, _count(count, "skip: count", 0))

    def project(self, columns: str | Sequence[str]) -> Dataset:
        """Only `columns`, in that order."""
        return ProjectDataset(self, _names(columns, "project: columns"))

    def rename(self, input_columns: Any, output_columns: Any) -> Dataset:
        """The columns `input_columns` renamed to `output_columns`."""
        old = _names(input_columns, "rename: input_columns")
        new = _names(output_columns, "rename: output_columns")
        if len(old) != len(new):
            raise ValueError(f"rename: {len(old)} input column(s) but {len(new)} output "
                             "column(s)")
        return RenameDataset(self, dict(zip(old, new)))

    # -- reading it ----------------------------------------------------------------------------
    def create_tuple_iterator(self, columns: Any = None, num_epochs: int = -1,
                              output_numpy: bool = False, do_copy: bool = True) -> Iterator:
        """An iterator of lists (one value per column, Tensors unless `output_numpy`); each
        `for` loop over it is one epoch, for at most `num_epochs` epochs (-1: any number)."""
        source = self if columns is None else self.project(columns)
        return DatasetIterator(source, num_epochs, output_numpy, as_dict=False)

    def create_dict_iterator(self, num_epochs: int = -1, output_numpy: bool = False,
                             do_copy: bool = True) -> Iterator:
        """As `create_tuple_iterator`, with rows as {column name: value}."""
        return DatasetIterator(self, num_epochs, output_numpy, as_dict=True)

    def __iter__(self) -> Iterator:
        return iter(self.create_tuple_iterator())

    def get_batch_size(self) -> int:
        """The batch size of the last `batch` in the pipeline (1 without one)."""
        return self.children[0].get_batch_size() if self.children else 1

    def get_repeat_count(self) -> int:
        return self.children[0].get_repeat_count() if self.children else 1

    def output_shapes(self) -> list[list[int]]:
        """The shape of each column of the first row."""
        return [list(np.shape(v)) for v in next(iter(self._rows()))]

    def output_types(self) -> list[np.dtype]:
        """The dtype of each column of the first row."""
        return [np.asarray(v).dtype for v in next(iter(self._rows()))]

    def _index(self, name: str, what: str) -> int:
        columns = self.get_col_names()
        if name not in columns:
            raise ValueError(f"{what}: no column named {name!r}; the columns are {columns}")
        return columns.index(name)


def _refuse(options: dict[str, Any], method: str, known: Sequence[str]) -> None:
    """MindSpore options amber does not implement fail loudly instead of being ignored."""
    for key, value in options.items():
        if key not in known:
            raise TypeError(f"{method}() got an unexpected keyword argument {key!r}")
        if value not in (None, False):
            raise NotImplementedError(f"{method}({key}=...) is not supported by amber's dataset "
                                      "pipeline; apply it in a map() instead")


class MapDataset(Dataset):
    """`map`: operations applied to some columns of each row."""

    def __init__(self, child: Dataset, operations: Any, inputs: list[str] | None,
                 outputs: list[str] | None) -> None:
        super().__init__([child])
        ops = list(operations) if isinstance(operations, list | tuple) else [operations]
        if not ops or not all(callable(op) for op in ops):
            raise TypeError(f"map: operations must be a callable or a list of callables, got "
                            f"{operations!r}")
        self.operations = ops
        names = child.get_col_names()
        self.inputs = inputs or names[:1]
        self.positions = [child._index(n, "map: input_columns") for n in self.inputs]
        self.outputs = outputs or list(self.inputs)
        # NOTE: MindSpore's layout: as many outputs as inputs replace them in place; otherwise
        # the outputs come first, then the columns the map did not read
        self.in_place = len(self.outputs) == len(self.inputs)
        if self.in_place:
            self.columns = list(names)
            for position, name in zip(self.positions, self.outputs):
                self.columns[position] = name
        else:
            self.columns = self.outputs + [n for k, n in enumerate(names)
                                           if k not in self.positions]
        if len(set(self.columns)) != len(self.columns):
            raise ValueError(f"map: the output columns {self.outputs} repeat a column of "
                             f"{names}")

    def get_col_names(self) -> list[str]:
        return list(self.columns)

    def _apply(self, values: tuple) -> tuple:
        for op in self.operations:
            out = op(*values)
            values = tuple(out) if isinstance(out, tuple) else (out,)
        if len(values) != len(self.outputs):
            raise ValueError(f"map: the operations returned {len(values)} value(s) for the "
                             f"{len(self.outputs)} output column(s) {self.outputs}; pass "
                             "output_columns naming each output")
        return tuple(np.asarray(v) for v in values)

    def _rows(self) -> Iterator[Row]:
        for row in self.children[0]._rows():
            outs = self._apply(tuple(row[k] for k in self.positions))
            if self.in_place:
                new = list(row)
                for position, value in zip(self.positions, outs):
                    new[position] = value
                yield tuple(new)
            else:
                yield outs + tuple(v for k, v in enumerate(row) if k not in self.positions)


class BatchDataset(Dataset):
    """`batch`: consecutive rows stacked into one."""

    def __init__(self, child: Dataset, size: int, drop_remainder: bool) -> None:
        super().__init__([child])
        self.size, self.drop_remainder = size, drop_remainder

    def get_dataset_size(self) -> int:
        rows = self.children[0].get_dataset_size()
        return rows // self.size if self.drop_remainder else math.ceil(rows / self.size)

    def get_batch_size(self) -> int:
        return self.size

    def _stack(self, rows: list[Row]) -> Row:
        out = []
        for k, name in enumerate(self.get_col_names()):
            values = [np.asarray(r[k]) for r in rows]
            shapes = {v.shape for v in values}
            if len(shapes) > 1:
                raise ValueError(f"batch: the rows of column {name!r} have different shapes "
                                 f"{sorted(shapes)}; resize or pad them in a map() first")
            out.append(np.stack(values))
        return tuple(out)

    def _rows(self) -> Iterator[Row]:
        pending: list[Row] = []
        for row in self.children[0]._rows():
            pending.append(row)
            if len(pending) == self.size:
                yield self._stack(pending)
                pending = []
        if pending and not self.drop_remainder:
            yield self._stack(pending)


class ShuffleDataset(Dataset):
    """`shuffle`: MindSpore's buffer shuffle (fill the buffer, then emit a random element of
    it and put the next row in its place)."""

    def __init__(self, child: Dataset, buffer_size: int) -> None:
        super().__init__([child])
        self.buffer_size = buffer_size
        self.rng = config.new_generator()

    def _rows(self) -> Iterator[Row]:
        buffer: list[Row] = []
        for row in self.children[0]._rows():
            if len(buffer) < self.buffer_size:
                buffer.append(row)
                continue
            k = int(self.rng.integers(len(buffer)))
            yield buffer[k]
            buffer[k] = row
        for k in self.rng.permutation(len(buffer)):
            yield buffer[k]


class RepeatDataset(Dataset):
    """`repeat`: `count` passes of the child per pass (None: without end)."""

    def __init__(self, child: Dataset, count: int | None) -> None:
        super().__init__([child])
        self.count = count

    def get_dataset_size(self) -> int:
        if self.count is None:
            raise RuntimeError("get_dataset_size: the dataset repeats without end (repeat() "
                               "without a count); give repeat a count")
        return self.children[0].get_dataset_size() * self.count

    def get_repeat_count(self) -> int:
        return -1 if self.count is None else self.count

    def _rows(self) -> Iterator[Row]:
        done = 0
        while self.count is None or done < self.count:
            yield from self.children[0]._rows()
            done += 1


class TakeDataset(Dataset):
    """`take`: the first rows."""

    def __init__(self, child: Dataset, count: int) -> None:
        super().__init__([child])
        self.count = count

    def get_dataset_size(self) -> int:
        return min(self.count, self.children[0].get_dataset_size())

    def _rows(self) -> Iterator[Row]:
        if self.count == 0:
            return
        for k, row in enumerate(self.children[0]._rows()):
            yield row
            if k + 1 == self.count:
                return


class SkipDataset(Dataset):
    """`skip`: all but the first rows."""

    def __init__(self, child: Dataset, count: int) -> None:
        super().__init__([child])
        self.count = count

    def get_dataset_size(self) -> int:
        return max(0, self.children[0].get_dataset_size() - self.count)

    def _rows(self) -> Iterator[Row]:
        for k, row in enumerate(self.children[0]._rows()):
            if k >= self.count:
                yield row


class ProjectDataset(Dataset):
    """`project`: some columns, reordered."""

    def __init__(self, child: Dataset, columns: list[str]) -> None:
        super().__init__([child])
        self.columns = columns
        self.positions = [child._index(n, "project") for n in columns]

    def get_col_names(self) -> list[str]:
        return list(self.columns)

    def _rows(self) -> Iterator[Row]:
        for row in self.children[0]._rows():
            yield tuple(row[k] for k in self.positions)


class RenameDataset(Dataset):
    """`rename`: new column names, same rows."""

    def __init__(self, child: Dataset, mapping: dict[str, str]) -> None:
        super().__init__([child])
        for old in mapping:
            child._index(old, "rename")
        self.columns = [mapping.get(n, n) for n in child.get_col_names()]
        if len(set(self.columns)) != len(self.columns):
            raise ValueError(f"rename: the new names {self.columns} repeat a column")

    def get_col_names(self) -> list[str]:
        return list(self.columns)

    def _rows(self) -> Iterator[Row]:
        return self.children[0]._rows()


class DatasetIterator:
    """What `create_tuple_iterator`/`create_dict_iterator` return: each `for` loop is one
    epoch (a new pass over the pipeline); past `num_epochs` epochs it raises."""

    def __init__(self, dataset: Dataset, num_epochs: int, output_numpy: bool,
                 as_dict: bool) -> None:
        if num_epochs != -1:
            _count(num_epochs, "create_*_iterator: num_epochs", 1)
        self.dataset, self.num_epochs = dataset, num_epochs
        self.output_numpy, self.as_dict = bool(output_numpy), as_dict
        self.columns = dataset.get_col_names()
        self.epochs_done = 0
        self._pass: Iterator[Row] | None = None

    def __iter__(self) -> DatasetIterator:
        return self

    def __next__(self) -> Any:
        if self._pass is None:
            if self.num_epochs != -1 and self.epochs_done >= self.num_epochs:
                raise RuntimeError(f"dataset iterator: all {self.num_epochs} epoch(s) were read "
                                   "(create_*_iterator(num_epochs=...) limits them); make the "
                                   "iterator with a larger num_epochs")
            self._pass = self.dataset._rows()
        try:
            row = next(self._pass)
        except StopIteration:
            self._pass = None
            self.epochs_done += 1
            raise
        values = [self._convert(v) for v in row]
        return dict(zip(self.columns, values)) if self.as_dict else values

    def _convert(self, value: Any) -> np.ndarray:
        array = np.asarray(value)
        return array if self.output_numpy else array.view(Tensor)

    def stop(self) -> None:
        """Drop the current pass (MindSpore frees its pipeline here)."""
        self._pass = None

    def get_next(self) -> Any:
        return next(self)


def apply_ops(operations: Sequence[Callable[..., Any]], *values: Any) -> Any:
    """Run `operations` in order on `values` (what `Compose` and `map` do)."""
    for op in operations:
        out = op(*values)
        values = tuple(out) if isinstance(out, tuple) else (out,)
    return values[0] if len(values) == 1 else values
