"""Lowering amber's optimized IR to ONNX nodes: ops through their `OpDef.onnx` rules, If
regions to `If`, While and For regions to `Loop`, tuples flattened depth-first.

A value lowers to a *structure*: an ONNX value name (a tensor or Python scalar, 0-d), a tuple
of structures (a tuple), None (None), or `Opaque` (a Python object ONNX has no form for, which
is an error only where an ONNX node or an output needs it).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, Mapping, Sequence

import numpy as np
from onnx import TensorProto, helper

from ...graph.ir import FOR, IF, WHILE, Block, Node, Value
from ...graph.sizes import plain_symbol
from ...ops.onnx import dtype_of, same
from ...ops.types import AnyType, NoneType, Scalar, Tensor, TupleType, Type
from .scope import OnnxRefusal, Scope

Env = dict[Value, Any]


@dataclass(frozen=True)
class Opaque:
    """A compile-time Python object (a string, a class, a layer) with no ONNX form."""
    what: str


class Undefined:
    """A variable not bound on this path (amber's `undefined`): the flags the IR carries keep
    it from being read there (a read that may happen is a `check_bound`, refused), so where a
    region merges it with a bound value it becomes zeros of that value's type."""


UNDEFINED = Undefined()


def leaf_types(t: Type, where: str = "value") -> list[Type]:
    """The tensor and scalar types of a structure's leaves, depth-first."""
    if isinstance(t, Tensor | Scalar):
        return [t]
    if isinstance(t, TupleType):
        return [leaf for e in t.elements for leaf in leaf_types(e, where)]
    if isinstance(t, NoneType):
        return []
    raise OnnxRefusal(f"a {where} of type {t} has no ONNX form (ONNX values are tensors; "
                      "tuples are flattened, lists of run-time length are not)", None)


def is_undefined(v: Value) -> bool:
    node = v.producer
    return node is not None and not node.is_region and node.op.name == "undefined"


def resolved(v: Value, seen: frozenset = frozenset()) -> Type | None:
    """`v`'s type; for a region output or loop variable typed `any` only because an unbound
    variable flows in on some path, the type of the values bound on the others (None where
    there are none, or they disagree)."""
    if not isinstance(v.type, AnyType):
        return v.type
    if is_undefined(v) or v in seen:
        return None
    seen = seen | {v}
    node, k = v.producer, v.index
    if node is not None and node.op == IF:
        candidates = [arm.results[k] for arm in node.blocks]
    elif node is not None and node.op in (WHILE, FOR):
        candidates = [node.inits[k], node.body.results[k]]
    elif isinstance(v.owner, Block) and _loop_slot(v) is not None:
        loop, slot = v.owner.owner_node, _loop_slot(v)
        candidates = [loop.inits[slot], loop.body.results[slot]]
    else:
        return None
    found = {t for t in (resolved(c, seen) for c in candidates) if t is not None}
    return found.pop() if len(found) == 1 else None


def _loop_slot(param: Value) -> int | None:
    """The carried slot a loop block's parameter holds (None: not a loop variable)."""
    loop = param.owner.owner_node
    if loop is None or loop.op not in (WHILE, FOR):
        return None
    return loop.slot_of(param)


def type_of(v: Value, what: str) -> Type:
    """`resolved(v)`, or a refusal naming what has no ONNX type."""
    t = resolved(v)
    if t is None:
        raise OnnxRefusal(f"a {what} of type {v.type} has no ONNX form (a value of another "
                          "kind, or none, on some path)", None)
    return t


def placeholder(scope: Scope, t: Type) -> list[str]:
    """Zeros standing for an unbound variable of type `t` (never read where unbound)."""
    names = []
    for leaf in leaf_types(t, "unbound variable"):
        shape = getattr(leaf, "shape", ())
        zero = scope.const(0, dtype_of(leaf))
        names.append(scope.node("Expand", zero, scope.shape(shape)) if shape else zero)
    return names


def leaves(structure: Any, t: Type, scope: Scope | None = None) -> list[str]:
    """The ONNX names of a structure's leaves, depth-first (as `leaf_types` orders them)."""
    if isinstance(structure, Undefined):
        if scope is None:
            raise OnnxRefusal("a variable unbound on some path has no ONNX form here", None)
        return placeholder(scope, t)
    if isinstance(structure, Opaque):
        raise OnnxRefusal(f"{structure.what} has no ONNX form", None)
    if isinstance(t, Tensor | Scalar):
        assert isinstance(structure, str), f"expected one ONNX value for {t}, got {structure!r}"
        return [structure]
    if isinstance(t, TupleType):
        if not isinstance(structure, tuple) or len(structure) != len(t.elements):
            raise OnnxRefusal(f"a tuple of type {t} has no ONNX form here", None)
        return [n for s, e in zip(structure, t.elements) for n in leaves(s, e, scope)]
    return []


def rebuild(t: Type, names: Iterator[str]) -> Any:
    """The structure of type `t` whose leaves are the next names of `names`."""
    if isinstance(t, Tensor | Scalar):
        return next(names)
    if isinstance(t, TupleType):
        return tuple(rebuild(e, names) for e in t.elements)
    return None


def value_info(name: str, t: Type) -> Any:
    """The ONNX type of a leaf: element type and shape (a plain symbol as a dim_param, any
    other symbolic or unknown size left open)."""
    dtype = dtype_of(t)
    shape = [d if isinstance(d, int) else plain_symbol(d) for d in getattr(t, "shape", ())]
    return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(dtype), shape)


