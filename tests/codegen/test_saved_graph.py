"""A graph saved to disk compiles and runs without the Python source it came from: build it from
a model, save it, load it in a fresh process that never imports the model, generate, run."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np

import amber
from amber import nn, ops
from amber.frontend import build_graph
from amber.graph import save_graph


class Gated(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(3, 3)

    def construct(self, x):
        for i in range(4):
            x = self.fc(x)
            if x.sum() > 2.0:
                break
        return ops.relu(x) * 2.0


def test_a_loaded_graph_compiles_and_runs_without_the_model_source(tmp_path):
    amber.set_seed(0)
    net = Gated()
    x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    graph = build_graph(net, (x,)).graph
    assert graph.param_paths == ("fc.weight", "fc.bias")
    save_graph(graph, tmp_path / "gated.npz")
    np.savez(tmp_path / "inputs.npz", weight=net.fc.weight, bias=net.fc.bias, x=x)
    np.save(tmp_path / "expected.npy", net.construct(x))
    script = textwrap.dedent(f"""
        import numpy as np
        from amber.codegen import generate
        from amber.graph import load_graph
        graph = load_graph({str(tmp_path / "gated.npz")!r})
        code = generate(graph)
        namespace = {{}}
        exec(compile(code.source, "<loaded>", "exec"), namespace)
        data = np.load({str(tmp_path / "inputs.npz")!r})
        got = namespace[code.function_name](data["weight"], data["bias"], data["x"])
        want = np.load({str(tmp_path / "expected.npy")!r})
        assert got.dtype == want.dtype and np.array_equal(got, want), (got, want)
        import sys
        assert not any("test_saved_graph" in name for name in sys.modules)
        print("ok")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
