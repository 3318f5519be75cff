"""Helper functions ops list in `OpDef.helpers`: copied by source with the helpers they call,
annotations generated code could not evaluate dropped, and foreign globals refused."""
from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from amber.codegen import generate
from amber.graph import Builder, Graph, InsertPoint, Tensor
from amber.ops import OpDef

LIMIT = 3


def times(x: np.ndarray, k: float) -> np.ndarray:
    # NOTE: this comment survives: every annotation here is NumPy or a builtin
    return x * k


def scale_rows(x: np.ndarray, k: Any) -> np.ndarray:
    """Scale by k (its annotation for k cannot be evaluated in generated code)."""
    return times(x, k)


def capped(x: np.ndarray) -> np.ndarray:
    return np.minimum(x, LIMIT)


def one_op_graph(helper, emit: str) -> Graph:
    op = OpDef(f"test_{helper.__name__}", ("x",), kernel=lambda x: x, infer=lambda x: x,
               emit=emit, helpers=(helper,))
    g = Graph("uses_helper")
    x = g.body.add_param(Tensor((2,), np.float32), "x")
    g.body.set_results([Builder(InsertPoint.at_end(g.body)).op(op, x, name="y")])
    return g


def test_helpers_come_with_their_callees(load_code) -> None:
    code = generate(one_op_graph(scale_rows, "scale_rows(x, 2.0)"))
    src = code.source
    assert src.index("def times(") < src.index("def scale_rows(") < src.index("def uses_helper(")
    assert "Any" not in src and "def scale_rows(x: np.ndarray, k) -> np.ndarray:" in src
    assert "# NOTE: this comment survives" in src
    np.testing.assert_array_equal(load_code(code)(np.ones(2, np.float32)), [2.0, 2.0])


def test_helper_reading_a_module_global_is_refused() -> None:
    with pytest.raises(NameError, match="'LIMIT'"):
        generate(one_op_graph(capped, "capped(x)"))


def test_template_naming_an_unknown_function_is_refused() -> None:
    with pytest.raises(NameError, match="math"):
        generate(one_op_graph(times, "math.floor(x)"))
