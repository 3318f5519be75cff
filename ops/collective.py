"""Collective operations across the processes of an MPI job, for data-parallel training:
`all_reduce_grads` (one fused in-place all-reduce of a step's gradients over a flat buffer) and
`broadcast_params` (rank 0's parameters to every rank, after checking that every rank has the
same ones).

Their kernels are also the helpers generated code calls, so a compiled or exported train step
finds MPI by itself: when an MPI launcher (`mpiexec`, `mpirun`, `srun`) started the process with
more than one rank, through mpi4py's world communicator; otherwise the world is this one process
and nothing is imported. A collective that does not complete within `timeout` seconds raises
TimeoutError instead of waiting forever for a rank that is stuck or gone.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .batch_rules import LOOP_EFFECT
from .elementwise import spell
from .opdef import GradContext, OpDef
from .types import Tensor, TupleType, Type


def mpi_world():
    """MPI's world communicator if an MPI launcher started this process among 2 or more (or
    mpi4py is already in use), else None: a world of one, without importing MPI."""
    world = mpi_world.__dict__.get("world")
    if world is not None:  # NOTE: found before; a process's MPI world stays what it is
        return world
    import os
    import sys
    launcher = [v for v in ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK",
                            "MPI_LOCALNRANKS") if v in os.environ]
    if not launcher and "mpi4py.MPI" not in sys.modules:
        return None
    try:
        from mpi4py import MPI
    except ImportError:
        raise ModuleNotFoundError(
            f"this process was started by an MPI launcher ({launcher[0]} is set) but mpi4py is "
            "not installed: pip install 'amber-jit[distributed]' (mpi4py and an MPI), or run "
            "without mpiexec", name="mpi4py") from None
    world = MPI.COMM_WORLD
    if world.Get_size() < 2:
        return None
    mpi_world.world = world
    return world


def wait_collective(request, what, world, timeout):
    """Wait for a non-blocking MPI `request`; TimeoutError after `timeout` seconds."""
    import time
    start = time.monotonic()
    spins = 0
    while not request.Test():  # NOTE: each Test drives MPI's progress: never sleep between
        spins += 1
        if spins % 1024 == 0:
            waited = time.monotonic() - start
            if waited > 0.05:  # NOTE: a rank is late: yield the core to a rank sharing it
                time.sleep(0)
            if waited > timeout:
                raise TimeoutError(
                    f"{what}: rank {world.Get_rank()} of {world.Get_size()} waited {timeout:g} "
                    "s for the other ranks; one is stuck, dead or running a different number "
                    "of steps (every rank must call the train step equally often)")


def staging_buffer(dtype, size, role=""):
    """A flat buffer of `size` items of `dtype`, the same one at every call of this thread for
    one `role`: MPI moves a buffer it has seen before much faster (its pages mapped and
    registered once, not at every step), and a thread never overwrites another's."""
    local = staging_buffer.__dict__.get("local")
    if local is None:
        import threading
        local = staging_buffer.__dict__.setdefault("local", threading.local())
    cache = local.__dict__.setdefault("buffers", {})
    key = (role, np.dtype(dtype).str, size)
    if key not in cache:
        cache[key] = np.empty(size, dtype)
    return cache[key]


def flat_buffers(arrays, scale=None, role="", placed=()):
    """The arrays raveled into one staging buffer of `role` per dtype, multiplied by `scale` on
    the way if given: {dtype: (buffer, indices)}. The arrays at indices `placed` are already
    in their places (and scaled): written there by `gradient_slot`'s users, not copied."""
    groups = {}
    for k, a in enumerate(arrays):
        groups.setdefault(np.asarray(a).dtype, []).append(k)
    buffers = {}
    for dtype, ks in groups.items():
        buffer = staging_buffer(dtype, sum(np.size(arrays[k]) for k in ks), role)
        if scale is None and not placed:
            np.concatenate([np.ravel(arrays[k]) for k in ks], out=buffer)
        else:
            start = 0
            for k in ks:
                stop = start + np.size(arrays[k])
                if k in placed:
                    check_placed(arrays[k], buffer[start:stop])
                elif scale is None:
                    np.copyto(buffer[start:stop], np.ravel(arrays[k]))
                else:
                    np.multiply(np.ravel(arrays[k]), dtype.type(scale), out=buffer[start:stop])
                start = stop
        buffers[dtype] = (buffer, ks)
    return buffers


