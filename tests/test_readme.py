"""The README's example does what the README says it does: compiled equals eager, a new value of
the Python int `steps` compiles again, a 0-d array `steps` is one compile for every value, and
a new dtype compiles again while new Parameter values do not."""
from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import numpy as np
import pytest

README = Path(__file__).resolve().parent.parent / "README.md"


def _example_source() -> str:
    text = README.read_text()
    section = text.split("## Using it", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, "README: no python block under 'Using it'"
    return match[1]


@pytest.fixture
def example(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    """The README's example run as a file (its prints captured), as a module."""
    path = tmp_path / "gate.py"
    path.write_text(_example_source())
    spec = importlib.util.spec_from_file_location("readme_gate", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
        yield module, capsys.readouterr().out
    finally:
        del sys.modules[spec.name]


def test_example_prints_compiled_equal_to_eager_and_the_code(example) -> None:
    module, out = example
    compiled, eager = module.net(module.x, 3), module.net.construct(module.x, 3)
    np.testing.assert_allclose(compiled, eager, rtol=1e-6, atol=1e-6)
    assert "def Gate_construct(" in out and "import numpy as np" in out


def test_a_new_python_int_compiles_again_a_0d_array_does_not(example) -> None:
    module, _ = example
    net, x, stats = module.net, module.x, module.Gate.__call__.stats
    before = stats.compiles
    for steps in (1, 2, 4):
        np.testing.assert_allclose(net(x, steps), net.construct(x, steps), rtol=1e-6, atol=1e-6)
    assert stats.compiles == before + 3  # the trip count is part of the code
    np.testing.assert_allclose(net(x, np.array(0)), net.construct(x, 0), rtol=1e-6, atol=1e-6)
    before = stats.compiles  # NOTE: the README's last line compiled this already
    for steps in (1, 2, 5, 7):
        np.testing.assert_allclose(net(x, np.array(steps)), net.construct(x, steps), rtol=1e-6,
                                   atol=1e-6)
    assert stats.compiles == before  # read at run time: one For region for every count


def test_new_dtype_compiles_again_new_parameter_values_do_not(example) -> None:
    module, _ = example
    net, x, stats = module.net, module.x, module.Gate.__call__.stats
    before = stats.compiles
    net.fc.weight.set_data(np.full((4, 4), 0.5, np.float32))
    np.testing.assert_allclose(net(x, 3), net.construct(x, 3), rtol=1e-6, atol=1e-6)
    assert stats.compiles == before
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(net(x64, 3), net.construct(x64, 3), rtol=1e-6, atol=1e-6)
    assert stats.compiles == before + 1
