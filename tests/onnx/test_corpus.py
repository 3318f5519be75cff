"""Every program of the corpus (tests/programs) and every model of the zoo (tests/models) that
compiles is exported, checked by `onnx.checker.check_model(full_check=True)` and ONNX's shape
inference, and run in onnxruntime equal to eager (the corpus's harness and tolerances), or
refused with a CompileError naming the op or construct (sweep.py says how).

CI exports one program in three of each corpus file (every loop-bearing program among them
keeps its loops as ONNX Loops) and eight zoo models; the whole corpus and every model:
    AMBER_ONNX_CORPUS=all python -m pytest tests/onnx/test_corpus.py
Under NumPy 1, a smoke subset: one program in four of four category files (single,
returns, nest_inside, models) and LeNet-5.
"""
from __future__ import annotations

import os

import numpy as np
import pytest

import sweep
from sweep import EXPORTED, KNOWN, REFUSED, check_program, export_and_run

FULL = os.environ.get("AMBER_ONNX_CORPUS", "").lower() == "all"
NUMPY_1 = int(np.__version__.split(".")[0]) < 2
STRIDE = 1 if FULL else 4 if NUMPY_1 else 3
"""Which programs run: every STRIDE-th of each category file."""
NUMPY_1_FILES = ("test_single.py", "test_returns.py", "test_nest_inside.py", "test_models.py")
"""The category files of the NumPy 1 smoke run (importing every file costs seconds)."""


def _cases() -> list:
    cases = []
    files = sweep.corpus_files()
    if NUMPY_1 and not FULL:
        files = [f for f in files if f.name in NUMPY_1_FILES]
    for path in files:
        programs = sweep.load_programs(path)
        cases += [pytest.param(p, id=f"{path.stem[5:]}-{p.name}") for p in programs[::STRIDE]]
    return cases


@pytest.mark.parametrize("program", _cases())
def test_program_exports_or_is_refused(program, capsys):
    outcome = check_program(program, capsys)
    if outcome.kind == REFUSED:
        assert outcome.detail, "a refusal names what ONNX cannot express"
    assert outcome.kind in (EXPORTED, REFUSED, KNOWN, sweep.NOT_COMPILED, sweep.EAGER_RAISES)


MODELS = None if FULL else ["lenet5"] if NUMPY_1 else [
    "quickstart", "lenet5", "resnet", "mobilenet", "squeezenet", "densenet", "dcgan_g", "textcnn"]


def _models() -> list[str]:
    from amber_zoo import SPECS
    names = list(SPECS)
    return names if MODELS is None else [n for n in MODELS if n in SPECS]


@pytest.mark.parametrize("name", _models())
def test_zoo_model_exports(name):
    """A zoo model in eval mode: exported and equal to eager (rtol = atol = 1e-5: ONNX
    Runtime's float32 kernels sum in another order than NumPy's), or refused with a
    CompileError naming the op."""
    from amber_zoo import build
    net, inputs = build(name)
    net.set_train(False)
    want = net.construct(*[np.copy(x) for x in inputs])
    outcome, got = export_and_run(net, tuple(np.copy(x) for x in inputs))
    if outcome.kind == REFUSED:  # NOTE: a CompileError naming the op (docs/onnx.md lists them)
        assert "ONNX" in outcome.detail or "side effect" in outcome.detail, outcome.detail
        return
    assert outcome.kind == EXPORTED, outcome
    flat_got = got if isinstance(got, tuple) else (got,)
    flat_want = want if isinstance(want, tuple) else (want,)
    for g, w in zip(flat_got, flat_want):
        np.testing.assert_allclose(g, np.asarray(w), rtol=1e-5, atol=1e-5)
