"""Data-parallel jobs under `mpiexec` (see mpi_worker.py): equal training on 2 and 3 ranks
(hand-written loops and `Model.train` with its callbacks), the communication API, rank-0
checkpoints, and faults ending the job instead of hanging.
`AMBER_DISTRIBUTED_FULL=1` also runs every equality case on 3 ranks (CI runs two of them)."""
from __future__ import annotations

import os
import time

import pytest

FULL = os.environ.get("AMBER_DISTRIBUTED_FULL") == "1"
MODELS = ("mlp", "Branchy")
OPTIMIZERS = ("sgd", "momentum", "adam")


def passed(result) -> set[str]:
    assert result.returncode == 0, result.stdout + result.stderr
    return {line[3:] for line in result.stdout.splitlines() if line.startswith("ok ")}


def test_two_ranks_train_like_one_process_on_the_whole_batch(mpi_job):
    lines = passed(mpi_job(2, "api", "equality", "export", "model_train"))
    assert "export" in lines
    assert "model_train size=2 checkpoints=['lenet-1_1.ckpt', 'lenet_1-2_4.ckpt', " \
           "'lenet_1-3_4.ckpt']" in lines
    assert {f"equality {m} {o}" for m in MODELS for o in OPTIMIZERS} <= lines
    assert "api size=2 checkpoints=['rank0.ckpt']" in lines


def test_three_ranks_train_like_one_process_on_the_whole_batch(mpi_job):
    cases = "equality" if FULL else "equality_sample"
    lines = passed(mpi_job(3, "api", cases, "model_train"))
    expected = {f"equality {m} {o}" for m in MODELS for o in OPTIMIZERS} if FULL else \
        {"equality mlp momentum", "equality Branchy adam"}
    assert expected <= lines
    assert "api size=3 checkpoints=['rank0.ckpt']" in lines
    assert "model_train size=3 checkpoints=['lenet-1_1.ckpt', 'lenet_1-2_4.ckpt', " \
           "'lenet_1-3_4.ckpt']" in lines


@pytest.mark.parametrize("scenario, message", [
    ("mismatch", "the ranks built different models ('0.weight' is float32[7, 5] on rank 0 "
                 "but '0.weight' float32[8, 5] on rank 1"),
    ("raises", "RuntimeError: deliberate failure on rank 1 at step 3"),
    ("stuck", "of 2 waited 3 s for the other ranks; one is stuck, dead or running"),
    ("killed", ""),
])
def test_a_failing_rank_ends_the_job_on_every_rank(mpi_job, scenario, message):
    start = time.monotonic()
    result = mpi_job(2, scenario, timeout=90)
    assert result.returncode != 0, result.stdout + result.stderr
    assert message in result.stderr
    if scenario != "killed":
        assert "aborting the MPI job on every rank" in result.stderr
    assert time.monotonic() - start < 60
