"""Cells that wrap a network for training, with MindSpore's names: `WithLossCell` joins a
backbone and a loss function into one Cell whose output is the loss; `TrainOneStepCell` runs
one training step (forward, gradients, optimizer update) and returns the loss."""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import ops
from ..communication.parallel import data_parallel, device_num_setting, get_auto_parallel_context
from .cell import Cell
from .distributed import DistributedGradReducer, StartInAgreement


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


class NonFiniteLossError(FloatingPointError):
    """A train step's loss is NaN or infinite; the parameters were left as they were."""


class TrainOneStepCell(Cell):
    """One training step of `network` (a Cell returning the loss, e.g. a `WithLossCell`) with
    `optimizer` (MindSpore's `nn.TrainOneStepCell`): the loss, its gradients with respect to
    the optimizer's parameters (the loss's adjoint seeded with `sens`), then the optimizer's
    in-place update; returns the loss. Compiled with `amber.jit`, the whole step is one graph
    and one generated NumPy function.

    A loss that is NaN or infinite raises `NonFiniteLossError` before the update, leaving the
    parameters and the optimizer state untouched (MindSpore would write the NaNs in);
    `update_on_nonfinite=True` updates anyway, as MindSpore does. A batch whose dtype makes the
    loss another dtype than the parameters' (float64 images for float32 weights, which NumPy
    would silently promote) is a TypeError, also before any update."""

    def __init__(self, network: Cell, optimizer: Cell, sens: float = 1.0, *,
                 update_on_nonfinite: bool = False) -> None:
        super().__init__(auto_prefix=False)
        if not isinstance(network, Cell):
            raise TypeError(f"TrainOneStepCell: network must be a Cell, got "
                            f"{type(network).__name__}")
        weights = getattr(optimizer, "parameters", None)
        if not isinstance(optimizer, Cell) or weights is None:
            raise TypeError(f"TrainOneStepCell: optimizer must be an optimizer Cell (e.g. "
                            f"nn.SGD(net.trainable_params())), got {type(optimizer).__name__}")
        if isinstance(sens, bool) or not isinstance(sens, int | float | np.integer | np.floating):
            raise TypeError(f"TrainOneStepCell: sens must be a float, got {type(sens).__name__}")
        self.network = network
        self.network.set_grad()
        self.optimizer = optimizer
        self.weights = weights
        self.grad = ops.GradOperation(get_by_list=True, sens_param=True)
        self.sens = float(sens)
        self.update_on_nonfinite = bool(update_on_nonfinite)
        dtypes = sorted({np.dtype(w.dtype).name for w in weights})
        self.param_dtype = np.dtype(dtypes[0]) if len(dtypes) == 1 else None
        """The parameters' one float dtype, which the loss must have (None: mixed)."""
        self.reducer_flag = data_parallel()
        """ParallelMode.DATA_PARALLEL when built: the step starts from rank 0's values and
        reduces its gradients over the ranks (nn/distributed.py)."""
        if self.reducer_flag:
            self.start_in_agreement = StartInAgreement(self)
            # NOTE: in place (views of the reduced buffer): the grads go straight to the optimizer
            self.grad_reducer = DistributedGradReducer(
                weights, get_auto_parallel_context("gradients_mean"), device_num_setting(),
                in_place=True)

    def construct(self, *inputs: Any) -> Any:
        if self.reducer_flag:
            self.start_in_agreement()
        loss = self.network(*inputs)
        if self.param_dtype is not None and loss.dtype != self.param_dtype:
            raise TypeError(f"TrainOneStepCell: the loss is {loss.dtype} but the parameters "
                            f"are {self.param_dtype}: an input of the batch has another dtype "
                            "(cast the batch to the parameters' dtype); nothing was updated")
        if not self.update_on_nonfinite:
            if not ops.isfinite(loss).all():
                raise NonFiniteLossError("the loss is NaN or infinite; the parameters were not "
                                         "updated (lower the learning rate, check the data, or "
                                         "pass update_on_nonfinite=True)")
        sens = ops.full(loss.shape, self.sens, dtype=loss.dtype)  # NOTE: known when compiling
        grads = self.grad(self.network, self.weights)(*inputs, sens)
        if self.reducer_flag:
            grads = self.grad_reducer(grads)
        self.optimizer(grads)
        return loss


class WithEvalCell(Cell):
    """`(loss_fn(network(data), label), network(data), label)`: what `Model.eval` runs to
    feed its metrics (MindSpore's `nn.WithEvalCell`)."""

    def __init__(self, network: Cell, loss_fn: Cell, add_cast_fp32: bool = False) -> None:
        super().__init__(auto_prefix=False)
        self._network = network
        self._loss_fn = loss_fn
        self.add_cast_fp32 = add_cast_fp32

    def construct(self, data: Any, label: Any) -> Any:
        outputs = self._network(data)
        return self._loss_fn(outputs, label), outputs, label
