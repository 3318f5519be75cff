"""Every registered op, generically: its emit template parses and names only what codegen
provides, its helpers can be copied by source, and (for ops with a sample here) the filled
template computes exactly what the kernel computes, of the type infer promises."""
import ast
import builtins
import contextlib
import copy
import inspect
import io
import re

import numpy as np
import pytest

from amber.ops import REQUIRED, Dyn, OpDef, registry
from amber.ops import adjoint, creation, elementwise, indexing, joining, reduce, shaping
from amber.ops.types import AnyType, ListType, Tensor, TupleType, Type, type_of

A = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5  # f32[2,3], mixed signs
B = np.array([1.5, -2.0, 0.25], np.float32)
I = np.array([[3, -1, 2], [0, 5, -4]], np.int32)
M = np.array([True, False, True])
F64 = np.dtype(np.float64)

SAMPLES: dict[str, list[tuple[tuple, dict]]] = {  # op name -> [(inputs, attrs), ...]
    # python.py
    "constant": [((), {"value": 3}), ((), {"value": (1, "a")})],
    "undefined": [((), {"name": "x"})],
    "make_tuple": [((1, A), {}), ((), {})],
    "tuple_getitem": [(((1, A),), {"index": 1})],
    "list_new": [((1, 2), {}), ((), {})],
    "list_append": [(([B], B), {})],
    "len": [((A,), {}), (([1, 2, 3],), {})],
    "int": [((np.float32(2.5),), {})],
    "float": [((3,), {})],
    "bool": [((np.array([0.0]),), {})],
    "not": [((0,), {})],
    "min": [((3, 1.5), {}), ((B,), {}), (([np.float32(2), np.float32(-1)],), {})],
    "max": [((3, 4.5), {}), (([1.5, 0.5],), {})],
    "list_sum": [(([A, B[None]], 0), {}), (([B, B * 2], B), {}), (([1, 2], 0.5), {}), (([], A), {})],
    "print": [((1, "a", A), {"sep": "|"})],
    "assert": [((True, "m"), {}), ((False, "boom"), {})],
    "raise": [(("bad",), {"exc_type": ValueError})],
    "exc_matches": [((KeyError("k"),), {"types": (LookupError,)}),
                    ((ValueError("v"),), {"types": (KeyError, TypeError)})],
    "reraise": [((IndexError("gone"),), {})],
    # NOTE: NumPy's defaults, so running the samples changes no global state
    "seterr": [((), {"settings": (("under", "ignore"),)})],
    "restore_err": [(((("divide", "warn"), ("invalid", "warn"), ("over", "warn"),
                        ("under", "ignore")),), {})],
    # elementwise.py
    **{name: [((A,), {}), ((B,), {}), ((2.5,), {})] for name in
       ("neg", "exp", "sqrt", "square", "tanh", "sigmoid", "relu", "gelu", "floor", "ceil",
        "sign", "sin", "cos", "isnan", "isfinite", "expm1", "exp2", "tan", "arctan", "sinh",
        "cosh", "trunc", "rint", "isinf")},
    **{name: [((np.abs(A) + 0.5,), {}), ((3,), {})] for name in ("log1p", "log2", "log10")},
    "pos": [((A,), {}), ((True,), {})],
    "abs": [((A,), {}), ((-2,), {}), ((I,), {})],
    "log": [((np.abs(A),), {}), ((3,), {})],
    "rsqrt": [((np.abs(B),), {})],
    "reciprocal": [((B,), {}), ((I,), {})],
    "round": [((A,), {}), ((B,), {"decimals": 1})],
    "logical_not": [((M,), {}), ((A,), {})],
    "invert": [((I,), {}), ((M,), {}), ((5,), {})],
    **{name: [((A, B), {}), ((A, 2), {}), ((7, 2), {}), ((True, 3.5), {}), ((M, M[::-1]), {})]
       for name in
       ("add", "sub", "mul", "div", "maximum", "minimum", "eq", "ne", "lt", "le", "gt", "ge",
        "logical_and", "logical_or", "logical_xor")},
    "floordiv": [((A, B), {}), ((7, 2), {}), ((-7, 2.5), {})],
    "mindspore_div": [((A, B), {}), ((I, 3), {}), ((I, -3), {"integers": "truncate"}),
                      ((I, A), {"integers": "truncate"}), ((A, 2), {})],
    "mod": [((A, B), {}), ((-7, 2), {}), ((I, 3), {})],
    **{name: [((A, B), {}), ((I, 3), {}), ((2.5, -1.5), {})]
       for name in ("arctan2", "hypot", "logaddexp")},
    "fmod": [((A, B), {}), ((I, 3), {}), ((-7.5, 2.0), {})],
    "pow": [((np.abs(A), B), {}), ((2, 10), {}), ((I, 2), {})],
    **{name: [((I, 6), {}), ((M, M), {}), ((6, 3), {})] for name in
       ("bitwise_and", "bitwise_or", "bitwise_xor")},
    **{name: [((np.abs(I), 2), {}), ((6, 3), {})] for name in ("left_shift", "right_shift")},
    "select": [((A > 0, A, B), {}), ((M, 1, 0.5), {})],
    "clip": [((A, -1, 1), {}), ((A, None, np.float32(0)), {}), ((I, 0, 3), {})],
    # reduce.py
    **{name: [((A,), {}), ((I,), {"axis": 1, "keepdims": True}), ((A,), {"axis": (0, 1)})]
       for name in ("sum", "mean", "prod", "reduce_max", "reduce_min", "all", "any")},
    "argmax": [((A,), {}), ((I,), {"axis": 0, "keepdims": True}),
               ((A,), {"axis": -1, "dtype": np.dtype(np.int32)})],
    "argmin": [((A,), {"axis": 1}), ((I,), {})],
    # shape.py
    "reshape": [((A,), {"shape": (3, -1)}), ((A, 3), {"shape": (Dyn(0), 2)}),
                ((A, (6,)), {"shape": (Dyn(0),)}), ((A,), {"shape": (6,)})],
    "transpose": [((A,), {}), ((A,), {"perm": (1, 0)})],
    "expand_dims": [((A,), {"axis": 1}), ((B,), {"axis": (0, 2)})],
    "squeeze": [((A[None],), {}), ((A[:, None],), {"axis": 1})],
    "flatten": [((A[None],), {}), ((A,), {"start_dim": 0}), ((I[None, None],),
                                                              {"start_dim": 1, "end_dim": 2}),
                ((I[None, None],), {"start_dim": 0, "end_dim": -2})],
    "concat": [(((A, A),), {"axis": 1}), (([B, B, B],), {})],
    "stack": [(((A, A),), {"axis": -1}), (([B, B],), {})],
    "split": [((A,), {"axis": 1, "sections": 3}), ((B,), {"sections": (1,)}),
              ((A,), {"axis": 1, "sizes": 2}), ((A,), {"axis": 1, "sizes": (1, 2)})],
    "tile": [((A,), {"reps": (2, 1)}), ((B,), {"reps": (3,)})],
    "broadcast_to": [((B,), {"shape": (2, 3)}), ((A[:, :1], 4), {"shape": (-1, Dyn(0))})],
    "pad": [((A,), {"paddings": ((1, 0), (0, 2))}), ((B,), {"paddings": 1, "value": 9})],
    "flip": [((A,), {}), ((A,), {"axis": 1})],
    "repeat": [((A,), {"repeats": 2}), ((A,), {"repeats": (1, 0, 2), "axis": 1})],
    "cast": [((A,), {"dtype": np.dtype(np.int8)}), ((I,), {"dtype": np.dtype(np.bool_)}),
             ((3,), {"dtype": np.dtype(np.float32)}), ((np.float64(2.5),), {"dtype": F64})],
    "shape": [((A,), {})],
    "size": [((A,), {}), ((2.0,), {})],
    "ndim": [((A,), {}), ((B,), {})],
    "dim": [((), {"value": 3})],
    "sum_to": [((A,), {"shape": (1, 3)}), ((A,), {"shape": (3,)}), ((A,), {"shape": (2, 1)})],
    "stop_gradient": [((A,), {})],
    "placeholder": [((), {})],
    "index_add": [((A, B), {"index": (1,)}), ((A, B[:2], np.array([0, 0])), {"index": (Dyn(0),)}),
                  (([A, A], A), {"index": (1,)})],
    "index_zero": [((A, 1), {"index": (slice(None), Dyn(0))})],
    "split_like": [((A, [A[:, :1], A[:, 1:]]), {"axis": 1})],
    "unstack": [((A,), {"axis": 1})],
    "list_zeros_like": [(([A, A],), {})],
    "list_add": [(([A, A], [A, A]), {})],
    "index_add_into": [((A, B), {"index": (1,)}),
                       ((A, B[:2], np.array([0, 0])), {"index": (Dyn(0),)}),
                       ((A, B[0], 1), {"index": (slice(None), Dyn(0))})],
    "list_add_at": [(([A, A], A), {"index": (1,)}), (([A, A, A], A, 1), {"index": (Dyn(0),)}),
                    (([A, A, A], [A, A]), {"index": (slice(None, -1),)})],
    "list_copy": [(([A, A],), {})],
    "sum_to_items": [((A, [B[None], A]), {}), ((A[0].astype(np.float64), [B, B]), {})],
    "list_extend": [(([A], [A, A]), {})],
    "list_concat": [(([A, A], [A]), {})],
    "list_delete": [(([A, A * 2, A], 1), {}), (([A, A * 2], -1), {})],
    "list_insert": [(([A, A], 1, A * 3), {})],
    "getitem": [((A,), {"index": (0, slice(1, None))}), ((A, 1), {"index": (Dyn(0),)}),
                ((A, M), {"index": (Ellipsis, Dyn(0))}),
                ((A, np.array([1, 0])), {"index": (Dyn(0), slice(None, None, -2), None)}),
                (([A, A * 2], 1), {"index": (Dyn(0),)}), ((A,), {"index": ()})],
    "setitem": [((A, np.float32(7), 1), {"index": (slice(None), Dyn(0))}),
                ((A, B), {"index": (1,)}), (([1, 2], 5.0), {"index": (-1,)})],
    # creation.py
    "zeros": [((), {"shape": (2, 3)}), ((3,), {"shape": (Dyn(0),), "dtype": np.dtype("i4")})],
    "ones": [((), {"shape": (2,), "dtype": np.dtype(np.float32)}), ((2,), {"shape": (Dyn(0), 2)})],
    "full": [((1.5, 2), {"shape": (Dyn(0), 3)}), ((B,), {"shape": (2, 3), "dtype": F64})],
    "zeros_like": [((A,), {}), ((I,), {"dtype": F64})],
    "ones_like": [((A,), {}), ((2.0,), {})],
    "full_like": [((A, 7), {}), ((I, 0.5), {"dtype": F64})],
    "arange": [((), {"stop": 5}), ((4,), {"start": 1.0, "stop": Dyn(0), "step": 0.5}),
               ((), {"start": 2, "stop": -3, "step": -2, "dtype": np.dtype(np.float32)})],
    "eye": [((), {"n": 3}), ((), {"n": 2, "m": 4, "k": 1, "dtype": np.dtype(np.int8)})],
    "copy": [((A,), {}), ((I,), {})],
    "array": [((A,), {}), ((2.5,), {}), ((np.float32(3),), {"dtype": F64})],
    "asarray": [((A,), {}), ((I,), {"dtype": F64}), ((True,), {})],
    "one_hot": [((np.array([0, 2, 5]), np.float32(1), np.float32(0)), {"depth": 3}),
                ((I, 1, 0), {"depth": 6, "axis": 0})],
    # activations.py
    "relu6": [((A * 3,), {}), ((I * 2,), {}), ((7.5,), {})],
    "leaky_relu": [((A,), {}), ((A,), {"alpha": 0.01}), ((I,), {"alpha": 2})],
    "softplus": [((A * 10,), {}), ((A * 10,), {"beta": 2, "threshold": 5})],
    "erf": [((A,), {}), ((B.astype(np.float64) * 3,), {}), ((0.5,), {})],
    # reduce.py, indexing.py, normalization.py, resize.py
    "topk": [((A,), {"k": 2}), ((I,), {"k": 3, "largest": False}), ((B,), {"k": 0})],
    "sort": [((A,), {}), ((I,), {"axis": 0}), ((B,), {"kind": "stable"})],
    "argsort": [((A,), {"axis": 0}), ((I,), {}), ((M,), {"kind": "stable"})],
    "cumsum": [((A,), {}), ((I,), {"axis": 1}), ((M,), {"axis": 0}), ((B,), {"axis": -1})],
    "gather_nd": [((A, np.array([[0, 1], [1, 2]])), {}), ((A, np.array([[1], [0]])), {}),
                  ((A, np.array([[[0, 0]], [[1, 1]]], np.int32)), {})],
    "l2_normalize": [((A,), {}), ((A,), {"axis": 1, "epsilon": 1e-12}),
                     ((A,), {"axis": (0, 1)})],
    "resize_bilinear": [((A.reshape(1, 1, 2, 3),), {"size": (4, 5)}),
                        ((A.reshape(1, 2, 1, 3),), {"size": (3, 2), "align_corners": True}),
                        ((A.reshape(1, 1, 2, 3),), {"size": (3, 7),
                                                    "half_pixel_centers": True})],
    "resize_bilinear_grad": [((A.reshape(1, 1, 2, 3),), {"in_size": (4, 5)}),
                             ((A.reshape(1, 1, 2, 3),), {"in_size": (1, 2),
                                                         "half_pixel_centers": True})],
    # collective.py (a world of one: no MPI launcher in the test process)
    "all_reduce_grads": [(((A, I.astype(np.float64)),), {}), (((A,),), {"mean": False}),
                         (((B, A),), {"degree": 4})],
    "broadcast_params": [(((A, B),), {"names": ("a", "b")})],
}
CONSTANT_TYPES = (int, float, bool, str, type(None), type(Ellipsis), slice, np.dtype, type,
                  np.ndarray, Dyn)


