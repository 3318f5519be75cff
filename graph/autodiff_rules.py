"""What a gradient rule sees (`Sym`, `_RuleContext`: the `GradContext` of ops/opdef.py), how an
adjoint is summed back to its input's shape (`_fit`), and the ops differentiated through their
expansion (`_expand`)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Sequence

from ..ops import OpDef
from .builder import Builder, InsertPoint
from .ir import Block, Node, Value
from .types import Scalar, Tensor, TupleType, Type

if TYPE_CHECKING:
    from .autodiff import Adjoint, TupleAdjoint, _Scope, _Transform


# -- what a rule sees -----------------------------------------------------------------------

class Sym:
    """A value inside a gradient rule: arithmetic on it builds IR nodes. Lazily: a node is made
    only when an adjoint that needs it is used, so a rule may state every input's adjoint and
    only the wanted ones cost anything (and only their forward values are saved)."""
    __slots__ = ("ctx", "_value", "_make")

    def __init__(self, ctx: _RuleContext, value: Value | None = None,
                 make: Callable[[], Value] | None = None) -> None:
        self.ctx, self._value, self._make = ctx, value, make

    @property
    def value(self) -> Value:
        if self._value is None:
            assert self._make is not None
            self._value, self._make = self._make(), None
        return self._value

    @property
    def type(self) -> Type:
        return self.value.type

    def _bin(self, op: str, other: Any, swap: bool = False) -> Sym:
        a, b = (other, self) if swap else (self, other)
        return self.ctx.op(op, a, b)

    def __add__(self, o: Any) -> Sym: return self._bin("add", o)
    def __radd__(self, o: Any) -> Sym: return self._bin("add", o, True)
    def __sub__(self, o: Any) -> Sym: return self._bin("sub", o)
    def __rsub__(self, o: Any) -> Sym: return self._bin("sub", o, True)
    def __mul__(self, o: Any) -> Sym: return self._bin("mul", o)
    def __rmul__(self, o: Any) -> Sym: return self._bin("mul", o, True)
    def __truediv__(self, o: Any) -> Sym: return self._bin("div", o)
    def __rtruediv__(self, o: Any) -> Sym: return self._bin("div", o, True)
    def __pow__(self, o: Any) -> Sym: return self._bin("pow", o)
    def __matmul__(self, o: Any) -> Sym: return self._bin("matmul", o)
    def __neg__(self) -> Sym: return self.ctx.op("neg", self)
    def __gt__(self, o: Any) -> Sym: return self._bin("gt", o)
    def __ge__(self, o: Any) -> Sym: return self._bin("ge", o)
    def __lt__(self, o: Any) -> Sym: return self._bin("lt", o)
    def __le__(self, o: Any) -> Sym: return self._bin("le", o)
    def __eq__(self, o: Any) -> Sym: return self._bin("eq", o)  # type: ignore[override]
    def __ne__(self, o: Any) -> Sym: return self._bin("ne", o)  # type: ignore[override]
    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Sym({self._value!r})" if self._value is not None else "Sym(<lazy>)"


class _RuleContext:
    """The `GradContext` (ops/opdef.py) of one node's rule."""

    def __init__(self, transform: _Transform, scope: _Scope, node: Node, g: Adjoint) -> None:
        self.transform, self.scope, self.node = transform, scope, node
        self.attrs = node.op_attrs
        self.types = tuple(v.type for v in node.inputs)
        self.out_type = node.output.type
        if isinstance(g, list):
            self.gs = [None if x is None else Sym(self, x) for x in g]
            self.g = Sym(self, make=lambda: transform.materialize(scope, g, node.output))
        else:
            self.g = Sym(self, g)

    def input(self, k: int) -> Sym:
        return Sym(self, make=lambda: self.transform.primal(self.scope, self.node.inputs[k]))

    def wants(self, k: int) -> bool:
        """True if input k takes an adjoint (worth computing)."""
        return self.node.inputs[k] in self.transform.active

    def constant(self, k: int) -> Any:
        producer = self.node.inputs[k].producer
        if producer is None or producer.is_region or producer.op.name != "constant":
            return None
        value = producer.attrs.get("value")
        return value if type(value) in (int, float) else None

    @property
    def out(self) -> Sym:
        return Sym(self, make=lambda: self.transform.primal(self.scope, self.node.output))

    def op(self, op: OpDef | str, *inputs: Any, **attrs: Any) -> Sym:
        def make() -> Value:
            return self.scope.builder.op(op, *(self.value_of(x) for x in inputs), **attrs)
        return Sym(self, make=make)

    def value_of(self, x: Any) -> Value:
        if isinstance(x, Sym):
            return x.value
        if isinstance(x, Value):
            return x
        return self.scope.builder.constant(x)

    def tuple_part(self, index: int, adjoint: Sym) -> TupleAdjoint:
        """The adjoint of a tuple input when only element `index` receives `adjoint`."""
        t = self.types[0]
        assert isinstance(t, TupleType)
        parts: TupleAdjoint = [None] * len(t.elements)
        parts[index] = adjoint
        return parts

    def fit(self, adjoint: Any, value: Value) -> Adjoint:
        """`adjoint` summed back to `value`'s shape and dtype (undoing broadcasting)."""
        if isinstance(adjoint, list):
            t = value.type
            parts = [None if a is None else self.value_of(a) for a in adjoint]
            if not isinstance(t, TupleType):
                return parts
            # NOTE: a tuple element's adjoint kept element by element too (a nested tuple's
            # rule may give it whole), so a rule below it finds a TupleAdjoint
            return [p if p is None or isinstance(p, list) else
                    self.transform.split(self.scope, p, e) for p, e in zip(parts, t.elements)]
        like = None
        if isinstance(value.type, Tensor) and not value.type.is_symbolic:
            like = self.transform.primal(self.scope, value)  # NOTE: its run-time shape
        return _fit(self.scope.builder, self.value_of(adjoint), value.type, like)


