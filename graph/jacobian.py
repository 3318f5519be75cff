"""Forward mode and Jacobians as IR transforms, built on reverse mode (`autodiff.differentiate`).

Forward mode is the transpose of the linear backward: for a zero seed `u` on the output, the
backward computes `J^T u`, linear in `u`; differentiating it with respect to `u` against a
tangent `t` on the inputs gives `J t` exactly. So every op's gradient rule doubles as its tangent
rule (through If/While/For, sub-cells and early return, which reverse mode already handles) and
no op needs a second rule that could disagree with the first.

A Jacobian seeds the backward (or the forward mode) with a placeholder, then moves every node
that depends on the placeholder into a compiled For loop over the basis vectors: the forward
runs once, its saved values are read by each iteration, and the rows are stacked. That loop is
then batched like vmap's (graph/batching.py): every basis vector at once where the ops batch.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ..ops import Dyn
from .analysis import differentiable, reads_at_any_depth
from .autodiff import NotDifferentiable, differentiate
from .batching import vectorize
from .builder import Builder, InsertPoint
from .gradient import GradSpecError, Structure, as_value, position_groups, split_aux
from .ir import FOR, INDEX_TYPE, Block, Graph, Node, Value
from .types import AnyType, ListType, Scalar, Tensor, TupleType, Type


JVP, DERIVATIVE, JACFWD, JACREV, VMAP = "jvp", "derivative", "jacfwd", "jacrev", "vmap"


@dataclass(frozen=True)
class TransformRequest:
    """What a function transform computes. `kind`: JVP (called with the inputs, then one
    tangent per input), DERIVATIVE (the `order`-th derivative along ones), JACFWD or JACREV
    (Jacobians with respect to the arguments at `positions`; `single`: one int position, so the
    Jacobian is returned bare). `has_aux`: the function returns (output, *aux) and only the
    output is differentiated."""
    kind: str
    positions: tuple[int, ...] | None = None
    single: bool = True
    has_aux: bool = False
    order: int = 1
    in_axes: Any = 0
    """VMAP: the batch axis of each argument (an int, None: not batched, or a tuple per
    argument, nested like the arguments)."""
    out_axes: Any = 0
    """VMAP: where the batch axis goes in each output (an int, or a tuple per output)."""


def transform_graph(graph: Graph, request: TransformRequest, nargs: int) -> None:
    """Rewrite `graph` (the forward function, called with `nargs` positional arguments) in
    place into the function `request` describes; a JVP graph gains one tangent input per input
    array (arguments nargs.. of the call, shaped like the inputs)."""
    (result,) = graph.outputs
    inputs = dict(zip(graph.input_paths, graph.inputs[len(graph.param_paths):]))

    def arrays(p: int) -> list[Value]:
        return [v for path, v in inputs.items()
                if (path == str(p) or path.startswith(f"{p}.")) and isinstance(v.type, Tensor)]
    tangents = []
    if request.kind in (JVP, DERIVATIVE):  # NOTE: a Cell argument's Parameters are held fixed
        groups = [[v for v in arrays(p) if _by_position(path_of(inputs, v))]
                  for p in range(nargs)]
        if request.kind == JVP:  # NOTE: a tangent per array, in the order of `groups`
            for v in (v for group in groups for v in group):
                head, dot, rest = path_of(inputs, v).partition(".")
                tangents.append(graph.body.add_param(v.type, f"d{v.name}"))
                graph.input_paths = (*graph.input_paths, f"{int(head) + nargs}{dot}{rest}")
    else:
        groups = position_groups(request, nargs, arrays, None)
    b = Builder(InsertPoint.at_end(graph.body))
    found = transform_values(graph, b, 0, result, request, groups, tangents)
    graph.body.set_results([as_value(b, found)])


def path_of(inputs: dict[str, Value], value: Value) -> str:
    return next(path for path, v in inputs.items() if v is value)


def _by_position(path: str) -> bool:
    """An argument's array reached by position only (`1`, `0.2`), not a Cell attribute."""
    return all(part.isdigit() for part in path.split("."))


