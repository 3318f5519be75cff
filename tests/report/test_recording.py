"""What a recorded run holds (compiles and why, disk hits, refusals, fallbacks, symbolic sizes,
the stages with their links to the user's lines) and the page made from it, without a browser."""
from __future__ import annotations

import inspect
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import amber
from amber import nn, ops, report

X = np.ones((2, 4), np.float32)


class Gate(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(4, 4)

    def construct(self, x, steps):
        for _ in range(steps):
            x = self.fc(x)
            if x.sum() > 10:
                break
        return ops.relu(x)


def _line_of(func, text: str) -> int:
    """The file line of the first line of `func` containing `text`."""
    lines, first = inspect.getsourcelines(func)
    return first + next(i for i, line in enumerate(lines) if text in line)


def test_compiles_record_why_they_happened(recording: Path) -> None:
    net = amber.jit(Gate())
    net(X, 3)
    net(X, 3)  # served by the memory cache: no event
    net(X, 4)
    run = report.load_run(recording)
    specs = run.functions["Gate.construct"].specializations
    assert [s["origin"] for s in specs] == ["compiled", "compiled"]
    assert specs[0]["reason"] == "first call"
    assert "arg 1" in specs[1]["reason"] and "3" in specs[1]["reason"] \
        and "4" in specs[1]["reason"], specs[1]["reason"]
    assert specs[0]["key"] == "(f32[2,4], int=3)"


def test_stages_link_generated_lines_to_the_users_lines(recording: Path) -> None:
    net = amber.jit(Gate())
    net(X, np.array(3))
    trace = report.load_run(recording).functions["Gate.construct"].specializations[0]["trace"]
    here = str(Path(__file__).resolve())
    branch = [here, _line_of(Gate.construct, "if x.sum() > 10")]
    code_chains = trace["code"]["locs"].values()
    ir_chains = trace["opt_ir"]["locs"].values()
    assert any(branch in chain for chain in code_chains)
    assert any(branch in chain for chain in ir_chains)
    # NOTE: a line inlined from Dense.construct carries the user's call site as its caller
    call = [here, _line_of(Gate.construct, "x = self.fc(x)")]
    assert any(chain[0] != call and call in chain for chain in code_chains)
    titles = [src["title"] for src in trace["sources"]]
    assert titles[0] == "Gate.construct" and "Dense.construct" in titles
    assert trace["sources"][0]["first_line"] == _line_of(Gate.construct, "def construct")
    assert [p["name"] for p in trace["passes"]][:2] == ["fold_constants", "simplify"]
    assert any(p["changed"] and p["ir"] for p in trace["passes"])
    assert all(p["ir"] is None for p in trace["passes"] if not p["changed"])
    assert set(trace["seconds"]) == {"frontend", "passes", "codegen"}
    assert trace["backend"] == {"option": "numpy", "kernels": []}
    loop = trace["regions"]["regions"][0]
    # NOTE: a for loop with a break over a run-time count is built as a while
    assert loop["kind"] == "while" and loop["loc"][-1][1] == _line_of(Gate.construct, "for _ in")
    assert any(r["kind"] == "if" for b in loop["blocks"] for r in b["regions"])


def test_disk_hits_refusals_fallbacks_and_symbolic_sizes(recording: Path) -> None:
    amber.jit(Gate())(X, 2)
    amber.jit(Gate())(X, 2)  # NOTE: a new jit object: its code comes from the disk cache

    def refused(x):
        class Local:  # NOTE: a class made inside compiled code is refused
            pass
        return x

    with pytest.raises(amber.CompileError):
        amber.jit(refused)(X)
    with pytest.warns(RuntimeWarning):
        amber.jit(refused, fallback=True)(X)
    growing = amber.jit(lambda x: x * 2)
    growing(np.ones((2, 3), np.float32))
    with pytest.warns(RuntimeWarning):
        growing(np.ones((5, 3), np.float32))
    run = report.load_run(recording)
    gate = run.functions["Gate.construct"]
    assert (gate.compiles, gate.disk_hits) == (1, 1)
    disk = gate.specializations[1]
    assert disk["trace"] is None and "def Gate_construct(" in disk["code"]["text"]
    refusals = run.functions[refused.__qualname__].refusals
    assert [r["outcome"] for r in refusals] == ["error", "eager fallback"]
    assert refusals[0]["line"] == _line_of(refused, "class Local") \
        and "class" in refusals[0]["message"]
    assert refusals[0]["file"] == str(Path(__file__).resolve())
    lam = run.functions["test_disk_hits_refusals_fallbacks_and_symbolic_sizes.<locals>.<lambda>"]
    assert "sizes made symbolic: arg 0 axis 0" in lam.specializations[1]["reason"]


def test_the_page_is_self_contained_and_links_every_stage(recording: Path,
                                                          tmp_path: Path) -> None:
    net = amber.jit(Gate())
    net(X, np.array(3))

    def refused(x):
        class Local:
            pass
        return x

    with pytest.raises(amber.CompileError):
        amber.jit(refused)(X)
    page = tmp_path / "report.html"
    report.write_report(recording, page)
    html = page.read_text()
    # NOTE: nothing fetched: no external scripts, styles, images or fonts
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "<link" not in html and "@import" not in html
    assert html.count('<section class="spec"') == 1
    assert 'id="s-Gate-construct-0"' in html and 'href="#s-Gate-construct-0"' in html
    here = str(Path(__file__).resolve())
    key = f"{here}:{_line_of(Gate.construct, 'if x.sum() > 10')}"
    assert f'data-key="{key}"' in html  # the source line ...
    assert re.search(rf'data-chain="[^"]*{re.escape(key)}', html)  # ... and lines made from it
    assert '<svg class="regions"' in html and 'class="region" data-key=' in html
    assert "class Local:" in html and 'class="refusal"' in html
    for stage in ("as built", "after fold_constants", "after plan_memory"):
        assert stage in html


def test_report_command(recording: Path, tmp_path: Path) -> None:
    amber.jit(Gate())(X, 1)
    report.stop()
    out = tmp_path / "out" / "r.html"
    done = subprocess.run([sys.executable, "-m", "amber", "report", str(recording), "-o",
                           str(out)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "1 function(s), 1 specialization(s), 0 refusal(s)" in done.stdout
    assert out.read_text().startswith("<!DOCTYPE html>")
    missing = subprocess.run([sys.executable, "-m", "amber", "report", str(tmp_path / "none")],
                             capture_output=True, text=True)
    assert missing.returncode == 1 and "is not a directory" in missing.stderr


def test_environment_variable_records_a_whole_process(tmp_path: Path) -> None:
    script = tmp_path / "script.py"
    script.write_text("import numpy as np, amber\n"
                      "f = amber.jit(lambda x: x + 1)\n"
                      "f(np.ones(3))\n")
    env = {**__import__("os").environ, "AMBER_REPORT": str(tmp_path / "run"),
           "AMBER_CACHE_DIR": str(tmp_path / "cache")}
    subprocess.run([sys.executable, str(script)], env=env, check=True)
    run = report.load_run(tmp_path / "run")
    assert run.processes[0]["argv"] == [str(script)]
    assert [s["origin"] for s in run.specializations] == ["compiled"]


def test_damaged_lines_are_skipped_and_counted(recording: Path) -> None:
    amber.jit(Gate())(X, 1)
    path = report.stop()
    with open(path, "a") as out:
        out.write('{"kind": "specialization", "function": "cut of')
    run = report.load_run(recording)
    assert run.skipped_lines == 1 and len(run.specializations) == 1
    path.write_text(json.dumps({"kind": "run", "format": 999}) + "\n")
    with pytest.raises(report.ReportError, match="format 999"):
        report.load_run(recording)
