"""Binary elementwise ops (Python operators and two-input NumPy ufuncs) and select/clip, with
NumPy broadcasting; built with ops/elementwise.py's machinery.
"""
from __future__ import annotations

import operator as pyop
from typing import Any

import numpy as np

from . import onnx as ox
from . import native
from .elementwise import binary_op, elementwise_op, primitive, spell, ufunc_op
from .opdef import NO_GRAD, GradContext
from .types import NoneType


# ---- gradient rules: d(input) from the result's adjoint `ad.g` ---------------------------------

def _mod_grad(ad: GradContext) -> tuple[Any, ...]:  # x % y == x - floor(x / y) * y
    return ad.g, -ad.g * ad.op("floor", ad.input(0) / ad.input(1))


def _pow_grad(ad: GradContext) -> tuple[Any, ...]:
    x, y = ad.input(0), ad.input(1)
    dy = ad.g * ad.out * ad.op("log", x) if ad.wants(1) else None
    known = ad.constant(1)
    # NOTE: `y - 1` as a node would be an exponent known only at run time, whose result dtype
    # NumPy 1 decides by value; a Python-number exponent stays one (as eager's `x ** 3` is)
    if known is not None:
        return ad.g * known * x ** (known - 1), dy
    return ad.g * y * x ** (y - 1), dy


def _select_grad(ad: GradContext) -> tuple[Any, ...]:
    cond = ad.input(0)
    return None, ad.op("select", cond, ad.g, 0), ad.op("select", cond, 0, ad.g)


def _clip_grad(ad: GradContext) -> tuple[Any, ...]:
    x, lo, hi = ad.input(0), ad.types[1], ad.types[2]
    inside = ad.g
    below = above = None
    if lo != NoneType():
        inside = inside * (x >= ad.input(1))
        below = ad.g * (x < ad.input(1))
    if hi != NoneType():
        inside = inside * (x <= ad.input(2))
        above = ad.g * (x > ad.input(2))
    return inside, below, above


# ---- ops --------------------------------------------------------------------------------------

add = binary_op("add", pyop.add, "x + y", "add", operator="Add", commutative=True,
              grad=lambda ad: (ad.g, ad.g), numba=native.python_checked("R(x) + R(y)", native.py_add),
              onnx=ox.arithmetic("Add"))
sub = binary_op("sub", pyop.sub, "x - y", "subtract", operator="Sub",
              grad=lambda ad: (ad.g, -ad.g), numba=native.python_checked("R(x) - R(y)", native.py_sub),
              onnx=ox.arithmetic("Sub"))
mul = binary_op("mul", pyop.mul, "x * y", "multiply", operator="Mult", commutative=True,
              grad=lambda ad: (ad.g * ad.input(1), ad.g * ad.input(0)),
              numba=native.python_checked("R(x) * R(y)", native.py_mul), onnx=ox.arithmetic("Mul"))
# NOTE: Python scalars raise ZeroDivisionError/OverflowError, integer arrays raise on
# negative powers: these may raise on well-typed inputs
div = binary_op("div", pyop.truediv, "x / y", "true_divide", operator="Div", can_raise=True,
              grad=lambda ad: (ad.g / ad.input(1), -ad.g * ad.out / ad.input(1)),
              numba=native.python_checked("R(x) / R(y)", native.py_truediv), onnx=ox.true_divide)
floordiv = binary_op("floordiv", pyop.floordiv, "x // y", "floor_divide", operator="FloorDiv",
                   can_raise=True, grad=NO_GRAD,
                   numba=native.int_division(native.int_floordiv, native.py_floordiv),
                   onnx=ox.floor_divide)
mod = binary_op("mod", pyop.mod, "x % y", "remainder", operator="Mod", can_raise=True,
              grad=_mod_grad, numba=native.int_division(native.int_mod, native.py_mod),
              onnx=ox.remainder)
pow_ = binary_op("pow", pyop.pow, "x ** y", operator="Pow", can_raise=True, grad=_pow_grad,
               numba=native.power, onnx=ox.power)
"""No in-place form: `x ** 2` and `x ** 0.5` take NumPy fast paths `np.power` does not."""
maximum = ufunc_op("maximum", np.maximum, commutative=True, grad=lambda ad: (
    ad.g * (ad.input(0) >= ad.input(1)), ad.g * (ad.input(0) < ad.input(1))),
    numba=native.fixed(native.MAXIMUM), onnx=ox.arithmetic("Max"))