class NodeEmitter:
    """`OnnxEmitter` (ops/onnx.py) for one amber node: a rule's view of the scope."""

    def __init__(self, scope: Scope, node: Node) -> None:
        self.scope, self.op = scope, node.name
        self.types = tuple(v.type for v in node.inputs)
        self.out_type = node.outputs[0].type if node.outputs else NoneType()
        self.attrs: Mapping[str, Any] = node.op_attrs

    def node(self, op_type: str, *inputs: str, outputs: int = 1, **attrs: Any) -> Any:
        return self.scope.node(op_type, *inputs, outputs=outputs, **attrs)

    def const(self, value: Any, dtype: Any = None) -> str:
        return self.scope.const(value, dtype)

    def cast(self, x: str, dtype: Any) -> str:
        return self.scope.cast(x, dtype)

    def shape(self, dims: Sequence[Any]) -> str:
        return self.scope.shape(dims)

    def size(self, d: Any) -> str:
        return self.scope.size(d)

    def refuse(self, why: str) -> Any:
        raise OnnxRefusal(f"{self.op}: {why}", self.scope.loc)


def lower_block(scope: Scope, block: Block, env: Env) -> None:
    """Lower every node of `block` into `scope`, binding each output in `env`."""
    for node in block.nodes:
        scope.loc = node.loc or scope.loc
        try:
            if node.op == IF:
                lower_if(scope, node, env)
            elif node.op == WHILE:
                lower_while(scope, node, env)
            elif node.op == FOR:
                lower_for(scope, node, env)
            elif node.is_region:  # NOTE: a try region: ONNX has no exceptions to catch
                raise OnnxRefusal(f"a {node.name} statement has no ONNX form (an ONNX graph "
                                  "cannot raise or catch exceptions)", node.loc)
            else:
                lower_op(scope, node, env)
        except OnnxRefusal as err:
            if err.loc is None:
                err.loc = node.loc
            raise


def lower_op(scope: Scope, node: Node, env: Env) -> None:
    name, op = node.name, node.op
    inputs = [env[v] for v in node.inputs]
    if name == "constant":
        env[node.output] = constant(scope, node.attrs["value"], node.output.type)
    elif name == "undefined":
        env[node.output] = UNDEFINED
    elif name in ("make_tuple", "make_namedtuple"):
        env[node.output] = tuple(inputs)
    elif name == "tuple_getitem":
        env[node.output] = inputs[0][node.attrs["index"]] if isinstance(inputs[0], tuple) \
            else Opaque(f"an item of {node.inputs[0].type}")
    else:
        if op.effects:
            raise OnnxRefusal(f"{name} has a side effect (printing, randomness, writing state "
                              "or raising), which an ONNX graph cannot have", node.loc)
        if op.onnx is None:
            raise OnnxRefusal(f"the op {name!r} has no ONNX form", node.loc)
        for v, s in zip(node.inputs, inputs):
            if isinstance(s, Opaque):
                raise OnnxRefusal(f"{name}: its input {s.what} has no ONNX form", node.loc)
        out = node.outputs[0]
        if isinstance(out.type, Tensor) and 0 in out.type.shape:
            # NOTE: an empty result needs no computing (and onnxruntime's Expand to a size-0
            # axis keeps size 1)
            env[out] = scope.const(np.zeros(out.type.shape, out.type.dtype))
            return
        rule = same(op.onnx) if isinstance(op.onnx, str) else op.onnx
        result = rule(NodeEmitter(scope, node), *inputs)
        if isinstance(result, str) and isinstance(out.type, Tensor | Scalar):
            scope.model.dtypes.setdefault(result, dtype_of(out.type))
        env[out] = result


