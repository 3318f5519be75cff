"""Hypothesis-generated control-flow programs (tests/programs/test_random_programs.py's
generator: nested if / while / for / break / continue / return over float32 arrays and Python
ints) exported to ONNX and run in onnxruntime equal to eager on three inputs, or refused with
a CompileError naming the construct. CI runs 8 per flavor; a deeper search:
    AMBER_ONNX_HYPOTHESIS_EXAMPLES=500 python -m pytest tests/onnx/test_random.py
"""
from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, Phase, given, note, settings, strategies as st

import sweep  # noqa: F401 (puts tests/programs on sys.path)
from harness import Program, load_source
from sweep import EXPORTED, check_program
from test_random_programs import INPUTS, programs

EXAMPLES = int(os.environ.get("AMBER_ONNX_HYPOTHESIS_EXAMPLES", "8"))
FLAVORS = ("branches", "while", "for", "jumps", "returns")
"""The flavors of pure control flow over arrays and ints (the others add lists, dicts and
in-place writes, which ONNX export refuses)."""


@pytest.fixture(scope="module")
def program_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("onnx_random_programs"))


@pytest.mark.parametrize("flavor", FLAVORS)
def test_random_program_exports(flavor, program_dir, capsys):
    exported = []

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=EXAMPLES <= 50,
              phases=(Phase.explicit, Phase.reuse, Phase.generate),
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
    @given(source=programs(flavor), n=st.integers(0, 3))
    def run(source: str, n: int) -> None:
        note(source)
        target = load_source(source, program_dir, "program")
        outcome = check_program(Program(target, tuple((a, b, n) for a, b in INPUTS)), capsys,
                                inputs=len(INPUTS))
        note(f"{outcome.kind}: {outcome.detail}")
        exported.append(outcome.kind == EXPORTED)

    run()
    assert any(exported), f"no {flavor} program was exported"