def transform_values(graph: Graph, b: Builder, start: int, result: Value,
                     request: TransformRequest, groups: list[list[Value]],
                     tangents: Sequence[Value] = ()) -> Structure:
    """What `request` returns for the forward nodes of `b`'s block from index `start` (which
    end the block) computing `result` from the arrays `groups` (per position: all positions
    for JVP and DERIVATIVE, the differentiated ones for Jacobians; `tangents` line up with
    them flattened, JVP only). Raises NotDifferentiable or GradSpecError."""
    out, aux = split_aux(b, result, request.has_aux,
                         lambda message, value: NotDifferentiable(message, value.producer))
    if any(isinstance(t, AnyType) for t in _leaf_types(out.type)):
        raise GradSpecError("the result has a different type on different paths (e.g. an "
                            "array on one and None, or another dtype, on another), so it "
                            "has no derivative", "return values of one type and dtype on "
                            "every path", out.producer.loc if out.producer else None)
    out = held(b, out)
    flat = [v for group in groups for v in group if v is not None]
    if request.kind in (JVP, DERIVATIVE):
        if request.kind == JVP:
            if len(tangents) != len(flat):
                raise GradSpecError(f"jvp: {len(flat)} input array(s) but {len(tangents)} "
                                    "tangent(s)", "give v the structure of the inputs")
            found = jvp_of(graph, b, start, out, flat, tangents)
        else:
            found = out
            for _ in range(request.order):  # NOTE: each order differentiates the one before
                ones = [b.op("ones_like", x) for x in flat]
                found = jvp_of(graph, b, start, found, flat, ones)
        return (out, found, aux) if request.has_aux else (out, found)
    make = jacfwd_of if request.kind == JACFWD else jacrev_of
    jacobians = dict(zip(flat, make(graph, b, start, out, flat)))
    packed = tuple(jacobians[g[0]] if len(g) == 1 else tuple(jacobians[v] for v in g)
                   for g in groups)
    found = packed[0] if request.single else packed
    return (found, aux) if request.has_aux else found


def jvp_of(graph: Graph, b: Builder, start: int, out: Value, inputs: Sequence[Value],
           tangents: Sequence[Value]) -> Value:
    """The tangent of `out` when `inputs` move along `tangents`: the nodes of `b`'s block from
    index `start` (the forward, ending the block) differentiated forwards. Appends at the end."""
    block = b.ip.block
    parts = tuple_leaves(b, out)  # NOTE: one seed per array: nested tuples stay flat
    leaves = [zeros_of(b, part) for part in parts]
    adjoints = differentiate(graph, dict(zip(parts, leaves)), list(inputs), block.nodes[start:])
    seeds: dict[Value, Value] = {}
    for adjoint, tangent in zip(adjoints, tangents):
        if adjoint is None:
            continue
        tangent = _as_type(b, tangent, adjoint.type)
        adjoint = held(b, adjoint)
        seeds[adjoint] = b.op("add", seeds[adjoint], tangent) if adjoint in seeds else tangent
    wanted = [leaf for leaf in leaves if _floating(leaf.type)]
    found = differentiate(graph, seeds, wanted, block.nodes[start:]) if seeds and wanted else []
    return _assemble(b, out, iter(leaves), dict(zip(wanted, found)))


def tuple_leaves(b: Builder, value: Value) -> list[Value]:
    """The non-tuple parts of `value` (itself when it is not a tuple)."""
    t = value.type
    if isinstance(t, TupleType):
        return [leaf for i in range(len(t.elements))
                for leaf in tuple_leaves(b, b.op("tuple_getitem", value, index=i))]
    return [value]


