"""What the reduction and update of a data-parallel step cost one rank, per design, on the MLP
784-1024-10's 814,090 float32 parameters (SGD), measured with NumPy and mpi4py alone (no
amber), CPU time per call (time.process_time) of each rank after a barrier:

- `copy + update`: the gradients scaled into a flat buffer and the update of every parameter,
  which one rank's compiled step timed alone (benchmarks/distributed.py's 'rank') holds;
- `MPI all-reduce` (amber today): the same with an in-place MPI all-reduce in between;
- `shared gradients`: each rank copies its gradients into its slot of an MPI-3 shared window
  (the ranks on one machine), a barrier, every rank adds the slots in rank order (identical
  bits everywhere), then updates every parameter;
- `shared, sharded update`: as above, but the parameters live in a shared window too: each
  rank adds the slots and updates only its 1/N of the parameters, then a barrier (the next
  forward reads the one shared copy).
- `placed: ...` (amber now): the step's products wrote the gradients, scaled, into the flat
  buffer already (graph/passes/place_gradients.py), so a rank's step holds only the update
  `param -= grad` ('placed: update', their baseline); then an in-place all-reduce and that
  update ('placed: all-reduce', amber), or the sharded design with plain MPI collectives,
  parameters in one flat array: reduce-scatter, each rank updates its 1/N, all-gather of the
  parameters ('placed: sharded (RS+AG)').

The extra over `copy + update` (fastest calls: on a busy machine the medians are mostly a rank
spinning while the other is descheduled) is what the design adds to a rank's step; the
projected speed-up is benchmarks/distributed.py's '1 proc' / ('rank' + extra).

    python benchmarks/distributed_designs.py            # launches mpiexec -n 2 itself
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import numpy as np  # noqa: E402

SIZE = 784 * 1024 + 1024 + 1024 * 10 + 10
"""The MLP 784-1024-10's parameter count."""


def designs(world, repeats: int) -> dict[str, list[float]]:
    """{design: CPU seconds of each call on this rank}."""
    from mpi4py import MPI
    rank, size = world.Get_rank(), world.Get_size()
    node = world.Split_type(MPI.COMM_TYPE_SHARED)
    assert node.Get_size() == size, "the designs with shared memory need every rank on one node"

    def shared(shape):
        count = int(np.prod(shape)) * 4 if node.Get_rank() == 0 else 0
        window = MPI.Win.Allocate_shared(count, 4, comm=node)
        return window, np.ndarray(shape, np.float32, buffer=window.Shared_query(0)[0])

    windows = [shared((2, size, SIZE)), shared((SIZE,))]
    slots, weights = windows[0][1], windows[1][1]
    grads = np.random.default_rng(rank).standard_normal(SIZE).astype(np.float32)
    flat, mine, total = (np.zeros(SIZE, np.float32) for _ in range(3))
    rate, scale = np.float32(0.01), np.float32(1.0 / size)
    share = slice(rank * SIZE // size, (rank + 1) * SIZE // size)
    turn = [0]

    def barrier():
        request = world.Ibarrier()
        while not request.Test():
            pass

    def update(grad, params):
        np.multiply(grad, rate, out=grad)
        np.subtract(params, grad, out=params)

    def copy_and_update():
        np.multiply(grads, scale, out=flat)
        update(flat, mine)

    def mpi_all_reduce():
        np.multiply(grads, scale, out=flat)
        request = world.Iallreduce(MPI.IN_PLACE, flat, op=MPI.SUM)
        while not request.Test():
            pass
        update(flat, mine)

    def add_slots(row, part, out):
        np.add(row[0][part], row[1][part], out=out)
        for other in row[2:]:
            np.add(out, other[part], out=out)

    def shared_gradients():
        row = slots[turn[0]]
        turn[0] ^= 1  # NOTE: two rows in turn, so one barrier a step suffices
        np.multiply(grads, scale, out=row[rank])
        barrier()
        add_slots(row, slice(None), total)
        update(total, mine)

    def shared_sharded_update():
        row = slots[turn[0]]
        turn[0] ^= 1
        np.multiply(grads, scale, out=row[rank])
        barrier()
        add_slots(row, share, total[share])
        update(total[share], weights[share])
        barrier()  # NOTE: every share updated before any rank's next forward

    padded = -(-SIZE // size) * size  # NOTE: reduce-scatter's blocks are equal
    placed, params = np.zeros(padded, np.float32), np.zeros(padded, np.float32)
    block = padded // size
    mine_block = slice(rank * block, (rank + 1) * block)
    half = np.zeros(block, np.float32)

    def wait(request):
        while not request.Test():
            pass

    def update_placed():  # NOTE: gradients already in the buffer, scaled (place_gradients)
        np.subtract(params, placed, out=params)

    def placed_all_reduce():
        wait(world.Iallreduce(MPI.IN_PLACE, placed, op=MPI.SUM))
        update_placed()

    def reduce_scatter_all_gather():
        wait(world.Ireduce_scatter_block(placed, half, op=MPI.SUM))
        np.subtract(params[mine_block], half, out=params[mine_block])
        wait(world.Iallgather(MPI.IN_PLACE, params))

    spent: dict[str, list[float]] = {}
    for _ in range(3):  # NOTE: in turn, so every design sees the same load
        for name, run in (("copy + update", copy_and_update), ("MPI all-reduce", mpi_all_reduce),
                          ("shared gradients", shared_gradients),
                          ("shared, sharded update", shared_sharded_update),
                          ("placed: update", update_placed),
                          ("placed: all-reduce", placed_all_reduce),
                          ("placed: sharded (RS+AG)", reduce_scatter_all_gather)):
            for _ in range(repeats):
                world.Barrier()
                begin = time.process_time()
                run()
                spent.setdefault(name, []).append(time.process_time() - begin)
    for window, _ in windows:
        window.Free()
    return spent


def main() -> None:
    if "--worker" not in sys.argv:
        exe = shutil.which("mpiexec", path=os.path.dirname(sys.executable)) or "mpiexec"
        subprocess.run([exe, "-n", "2", sys.executable, __file__, "--worker"], check=True)
        return
    from mpi4py import MPI
    world = MPI.COMM_WORLD
    spent = designs(world, repeats=100)
    if world.Get_rank() != 0:
        return
    bases = {name: min(spent["placed: update" if name.startswith("placed") else
                              "copy + update"]) for name in spent}
    print(f"{world.Get_size()} ranks, {SIZE} float32 parameters, SGD; machine load (1 min) "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; CPU ms per call, rank 0")
    print(f"{'design':24} {'fastest':>8} {'median':>8} {'extra':>8}")
    for name, times in spent.items():
        print(f"{name:24} {min(times) * 1e3:8.3f} {np.median(times) * 1e3:8.3f} "
              f"{(min(times) - bases[name]) * 1e3:8.3f}")


if __name__ == "__main__":
    main()
