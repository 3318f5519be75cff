"""Every sample model, compiled, equals its eager `construct` on the sample's example inputs, and
its generated module is valid standalone Python."""
from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

import amber
from amber import nn

SAMPLES = sorted(path for path in (Path(__file__).resolve().parents[2] / "samples").glob("*.py")
                 if "import mindspore" not in path.read_text())
"""The samples written with amber's imports; those written as MindSpore scripts run unchanged
through `python -m amber.compat` in tests/train/test_ms_sample.py."""


def _load(path: Path) -> ModuleType:
    name = f"amber_sample_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _models(module: ModuleType) -> list[type]:
    """The Cell classes the sample defines that build with no arguments."""
    found = []
    for value in vars(module).values():
        if isinstance(value, type) and issubclass(value, nn.Cell) and \
                value.__module__ == module.__name__:
            found.append(value)
    return found


def _same(compiled: object, eager: object) -> None:
    if isinstance(eager, tuple):
        assert isinstance(compiled, tuple) and len(compiled) == len(eager)
        for c, e in zip(compiled, eager):
            _same(c, e)
    elif isinstance(eager, np.ndarray | np.generic):
        assert np.asarray(compiled).dtype == np.asarray(eager).dtype
        np.testing.assert_allclose(compiled, eager, rtol=2e-5, atol=1e-6)
    else:
        assert compiled == eager and type(compiled) is type(eager)


def _state(net: nn.Cell) -> dict[str, np.ndarray]:
    return {path: np.array(p) for path, p in net.parameters_and_names()}


def _restore(net: nn.Cell, state: dict[str, np.ndarray]) -> None:
    for path, p in net.parameters_and_names():
        p.set_data(state[path])


@pytest.mark.parametrize("path", SAMPLES, ids=[p.stem for p in SAMPLES])
def test_sample_compiles_and_matches_eager(path: Path) -> None:
    module = _load(path)
    inputs = module.example_inputs()
    checked = 0
    for cls in _models(module):
        amber.set_seed(0)
        try:
            net = cls()
            state = _state(net)
            eager = net.construct(*inputs)
        except (TypeError, ValueError):
            continue  # a building block of the sample (needs arguments or other inputs)
        fast = amber.jit(net)
        for _ in range(2):  # the first call compiles, the second takes the cached path
            _restore(net, state)  # NOTE: a train step updates its parameters on each call
            _same(fast(*inputs), eager)
        ast.parse(fast.code)
        assert "import numpy as np" in fast.code and "amber" not in fast.code.split('"""')[-1]
        checked += 1
    assert checked, f"{path.name}: no model could be checked"
