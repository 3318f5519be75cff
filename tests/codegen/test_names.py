"""Names: user hints survive (sanitized, suffixed on repeats), synthetic `__amber_` names become
readable, and nothing shadows a builtin, a keyword, `np`, a helper or a module constant."""
from __future__ import annotations

import ast
import builtins
import keyword

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from amber.codegen import generate
from amber.codegen.namer import Namer, readable
from amber.graph import Builder, Graph, InsertPoint, Tensor

F3 = Tensor((3,), np.float32)


def assigned_names(source: str) -> set[str]:
    """The parameters and variables of the entry function (the module's last definition)."""
    fn = [n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef)][-1]
    names = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)
             and isinstance(n.ctx, ast.Store)}
    return names | {a.arg for a in fn.args.args}


def test_readable_hints() -> None:
    assert readable("fc1.weight") == "fc1_weight"
    assert readable("__amber_brk0") == "brk"
    assert readable("__amber_range_i2") == "i" and readable("__amber_range_stop0") == "stop"
    assert readable("__amber_ret_flag") == "ret_flag"
    assert readable("") == "t"
    assert readable("0th") == "v0th"
    assert readable("\ufb01") == "fi"  # the ligature Python itself reads as `fi`


def test_namer_suffixes_and_never_shadows() -> None:
    namer = Namer()
    namer.reserve("conv2d_kernel")
    assert [namer.fresh(h) for h in ("x", "x", "x_1", "x")] == ["x", "x_1", "x_1_1", "x_2"]
    assert namer.fresh("sum") == "sum_1" and namer.fresh("lambda") == "lambda_1"
    assert namer.fresh("np") == "np_1" and namer.fresh("conv2d_kernel") == "conv2d_kernel_1"
    assert namer.fresh("") == "t" and namer.fresh("") == "t_1"


@settings(max_examples=50, deadline=None)
@given(st.lists(st.text(max_size=6) | st.sampled_from(
    ["sum", "max", "np", "list", "if", "__amber_ret0", "__0", "x.y", "t", "_"]), min_size=1,
    max_size=8))
def test_generated_names_are_unique_and_safe(hints: list[str]) -> None:
    g = Graph("names")
    x = g.body.add_param(F3, hints[0])
    b = Builder(InsertPoint.at_end(g.body))
    values = [x]
    for hint in hints[1:]:
        values.append(b.op("add", values[-1], x, name=hint))
    g.body.set_results(values[-1:])
    code = generate(g)
    names = assigned_names(code.source)
    forbidden = set(dir(builtins)) | set(keyword.kwlist) | {"np"}
    assert not names & forbidden, names & forbidden
    assert all(n.isidentifier() for n in names)
    namespace: dict = {}
    exec(code.source, namespace)  # noqa: S102
    arg = np.arange(3, dtype=np.float32)
    np.testing.assert_array_equal(namespace[code.function_name](arg), arg * len(hints))


def test_parameter_and_synthetic_names() -> None:
    g = Graph("Net.construct")
    w = g.body.add_param(F3, "fc1.weight")
    x = g.body.add_param(F3, "x")
    b = Builder(InsertPoint.at_end(g.body))
    flag = b.op("gt", x, w, name="__amber_brk0")
    g.body.set_results([b.op("select", flag, x, w, name=""), flag])
    code = generate(g)
    assert code.function_name == "Net_construct"
    assert code.arg_names == ("fc1_weight", "x")
    assert "brk = x > fc1_weight" in code.source
    assert "t = np.where(brk, x, fc1_weight)" in code.source


def test_helper_and_constant_names_are_not_taken() -> None:
    g = Graph("f")
    x = g.body.add_param(Tensor((1, 1, 4, 4), np.float32), "im2col")
    k = g.body.add_param(Tensor((1, 1, 3, 3), np.float32), "WEIGHT")
    b = Builder(InsertPoint.at_end(g.body))
    y = b.op("conv2d", x, k, name="pad_hw")
    big = b.constant(np.ones((4, 4, 2), np.float32), name="weight")
    g.body.set_results([b.op("add", y, b.op("sum", big), name="unbound_local")])
    code = generate(g)
    tree = ast.parse(code.source)
    defined = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
    assert len(defined) == len(set(defined))
    module_names = {n.targets[0].id for n in tree.body if isinstance(n, ast.Assign)}
    local = assigned_names(code.source)
    assert not (set(defined) | module_names) & local
    assert code.arg_names == ("im2col_1", "WEIGHT")
