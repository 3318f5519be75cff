"""Launching the distributed scenarios (mpi_worker.py) under `mpiexec -n N`; the tests skip
with a reason when mpi4py or an MPI launcher is absent (`pip install -e ".[distributed]"`)."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

WORKER = Path(__file__).with_name("mpi_worker.py")


def mpiexec() -> list[str]:
    """The launcher command (the one beside this Python first), with what Open MPI needs to
    run as root and on more ranks than cores; skips the test without MPI."""
    pytest.importorskip("mpi4py", reason="mpi4py is not installed (the 'distributed' extra)")
    here = os.path.dirname(sys.executable)
    exe = shutil.which("mpiexec", path=here) or shutil.which("mpiexec")
    if exe is None:
        pytest.skip("no mpiexec on PATH (pip install mpich, or a system MPI)")
    version = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout
    if "Open MPI" in version or "OpenRTE" in version:
        return [exe, "--oversubscribe", *(["--allow-run-as-root"] if os.geteuid() == 0 else [])]
    return [exe]


def launch(n: int, *scenario: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """`mpiexec -n n python mpi_worker.py scenario...`, one BLAS thread per rank."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1"}
    command = [*mpiexec(), "-n", str(n), sys.executable, str(WORKER), *scenario]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          env=env, start_new_session=True) as job:
        try:
            out, err = job.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(job.pid, signal.SIGKILL)  # NOTE: the ranks too, not only the launcher
            job.communicate()
            raise
    return subprocess.CompletedProcess(command, job.returncode, out, err)


@pytest.fixture
def mpi_job():
    """`launch`, for the tests (tests/ is not a package: fixtures are how helpers travel)."""
    return launch