def check_placed(array, slot):
    """Raise unless `array` is the flat buffer's `slot` (it was written there in place)."""
    address = lambda a: a.__array_interface__["data"][0]  # NOTE: much cheaper than a.ctypes
    if not (isinstance(array, np.ndarray) and array.size == slot.size
            and address(array) == address(slot) and array.flags.c_contiguous):
        raise RuntimeError("all_reduce_grads: a gradient marked as placed in the flat buffer "
                           "is not there (an amber bug: please report it)")


def gradient_slot(dtype, offset, total, shape):
    """The part of this thread's flat gradient buffer (`total` items of `dtype`) where the
    gradient at `offset` goes, shaped `shape`: the product computing that gradient writes
    there (`out=`), so the all-reduce need not copy it in."""
    local = gradient_slot.__dict__.get("local")
    if local is None:
        import threading
        local = gradient_slot.__dict__.setdefault("local", threading.local())
    views = local.__dict__.setdefault("views", {})  # NOTE: per thread, as the buffers are
    key = (dtype, offset, total, shape)
    if key not in views:
        size = int(np.prod(shape, dtype=np.int64))
        buffer = staging_buffer(dtype, total, "gradients")
        views[key] = buffer[offset:offset + size].reshape(shape)
    return views[key]


def mean_scaled(x, mean=True, degree=None):
    """`x` times the reduction's 1/N (N = `degree`, or the number of ranks) when `mean`: a
    factor of a gradient's product applied to its smaller operand, before the all-reduce."""
    if not mean:
        return x
    world = mpi_world()
    scale = 1.0 / (degree or (1 if world is None else world.Get_size()))
    return x if scale == 1.0 else x * np.asarray(x).dtype.type(scale)


def unflatten(arrays, buffers, copy=True):
    """Arrays shaped like `arrays` with the values of `buffers` (from flat_buffers), in the
    arrays' order: new arrays, or views of the buffers if not `copy`."""
    out = [None] * len(arrays)
    for buffer, ks in buffers.values():
        start = 0
        for k in ks:
            size = np.size(arrays[k])
            piece = buffer[start:start + size].reshape(np.shape(arrays[k]))
            out[k] = piece.copy() if copy else piece
            start += size
    return tuple(out)


def all_reduce_grads_kernel(grads, mean=True, degree=None, timeout=600.0, in_place=False,
                            placed=()):
    """The gradients summed over every rank (divided by `degree`, the world size when None,
    if `mean`): one in-place all-reduce of a flat buffer per dtype, each gradient scaled as
    it is copied in (the sum of the shares). `in_place`: the results are views of that
    buffer, which this thread's next call overwrites (for a step that consumes them at once:
    no copy out, no fresh pages to fault in). Never the gradients themselves: the op's
    results are fresh, so the step's update may write into them; except the gradients at
    indices `placed`, already written (and scaled) in the buffer by the step's products
    (graph/passes/place_gradients.py), whose buffer then becomes the result."""
    world = mpi_world()
    size = 1 if world is None else world.Get_size()
    scale = 1.0 / (degree or size) if mean else None
    if world is None and not in_place and not placed:
        if scale is None or scale == 1.0:
            return tuple(np.array(g) for g in grads)
        return tuple(g * np.asarray(g).dtype.type(scale) for g in grads)
    buffers = flat_buffers(grads, None if scale == 1.0 else scale, "gradients", placed)
    if world is not None:
        from mpi4py import MPI
        for buffer, _ in buffers.values():
            request = world.Iallreduce(MPI.IN_PLACE, buffer, op=MPI.SUM)
            wait_collective(request, "gradient all-reduce", world, timeout)
    return unflatten(grads, buffers, copy=not in_place)


