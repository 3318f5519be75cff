"""What a user sees of an uncaught CompileError (scripts run in a subprocess, stderr checked):
their own frames, the message with file:line:col, the line, a caret and the hint, about ten
lines, no amber internals and no chained duplicate; the full traceback one switch away."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import amber

SCRIPT = '''\
import numpy as np
import amber
from amber import nn
{setup}

class Net(nn.Cell):
    def construct(self, x):
        y = x + "12"
        return y


def main():
    net = amber.jit(Net())
    return net(np.ones(2))


main()
'''
AMBER_DIR = os.path.dirname(os.path.abspath(amber.__file__))


def run_script(tmp_path: Path, setup: str = "", **env: str) -> subprocess.CompletedProcess:
    path = tmp_path / "user_model.py"
    path.write_text(SCRIPT.format(setup=setup))
    environ = {k: v for k, v in os.environ.items() if k != "AMBER_TRACEBACK_FILTERING"}
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                          env={**environ, "AMBER_CACHE": "0", **env}, cwd=tmp_path)


def amber_frames(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines()
            if line.strip().startswith("File ") and AMBER_DIR + os.sep in line]


def test_short_traceback(tmp_path: Path) -> None:
    done = run_script(tmp_path)
    err = done.stderr
    lines = err.rstrip("\n").splitlines()
    assert done.returncode == 1 and len(lines) <= 14, err
    path = tmp_path / "user_model.py"
    assert lines[0] == "Traceback (most recent call last):"
    assert f'File "{path}", line 17, in <module>' in err and "    main()" in err
    assert f'File "{path}", line 14, in main' in err and "return net(np.ones(2))" in err
    assert len(amber_frames(err)) == 1 and "AMBER_TRACEBACK_FILTERING=off" in err
    message = lines.index(next(line for line in lines if line.startswith("amber.")))
    assert lines[message].startswith(f"amber.CompileTypeError: {path}:8:13: add: ")
    assert lines[message + 1:] == ["    y = x + \"12\"", "        ^",
                                   lines[message + 3]] and lines[-1].startswith("hint: ")
    assert "The above exception" not in err and "During handling" not in err


@pytest.mark.parametrize("switch", [{"AMBER_TRACEBACK_FILTERING": "off"},
                                    {"setup": "amber.set_context(traceback_filtering=False)"}])
def test_full_traceback_one_switch_away(tmp_path: Path, switch: dict[str, str]) -> None:
    setup = switch.pop("setup", "")
    err = run_script(tmp_path, setup, **switch).stderr
    frames = amber_frames(err)
    assert len(frames) > 5 and any(os.sep + "frontend" + os.sep in f for f in frames), err
    assert "The above exception was the direct cause" in err  # the internal cause, kept


def test_errors_are_type_and_value_errors_where_python_raises_those() -> None:
    def shapes(x, y):
        return x + y

    def helper(a, b):
        return a * b

    def calls(x):
        return helper(x)

    with pytest.raises(ValueError):
        shapes(np.ones(2), np.ones(3))
    with pytest.raises(ValueError) as compiled:
        amber.jit(shapes)(np.ones(2), np.ones(3))
    assert type(compiled.value) is amber.CompileValueError
    with pytest.raises(TypeError):
        calls(np.ones(2))
    with pytest.raises(TypeError) as compiled:
        amber.jit(calls)(np.ones(2))
    assert type(compiled.value) is amber.CompileTypeError
