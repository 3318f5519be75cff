"""Cells that wrap a network for training, with MindSpore's names: `WithLossCell` joins a
backbone and a loss function into one Cell whose output is the loss."""
from __future__ import annotations

from typing import Any

from .cell import Cell


class WithLossCell(Cell):
    """`loss_fn(backbone(data), label)`: the network and its loss as one Cell (MindSpore's
    `nn.WithLossCell`). Parameters keep the backbone's names (no prefix)."""

    def __init__(self, backbone: Cell, loss_fn: Cell) -> None:
        super().__init__(auto_prefix=False)
        self._backbone = backbone
        self._loss_fn = loss_fn

    def construct(self, data: Any, label: Any) -> Any:
        out = self._backbone(data)
        return self._loss_fn(out, label)

    @property
    def backbone_network(self) -> Cell:
        """The wrapped network."""
        return self._backbone
