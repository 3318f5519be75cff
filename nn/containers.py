"""Cell containers: `SequentialCell` (runs its cells in order) and `CellList` (holds cells for a
user's `construct` to iterate). Children are named by position ('0', '1', ...) or by dict key."""
from __future__ import annotations

from typing import Any, Iterable, Iterator

from .cell import Cell


def _checked(owner: str, cells: Iterable[Any]) -> list[Cell]:
    items = list(cells)
    for i, cell in enumerate(items):
        if not isinstance(cell, Cell):
            raise TypeError(f"{owner}: item {i} is a {type(cell).__name__}, not a Cell")
    return items


def _reset(container: Cell, named: list[tuple[str, Cell]]) -> None:
    """Replace every child of `container` by `named`, in order, and refresh `cell_list`."""
    for name in list(container._cells):
        delattr(container, name)
    for name, cell in named:
        container.insert_child_to_cell(name, cell)
    # NOTE: a tuple, so the compiler sees the layer sequence as one compile-time constant.
    object.__setattr__(container, "cell_list", tuple(cell for _, cell in named))


def _renumber(cells: list[Cell]) -> list[tuple[str, Cell]]:
    return [(str(i), cell) for i, cell in enumerate(cells)]


def _view(container_type: type[Cell], cells: tuple[Cell, ...]) -> Cell:
    """A new container over `cells` that leaves their Parameters' names alone (a slice)."""
    view = container_type()
    object.__setattr__(view, "auto_prefix", False)
    _reset(view, _renumber(list(cells)))
    return view


class _CellSequence:
    """The read-only sequence protocol both containers share over their `cell_list` tuple; a
    slice is a new container of the same kind."""
    cell_list: tuple[Cell, ...]

    def __len__(self) -> int:
        return len(self.cell_list)

    def __iter__(self) -> Iterator[Cell]:
        return iter(self.cell_list)

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return _view(type(self), self.cell_list[index])
        return self.cell_list[index]


class SequentialCell(_CellSequence, Cell):
    """Runs its cells one after another: `SequentialCell(a, b)`, `SequentialCell([a, b])` or
    `SequentialCell(OrderedDict(name=cell, ...))`."""
    cell_list: tuple[Cell, ...]

    def __init__(self, *args: Any) -> None:
        super().__init__()
        self._keyed = len(args) == 1 and isinstance(args[0], dict)
        if self._keyed:
            named = list(args[0].items())
            _checked("SequentialCell", (cell for _, cell in named))
        else:
            items = args[0] if len(args) == 1 and isinstance(args[0], list | tuple) else args
            named = _renumber(_checked("SequentialCell", items))
        _reset(self, named)

    def construct(self, input_data: Any) -> Any:
        for cell in self.cell_list:
            input_data = cell(input_data)
        return input_data

    def _set(self, cells: list[Cell], names: list[str] | None = None) -> None:
        if names is not None and self._keyed:
            _reset(self, list(zip(names, cells)))
        else:
            self._keyed = False
            _reset(self, _renumber(cells))


    def __setitem__(self, index: int, cell: Cell) -> None:
        cells = list(self.cell_list)
        cells[index] = _checked("SequentialCell", [cell])[0]
        self._set(cells, list(self._cells))

    def __delitem__(self, index: int | slice) -> None:
        cells, names = list(self.cell_list), list(self._cells)
        del cells[index]
        del names[index]
        self._set(cells, names)

    def append(self, cell: Cell) -> SequentialCell:
        """Add `cell` at the end; returns self."""
        self._set(list(self.cell_list) + _checked("SequentialCell", [cell]),
                  list(self._cells) + [str(len(self))])
        return self

    def insert(self, index: int, cell: Cell) -> SequentialCell:
        """Put `cell` before position `index` (children are renumbered); returns self."""
        cells = list(self.cell_list)
        cells.insert(index, _checked("SequentialCell", [cell])[0])
        self._set(cells)
        return self


class CellList(_CellSequence, Cell):
    """A list of cells whose Parameters are registered (a plain list's would not be)."""
    cell_list: tuple[Cell, ...]

    def __init__(self, args: Iterable[Cell] | None = None) -> None:
        super().__init__()
        _reset(self, _renumber(_checked("CellList", args or ())))

    def construct(self, *inputs: Any) -> Any:
        raise NotImplementedError("CellList has no construct; iterate over it in yours")


    def __setitem__(self, index: int, cell: Cell) -> None:
        cells = list(self.cell_list)
        cells[index] = _checked("CellList", [cell])[0]
        _reset(self, _renumber(cells))

    def __delitem__(self, index: int | slice) -> None:
        cells = list(self.cell_list)
        del cells[index]
        _reset(self, _renumber(cells))

    def append(self, cell: Cell) -> CellList:
        """Add `cell` at the end; returns self."""
        return self.extend([cell])

    def extend(self, cells: Iterable[Cell]) -> CellList:
        """Add `cells` at the end; returns self."""
        _reset(self, _renumber(list(self.cell_list) + _checked("CellList", cells)))
        return self

    def insert(self, index: int, cell: Cell) -> CellList:
        """Put `cell` before position `index`; returns self."""
        cells = list(self.cell_list)
        cells.insert(index, _checked("CellList", [cell])[0])
        _reset(self, _renumber(cells))
        return self
