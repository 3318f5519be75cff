"""`amber.communication` and the parallel context in one process, without MPI: a world of one,
MindSpore's spellings, refusals, and the reducer as one op of the compiled train step."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import amber
from amber import communication as comm
from amber import nn
from amber.ops import collective


@pytest.fixture(autouse=True)
def stand_alone():
    amber.reset_auto_parallel_context()
    yield
    amber.reset_auto_parallel_context()


def test_a_world_of_one_without_mpi(monkeypatch):
    for var in ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK", "MPI_LOCALNRANKS"):
        monkeypatch.delenv(var, raising=False)
    code = ("import sys, amber\nfrom amber import communication as c\nc.init()\n"
            "assert (c.get_rank(), c.get_group_size(), c.get_local_rank()) == (0, 1, 0)\n"
            "c.release()\nassert c.get_group_size() == 1\n"
            "assert not any(m.startswith('mpi4py') for m in sys.modules), 'MPI imported'\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_launched_without_mpi4py_says_what_to_install(monkeypatch):
    monkeypatch.setenv("PMI_SIZE", "2")
    monkeypatch.setitem(sys.modules, "mpi4py", None)  # NOTE: makes `import mpi4py` fail
    monkeypatch.delitem(sys.modules, "mpi4py.MPI", raising=False)
    with pytest.raises(ModuleNotFoundError, match=r"PMI_SIZE is set.*amber-jit\[distributed\]"):
        collective.mpi_world()


@pytest.fixture
def mindspore_alias(monkeypatch):
    """The MindSpore alias for one test: the finder, the modules imported under the name and
    MindSpore's Tensor results are gone afterwards (else later tests in this process, the
    optional MindSpore oracles among them, would get amber as `mindspore`)."""
    import amber.compat
    from amber.common import tensor
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    monkeypatch.setattr(tensor, "_numbers_as_tensors", tensor._numbers_as_tensors)
    before = set(sys.modules)
    amber.compat.alias_mindspore()
    yield
    for name in set(sys.modules) - before:
        if name == "mindspore" or name.startswith("mindspore."):
            del sys.modules[name]


def test_parallel_context_and_mindspore_spellings(mindspore_alias):
    import mindspore
    from mindspore.communication import get_group_size, init
    from mindspore.communication.management import get_rank
    from mindspore.context import ParallelMode
    init()
    assert (get_rank(), get_group_size()) == (0, 1)
    mindspore.set_auto_parallel_context(parallel_mode=ParallelMode.DATA_PARALLEL,
                                        gradients_mean=True, search_mode="ignored")
    assert mindspore.context.get_auto_parallel_context("parallel_mode") == "data_parallel"
    assert amber.get_auto_parallel_context("gradients_mean") is True
    assert amber.get_auto_parallel_context("device_num") == 1
    amber.reset_auto_parallel_context()
    assert amber.get_auto_parallel_context("parallel_mode") == amber.ParallelMode.STAND_ALONE


@pytest.mark.parametrize("kwargs, message", [
    ({"parallel_mode": amber.ParallelMode.SEMI_AUTO_PARALLEL}, "not supported: amber trains"),
    ({"parallel_mode": "auto_parallel"}, "does not shard a model"),
    ({"device_num": 0}, "device_num must be a positive int"),
    ({"gradients_mean": 1}, "gradients_mean must be a bool"),
    ({"pipline_stages": 2}, "unknown setting 'pipline_stages'"),
])
def test_parallel_context_refusals(kwargs, message):
    with pytest.raises((ValueError, TypeError), match=message):
        amber.set_auto_parallel_context(**kwargs)
    assert amber.get_auto_parallel_context("parallel_mode") == "stand_alone"


def test_shard_rows_gives_each_rank_equal_blocks():
    x, y = np.arange(20).reshape(10, 2), np.arange(10)
    shards = [comm.shard_rows(x, y, rank=r, group_size=3) for r in range(3)]
    assert [len(sx) for sx, _ in shards] == [3, 3, 3]  # NOTE: the last row is left out
    assert np.array_equal(np.concatenate([sx for sx, _ in shards]), x[:9])
    assert np.array_equal(shards[2][1], y[6:9])
    assert comm.shard_rows(x) is not None and len(comm.shard_rows(x)) == 10  # world of one
    with pytest.raises(ValueError, match="rank must be an int in"):
        comm.shard_rows(x, rank=3, group_size=3)
    with pytest.raises(ValueError, match="different lengths"):
        comm.shard_rows(x, y[:5])


def test_reducer_divides_by_degree():
    grads = (np.ones((2, 3), np.float32), np.arange(4.0))
    reducer = nn.DistributedGradReducer([object(), object()], mean=True, degree=4)
    out = reducer(grads)
    np.testing.assert_array_equal(out[0], grads[0] / 4)
    np.testing.assert_array_equal(out[1], grads[1] / 4)
    assert out[0].dtype == np.float32 and out[1].dtype == np.float64
    summed = nn.DistributedGradReducer([object(), object()], mean=False)(grads)
    np.testing.assert_array_equal(summed[1], grads[1])
    with pytest.raises(ValueError, match="degree must be a positive int"):
        nn.DistributedGradReducer([], degree=0)


def test_in_place_reduction_gives_views_that_the_next_call_overwrites():
    grads = (np.full((2, 3), 2.0, np.float32), np.arange(4.0), np.ones(5, np.float32))
    kept = nn.DistributedGradReducer([object()] * 3, degree=2)(grads)
    views = nn.DistributedGradReducer([object()] * 3, degree=2, in_place=True)(grads)
    for grad, copy, view in zip(grads, kept, views):
        np.testing.assert_array_equal(view, grad / 2)
        np.testing.assert_array_equal(copy, grad / 2)
        assert view.dtype == grad.dtype and view.shape == grad.shape
        assert not np.shares_memory(view, grad)  # NOTE: fresh results, which a step may write
    assert views[0].base is views[2].base is not None  # one float32 buffer, one float64
    assert views[1].base is not views[0].base
    nn.DistributedGradReducer([object()] * 3, in_place=True)(tuple(map(np.zeros_like, grads)))
    assert not views[0].any() and not views[1].any()  # NOTE: the documented reuse
    np.testing.assert_array_equal(kept[0], grads[0] / 2)  # the default's results stay


def train_step(parallel: bool):
    if parallel:
        amber.set_auto_parallel_context(parallel_mode=amber.ParallelMode.DATA_PARALLEL,
                                        gradients_mean=True)
    amber.set_seed(3)
    net = nn.SequentialCell([nn.Dense(4, 6), nn.ReLU(), nn.Dense(6, 2)])
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()),
                               nn.Momentum(net.trainable_params(), 0.1, 0.9))
    amber.reset_auto_parallel_context()
    return net, step


def test_data_parallel_step_alone_trains_as_stand_alone():
    rng = np.random.default_rng(0)
    batches = [(rng.standard_normal((8, 4), dtype=np.float32),
                rng.standard_normal((8, 2), dtype=np.float32)) for _ in range(4)]
    results = []
    for parallel in (False, True):
        net, step = train_step(parallel)
        assert step.reducer_flag is parallel
        run = amber.jit(step)
        for x, y in batches:
            run(x, y)
        results.append([np.array(p) for p in net.get_parameters()])
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)
    flag = step.start_in_agreement.data_parallel_started
    assert flag[0] == 1  # NOTE: the first step broadcast once, the others skipped it
    # per-process state: in no checkpoint, so a rank loading one still joins the broadcast
    assert all(p is not flag for p in step.get_parameters())


def test_the_compiled_step_has_one_fused_all_reduce(tmp_path, capsys):
    from amber import cli
    source = tmp_path / "dp_step.py"
    source.write_text(
        "import numpy as np, amber\nfrom amber import nn\n"
        "class Step(nn.TrainOneStepCell):\n"
        "    def __init__(self):\n"
        "        amber.set_auto_parallel_context(parallel_mode='data_parallel')\n"
        "        net = nn.SequentialCell([nn.Dense(4, 6), nn.ReLU(), nn.Dense(6, 2)])\n"
        "        super().__init__(nn.WithLossCell(net, nn.MSELoss()),\n"
        "                         nn.SGD(net.trainable_params(), 0.1))\n"
        "def example_inputs():\n"
        "    return np.ones((8, 4), np.float32), np.ones((8, 2), np.float32)\n")
    assert cli.main(["dump", f"{source}:Step", "--stage", "opt-ir"]) == 0
    out = capsys.readouterr().out
    reduces = [line for line in out.splitlines() if "= all_reduce_grads(" in line]
    assert len(reduces) == 1, out
    assert "(f32[6,4], f32[6], f32[2,6], f32[2])" in reduces[0]
    assert out.count("= broadcast_params(") == 1


def test_the_docs_examples_train_alone(capsys):
    import re
    from pathlib import Path
    page = Path(__file__).resolve().parents[2] / "docs" / "distributed.md"
    loop, model_train = re.findall(r"```python\n(.*?)```", page.read_text(), re.S)
    exec(compile(loop, str(page), "exec"), {"__name__": "docs_distributed"})
    out = capsys.readouterr().out
    assert out.startswith("1 process(es), rank 0's last loss ")
    assert float(out.split()[-1]) < 0.2  # NOTE: it learns (about 0.04)
    exec(compile(model_train, str(page), "exec"), {"__name__": "docs_distributed"})
    out = capsys.readouterr().out.splitlines()
    assert out[-1].startswith("rank 0: loss of its rows per epoch ")
    losses = [float(v) for v in re.findall(r"[\d.]+(?=[,\]])", out[-1])]
    assert len(losses) == 3 and losses[2] < losses[0] / 4, losses  # NOTE: it learns