def free_names(tree: ast.AST) -> set[str]:
    """Names an expression or function reads but does not bind itself."""
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):  # annotations are not evaluated: strip them
            node.returns = None
            for arg in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs,
                        node.args.vararg, node.args.kwarg):
                if arg is not None:
                    arg.annotation = None
    loaded, bound = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (loaded if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.FunctionDef):
            bound.add(node.name)
        elif isinstance(node, ast.alias):  # NOTE: a helper's lazy import (mpi4py) binds it
            bound.add((node.asname or node.name).split(".")[0])
    return loaded - bound


def templates(op: OpDef) -> list[str]:
    """The op's emit templates: for its samples' attrs, and its defaults when complete."""
    if isinstance(op.emit, str):
        return [op.emit]
    attr_sets = [op.full_attrs(attrs) for _, attrs in SAMPLES.get(op.name, [])]
    if REQUIRED not in op.attrs.values():
        attr_sets.append(dict(op.attrs))
    return [op.template(attrs) for attrs in attr_sets]


def variadic(op: OpDef) -> str | None:
    starred = [n[1:] for n in op.inputs if n.startswith("*")]
    assert len(starred) <= 1 and (not starred or op.inputs[-1].startswith("*")), op.name
    return starred[0] if starred else None


@pytest.mark.parametrize("op", registry.OPS.values(), ids=lambda op: op.name)
def test_emit_template_names_only_what_codegen_provides(op):
    star = variadic(op)
    allowed = ({n.lstrip("*") for n in op.inputs} | set(op.attrs) | {"np"} |
               {h.__name__ for h in op.helpers} | set(dir(builtins)))
    if not isinstance(op.emit, str):
        assert callable(op.emit), op.name
    for template in templates(op):
        tree = ast.parse(template, mode="eval")
        extra = {n for n in free_names(tree) - allowed
                 if not (star and re.fullmatch(rf"{star}_\d+", n))}
        assert not extra, f"{op.name}: {template!r} names {extra}"