def broadcast_params_kernel(params, names=(), timeout=600.0):
    """Rank 0's values of `params` on every rank (one flat broadcast per dtype), after checking
    that every rank has the same parameter names, shapes and dtypes: ValueError on every rank
    otherwise. In a world of one, the parameters themselves."""
    world = mpi_world()
    if world is None:
        return tuple(params)
    import zlib
    mine = tuple((n, f"{np.asarray(p).dtype}{list(np.shape(p))}")
                 for n, p in zip(names, params))
    digest = np.array([zlib.crc32(repr(mine).encode())], np.int64)
    digests = np.zeros(world.Get_size(), np.int64)
    request = world.Iallgather(digest, digests)  # NOTE: timed, unlike a pickled allgather
    wait_collective(request, "parameter check", world, timeout)
    if len(set(digests.tolist())) > 1:  # every rank is here now: exchange the details
        every = world.allgather(mine)
        rank = next(r for r, theirs in enumerate(every) if theirs != every[0])
        theirs = every[rank]
        diff = [f"{len(every[0])} parameters on rank 0, {len(theirs)} on rank {rank}"
                ] if len(theirs) != len(every[0]) else []
        diff += [f"{a[0]!r} is {a[1]} on rank 0 but {b[0]!r} {b[1]} on rank {rank}"
                 for a, b in zip(every[0], theirs) if a != b]
        raise ValueError("data-parallel training: the ranks built different models ("
                         + "; ".join(diff[:3]) + "); every rank must build the same "
                         "network and optimizer")
    buffers = flat_buffers(params)
    for buffer, _ in buffers.values():
        request = world.Ibcast(buffer, root=0)
        wait_collective(request, "parameter broadcast", world, timeout)
    return unflatten(params, buffers)


def _tensors(op: str, xs: Type) -> tuple[Tensor, ...]:
    if not isinstance(xs, TupleType) or not all(isinstance(t, Tensor) for t in xs.elements):
        raise TypeError(f"{op}: expected a tuple of tensors, got {xs}")
    return xs.elements


def _all_reduce_infer(xs: Type, *, mean: bool, degree: Any, timeout: float,
                      in_place: bool, placed: tuple) -> TupleType:
    if degree is not None and (not isinstance(degree, int) or degree < 1):
        raise ValueError(f"all_reduce_grads: degree must be a positive int or None, got "
                         f"{degree!r}")
    return TupleType(_tensors("all_reduce_grads", xs))


def placed_matmul_kernel(x, y, *, transpose_a, transpose_b, scaled, mean, degree, dtype,
                         offset, total, shape):
    """matmul(x, y) (operands transposed as its attributes say), the operand `scaled` (0 or
    1) times the reduction's 1/N first, written into its slot of the flat gradient buffer."""
    operands = [np.swapaxes(x, -1, -2) if transpose_a else x,
                np.swapaxes(y, -1, -2) if transpose_b else y]
    operands[scaled] = mean_scaled(operands[scaled], mean, degree)
    return np.matmul(*operands, out=gradient_slot(dtype, offset, total, shape))


def _placed_matmul_infer(x: Type, y: Type, *, transpose_a: bool, transpose_b: bool,
                         scaled: int, mean: bool, degree: Any, dtype: str, offset: int,
                         total: int, shape: tuple) -> Tensor:
    from .nn import matmul
    out = matmul.infer(x, y, transpose_a=transpose_a, transpose_b=transpose_b)
    if out.shape != tuple(shape) or out.dtype != np.dtype(dtype) or scaled not in (0, 1):
        raise ValueError(f"placed_matmul: the product is {out}, not {dtype}{list(shape)}")
    return out


