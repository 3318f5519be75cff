"""Data-parallel training cells: `DistributedGradReducer` (MindSpore's name) sums or averages a
step's gradients over the ranks of an MPI job; `StartInAgreement` gives every rank rank 0's
parameters and optimizer state at the first step. `TrainOneStepCell` uses both by itself in
ParallelMode.DATA_PARALLEL. Alone (no MPI launcher) both leave the values as they are."""
from __future__ import annotations

from typing import Any, Iterable

import numpy as np

from .. import ops
from ..communication.management import init
from .cell import Cell, Parameter, ParameterTuple

DEFAULT_TIMEOUT = 600.0
"""Seconds a rank waits in a collective for the others before raising TimeoutError."""


def _check_timeout(where: str, timeout: Any) -> float:
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
        raise ValueError(f"{where}: timeout must be a positive number of seconds, got "
                         f"{timeout!r}")
    return float(timeout)


class DistributedGradReducer(Cell):
    """`reducer(grads)`: the gradients summed over every rank of the job, divided by `degree`
    (default: the number of ranks) when `mean`; one fused in-place all-reduce of a flat buffer
    per step. `timeout` (seconds, an amber addition): how long a rank waits for the others
    before a TimeoutError. `in_place` (an amber addition): the reduced gradients are views of
    the reused flat buffer, which the next reduction overwrites (and the compiled update may
    work in); for a step that hands them straight to the optimizer, as `TrainOneStepCell`
    does (it saves a copy of every gradient and the update's temporaries).
    `fusion_type` and `group` are accepted for MindSpore's signature: the reduction is always
    one fused buffer over the world."""

    def __init__(self, parameters: Iterable[Parameter], mean: bool = True,
                 degree: int | None = None, fusion_type: int = 1, group: Any = None, *,
                 timeout: float = DEFAULT_TIMEOUT, in_place: bool = False) -> None:
        super().__init__(auto_prefix=False)
        init()  # NOTE: joins the job, so an uncaught exception aborts every rank (no hang)
        if degree is not None and (isinstance(degree, bool) or not isinstance(degree, int)
                                   or degree < 1):
            raise ValueError(f"DistributedGradReducer: degree must be a positive int, got "
                             f"{degree!r}")
        self.count = len(tuple(parameters))
        self.mean = bool(mean)
        self.degree = degree
        self.timeout = _check_timeout("DistributedGradReducer", timeout)
        self.in_place = bool(in_place)

    def construct(self, grads: Any) -> Any:
        reduced = ops.all_reduce_grads(grads, mean=self.mean, degree=self.degree,
                                       timeout=self.timeout, in_place=self.in_place)
        return tuple(reduced)  # NOTE: a tuple of values, as the optimizer takes its gradients

    def extend_repr(self) -> str:
        return f"parameters={self.count}, mean={self.mean}, degree={self.degree}"


class StartInAgreement(Cell):
    """`start()` at the top of a train step: on its first run, every Parameter of `network`
    (weights, buffers, optimizer state) takes rank 0's value, after a check that every rank
    has the same names, shapes and dtypes (a ValueError on every rank, not a hang); later
    runs do nothing. Ranks seeded differently thus still train one model."""

    def __init__(self, network: Cell, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        super().__init__(auto_prefix=False)
        named = list(network.parameters_and_names())
        self.synced = ParameterTuple(p for _, p in named)
        self.names = tuple(p.name or path for path, p in named)
        self.timeout = _check_timeout("StartInAgreement", timeout)
        # NOTE: per-process state, kept out of the registered parameters (an attribute set
        # past Cell.__setattr__: still a compiled input, but in no checkpoint): a rank that
        # loaded a step's checkpoint must not skip the first broadcast the others wait in.
        object.__setattr__(self, "data_parallel_started",
                           Parameter(np.zeros((1,), np.int32), name="data_parallel_started",
                                     requires_grad=False))

    def construct(self) -> None:
        if self.data_parallel_started[0] == 0:
            values = ops.broadcast_params(self.synced, names=self.names, timeout=self.timeout)
            for param, value in zip(self.synced, values):
                ops.assign(param, value)
            ops.assign(self.data_parallel_started, self.data_parallel_started + 1)
