"""Every kind of program the frontend rejects raises CompileError at the user's line, with the
source line, a caret and a hint; nothing else escapes."""
import inspect

import gast
import numpy as np
import pytest

import amber
from amber import nn, ops
from amber.ops import OPS
from amber.frontend import CompileError, build_graph
from amber.frontend import builder as frontend_builder
from amber.frontend.reference import agree

X = np.ones((2, 3), np.float32)
Y = np.ones((4,), np.float32)


def expect_error(fn, args, fragment, where=None):
    """Compile `fn`; the CompileError must point at the line marked `# error` in the source of
    `where` (default: `fn` itself)."""
    with pytest.raises(CompileError) as info:
        build_graph(fn, args)
    err = info.value
    target = where or (type(fn).construct if isinstance(fn, nn.Cell) else fn)
    lines, start = inspect.getsourcelines(target)
    marked = start + next(i for i, text in enumerate(lines) if "# error" in text)
    assert (err.file, err.line) == (__file__, marked), str(err)
    assert fragment in err.message, str(err)
    assert err.source_line.strip() and "^" in str(err) and err.hint, str(err)
    return err


def shape_mismatch(x, y):
    return x + y  # error


def test_shape_mismatch_names_both_shapes():
    err = expect_error(shape_mismatch, (X, Y), "(2, 3)")
    assert "(4,)" in err.message


def undefined_name(x):
    return x + not_defined_anywhere  # error  # noqa: F821


def test_undefined_name():
    expect_error(undefined_name, (X,), "name 'not_defined_anywhere' is not defined")


def uncompilable_call(x):
    return open(x)  # error


def test_call_of_something_uncompilable_says_what_it_is():
    expect_error(uncompilable_call, (X,), "open")


def two_args(a, b):
    return a + b


def wrong_arity(x):
    return two_args(x)  # error


def test_wrong_arity_to_helper():
    expect_error(wrong_arity, (X,), "missing a required argument")


def ping(x):
    return pong(x)


def pong(x):
    return ping(x)  # error


def test_recursion_names_the_cycle():
    expect_error(ping, (X,), "ping -> pong -> ping", where=pong)


def tensor_or_none(x):
    y = None
    for i in range(int(x.sum())):
        if x.sum() > i:  # error
            y = x * 2
    return y


def test_merging_tensor_and_none_names_both_lines():
    err = expect_error(tensor_or_none, (X,), "None")
    first = inspect.getsourcelines(tensor_or_none)[1]
    assert f"line {first + 1}" in err.message and f"line {first + 4}" in err.message
    assert "y" in err.message and "tensor f32[2,3]" in err.message


def runtime_attr(x):
    n = int(x.sum())
    return ops.reduce_sum(x, n)  # error


def test_op_attribute_must_be_compile_time():
    expect_error(runtime_attr, (X,), "must be a compile-time constant")


def ambiguous(x):
    if x > 0:  # error
        x = x + 1
    return x


def test_truth_of_array_is_ambiguous_where_it_runs():
    """As in Python, the test fails when it runs (a branch that never runs may hold one)."""
    with pytest.raises(ValueError, match="ambiguous") as eager:
        ambiguous(X)
    with pytest.raises(ValueError, match="ambiguous") as compiled:
        amber.jit(ambiguous)(X)
    assert str(compiled.value) == str(eager.value)


def rank_grows_every_iteration(x):
    h = x
    for i in range(int(x.sum())):  # error
        h = h[None]
    return h


def test_loop_variable_changing_kind():
    """A kind that changes in the first iteration only is peeled (tests/programs/
    test_loop_promotion.py); one that changes in every iteration has no static form."""
    expect_error(rank_grows_every_iteration, (X,), "before the loop")


def number_or_array_dtype(x):
    s = 0
    for i in range(int(x.sum())):
        s = s + x[i]
    return s.dtype  # error


def number_or_array_len(x):
    s = 0
    if x.sum() > 0:
        s = x * 2
    return len(s)  # error


def test_facts_of_a_number_or_array_are_refused():
    """`s = 0` before a loop that may not run, or on one side of an if, joins to the array
    type, but at run time s may be the number 0: its dtype, shape, len and class are not
    folded from the type."""
    expect_error(number_or_array_dtype, (X,), "Python number on some paths")
    expect_error(number_or_array_len, (X,), "Python number on some paths")


