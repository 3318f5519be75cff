"""The distributed scenarios, run by tests/distributed under `mpiexec -n N python
mpi_worker.py SCENARIO...` (several scenarios share one launch: MPI start-up is the cost).
Each rank checks what it can see and raises on a failure (the job then aborts, non-zero);
rank 0 prints `ok SCENARIO ...` lines the tests read."""
from __future__ import annotations

import os
import signal
import sys
import tempfile
import time

import numpy as np
from mpi4py import MPI

import amber
from amber import communication as comm
from amber import nn, ops

STEPS = 20
ROWS = 12  # NOTE: the global batch: divisible by 2 and 3 ranks


class Branchy(nn.Cell):
    """A model with control flow in construct: a branch on the weights (the same on every rank
    and for the whole batch; a branch on the batch would differ per shard) and a loop."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Dense(5, 6)
        self.fc2 = nn.Dense(6, 3)

    def construct(self, x):
        h = self.fc1(x)
        if self.fc1.weight.sum() > 0:
            h = ops.tanh(h)
        else:
            h = ops.relu(h) * 0.5
        for _ in range(2):
            h = h + 0.1 * ops.sin(h)
        return self.fc2(h)


def mlp() -> nn.Cell:
    return nn.SequentialCell([nn.Dense(5, 7), nn.ReLU(), nn.Dense(7, 3)])


OPTIMIZERS = {
    "sgd": lambda ps: nn.SGD(ps, learning_rate=0.1),
    "momentum": lambda ps: nn.Momentum(ps, learning_rate=0.05, momentum=0.9),
    "adam": lambda ps: nn.Adam(ps, learning_rate=0.01),
}


def data(seed: int = 7) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((STEPS, ROWS, 5)).astype(np.float32)
    y = rng.standard_normal((STEPS, ROWS, 3)).astype(np.float32)
    return x, y


def train(model, optimizer: str, parallel: bool, seed: int) -> list[np.ndarray]:
    """`STEPS` compiled steps from weights of `seed`: on this rank's rows in DATA_PARALLEL
    mode, on the whole batch otherwise; the final parameters."""
    if parallel:
        amber.set_auto_parallel_context(parallel_mode=amber.ParallelMode.DATA_PARALLEL,
                                        gradients_mean=True)
    else:
        amber.reset_auto_parallel_context()
    amber.set_seed(seed)
    net = model()
    step = amber.jit(nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()),
                                         OPTIMIZERS[optimizer](net.trainable_params())))
    xs, ys = data()
    for x, y in zip(xs, ys):
        if parallel:
            x, y = comm.shard_rows(x, y)
        step(x, y)
    amber.reset_auto_parallel_context()
    return [np.array(p) for p in net.get_parameters()]


def equality(cases=None) -> None:
    """Each rank on its rows, seeded differently, ends bit-identical on every rank and equal to
    one process on the whole batch."""
    world = MPI.COMM_WORLD
    every_case = [(model, optimizer) for model in (mlp, Branchy) for optimizer in OPTIMIZERS]
    for model, optimizer in cases or every_case:
        mine = train(model, optimizer, True, seed=100 + comm.get_rank())
        alone = train(model, optimizer, False, seed=100)
        every = world.allgather(mine)
        for rank, theirs in enumerate(every):
            for a, b in zip(theirs, every[0]):
                assert a.tobytes() == b.tobytes(), f"{model.__name__}/{optimizer}: rank " \
                    f"{rank}'s parameters differ from rank 0's"
        for a, b in zip(mine, alone):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6,
                                       err_msg=f"{model.__name__}/{optimizer}")
        report(f"equality {model.__name__} {optimizer}")


def equality_sample() -> None:
    """Two of equality's cases (CI time)."""
    equality([(mlp, "momentum"), (Branchy, "adam")])


class ExportStep(nn.TrainOneStepCell):
    """A data-parallel train step for `amber export --train` (built with the mode set)."""

    def __init__(self) -> None:
        amber.set_auto_parallel_context(parallel_mode=amber.ParallelMode.DATA_PARALLEL,
                                        gradients_mean=True)
        net = mlp()
        super().__init__(nn.WithLossCell(net, nn.MSELoss()), OPTIMIZERS["adam"](
            net.trainable_params()))
        amber.reset_auto_parallel_context()


def example_inputs() -> tuple[np.ndarray, np.ndarray]:
    xs, ys = data()
    return comm.shard_rows(xs[0], ys[0])