minimum = ufunc_op("minimum", np.minimum, commutative=True, grad=lambda ad: (
    ad.g * (ad.input(0) <= ad.input(1)), ad.g * (ad.input(0) > ad.input(1))),
    numba=native.fixed(native.MINIMUM), onnx=ox.arithmetic("Min"))
def _arctan2_grad(ad: GradContext) -> tuple[Any, ...]:
    y, x = ad.input(0), ad.input(1)
    squared = y * y + x * x
    return ad.g * x / squared, -ad.g * y / squared


arctan2 = ufunc_op("arctan2", np.arctan2, grad=_arctan2_grad, numba="np.arctan2(R(x), R(y))")
hypot = ufunc_op("hypot", np.hypot, commutative=True, grad=lambda ad: (
    ad.g * ad.input(0) / ad.out, ad.g * ad.input(1) / ad.out), numba="np.hypot(R(x), R(y))",
    onnx=ox.hypot)
fmod = ufunc_op("fmod", np.fmod, grad=lambda ad: (  # NOTE: x - trunc(x / y) * y
    ad.g, -ad.g * ad.op("trunc", ad.input(0) / ad.input(1))))
logaddexp = ufunc_op("logaddexp", np.logaddexp, commutative=True, grad=lambda ad: (
    ad.g * ad.op("exp", ad.input(0) - ad.out), ad.g * ad.op("exp", ad.input(1) - ad.out)),
    numba="np.logaddexp(R(x), R(y))")
eq = binary_op("eq", pyop.eq, "x == y", "equal", operator="Eq", commutative=True, grad=NO_GRAD,
             numba="T(x) == T(y)", onnx=ox.compare_numbers("Equal"))
ne = binary_op("ne", pyop.ne, "x != y", "not_equal", operator="NotEq", commutative=True,
             grad=NO_GRAD, numba="T(x) != T(y)", onnx=ox.compare_numbers("Equal", negate=True))
lt = binary_op("lt", pyop.lt, "x < y", "less", operator="Lt", grad=NO_GRAD, numba="T(x) < T(y)",
             onnx=ox.compare_numbers("Less"))
le = binary_op("le", pyop.le, "x <= y", "less_equal", operator="LtE", grad=NO_GRAD,
             numba="T(x) <= T(y)", onnx=ox.compare_numbers("LessOrEqual"))
gt = binary_op("gt", pyop.gt, "x > y", "greater", operator="Gt", grad=NO_GRAD, numba="T(x) > T(y)",
             onnx=ox.compare_numbers("Greater"))
ge = binary_op("ge", pyop.ge, "x >= y", "greater_equal", operator="GtE", grad=NO_GRAD,
             numba="T(x) >= T(y)", onnx=ox.compare_numbers("GreaterOrEqual"))
logical_and = ufunc_op("logical_and", np.logical_and, commutative=True, grad=NO_GRAD,
                     numba="T(x) != T(0) and T(y) != T(0)", onnx=ox.logical("And"))
logical_or = ufunc_op("logical_or", np.logical_or, commutative=True, grad=NO_GRAD,
                    numba="T(x) != T(0) or T(y) != T(0)", onnx=ox.logical("Or"))
logical_xor = ufunc_op("logical_xor", np.logical_xor, commutative=True, grad=NO_GRAD,
                     numba="(T(x) != T(0)) != (T(y) != T(0))", onnx=ox.logical("Xor"))
bitwise_and = binary_op("bitwise_and", pyop.and_, "x & y", "bitwise_and", operator="BitAnd",
                      commutative=True, grad=NO_GRAD, numba="R(x) & R(y)")
bitwise_or = binary_op("bitwise_or", pyop.or_, "x | y", "bitwise_or", operator="BitOr",
                     commutative=True, grad=NO_GRAD, numba="R(x) | R(y)")
left_shift = binary_op("left_shift", pyop.lshift, "x << y", "left_shift", operator="LShift",
                     grad=NO_GRAD)
right_shift = binary_op("right_shift", pyop.rshift, "x >> y", "right_shift", operator="RShift",
                      grad=NO_GRAD)
bitwise_xor = binary_op("bitwise_xor", pyop.xor, "x ^ y", "bitwise_xor", operator="BitXor",
                      commutative=True, grad=NO_GRAD, numba="R(x) ^ R(y)")
select = elementwise_op("select", ("cond", "x", "y"), np.where, "np.where(cond, x, y)", grad=_select_grad,
             numba="R(x) if cond else R(y)", onnx=ox.select)