def _assemble(b: Builder, like: Value, leaves: Any, found: dict[Value, Value | None]) -> Value:
    """The tangent of `like` from its leaves' tangents (zeros where none flows)."""
    t = like.type
    if isinstance(t, TupleType):
        parts = [_assemble(b, b.op("tuple_getitem", like, index=i), leaves, found)
                 for i in range(len(t.elements))]
        if t.cls is tuple:
            return b.op("make_tuple", *parts)
        return b.op("make_namedtuple", *parts, cls=t.cls)
    leaf = next(leaves)
    tangent = found.get(leaf)
    return tangent if tangent is not None else zeros_of(b, like)


def jacrev_of(graph: Graph, b: Builder, start: int, out: Value, inputs: Sequence[Value]
              ) -> list[Value]:
    """d out / d input for each input, shaped out.shape + input.shape, by reverse mode: one
    backward per output element, in a compiled loop after the forward."""
    block = b.ip.block
    _check_tensor(out)
    seed = b.op("zeros_like", out, name="basis")
    adjoints = differentiate(graph, {out: seed}, list(inputs), block.nodes[start:])
    rows = list(adjoints)
    stacked = _basis_loop(b, seed, out, rows, list(inputs))
    return [_reshaped(b, s, [out, x], name="jacobian") for s, x in zip(stacked, inputs)]


def jacfwd_of(graph: Graph, b: Builder, start: int, out: Value, inputs: Sequence[Value]
              ) -> list[Value]:
    """The same Jacobians by forward mode: one tangent per input element, in a compiled loop
    after the forward (and the one backward forward mode is derived from)."""
    block = b.ip.block
    _check_tensor(out)
    cotangent = zeros_of(b, out)
    adjoints = differentiate(graph, {out: cotangent}, list(inputs), block.nodes[start:])
    found = []
    for x, adjoint in zip(inputs, adjoints):
        rank_out, rank_in = out.type.rank, x.type.rank
        if adjoint is None:
            found.append(b.op("zeros", shape=(*out.type.shape, *x.type.shape),
                              dtype=out.type.dtype))
            continue
        adjoint = held(b, adjoint)
        seed = b.op("zeros_like", adjoint, name="basis")
        (column,) = differentiate(graph, {adjoint: seed}, [cotangent], block.nodes[start:])
        (stacked,) = _basis_loop(b, seed, x, [column], [out])
        cols = _reshaped(b, stacked, [x, out])
        perm = tuple(range(rank_in, rank_in + rank_out)) + tuple(range(rank_in))
        found.append(b.op("transpose", cols, perm=perm, name="jacobian"))
    return found


def _leaf_types(t: Type) -> list[Type]:
    return [x for e in t.elements for x in _leaf_types(e)] if isinstance(t, TupleType) else [t]


def held(b: Builder, value: Value) -> Value:
    """`value` through an identity node. NOTE: differentiating expands some ops (dropout, the
    fused loss gradient) into others, which replaces their outputs: a seed or result kept in
    a dict must be a value no expansion replaces."""
    if isinstance(value.type, Tensor):
        return b.op("depend", value, name=value.name)
    return value


def zeros_of(b: Builder, value: Value) -> Value:
    """Zeros shaped like `value` (tuples element by element)."""
    t = value.type
    if isinstance(t, TupleType):
        return b.op("make_tuple", *(zeros_of(b, b.op("tuple_getitem", value, index=i))
                                    for i in range(len(t.elements))))
    if isinstance(t, Tensor):
        if t.is_static:
            return b.op("zeros", shape=t.shape, dtype=t.dtype)
        return b.op("zeros_like", value)
    if isinstance(t, ListType):
        return b.op("list_zeros_like", value)
    if t == Scalar(float):
        return b.constant(0.0)
    return b.constant(0)


def _floating(t: Type) -> bool:
    if isinstance(t, TupleType):
        return any(_floating(e) for e in t.elements)
    if isinstance(t, ListType):
        return _floating(t.element)
    return differentiable(t)


def _as_type(b: Builder, tangent: Value, t: Type) -> Value:
    if isinstance(t, Tensor) and isinstance(tangent.type, Tensor) and tangent.type.dtype != t.dtype:
        return b.op("cast", tangent, dtype=t.dtype)
    return tangent