def export() -> None:
    """`amber export --train` of a data-parallel step: the module, run on every rank without
    amber, ends like one process training on the whole batch."""
    import importlib.util
    from amber import cli
    world, rank = MPI.COMM_WORLD, comm.get_rank()
    folder = world.bcast(tempfile.mkdtemp(prefix="amber-mpi-") if rank == 0 else None)
    module_path = os.path.join(folder, "step_static.py")
    if rank == 0:
        assert cli.main(["export", f"{__file__}:ExportStep", "-o", module_path, "--train"]) == 0
    world.Barrier()
    spec = importlib.util.spec_from_file_location("step_static", module_path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    xs, ys = data()
    for x, y in zip(xs, ys):
        module.run(*comm.shard_rows(x, y))
    mine = os.path.join(folder, f"rank{rank}.ckpt")
    module.save(mine)  # NOTE: the exported module's own save: every rank writes its file
    trained = {k: v for k, v in np.load(mine).items()}
    every = world.allgather(trained)
    assert all(t.keys() == trained.keys() and all(t[k].tobytes() == v.tobytes()
                                                   for k, v in trained.items()) for t in every)
    amber.set_seed(0)  # what `amber export` did before building ExportStep()
    reference = ExportStep()
    net = reference.network.backbone_network
    amber.reset_auto_parallel_context()
    alone = amber.jit(nn.TrainOneStepCell(reference.network, reference.optimizer))
    for x, y in zip(xs, ys):
        alone(x, y)
    for param in net.get_parameters():
        np.testing.assert_allclose(trained[param.name], param, rtol=1e-5, atol=1e-6)
    report("export")


def api() -> None:
    """The world's facts, shard_rows, and checkpoints written by rank 0 only in DATA_PARALLEL
    mode (by every rank otherwise: each trains a model of its own)."""
    size, rank = comm.get_group_size(), comm.get_rank()
    assert size > 1 and MPI.COMM_WORLD.Get_size() == size
    assert 0 <= rank < size and 0 <= comm.get_local_rank() < size
    assert amber.get_auto_parallel_context("device_num") == size
    rows = np.arange(10 * 3).reshape(10, 3)
    assert np.array_equal(comm.shard_rows(rows), rows[rank * (10 // size):][:10 // size])
    world = MPI.COMM_WORLD
    folder = world.bcast(tempfile.mkdtemp(prefix="amber-mpi-") if rank == 0 else None)
    net = mlp()
    amber.save_checkpoint(net, os.path.join(folder, f"alone{rank}.ckpt"))  # NOTE: one model each
    amber.set_auto_parallel_context(parallel_mode=amber.ParallelMode.DATA_PARALLEL)
    amber.save_checkpoint(net, os.path.join(folder, f"rank{rank}.ckpt"))  # NOTE: the same model
    amber.reset_auto_parallel_context()
    world.Barrier()
    written = sorted(os.listdir(folder))
    assert written == [f"alone{r}.ckpt" for r in range(size)] + ["rank0.ckpt"], \
        f"only rank 0 writes checkpoints in DATA_PARALLEL mode, every rank otherwise: {written}"
    written = [name for name in written if name.startswith("rank")]
    loaded = amber.load_checkpoint(os.path.join(folder, "rank0.ckpt"))  # NOTE: every rank can
    assert set(loaded) == {p.name for p in net.get_parameters()}
    reductions(rank, size)
    report(f"api size={size} checkpoints={written}")


def reductions(rank: int, size: int) -> None:
    """all_reduce_grads: the copying and the in-place form give the same bits, the latter as
    views of one buffer per dtype that the next in-place call overwrites."""
    grads = (np.full((2, 3), rank + 1.0, np.float32), np.arange(4.0) * (rank + 1),
             np.ones(5, np.float32))
    total = sum(range(1, size + 1))
    kept = ops.all_reduce_grads(grads, mean=False)
    views = ops.all_reduce_grads(grads, in_place=True)
    sums = (np.full((2, 3), total, np.float32), np.arange(4.0) * total,
            np.full(5, size, np.float32))
    for grad, copied, view, expected in zip(grads, kept, views, sums):
        assert copied.dtype == view.dtype == grad.dtype and view.shape == grad.shape
        assert np.array_equal(copied, expected)
        np.testing.assert_allclose(view, expected / size, rtol=1e-6)
    assert views[0].base is views[2].base is not None and views[1].base is not views[0].base
    ops.all_reduce_grads(tuple(np.zeros_like(g) for g in grads), in_place=True)
    assert not views[0].any() and not views[1].any()  # NOTE: the documented reuse
    assert np.array_equal(kept[0], np.full((2, 3), total, np.float32))  # copies stay


class Rows:
    """A random-access source of `len(x)` (data, label) rows, as GeneratorDataset reads."""

    def __init__(self, x: np.ndarray, y: np.ndarray) -> None:
        self.x, self.y = x, y

    def __getitem__(self, index: int) -> tuple[np.ndarray, np.ndarray]:
        return self.x[index], self.y[index]

    def __len__(self) -> int:
        return len(self.x)


EPOCHS = 3
BATCHES = 4  # NOTE: global batches of ROWS rows per epoch


def model_train_run(parallel: bool, seed: int, callbacks: list) -> tuple:
    """MindSpore's data-parallel recipe through `Model.train`: the mode set before the Model,
    a shuffled GeneratorDataset sharded by rank with batches of ROWS / size rows; alone, the
    same pipeline unsharded with batches of ROWS. The final parameters, the Model and the
    pipeline (the mode is left set)."""
    from amber import dataset as ds
    from amber.train import Model
    if parallel:
        amber.set_auto_parallel_context(parallel_mode=amber.ParallelMode.DATA_PARALLEL,
                                        gradients_mean=True)
    else:
        amber.reset_auto_parallel_context()
    amber.set_seed(seed)
    ds.config.set_seed(5)  # NOTE: MindSpore's rule: the same dataset seed on every rank
    xs, ys = data(11)
    source = Rows(xs[:BATCHES].reshape(-1, 5), ys[:BATCHES].reshape(-1, 3))
    shards = dict(num_shards=comm.get_group_size(), shard_id=comm.get_rank()) if parallel else {}
    pipeline = ds.GeneratorDataset(source, ["data", "label"], shuffle=True, **shards)
    pipeline = pipeline.batch(ROWS // comm.get_group_size() if parallel else ROWS)
    net = Branchy()
    model = Model(net, nn.MSELoss(), nn.Momentum(net.trainable_params(), 0.05, 0.9))
    model.train(EPOCHS, pipeline, callbacks=callbacks)
    return [np.array(p) for p in net.get_parameters()], model, pipeline


def model_train() -> None:
    """`Model.train` data-parallel: bit-identical ranks equal to one process on the whole
    batch; ModelCheckpoint writes once (rank 0, in its directory, where every rank finds the
    files as soon as training returns); LossMonitor and History report each rank's own loss
    (of its rows), as MindSpore's do, whose mean over the ranks is the whole batch's loss; the
    callbacks see the parallel mode."""
    import contextlib
    import io
    from amber.train import (CheckpointConfig, History, LambdaCallback, LossMonitor,
                             ModelCheckpoint)
    world, rank, size = MPI.COMM_WORLD, comm.get_rank(), comm.get_group_size()
    folder = tempfile.mkdtemp(prefix=f"amber-mpi-{rank}-")  # NOTE: one per rank, as MindSpore's
    if rank == 0:                                            # docs ask; rank 0's is used
        open(os.path.join(folder, "lenet-1_1.ckpt"), "wb").close()  # NOTE: prefix taken
    checkpoint = ModelCheckpoint("lenet", folder, CheckpointConfig(save_checkpoint_steps=BATCHES,
                                                                   keep_checkpoint_max=2))
    history, seen = History(), []
    context = LambdaCallback(on_train_begin=lambda rc: seen.append(
        (rc.original_args().parallel_mode, rc.original_args().device_number)))
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        mine, model, pipeline = model_train_run(True, 100 + rank, [
            checkpoint, LossMonitor(BATCHES), history, context])
    saved = amber.load_checkpoint(checkpoint.latest_ckpt_file_name)  # NOTE: before any sync
    root = world.bcast(folder)
    assert checkpoint.latest_ckpt_file_name == os.path.join(root, f"lenet_1-{EPOCHS}_"
                                                                  f"{BATCHES}.ckpt")
    written = sorted(os.listdir(folder))
    expected = ["lenet-1_1.ckpt"] + [f"lenet_1-{e}_{BATCHES}.ckpt" for e in (EPOCHS - 1, EPOCHS)]
    assert written == (expected if rank == 0 else []), written
    net = Branchy()  # NOTE: not the model: its parameters go on training below
    amber.load_param_into_net(net, saved)
    for a, b in zip(net.get_parameters(), mine):
        assert np.array(a).tobytes() == b.tobytes(), "the checkpoint is not the trained model"
    assert "moments.fc1.weight" in saved
    assert seen == [("data_parallel", size)], seen
    on_rank_zero = ModelCheckpoint("again", folder)  # NOTE: on rank 0 only, as scripts may do
    model.train(1, pipeline, callbacks=[on_rank_zero] if rank == 0 else [])
    assert world.allgather(os.path.exists(os.path.join(root, f"again-1_{BATCHES}.ckpt"))) \
        == [True] * size

    alone_history = History()
    alone, _, _ = model_train_run(False, 100, [alone_history])
    every = world.allgather(mine)
    for theirs in every:
        assert all(a.tobytes() == b.tobytes() for a, b in zip(theirs, every[0])), \
            "Model.train: the ranks' parameters differ"
    for a, b in zip(mine, alone):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, err_msg="Model.train")

    losses = history.history["net_output"]
    assert history.epoch["epoch"] == list(range(1, EPOCHS + 1)) and len(losses) == EPOCHS
    lines = printed.getvalue().splitlines()
    assert lines == [f"epoch: {e} step: {BATCHES}, loss is {loss}"
                     for e, loss in zip(range(1, EPOCHS + 1), losses)], lines
    every_loss = np.array(world.allgather(losses))
    assert len({tuple(r) for r in every_loss}) == size, "each rank reports its own rows' loss"
    np.testing.assert_allclose(every_loss.mean(axis=0), alone_history.history["net_output"],
                               rtol=1e-5, err_msg="the mean of the ranks' losses")
    model_train_guards(rank, size)
    report(f"model_train size={size} checkpoints={written}")


def model_train_guards(rank: int, size: int) -> None:
    """EarlyStopping watches the mean of the ranks' values (MindSpore's), so every rank stops
    at the same epoch; a Model built before DATA_PARALLEL was set is refused, not trained into
    one model per rank."""
    from amber import dataset as ds
    from amber.train import EarlyStopping, Model, RunContext
    from amber.train.hooks import InternalCallbackParam
    amber.set_auto_parallel_context(parallel_mode=amber.ParallelMode.DATA_PARALLEL)
    stopper = EarlyStopping(monitor="loss")
    stopper.on_train_epoch_end(RunContext(InternalCallbackParam(
        net_outputs=np.float32(1 + rank), train_network=mlp(), cur_epoch_num=1)))
    assert stopper.best == 1 + (size - 1) / 2, stopper.best
    amber.reset_auto_parallel_context()
    net = mlp()
    early = Model(net, nn.MSELoss(), nn.SGD(net.trainable_params(), 0.1))
    amber.set_auto_parallel_context(parallel_mode=amber.ParallelMode.DATA_PARALLEL)
    xs, ys = data()
    try:
        early.train(1, ds.NumpySlicesDataset((xs[0], ys[0])).batch(4))
    except RuntimeError as err:
        assert "was built before it was set" in str(err), err
    else:
        raise AssertionError("Model.train ran a stand-alone train step in DATA_PARALLEL mode")
    amber.reset_auto_parallel_context()


def eager_steps(steps: int, on_step=None, width: int = 7, timeout: float | None = None) -> None:
    """`steps` data-parallel steps run eagerly (faults need no compiling), calling
    `on_step(k)` before each; `timeout`: the reducer's."""
    amber.set_auto_parallel_context(parallel_mode=amber.ParallelMode.DATA_PARALLEL)
    net = nn.SequentialCell([nn.Dense(5, width), nn.ReLU(), nn.Dense(width, 3)])
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()),
                               nn.SGD(net.trainable_params(), 0.1))
    if timeout is not None:
        step.grad_reducer = nn.DistributedGradReducer(step.weights, timeout=timeout)
    xs, ys = data()
    for k in range(steps):
        if on_step is not None:
            on_step(k)
        step(*comm.shard_rows(xs[k % STEPS], ys[k % STEPS]))


def raises() -> None:
    """Rank 1 raises at step 3 while rank 0 waits in the all-reduce: the abort ends rank 0."""
    def fail(k: int) -> None:
        if k == 3 and comm.get_rank() == 1:
            raise RuntimeError("deliberate failure on rank 1 at step 3")
    eager_steps(1000, fail)


def killed() -> None:
    """Rank 1 is killed at step 3 (SIGKILL: no Python runs): the job still ends."""
    def die(k: int) -> None:
        if k == 3 and comm.get_rank() == 1:
            os.kill(os.getpid(), signal.SIGKILL)
    eager_steps(1000, die)


def stuck() -> None:
    """Rank 1 stops calling the step (but lives): rank 0's all-reduce times out."""
    def hang(k: int) -> None:
        if k == 3 and comm.get_rank() == 1:
            time.sleep(120)
    eager_steps(1000, hang, timeout=3.0)


def mismatch() -> None:
    """Rank 1 builds a wider model: every rank stops with a clear error at the first step."""
    eager_steps(2, width=7 + comm.get_rank())


def report(line: str) -> None:
    if comm.get_rank() == 0:
        print("ok", line, flush=True)


SCENARIOS = {"model_train": model_train, "equality": equality,
             "equality_sample": equality_sample, "api": api, "export": export, "raises": raises,
             "killed": killed, "stuck": stuck, "mismatch": mismatch}

if __name__ == "__main__":
    for name in sys.argv[1:]:
        SCENARIOS[name]()