def _placed_matmul_emit(attrs: dict) -> str:
    operands = ["np.swapaxes(x, -1, -2)" if attrs.get("transpose_a") else "x",
                "np.swapaxes(y, -1, -2)" if attrs.get("transpose_b") else "y"]
    k = attrs.get("scaled", 0)
    operands[k] = f"mean_scaled({operands[k]}, mean, degree)"
    return (f"np.matmul({operands[0]}, {operands[1]}, "
            "out=gradient_slot(dtype, offset, total, shape))")


def _broadcast_infer(xs: Type, *, names: tuple, timeout: float) -> TupleType:
    return TupleType(_tensors("broadcast_params", xs))


_SHARED = (mpi_world, wait_collective, staging_buffer, flat_buffers, check_placed, unflatten)
"""The helpers both kernels call."""

def _not_differentiable(ad: GradContext) -> tuple[Any, ...]:
    raise NotImplementedError(
        "a collective (all_reduce_grads, broadcast_params) is not differentiable: reduce "
        "gradients after computing them (nn.DistributedGradReducer), not inside the function "
        "being differentiated")


all_reduce_grads = OpDef(
    "all_reduce_grads", ("xs",), kernel=all_reduce_grads_kernel, infer=_all_reduce_infer,
    attrs={"mean": True, "degree": None, "timeout": 600.0, "in_place": False, "placed": ()},
    emit=lambda attrs: "all_reduce_grads_kernel(xs, mean, degree, timeout, in_place"
                       + (", placed)" if attrs.get("placed") else ")"),
    helpers=(all_reduce_grads_kernel, *_SHARED), effects=True, can_raise=True,
    fresh=True, fresh_items=True, grad=_not_differentiable, batch=LOOP_EFFECT)
"""Sums (or averages) a step's gradients over the ranks of an MPI job; identity alone.
NOTE: effectful, so every rank runs it exactly once per step, in order with the others.
`in_place=True` returns views of the reused flat buffer: only for a step whose gradients go
straight into an optimizer (TrainOneStepCell's), as the thread's next reduction overwrites
them. `placed` (set by graph/passes/place_gradients.py, not by users): the indices of
gradients a `placed_matmul` wrote into the flat buffer, already scaled."""

broadcast_params = OpDef(
    "broadcast_params", ("xs",), kernel=broadcast_params_kernel, infer=_broadcast_infer,
    attrs={"names": (), "timeout": 600.0},
    emit="broadcast_params_kernel(xs, names, timeout)",
    helpers=(broadcast_params_kernel, *_SHARED), effects=True, can_raise=True,
    grad=_not_differentiable, batch=LOOP_EFFECT)
"""Rank 0's parameter values on every rank of an MPI job (data-parallel start)."""

placed_matmul = OpDef(
    "placed_matmul", ("x", "y"), kernel=placed_matmul_kernel, infer=_placed_matmul_infer,
    attrs={"transpose_a": False, "transpose_b": False, "scaled": 0, "mean": True,
           "degree": None, "dtype": "float32", "offset": 0, "total": 0, "shape": ()},
    emit=_placed_matmul_emit,
    helpers=(gradient_slot, mean_scaled, staging_buffer, mpi_world),
    grad=_not_differentiable, batch=LOOP_EFFECT)
"""A gradient's product written straight into its slot of the flat buffer the step's one
`all_reduce_grads` reduces (graph/passes/place_gradients.py makes it; not a user op).
NOTE: not `fresh`: its result is that buffer, which the all-reduce then hands on."""

OPS = (all_reduce_grads, broadcast_params, placed_matmul)
FUNCTIONS = (
    spell("all_reduce_grads", all_reduce_grads,
          "grads, mean=True, degree=None, timeout=600.0, in_place=False", grads="xs"),
    spell("broadcast_params", broadcast_params, "parameters, names=(), timeout=600.0",
          parameters="xs"),
)
