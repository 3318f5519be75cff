"""Symbolic sizes in the CLI: `--dynamic` (every input's batch), `--input Nx...` names and a
Cell's `set_inputs` make `amber dump`/`amber export` compile for every size of those axes; the
exported run() accepts any size there and rejects the rest, with a clear error."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from amber import cli

MODEL = '''
import numpy as np
import amber
from amber import nn, ops


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(4, 3)

    def construct(self, x, labels):
        logits = self.fc(x)
        return ops.softmax_cross_entropy(logits, labels, sparse=True, reduction="none"), \\
            logits.reshape(x.shape[0], 3, 1)


declared = Net()
declared.set_inputs(amber.Tensor(shape=[None, 4], dtype=amber.float32),
                    amber.Tensor(shape=[None], dtype=amber.int32))


def example_inputs():
    return (np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4),
            np.array([0, 2], np.int32))
'''


@pytest.fixture
def model(tmp_path: Path) -> Path:
    path = tmp_path / "dynmodel.py"
    path.write_text(MODEL)
    return path


def _export(model: Path, tmp_path: Path, capsys, name: str, *flags: str):
    out_py = tmp_path / f"{name}_dyn.py"
    assert cli.main(["export", f"{model}:{name}", "-o", str(out_py), *flags]) == 0
    capsys.readouterr()
    sys.path.insert(0, str(tmp_path))
    try:
        return __import__(f"{name}_dyn")
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop(f"{name}_dyn", None)


@pytest.mark.parametrize("name, flags", [("Net", ("--dynamic",)), ("declared", ()),
                                          ("Net", ("--input", "Bx4:float32",
                                                   "--input", "B:int32"))])
def test_exported_module_runs_every_batch_size(model: Path, tmp_path: Path, capsys, name: str,
                                               flags: tuple) -> None:
    module = _export(model, tmp_path, capsys, name, *flags)
    symbol = "B" if "--input" in flags else "N"
    assert module.INPUT_SPECS == (("x", (symbol, 4), "float32"), ("labels", (symbol,), "int32"))
    net = cli.load_module(str(model)).Net()
    for path, value in zip(module.PARAMETERS, module.load()):  # the exported weights
        getattr(net.fc, path.split(".")[-1]).set_data(value)
    for n in (1, 3, 17):
        x = np.random.default_rng(n).standard_normal((n, 4)).astype(np.float32)
        y = (np.arange(n) % 3).astype(np.int32)
        got, want = module.run(x, y), net.construct(x, y)
        for a, b in zip(got, want):
            np.testing.assert_allclose(a, b, rtol=1e-6)
    with pytest.raises(ValueError, match=rf"input 'labels' must be an array of shape \({symbol},\)"
                                         rf", dtype int32; given shape \(4,\), dtype int32 "
                                         rf"\({symbol} = 3 from the inputs before it\)"):
        module.run(np.zeros((3, 4), np.float32), np.zeros(4, np.int32))
    with pytest.raises(ValueError, match=rf"shape \({symbol}, 4\), dtype float32; given shape "
                                         r"\(3, 5\)"):
        module.run(np.zeros((3, 5), np.float32), np.zeros(3, np.int32))


def test_dump_shows_the_symbolic_signature_and_entry_sizes(model: Path, capsys) -> None:
    assert cli.main(["dump", f"{model}:Net", "--dynamic"]) == 0
    out = capsys.readouterr().out
    assert "Input signature: (f32[N,4], i32[N])" in out
    assert "n = x.shape[0]" in out and "reshape(n, 3, 1)" in out
    assert cli.main(["dump", f"{model}:Net", "--stage", "opt-ir"]) == 0
    assert "f32[2,4]" in capsys.readouterr().out  # static unless asked