clip = elementwise_op("clip", ("x", "lo", "hi"), np.clip, "np.clip(x, lo, hi)", nullable=True,
           inplace="np.clip(x, lo, hi, out=out)", grad=_clip_grad, numba=native.clip_spelling,
           onnx=ox.clip)
"""`lo`/`hi` are inputs (tensors, scalars, or None for no bound), as in NumPy."""


# ---- spellings --------------------------------------------------------------------------------

def _clip_bounds(values: dict[str, Any]) -> dict[str, Any]:
    # np.clip(a, a_min, a_max) or np.clip(a, min=..., max=...)
    lo, hi = values.pop("min"), values.pop("max")
    values["lo"] = values["lo"] if lo is None else lo
    values["hi"] = values["hi"] if hi is None else hi
    return values


_BINARY = (
    (add, ("add",), ("add",), "Add"),
    (sub, ("sub", "subtract"), ("subtract",), "Sub"),
    (mul, ("mul", "multiply"), ("multiply",), "Mul"),
    (div, (), ("divide", "true_divide"), None),
    (floordiv, ("floor_div", "floor_divide"), ("floor_divide",), "FloorDiv"),
    (mod, ("floor_mod", "remainder"), ("mod", "remainder"), "FloorMod"),
    (pow_, ("pow",), ("power", "pow"), "Pow"),
    (maximum, ("maximum",), ("maximum",), "Maximum"),
    (arctan2, ("atan2", "arctan2"), ("arctan2",), "Atan2"),
    (hypot, ("hypot",), ("hypot",), None),
    (fmod, ("fmod",), ("fmod",), None),
    (logaddexp, ("logaddexp",), ("logaddexp",), None),
    (minimum, ("minimum",), ("minimum",), "Minimum"),
    (eq, ("equal", "eq"), ("equal",), "Equal"),
    (ne, ("not_equal", "ne"), ("not_equal",), "NotEqual"),
    (lt, ("less", "lt"), ("less",), "Less"),
    (le, ("less_equal", "le"), ("less_equal",), "LessEqual"),
    (gt, ("greater", "gt"), ("greater",), "Greater"),
    (ge, ("greater_equal", "ge"), ("greater_equal",), "GreaterEqual"),
    (logical_and, ("logical_and",), ("logical_and",), "LogicalAnd"),
    (logical_or, ("logical_or",), ("logical_or",), "LogicalOr"),
    (logical_xor, ("logical_xor",), ("logical_xor",), "LogicalXor"),
    (bitwise_and, ("bitwise_and",), ("bitwise_and",), "BitwiseAnd"),
    (bitwise_or, ("bitwise_or",), ("bitwise_or",), "BitwiseOr"),
    (bitwise_xor, ("bitwise_xor",), ("bitwise_xor",), "BitwiseXor"),
    (left_shift, ("left_shift",), ("left_shift",), "LeftShift"),
    (right_shift, ("right_shift",), ("right_shift",), "RightShift"),
)

OPS = (add, sub, mul, div, floordiv, mod, pow_, maximum, minimum, arctan2, hypot, fmod,
       logaddexp, eq, ne, lt, le, gt, ge, logical_and, logical_or, logical_xor, bitwise_and,
       bitwise_or, bitwise_xor, left_shift, right_shift, select, clip)

FUNCTIONS = (
    *(spell(n, op, "input, other", input="x", other="y")
      for op, names, _, _ in _BINARY for n in names),
    spell("select", select, "cond, x, y"),
    spell("where", select, "condition, input, other", condition="cond", input="x", other="y"),
    spell("clip_by_value", clip, "x, clip_value_min=None, clip_value_max=None",
          clip_value_min="lo", clip_value_max="hi"),
    spell("clamp", clip, "input, min=None, max=None", input="x", min="lo", max="hi"),
    spell("clip", clip, "input, min=None, max=None", input="x", min="lo", max="hi"),
)
NUMPY = (
    *(spell(n, op, "x1, x2, /", x1="x", x2="y") for op, _, names, _ in _BINARY for n in names),
    spell("where", select, "condition, x, y, /", condition="cond"),
    spell("clip", clip, "a, a_min=None, a_max=None, *, min=None, max=None", _clip_bounds, a="x",
          a_min="lo", a_max="hi"),
)
METHODS = (
    spell("clip", clip, "x, min=None, max=None", min="lo", max="hi"),
)
PRIMITIVES = (
    *(primitive(p, op, call="x, y") for op, _, _, p in _BINARY if p),
    primitive("Select", select, call="cond, x, y"),
)
