"""The `amber` command's conveniences: --version, quiet ends of a closed pipe, one file per
stage with --out-dir, the class of each inlined construct, a model file's own prints kept out of
the dump, the --input and export help, and the exported run() checking its inputs."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import amber
from amber import cli
from amber.graph.passes import PIPELINES

MODEL = '''
import numpy as np
from amber import nn, ops

print("loading the model file")


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        print("building Net")
        self.fc = nn.Dense(4, 3)

    def construct(self, x):
        y = ops.relu(self.fc(x))
        if y.sum() > 1:
            y = y * 0.5
        return y + 1.0


trained = Net()
trained.fc.bias.set_data(np.full(3, 7.0, np.float32))


def example_inputs():
    print("making inputs")
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


def amber_command(*argv: str, **kwargs: object) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "amber", *argv], capture_output=True,
                          text=True, **kwargs)


def test_version(capsys) -> None:
    with pytest.raises(SystemExit) as info:
        cli.main(["--version"])
    assert info.value.code == 0 and capsys.readouterr().out == f"amber {amber.__version__}\n"


def test_a_closed_pipe_ends_quietly(model: Path) -> None:
    read, write = os.pipe()
    os.close(read)  # NOTE: like `| head` that already quit: every write fails with EPIPE
    try:
        done = subprocess.run([sys.executable, "-m", "amber", "dump", f"{model}:Net",
                               "--stage", "all"], stdout=write, stderr=subprocess.PIPE,
                              text=True)
    finally:
        os.close(write)
    assert "Traceback" not in done.stderr and "BrokenPipeError" not in done.stderr
    assert done.returncode == 1


def test_dumped_code_has_none_of_the_files_prints(model: Path, capsys) -> None:
    code, out, err = run(capsys, "dump", f"{model}:Net")
    assert code == 0 and "loading" not in out and "building" not in out and "making" not in out
    assert "loading the model file" in err and "building Net" in err and "making inputs" in err
    compile(out, "dumped.py", "exec")


def test_source_stage_names_each_inlined_construct(model: Path, capsys) -> None:
    _, out, _ = run(capsys, "dump", f"{model}:Net", "--stage", "source")
    headers = [line for line in out.splitlines() if line.startswith("# --- ")]
    assert headers[0] == "# --- Net.construct" and "# --- Dense.construct" in headers


@pytest.mark.parametrize("fmt, suffix", [("text", ".txt"), ("dot", ".dot")])
def test_all_stages_one_file_each(model: Path, tmp_path: Path, capsys, fmt: str,
                                  suffix: str) -> None:
    out_dir = tmp_path / "stages"
    code, out, _ = run(capsys, "dump", f"{model}:Net", "--stage", "all", "--format", fmt,
                       "-O1", "--out-dir", str(out_dir))
    files = sorted(p.name for p in out_dir.iterdir())
    assert code == 0 and out.split() == [str(out_dir / f) for f in files]
    assert files[0] == "00_source.py" and files[1] == f"01_ir{suffix}"
    assert files[-2] == f"{len(files) - 2:02d}_opt-ir{suffix}"
    assert files[-1] == f"{len(files) - 1:02d}_code.py"
    passes = [f[3:].removesuffix(suffix) for f in files[2:-2]]
    assert passes == _flat(PIPELINES[1])  # NOTE: each pass run, also those changing nothing
    compile((out_dir / files[-1]).read_text(), "code.py", "exec")
    for name in files[1:-1]:
        text = (out_dir / name).read_text()
        assert text.startswith("digraph" if fmt == "dot" else "graph @Net.construct(")


def _flat(steps: object) -> list[str]:
    return [steps] if isinstance(steps, str) else [n for s in steps for n in _flat(s)]


def test_all_stages_as_dot_need_a_directory(model: Path, capsys) -> None:
    code, out, err = run(capsys, "dump", f"{model}:Net", "--stage", "all", "--format", "dot")
    assert code == 2 and not out and "--out-dir" in err


def test_input_help_shows_every_form() -> None:
    help_text = " ".join(amber_command("dump", "--help", check=True).stdout.split())
    for form in ("1x1x32x32:float32", "scalar:float64", "():float64", ":float64", "int=3",
                 "float=0.5", "bool=true", "example_inputs()"):
        assert form in help_text, form


def test_export_help_says_how_weights_are_chosen() -> None:
    help_text = " ".join(amber_command("export", "--help", check=True).stdout.split())
    assert "amber.set_seed(0)" in help_text and "FILE.py:net" in help_text


def _export(model: Path, tmp_path: Path, capsys, name: str) -> object:
    out_py = tmp_path / f"{name}_static.py"
    code, _, _ = run(capsys, "export", f"{model}:{name}", "-o", str(out_py))
    assert code == 0
    sys.path.insert(0, str(tmp_path))
    try:
        return __import__(f"{name}_static")
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop(f"{name}_static", None)


def test_export_of_an_instance_keeps_its_weights(model: Path, tmp_path: Path, capsys) -> None:
    module = _export(model, tmp_path, capsys, "trained")
    x = np.zeros((2, 4), np.float32)
    net = cli.load_module(str(model)).trained
    np.testing.assert_allclose(module.run(x), net.construct(x), rtol=1e-6)
    np.testing.assert_allclose(module.run(x), 7 * 0.5 + 1)


@pytest.mark.parametrize("inputs, error, message", [
    ((np.zeros((3, 4), np.float32),), ValueError,
     "input 'x' must be an array of shape (2, 4), dtype float32; given shape (3, 4), "
     "dtype float32"),
    ((np.zeros((2, 4), np.float64),), ValueError,
     "input 'x' must be an array of shape (2, 4), dtype float32; given shape (2, 4), "
     "dtype float64"),
    (([[0.0] * 4] * 2,), ValueError, "given a list"),
    ((), TypeError, "run() takes 1 inputs (x), 0 given"),
])
def test_exported_run_checks_its_inputs(model: Path, tmp_path: Path, capsys, inputs: tuple,
                                        error: type, message: str) -> None:
    module = _export(model, tmp_path, capsys, "Net")
    with pytest.raises(error) as info:
        module.run(*inputs)
    assert message in str(info.value)