def _undecided(shape: tuple, target: tuple) -> bool:
    """Whether summing `shape` back to `target` depends on sizes only a call knows: a target
    dim that is not an int and not the same as the adjoint's (it may be 1 at run time)."""
    lead = len(shape) - len(target)
    return any(not isinstance(t, int) and t != shape[lead + i] for i, t in enumerate(target))


def _fit(b: Builder, g: Value, target: Type, like: Value | None = None) -> Value:
    """`g` summed over the axes broadcasting added to reach `target`'s shape, cast to its dtype.
    Where `target` has run-time sizes ("?"), the shape of `like` (the value `target` types)
    decides when the code runs: only then is it known whether broadcasting stretched it."""
    if isinstance(target, Scalar):
        if isinstance(g.type, Tensor):
            g = b.op("sum", g) if g.type.rank else g
            return b.op("float", g)
        return g
    if not isinstance(target, Tensor):
        return g
    if isinstance(g.type, Scalar):
        return b.op("full", g, shape=target.shape, dtype=target.dtype)
    shape = g.type.shape
    if not target.is_symbolic and like is not None and g.type.rank >= target.rank:
        g = b.op("sum_to", g, like, shape=target.shape)  # NOTE: "?" may be 1, or differ
    elif shape != target.shape and target.is_symbolic and _undecided(shape, target.shape):
        g = b.op("sum_to", g, shape=target.shape)  # NOTE: a symbolic size may be 1
    elif shape != target.shape:
        lead = len(shape) - target.rank
        axes = tuple(range(lead)) + tuple(
            lead + i for i, d in enumerate(target.shape) if d == 1 and shape[lead + i] != 1)
        if axes:
            g = b.op("sum", g, axis=axes, keepdims=False)
        if g.type.shape != target.shape:
            g = b.op("reshape", g, shape=target.shape)
    if g.type.dtype != target.dtype:
        g = b.op("cast", g, dtype=target.dtype)
    return g


# -- ops differentiated through their expansion (dropout: its mask) -----------------------

class _ExpandContext:
    """What an OpDef's `expand` sees: the node's inputs, and ops built before the node."""

    def __init__(self, node: Node) -> None:
        self.node = node
        self.attrs = node.op_attrs
        self.types = tuple(v.type for v in node.inputs)
        self.out_type = node.output.type
        self.builder = Builder(InsertPoint.before(node), node.loc)
        self.made: list[Node] = []

    def input(self, k: int) -> Sym:
        return Sym(self, self.node.inputs[k])  # type: ignore[arg-type]

    def op(self, op: OpDef | str, *inputs: Any, **attrs: Any) -> Sym:
        value = self.builder.op(op, *(self.value_of(x) for x in inputs), **attrs)
        self.made.append(value.producer)
        return Sym(self, value)  # type: ignore[arg-type]

    def value_of(self, x: Any) -> Value:
        return x.value if isinstance(x, Sym) else x if isinstance(x, Value) else \
            self.builder.constant(x)


def _expand(nodes: Sequence[Node]) -> list[Node]:
    """Replace every node (at any depth) whose op has an `expand` by that expansion, keeping
    effect order; returns `nodes` with the top-level replacements."""
    if not nodes:
        return []
    block = nodes[0].parent
    first = block.index(nodes[0])
    for node in [n for top in nodes for n in top.walk()]:
        if node.is_region or node.op.expand is None:
            continue
        ctx = _ExpandContext(node)
        result = ctx.value_of(node.op.expand(ctx))
        effects = [n for n in ctx.made if n.effectful]
        for n in effects:
            n.control_inputs = list(node.control_inputs)
        after = effects[-1:] or list(node.control_inputs)
        for user in _root(block).walk():
            if node in user.control_inputs:
                user.control_inputs = [c for c in user.control_inputs if c is not node] + after
        node.output.replace_all_uses_with(result)
        node.erase()
    return block.nodes[first:]


def _root(block: Block) -> Block:
    """The outermost block holding `block` (the graph body)."""
    while block.owner_node is not None:
        block = block.owner_node.parent
    return block
