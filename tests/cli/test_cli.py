"""The `amber` command: dump (each stage and format), export (a standalone module that matches
the compiled model using NumPy alone), cache path/list/clear, and every error exit."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import amber
from amber import cli

MODEL = '''
import numpy as np
from amber import nn, ops


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(4, 3)

    def construct(self, x):
        y = ops.relu(self.fc(x))
        if y.sum() > 1:
            y = y * 0.5
        return y + 1.0


class NeedsArgs(nn.Cell):
    def __init__(self, width):
        super().__init__()

    def construct(self, x):
        return x


class Bad(nn.Cell):
    def construct(self, x):
        import math
        return x + math.pi


def power(x, p):
    return x ** p


LIMIT = 3


def example_inputs():
    return (np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4),)
'''


@pytest.fixture
def model(tmp_path: Path) -> Path:
    path = tmp_path / "model.py"
    path.write_text(MODEL)
    return path


def run(capsys: pytest.CaptureFixture, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_dump_prints_the_generated_code_by_default(model: Path, capsys) -> None:
    code, out, err = run(capsys, "dump", f"{model}:Net")
    assert code == 0 and not err
    assert "import numpy as np" in out and "def Net_construct(" in out
    assert "Input signature: (f32[2,4])" in out
    compile(out, "dumped.py", "exec")


def test_dump_all_stages(model: Path, capsys) -> None:
    code, out, _ = run(capsys, "dump", f"{model}:Net", "--stage", "all", "-O1")
    assert code == 0
    sections = [line for line in out.splitlines() if line.startswith("# ===== ")]
    assert sections[0] == "# ===== source =====" and sections[-1] == "# ===== code ====="
    assert sections[1] == "# ===== ir (before passes) ====="
    passes = [s for s in sections if s.startswith("# ===== after pass ")]
    names = {p.split()[4] for p in passes}
    assert names == set(_flat(amber.graph.passes.PIPELINES[1]))  # each -O1 pass reported
    assert all(" nodes, " in p and " ms" in p for p in passes)
    assert "def construct(self, x):" in out and "relu" in out


def _flat(steps: object) -> list[str]:
    """Pass names of a pipeline whose steps may be groups (tuples) of passes."""
    return [steps] if isinstance(steps, str) else [n for s in steps for n in _flat(s)]


def test_dump_single_stages_and_formats(model: Path, capsys) -> None:
    _, ir, _ = run(capsys, "dump", f"{model}:Net", "--stage", "ir", "-O0")
    assert ir.startswith("graph @Net.construct(")
    _, opt, _ = run(capsys, "dump", f"{model}:Net", "--stage", "opt-ir")
    assert opt.startswith("graph @Net.construct(")
    _, dot, _ = run(capsys, "dump", f"{model}:Net", "--stage", "ir", "--format", "dot")
    assert dot.startswith("digraph")
    _, source, _ = run(capsys, "dump", f"{model}:Net", "--stage", "source")
    assert "y = ops.relu(self.fc(x))" in source


def test_dump_function_with_explicit_inputs(model: Path, capsys) -> None:
    code, out, _ = run(capsys, "dump", f"{model}:power", "--input", "3x2:float64",
                       "--input", "int=3")
    assert code == 0 and "Input signature: (f64[3,2], int=3)" in out


def test_export_runs_with_numpy_alone(model: Path, tmp_path: Path, capsys) -> None:
    out_py = tmp_path / "out" / "net_static.py"
    weights = tmp_path / "weights" / "net.npz"
    weights.parent.mkdir()
    code, out, _ = run(capsys, "export", f"{model}:Net", "-o", str(out_py), "--weights",
                       str(weights))
    assert code == 0 and out_py.is_file() and weights.is_file()
    x = np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)
    x_file, y_file = tmp_path / "x.npy", tmp_path / "y.npy"
    np.save(x_file, x)
    probe = (
        "import sys, importlib.abc\n"
        "class NoAmber(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] == 'amber': raise ImportError('amber is off limits')\n"
        "sys.meta_path.insert(0, NoAmber())\n"
        f"sys.path.insert(0, {str(out_py.parent)!r})\n"
        "import numpy as np, net_static\n"
        f"np.save({str(y_file)!r}, net_static.run(np.load({str(x_file)!r})))\n"
        "assert 'amber' not in sys.modules\n")
    subprocess.run([sys.executable, "-c", probe], check=True, cwd=tmp_path)
    amber.set_seed(0)  # what `amber export` did before building Net()
    net = cli.load_module(str(model)).Net()
    expected = amber.jit(net)(x)
    np.testing.assert_allclose(np.load(y_file), expected, rtol=1e-6)
    np.testing.assert_allclose(expected, net.construct(x), rtol=1e-6)
    assert "net_static.run(x)" in out_py.read_text()


def test_cache_commands(tmp_path: Path, capsys) -> None:
    cache = tmp_path / "amber-cache"
    code, out, _ = run(capsys, "cache", "path")
    assert code == 0 and out.strip() == str(cache)
    amber.jit(lambda_free_square)(np.ones(3))
    _, out, _ = run(capsys, "cache", "list")
    assert "lambda_free_square(f64[3])" in out and "1 entries" in out
    _, out, _ = run(capsys, "cache", "clear")
    assert out.startswith("removed 1 entries")
    _, out, _ = run(capsys, "cache", "list")
    assert "0 entries" in out


def lambda_free_square(x: np.ndarray) -> np.ndarray:
    """A module-level function, so its entry can be written to disk."""
    return x * x


@pytest.mark.parametrize("argv, message", [
    (["dump", "model.py"], "expected FILE.py:NAME"),
    (["dump", "missing.py:Net"], "no such file: missing.py"),
    (["dump", "{model}:Nope"], "has no name 'Nope'"),
    (["dump", "{model}:LIMIT"], "not an nn.Cell subclass or a function"),
    (["dump", "{model}:NeedsArgs"], "cannot instantiate NeedsArgs() with no arguments"),
    (["dump", "{model}:Net", "--input", "2xx4"], "bad --input '2xx4'"),
    (["dump", "{model}:Net", "--input", "2x4:floaty"], "unknown dtype 'floaty'"),
    (["dump", "{model}:Net", "--input", "int=two"], "'two' is not a int"),
    (["dump", "{model}:Net", "--stage", "code", "--format", "dot"], "applies to the IR stages"),
    (["export", "{model}:Net", "-o", "out.txt"], "-o must name a .py file"),
])
def test_usage_errors_exit_2_with_one_line(model: Path, capsys, argv: list[str],
                                           message: str) -> None:
    code, out, err = run(capsys, *[a.format(model=model) for a in argv])
    assert code == 2 and not out
    assert err.count("\n") == 1 and err.startswith("amber: error: ") and message in err


def test_argparse_errors_are_one_line_too(capsys) -> None:
    with pytest.raises(SystemExit) as info:
        cli.main(["dump", "x.py:Net", "--stage", "everything"])
    err = capsys.readouterr().err
    assert info.value.code == 2 and err.count("\n") == 1 and "--stage" in err


def test_compile_error_exits_1_with_its_message(model: Path, capsys) -> None:
    code, out, err = run(capsys, "dump", f"{model}:Bad")
    assert code == 1 and not out
    assert f"{model}:" in err and "`import`" in err and "Traceback" not in err


def test_python_dash_m_amber(model: Path, tmp_path: Path) -> None:
    env = {**os.environ, "AMBER_CACHE_DIR": str(tmp_path / "c")}
    ok = subprocess.run([sys.executable, "-m", "amber", "dump", f"{model}:Net"], env=env,
                        capture_output=True, text=True)
    assert ok.returncode == 0 and "def Net_construct(" in ok.stdout
    bad = subprocess.run([sys.executable, "-m", "amber", "dump", f"{model}:Bad"], env=env,
                         capture_output=True, text=True)
    assert bad.returncode == 1 and "`import`" in bad.stderr and "Traceback" not in bad.stderr