def _check_tensor(out: Value) -> None:
    if not (isinstance(out.type, Tensor) and differentiable(out.type)):
        raise NotDifferentiable(f"a Jacobian needs a function returning one floating-point "
                                f"array, but it returns {out.type}", out.producer)


def _basis_loop(b: Builder, seed: Value, like: Value, results: list[Value | None],
                shapes: list[Value]) -> list[Value]:
    """Move every node after `seed`'s that depends on it (and every effect made after it) into
    a For loop over the basis vectors of `seed`'s shape; `results[k]` (None: zero) is computed
    each iteration and the iterations' values are stacked, shaped (seed.size, *shapes[k])."""
    block = b.ip.block
    seed_node = seed.producer
    assert seed_node is not None and seed_node.parent is block
    later = block.nodes[block.index(seed_node) + 1:]
    reached = {seed}
    moved = []
    for node in later:
        if node.effectful or reads_at_any_depth(node) & reached:
            moved.append(node)
            reached.update(node.outputs)
    t = seed.type
    assert isinstance(t, Tensor)
    size = int(np.prod(t.shape)) if t.is_static else None
    stop = b.constant(size) if size is not None else b.op("size", like)
    row_types = [ListType(r.type if r is not None else _zeros_type(x.type))
                 for r, x in zip(results, shapes)]
    ramp = b.op("arange", stop=size) if size is not None else b.op("arange", stop, stop=Dyn(0))
    eye = b.op("cast", b.op("eq", b.op("expand_dims", ramp, axis=1), ramp), dtype=t.dtype)
    identity = _reshaped(b, eye, [like], name="identity", leading=True)
    body = Block()
    index = body.add_param(INDEX_TYPE, "i")
    carried = [body.add_param(t, "rows") for t in row_types]
    inner = Builder(InsertPoint.at_end(body), b.loc)
    basis = inner.op("getitem", identity, index, index=(Dyn(0),), name="basis")
    for node in moved:
        block.remove(node)
        body.append(node)
    seed.replace_all_uses_with(basis)
    seed_node.erase()
    appended = []
    for rows, value, shaped in zip(carried, results, shapes):
        if value is seed:  # NOTE: the identity: the row is the basis vector itself
            value = basis
        elif value is None:
            value = _zeros_in(inner, shaped)
        appended.append(inner.op("list_append", rows, value, name="rows"))
    body.set_results(appended)
    loop = Node(FOR, [], {}, row_types, ["rows"] * len(results), [body], loc=b.loc)
    whole = vectorize(b, loop, stop)  # NOTE: every basis vector at once, where it batches
    if whole is not None:
        return whole
    empties = [b.op("list_new", name="rows") for _ in results]
    for v in (b.constant(0), stop, b.constant(1), *empties):
        loop._append_input(v)
    loop.control_inputs.extend(e.producer for e in empties)
    b.insert(loop)
    return [b.op("stack", out, axis=0) for out in loop.outputs]


def _reshaped(b: Builder, value: Value, sources: list[Value], name: str = "",
              leading: bool = False) -> Value:
    """`value` reshaped to the shapes of `sources` one after the other (sizes only known when
    the code runs read from the values); `leading`: one more axis in front, of the rest."""
    shape: list = [-1] if leading else []
    dims: list[Value] = []
    for source in sources:
        for axis, d in enumerate(source.type.shape):
            if isinstance(d, str):  # NOTE: UNKNOWN ("?"): no size expression names it
                dims.append(b.op("tuple_getitem", b.op("shape", source), index=axis))
                d = Dyn(len(dims) - 1)
            shape.append(d)
    return b.op("reshape", value, *dims, shape=tuple(shape), name=name)


def _zeros_type(t: Type) -> Type:
    assert isinstance(t, Tensor)
    return t


def _zeros_in(b: Builder, like: Value) -> Value:
    t = like.type
    assert isinstance(t, Tensor)
    return b.op("zeros", shape=t.shape, dtype=t.dtype) if t.is_static else \
        b.op("zeros_like", like)
