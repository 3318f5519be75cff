"""`amber dump FILE.py:NAME --grad` shows the gradient function: its generated code (the
backward commented with the user's forward lines, returning MindSpore's get_all/get_by_list
structure), its IR at every stage, and for a non-scalar output an example sensitivity."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from amber import cli

MODEL = '''
import numpy as np
from amber import nn, ops


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(4, 3)

    def construct(self, x):
        h = ops.tanh(self.fc(x))
        i = 0
        while i < 2 and h.sum() < 9.0:
            h = h * 1.5
            i += 1
        return (h * h).sum()


def vector(x):
    return np.sin(x) * x


def example_inputs():
    return (np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4),)
'''


@pytest.fixture
def model(tmp_path: Path) -> Path:
    path = tmp_path / "model.py"
    path.write_text(MODEL)
    return path


def _dump(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert cli.main(["dump", *argv]) == 0
    return capsys.readouterr().out


def test_the_gradient_code_runs_and_reads_like_the_model(model, capsys):
    code = _dump(capsys, f"{model}:Net", "--grad")
    assert "grad_Net.construct" in code
    assert "# model.py:12: h = ops.tanh(self.fc(x))" in code  # the backward at forward lines
    assert re.search(r"for \w+ in range\(\w+, -1, -1\):", code)  # the while loop, backwards
    namespace: dict = {}
    exec(code, namespace)  # noqa: S102 (standalone: needs only NumPy)
    fn = next(v for k, v in namespace.items() if k.endswith("_construct"))
    rng = np.random.default_rng(0)
    w, b = rng.standard_normal((3, 4)).astype(np.float32), np.zeros(3, np.float32)
    x = np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)
    (dx,), (dw, db) = fn(w, b, x)
    assert dx.shape == (2, 4) and dw.shape == (3, 4) and db.shape == (3,)


def test_every_stage_and_a_sensitivity_for_a_vector_output(model, capsys):
    out = _dump(capsys, f"{model}:vector", "--grad", "--input", "3:float64", "--stage", "all")
    assert "# ===== ir (before passes) =====" in out and "%sens: f64[3]" in out
    assert "cos(%x)" in out  # d sin
    assert "def vector(x, sens):" in out


def test_vjp_shows_both_halves(model, capsys):
    out = _dump(capsys, f"{model}:Net", "--vjp")
    forward, backward = out.split("# ===== vjp backward (vjp_fn) =====")
    assert "# ===== vjp forward (returns the residuals) =====" in forward
    assert "while" in forward and "trips = trips + 1" in forward  # the forward saves the count
    body = "\n".join(line.split("#")[0] for line in backward.splitlines())
    assert "while" not in body and re.search(r"for \w+ in range\(\w+, -1, -1\):", body)
    assert "# model.py:12: h = ops.tanh(self.fc(x))" in backward
    assert cli.main(["dump", f"{model}:Net", "--vjp", "--stage", "ir"]) != 0
    assert "--vjp prints the generated code of both halves" in capsys.readouterr().err
