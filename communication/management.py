"""The processes of a data-parallel job (MindSpore's `mindspore.communication.management`):
`init`, `get_rank`, `get_group_size`, `get_local_rank`, `release`.

Under an MPI launcher (`mpiexec -n 2 python train.py`) the world is MPI's world communicator,
through mpi4py; started any other way it is this one process (rank 0 of 1) and MPI is never
imported. `init` also makes an uncaught exception on any rank end the whole job (MPI's abort),
so the other ranks do not wait forever in a collective for a rank that is gone.
"""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from typing import Any

from ..ops.collective import mpi_world

BACKENDS = ("mpi", "hccl", "nccl", "mccl", None)
"""`init(backend_name)` values accepted: MPI is what amber runs on whichever a script names."""


@dataclass(frozen=True)
class World:
    """This process's place in the job: its rank, the number of ranks, its rank among the
    ranks on its machine, and the MPI communicator (None in a world of one)."""
    rank: int
    size: int
    local_rank: int
    local_size: int
    comm: Any = None


_world: World | None = None


def init(backend_name: str | None = None) -> None:
    """Join the job: MPI's world when an MPI launcher started this process, else a world of
    one. Idempotent; every other function here calls it when needed."""
    global _world
    if backend_name not in BACKENDS:
        raise ValueError(f"init: backend_name must be one of {BACKENDS}, got {backend_name!r} "
                         "(amber runs every backend on MPI)")
    if _world is not None:
        return
    comm = mpi_world()
    if comm is None:
        _world = World(0, 1, 0, 1)
        return
    from mpi4py import MPI
    local = comm.Split_type(MPI.COMM_TYPE_SHARED)
    _world = World(comm.Get_rank(), comm.Get_size(), local.Get_rank(), local.Get_size(), comm)
    local.Free()
    _abort_on_uncaught_exceptions(_world)


def release() -> None:
    """Leave the job (MindSpore's `release`): the next call re-joins it. MPI itself is
    finalized when the process exits, as mpi4py does."""
    global _world
    _world = None


def world() -> World:
    """The job this process is in (joining it first if needed)."""
    if _world is None:
        init()
    assert _world is not None
    return _world


def get_rank(group: str | None = None) -> int:
    """This process's rank: 0 to `get_group_size() - 1` (0 without MPI)."""
    return world().rank


def get_group_size(group: str | None = None) -> int:
    """The number of processes in the job (1 without MPI)."""
    return world().size


def get_local_rank(group: str | None = None) -> int:
    """This process's rank among the job's processes on the same machine."""
    return world().local_rank


def get_local_rank_size(group: str | None = None) -> int:
    """The number of the job's processes on this machine."""
    return world().local_size


def from_rank_zero(value: Any) -> Any:
    """Rank 0's `value` (a small picklable object) on every rank; `value` in a world of one.
    Every rank must call it at the same point, as any collective."""
    comm = world().comm
    return value if comm is None else comm.bcast(value, root=0)


def mean_over_ranks(value: float, what: str, timeout: float = 600.0) -> float:
    """The mean of `value` over the ranks (`value` in a world of one); TimeoutError after
    `timeout` seconds, naming `what`."""
    job = world()
    if job.comm is None:
        return float(value)
    import numpy as np
    from ..ops.collective import wait_collective
    mine, total = np.array([value], np.float64), np.zeros(1, np.float64)
    wait_collective(job.comm.Iallreduce(mine, total), what, job.comm, timeout)
    return float(total[0]) / job.size


def _abort_on_uncaught_exceptions(job: World) -> None:
    """An uncaught exception prints its traceback, then aborts every rank of the job: without
    this the rank would exit while the others wait for it in the next collective."""
    previous = sys.excepthook

    def abort(exc_type: type, exc: BaseException, tb: Any) -> None:
        previous(exc_type, exc, tb)
        sys.stderr.write(f"amber: rank {job.rank} of {job.size} failed with {exc_type.__name__};"
                         " aborting the MPI job on every rank\n")
        sys.stderr.flush()
        time.sleep(0.5)  # NOTE: the launcher forwards output late under load; the abort drops it
        job.comm.Abort(1)

    sys.excepthook = abort