def constant(scope: Scope, value: Any, t: Type) -> Any:
    """The structure of a compile-time constant."""
    if value is None:
        return None
    if isinstance(t, Tensor | Scalar):
        return scope.const(value, dtype_of(t))
    if isinstance(t, TupleType) and isinstance(value, tuple):
        return tuple(constant(scope, v, e) for v, e in zip(value, t.elements))
    return Opaque(f"the constant {type(value).__name__} {str(value)[:40]!r}")


def _subgraph(scope: Scope, name: str, inputs: list[Any], results: list[str],
              types: list[Type]) -> Any:
    """The graph of `scope`'s nodes with `results` (of leaf `types`) as fresh outputs."""
    outs = []
    for r, t in zip(results, types):
        out = scope.node("Identity", scope.cast(r, dtype_of(t)), hint=f"{name}_out")
        outs.append(value_info(out, t))
    return helper.make_graph(scope.nodes, scope.model.fresh(name), inputs, outs)


def truth(scope: Scope, value: Value, env: Env) -> str:
    """A condition as the bool 0-d tensor If and Loop want (a one-element array reshaped)."""
    name = scope.cast(env[value], np.bool_)
    if isinstance(value.type, Tensor) and value.type.rank:
        name = scope.node("Reshape", name, scope.const(np.array([], np.int64)), dtype=np.bool_)
    return name


def kind(t: Type) -> Any:
    """What a leaf is in Python: a Python number of some type, or an array of some dtype."""
    return ("number", t.kind) if isinstance(t, Scalar) else ("array", getattr(t, "dtype", None))


def same_kinds(got: Sequence[Value], want: Sequence[Value], what: str) -> None:
    """Refuse where a value's Python type depends on the path taken (an int on one branch, a
    float or an array on the other): ONNX fixes one type, eager Python would not."""
    for g, w in zip(got, want):
        if is_undefined(g):
            continue
        g_type, w_type = type_of(g, what), type_of(w, what)
        mine = [kind(t) for t in leaf_types(g_type, what)]
        theirs = [kind(t) for t in leaf_types(w_type, what)]
        if mine != theirs:
            raise OnnxRefusal(f"the Python type of a {what} depends on the path taken "
                              f"({g_type} vs {w_type}); cast it to one type", None)


def lower_if(scope: Scope, node: Node, env: Env) -> None:
    outs = [type_of(v, "branch result") for v in node.outputs]
    types = [leaf for t in outs for leaf in leaf_types(t, "branch result")]
    cond = truth(scope, node.inputs[0], env)
    arms = []
    for arm, label in ((node.then, "then"), (node.else_, "else")):
        same_kinds(arm.results, node.outputs, "branch result")
        sub = Scope(scope.model, scope)
        lower_block(sub, arm, env)
        results = [n for r, t in zip(arm.results, outs) for n in leaves(env[r], t, sub)]
        arms.append(_subgraph(sub, label, [], results, types))
    if not types:
        names: list[str] = []
    else:
        names = scope.node("If", cond, outputs=len(types), then_branch=arms[0],
                           else_branch=arms[1], hint="if_out")
        names = [names] if isinstance(names, str) else names
    _bind_outputs(scope, node, names, types, env)


def _bind_outputs(scope: Scope, node: Node, names: list[str], types: list[Type],
                  env: Env) -> None:
    it = iter(names)
    for name, t in zip(names, types):
        scope.model.dtypes[name] = dtype_of(t)
    for v in node.outputs:
        env[v] = rebuild(type_of(v, "region result"), it)


def _carried_inputs(scope: Scope, types: list[Type]) -> tuple[list[str], list[Any]]:
    """Fresh names and input infos for a Loop body's carried leaves."""
    names = [scope.model.fresh("carried") for _ in types]
    for n, t in zip(names, types):
        scope.model.dtypes[n] = dtype_of(t)
    return names, [value_info(n, t) for n, t in zip(names, types)]