@pytest.mark.parametrize("op", [op for op in registry.OPS.values() if op.helpers],
                         ids=lambda op: op.name)
def test_helpers_are_self_contained_module_functions(op):
    names = {h.__name__ for h in op.helpers}
    for helper in op.helpers:
        assert inspect.isfunction(helper) and helper.__qualname__ == helper.__name__
        assert getattr(inspect.getmodule(helper), helper.__name__) is helper
        tree = ast.parse(inspect.getsource(helper))
        extra = free_names(tree) - names - {"np"} - set(dir(builtins))
        assert not extra, f"{helper.__name__} needs {extra}"


def test_samples_cover_every_op_of_the_core_families():
    for family in (elementwise, reduce, shaping, joining, indexing, creation, adjoint):
        missing = {op.name for op in family.OPS} - set(SAMPLES)
        assert not missing, f"{family.__name__}: no sample for {sorted(missing)}"
    assert set(SAMPLES) <= set(registry.OPS)


def run(f):
    """(result or raised exception type and message, printed text)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            return f(), out.getvalue()
        except Exception as err:  # the op raising is itself a behaviour to compare
            return (type(err), str(err)), out.getvalue()


def same(a, b) -> bool:
    if isinstance(a, np.ndarray | np.generic) or isinstance(b, np.ndarray | np.generic):
        return (type(a) is type(b) and a.dtype == b.dtype and np.shape(a) == np.shape(b) and
                np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    if isinstance(a, tuple | list):
        return type(a) is type(b) and len(a) == len(b) and all(map(same, a, b))
    return type(a) is type(b) and a == b


def namespace(op: OpDef, inputs: tuple, attrs: dict) -> dict:
    ns = {"np": np, **{h.__name__: h for h in op.helpers}, **attrs}
    fixed = [n for n in op.inputs if not n.startswith("*")]
    ns.update(zip(fixed, inputs))
    star = variadic(op)
    if star:
        rest = inputs[len(fixed):]
        ns[star] = tuple(rest)
        ns.update({f"{star}_{k}": v for k, v in enumerate(rest)})
    return ns


def check_attr_constants(value) -> None:
    assert isinstance(value, CONSTANT_TYPES + (tuple,)), value
    if isinstance(value, tuple):
        for v in value:
            check_attr_constants(v)
    if isinstance(value, slice):
        for v in (value.start, value.stop, value.step):
            check_attr_constants(v)


CASES = [(name, i) for name, cases in SAMPLES.items() for i in range(len(cases))]


@pytest.mark.parametrize("name, case", CASES, ids=[f"{n}-{i}" for n, i in CASES])
def test_filled_template_equals_kernel_and_infer(name, case):
    op = registry.OPS[name]
    inputs, attrs = SAMPLES[name][case]
    attrs = op.full_attrs(attrs)
    for value in attrs.values():
        check_attr_constants(value)
    want, printed = run(lambda: op.kernel(*copy.deepcopy(inputs), **attrs))
    code = compile(ast.parse(op.template(attrs), mode="eval"), f"<{name}>", "eval")
    ns = namespace(op, copy.deepcopy(inputs), attrs)
    got, emitted = run(lambda: eval(code, {"__builtins__": builtins}, ns))
    assert same(got, want) and printed == emitted, (op.template(attrs), got, want)
    if isinstance(want, tuple) and len(want) == 2 and isinstance(want[0], type):
        return  # the op raised (raise, failed assert): nothing to infer
    inferred: Type = op.infer(*(type_of(v) for v in inputs), **attrs)
    assert describes(inferred, type_of(want)), (inferred, type_of(want))


def describes(inferred: Type, actual: Type) -> bool:
    """`inferred` fits `actual`, a symbolic or unknown dim standing for any size."""
    if isinstance(inferred, Tensor) and isinstance(actual, Tensor):
        return inferred.dtype == actual.dtype and inferred.rank == actual.rank and all(
            d == a or isinstance(d, str) for d, a in zip(inferred.shape, actual.shape))
    if isinstance(inferred, TupleType) and isinstance(actual, TupleType):
        return len(inferred.elements) == len(actual.elements) and all(
            map(describes, inferred.elements, actual.elements))
    if isinstance(inferred, ListType) and isinstance(actual, ListType):
        return describes(inferred.element, actual.element)
    return inferred == AnyType() or inferred == actual


def arrays_in(value) -> list[np.ndarray]:
    if isinstance(value, np.ndarray):
        return [value]
    if isinstance(value, tuple | list):
        return [a for v in value for a in arrays_in(v)]
    return []


@pytest.mark.parametrize("name, case", CASES, ids=[f"{n}-{i}" for n, i in CASES])
def test_fresh_results_share_no_memory_with_inputs(name, case):
    op = registry.OPS[name]
    inputs, attrs = SAMPLES[name][case]
    if not op.fresh:
        return
    result, _ = run(lambda: op.kernel(*inputs, **op.full_attrs(attrs)))
    for out in arrays_in(result):
        assert not any(np.shares_memory(out, a) for a in arrays_in(inputs)), name


def relaid(value):
    """`value` with every array of rank 2 or more in another memory layout, the same values:
    Fortran-ordered, or (rank 3 and up) a transposed copy seen through the inverse transpose."""
    if isinstance(value, np.ndarray) and value.ndim >= 2:
        reverse = tuple(range(value.ndim))[::-1]
        return np.asfortranarray(value) if value.ndim == 2 else \
            np.ascontiguousarray(value.transpose(reverse)).transpose(reverse)
    if type(value) in (tuple, list):
        return type(value)(map(relaid, value))
    return value


def close(a, b) -> bool:
    """`same`, floats to rounding: a reduction may add in another order in another layout."""
    if isinstance(a, np.ndarray | np.generic) and isinstance(b, np.ndarray | np.generic) and \
            a.dtype == b.dtype and a.dtype.kind in "fc" and np.shape(a) == np.shape(b):
        return bool(np.allclose(a, b, rtol=1e-5, atol=1e-6, equal_nan=True))
    if isinstance(a, tuple | list) and type(a) is type(b) and len(a) == len(b):
        return all(map(close, a, b))
    return same(a, b)


LAID_OUT = [(name, i) for name, i in CASES
            if any(a.ndim >= 2 for a in arrays_in(SAMPLES[name][i][0]))]
"""The samples with an array argument of rank 2 or more (one that has another layout)."""


@pytest.mark.parametrize("name, case", LAID_OUT, ids=[f"{n}-{i}" for n, i in LAID_OUT])
def test_kernels_compute_the_same_in_any_memory_layout(name, case):
    """Arguments Fortran-ordered or transposed give the C-ordered arguments' result: a kernel
    writing through a reshape it takes for a view would lose the write (cross entropy's
    gradient did, on transposed logits)."""
    op = registry.OPS[name]
    inputs, attrs = SAMPLES[name][case]
    attrs = op.full_attrs(attrs)
    want, printed = run(lambda: op.kernel(*copy.deepcopy(inputs), **attrs))
    got, relaid_printed = run(lambda: op.kernel(*relaid(copy.deepcopy(inputs)), **attrs))
    assert close(got, want) and printed == relaid_printed, (name, got, want)


def inplace_cases(op: OpDef) -> list[tuple[tuple, dict, int]]:
    """Samples whose result could overwrite input k: same shape and dtype, rank >= 1."""
    cases = []
    for inputs, attrs in SAMPLES.get(op.name, []):
        want, _ = run(lambda: op.kernel(*copy.deepcopy(inputs), **op.full_attrs(attrs)))
        for k, value in enumerate(inputs[:len(op.inputs)]):
            if isinstance(want, np.ndarray) and want.ndim and type_of(value) == type_of(want) \
                    and not op.inputs[k].startswith("*"):
                cases.append((inputs, attrs, k))
    return cases


INPLACE = [op for op in registry.OPS.values() if op.inplace]


@pytest.mark.parametrize("op", INPLACE, ids=lambda op: op.name)
def test_inplace_form_writes_the_kernel_result_into_the_input(op):
    allowed = {n.lstrip("*") for n in op.inputs} | set(op.attrs) | {"np", "out"} | \
        {h.__name__ for h in op.helpers} | set(dir(builtins))
    for inputs, attrs, k in inplace_cases(op):
        attrs = op.full_attrs(attrs)
        tree = ast.parse(op.inplace_template(attrs), mode="eval")
        star = variadic(op)
        dyn = {f"{star}_{i}" for i in range(len(inputs))} if star else set()
        assert free_names(tree) <= allowed | dyn, op.inplace_template(attrs)
        want = op.kernel(*copy.deepcopy(inputs), **attrs)
        buffers = list(copy.deepcopy(inputs))
        ns = {**namespace(op, tuple(buffers), attrs), "out": buffers[k]}
        got = eval(compile(tree, op.name, "eval"), {"__builtins__": builtins}, ns)
        assert got is buffers[k] and same(got, want), (op.name, k)


def test_inplace_forms_of_the_core_families_are_exercised():
    for family in (elementwise, reduce, shaping, joining, indexing, creation, adjoint):
        for op in family.OPS:
            assert not op.inplace or inplace_cases(op), f"{op.name}: no sample fits in place"


def test_numpy_and_method_spellings_exist():
    assert [n for n in registry.NUMPY if not callable(getattr(np, n, None))] == []
    assert [n for n in registry.METHODS if not callable(getattr(np.ndarray, n, None))] == []


def test_spellings_point_at_registered_ops():
    ops = set(registry.OPS.values())
    for table in (registry.FUNCTIONS, registry.NUMPY, registry.METHODS):
        for name, fn in table.items():
            assert fn.op in ops and fn.name == name, name
    for name, prim in registry.PRIMITIVES.items():
        assert prim.op in ops and prim.__name__ == name
    operators = [op.operator for op in ops if op.operator]
    assert len(operators) == len(set(operators))