def unsupported_syntax(x):
    import math  # error
    return x + math.pi


def test_unsupported_syntax():
    expect_error(unsupported_syntax, (X,), "`import`")


def formats_value(x):
    print(f"sum={x.sum():.3f} {x.shape!r} {{braces}}")  # error
    return "{}-{}".format(x.sum(), 2)


def test_fstring_of_run_time_value():
    if "format" in OPS:  # the op registry can format at run time
        agree(formats_value, X)
    else:
        expect_error(formats_value, (X,), "formatting a run-time value")


class Stateful(nn.Cell):
    def __init__(self):
        super().__init__()
        self.scale = np.float32(1.0)
        self.layers = nn.CellList([nn.ReLU(), nn.Tanh()])

    def construct(self, x):
        if x.sum() > 0:
            self.scale = x.sum()  # error
        return x


def test_assigning_a_numpy_scalar_attribute_in_a_run_time_branch_is_rejected():
    """Numbers, strings and None on self are assigned anywhere, other plain values in
    straight-line code (tests/programs/test_caller_state*.py); a NumPy scalar in a branch
    decided at run time is not followed (its value before would be merged as a constant)."""
    expect_error(Stateful(), (X,), "assigning to attribute 'scale'")


class IndexedLayers(nn.Cell):
    def __init__(self):
        super().__init__()
        self.layers = nn.CellList([nn.ReLU(), nn.Tanh()])

    def construct(self, x):
        for i in range(int(x.sum())):
            x = self.layers[i](x)
        return x


def test_run_time_index_into_layers_picks_the_layer_at_run_time():
    """A loop over a run-time range cannot be unrolled: the index picks the layer with an If
    per layer, and an index past the last layer raises IndexError, as eagerly."""
    net = IndexedLayers()
    compiled = amber.jit(net)
    for x in (np.full((2, 3), 0.25, np.float32), np.full((2, 3), 1 / 3, np.float32)):
        np.testing.assert_allclose(compiled(x), net.construct(x), rtol=1e-6)
    with pytest.raises(IndexError):
        compiled(X)


def builds_a_layer(x):
    return nn.Dense(5, 2)(x)  # error


def test_creating_layers_inside_compiled_code():
    expect_error(builds_a_layer, (X,), "cannot compile a call to class Dense")


class WrongWidth(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(5, 2)

    def construct(self, x):
        return self.fc(x)  # error


def test_layer_input_check_becomes_compile_error():
    err = expect_error(WrongWidth(), (X,), "input last dim is 3, expected 5")
    assert "Dense" in err.message


class ShapeInsideLayer(nn.Cell):
    def __init__(self):
        super().__init__()
        self.bn = nn.LayerNorm((4,))

    def construct(self, x):
        return self.bn(x)  # error


def test_errors_inside_amber_layers_point_at_the_user_call():
    expect_error(ShapeInsideLayer(), (X,), "LayerNorm")


def inner_error(x):
    return helper_with_bad_shapes(x)


def helper_with_bad_shapes(x):
    return x.reshape(7, 5)  # error


def test_error_inside_helper_points_into_the_helper():
    expect_error(inner_error, (X,), "reshape", where=helper_with_bad_shapes)


def internal(x):
    pass  # error
    return x


def test_internal_errors_become_compile_errors(monkeypatch):
    def broken(f, stmt):
        raise KeyError("boom")
    monkeypatch.setitem(frontend_builder.RULES.statements, gast.Pass, broken)
    err = expect_error(internal, (X,), "internal error while compiling `pass  # error`")
    assert isinstance(err.__cause__, KeyError)


def test_unsupported_argument_type():
    with pytest.raises(CompileError, match="argument 0 is a set"):
        build_graph(two_args, ({1, 2}, X))


def test_dict_argument_arrays_need_string_keys():
    with pytest.raises(CompileError, match=r"argument 0\[1\] holds a ndarray"):
        build_graph(two_args, ({1: X}, X))


def test_target_must_be_a_cell_or_function():
    with pytest.raises(CompileError, match="cannot compile a int"):
        build_graph(3, ())