def _bind_params(params: Sequence[Value], names: list[str], env: Env) -> None:
    it = iter(names)
    for p in params:
        env[p] = rebuild(type_of(p, "loop variable"), it)


def _loop_leaves(scope: Scope, node: Node, env: Env) -> tuple[list[Type], list[str]]:
    same_kinds(node.inits, node.outputs, "loop variable")
    same_kinds(node.body.results, node.outputs, "loop variable")
    outs = [type_of(v, "loop variable") for v in node.outputs]
    types = [leaf for t in outs for leaf in leaf_types(t, "loop variable")]
    inits = [n for v, t in zip(node.inits, outs) for n in leaves(env[v], t, scope)]
    return types, [scope.cast(n, dtype_of(t)) for n, t in zip(inits, types)]


def _loop_header(scope: Scope) -> tuple[str, str, list[Any]]:
    iteration = scope.model.fresh("iteration")
    cond_in = scope.model.fresh("cond_in")
    scope.model.dtypes.update({iteration: np.dtype(np.int64), cond_in: np.dtype(np.bool_)})
    return iteration, cond_in, [helper.make_tensor_value_info(iteration, TensorProto.INT64, []),
                                helper.make_tensor_value_info(cond_in, TensorProto.BOOL, [])]


def lower_while(scope: Scope, node: Node, env: Env) -> None:
    """`while cond(v): v = body(v)` as Loop(no trip count, cond(v0), v0), its body computing
    the next values and the condition on them."""
    types, inits = _loop_leaves(scope, node, env)
    _bind_params(node.cond.params, inits, env)
    lower_block(scope, node.cond, env)
    first = truth(scope, node.cond.results[0], env)
    body = Scope(scope.model, scope)
    _, _, header = _loop_header(body)
    carried, infos = _carried_inputs(body, types)
    _bind_params(node.body.params, carried, env)
    lower_block(body, node.body, env)
    nexts = [n for r, v in zip(node.body.results, node.outputs)
             for n in leaves(env[r], type_of(v, "loop variable"), body)]
    nexts = [body.cast(n, dtype_of(t)) for n, t in zip(nexts, types)]
    _bind_params(node.cond.params, nexts, env)
    lower_block(body, node.cond, env)
    again = truth(body, node.cond.results[0], env)
    graph = _subgraph(body, "while_body", header + infos, [again, *nexts],
                      [Scalar(bool), *types])
    # NOTE: a loop carrying nothing computes nothing a pure graph keeps (effects are refused)
    names = scope.node("Loop", "", first, *inits, outputs=len(types), body=graph,
                       hint="loop_out") if types else []
    names = [names] if isinstance(names, str) else names
    _bind_outputs(scope, node, names, types, env)


def lower_for(scope: Scope, node: Node, env: Env) -> None:
    """`for i in range(start, stop, step)` as Loop(trip count, true, v0): the trip count is
    max(0, (stop - start + step - sign(step)) / step) (truncating division is exact where it
    matters), the index start + iteration * step."""
    types, inits = _loop_leaves(scope, node, env)
    start, stop, step = (scope.size(env[v]) for v in node.bounds)
    span = scope.node("Sub", stop, start, dtype=np.int64)
    span = scope.node("Add", span, step, dtype=np.int64)
    span = scope.node("Sub", span, scope.node("Sign", step, dtype=np.int64), dtype=np.int64)
    trips = scope.node("Max", scope.node("Div", span, step, dtype=np.int64),
                       scope.const(0, np.int64), hint="trip_count", dtype=np.int64)
    body = Scope(scope.model, scope)
    iteration, cond_in, header = _loop_header(body)
    carried, infos = _carried_inputs(body, types)
    index = body.node("Add", start, body.node("Mul", iteration, step, dtype=np.int64),
                      hint=node.induction.name or "i", dtype=np.int64)
    env[node.induction] = index
    _bind_params(node.carried(node.body), carried, env)
    lower_block(body, node.body, env)
    nexts = [n for r, v in zip(node.body.results, node.outputs)
             for n in leaves(env[r], type_of(v, "loop variable"), body)]
    graph = _subgraph(body, "for_body", header + infos, [cond_in, *nexts],
                      [Scalar(bool), *types])
    names = scope.node("Loop", trips, scope.const(True, np.bool_), *inits,
                       outputs=len(types), body=graph, hint="loop_out") if types else []
    names = [names] if isinstance(names, str) else names
    _bind_outputs(scope, node, names, types, env)
