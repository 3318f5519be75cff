"""Hypothesis programs (test_random_programs.py's generator) under vmap: `program(a, b, n)`
mapped over the three input pairs at once (a and b batched, n shared) must equal the eager
program run on each pair, whose branches and trip counts differ. A refusal (a CompileError
that is not an internal error) is allowed; a different result never.

CI runs a fixed sample; AMBER_HYPOTHESIS_EXAMPLES=480 (as for test_random_programs.py) more."""
from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, note, settings, strategies as st

import amber
from harness import load_source

_spec = importlib.util.spec_from_file_location(
    "random_programs_for_vmap", os.path.join(os.path.dirname(__file__),
                                             "test_random_programs.py"))
generator = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(generator)

FLAVORS = ("branches", "while", "returns", "jumps")
"""Flavors without printing or Parameters (an effect outside one example is refused)."""
EXAMPLES = max(4, int(os.environ.get("AMBER_HYPOTHESIS_EXAMPLES", "0")) // len(FLAVORS))


def _leaves(value):
    if isinstance(value, tuple | list):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value]


@pytest.fixture(scope="module")
def program_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("random_vmap_programs"))


@pytest.mark.parametrize("flavor", FLAVORS)
def test_random_program_under_vmap(flavor, program_dir, capsys):

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
    @given(source=generator.programs(flavor), n=st.integers(0, 3))
    def run(source: str, n: int) -> None:
        note(source)
        if "class Program" in source:
            return
        target = load_source(source, program_dir, "program")
        try:
            outs = [target(a.copy(), b.copy(), n) for a, b in generator.INPUTS]
        except Exception:  # noqa: BLE001 (eager raises on an example: nothing to compare)
            return
        shapes = {str([(np.shape(x), np.asarray(x).dtype) for x in _leaves(o)]) for o in outs}
        if len(shapes) != 1 or any(isinstance(x, list) for o in outs for x in [o]):
            return
        a = np.stack([a for a, _ in generator.INPUTS])
        b = np.stack([b for _, b in generator.INPUTS])
        try:
            got = amber.ops.vmap(target, in_axes=(0, 0, None))(a, b, n)
        except amber.CompileError as err:
            assert "internal error" not in str(err), err
            return
        capsys.readouterr()
        want = [np.stack([np.asarray(leaf) for leaf in leaves])
                for leaves in zip(*(_leaves(o) for o in outs))]
        got = _leaves(got)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_allclose(np.asarray(g, np.float64), np.asarray(w, np.float64),
                                       rtol=1e-6, atol=1e-6, err_msg=source)

    run()
