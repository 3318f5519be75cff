"""`OpDef`: everything amber knows about one tensor operation, declared once.

An op has tensor *inputs* (values, known at run time) and *attributes* (Python constants fixed at
compile time: axes, strides, dtypes). The public spellings users write (`ops.reduce_mean`,
`np.mean`, `x.mean()`, `ops.ReduceMean(keep_dims=True)`) are `OpFunction`s and `Primitive`s: each
binds the user's arguments to (inputs, attrs) of its op, eagerly and in the frontend alike.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Protocol

from .types import Type

Binder = Callable[..., tuple[tuple[Any, ...], dict[str, Any]]]
"""Maps a spelling's arguments to `(inputs, attrs)` of its op, without looking at input values."""


@dataclass(frozen=True, slots=True, eq=False)
class OpDef:
    """One tensor operation.

    - `inputs`: names of the tensor inputs, in order. A sequence input (concat, stack) is one
      input holding a tuple or list value.
    - `attrs`: attribute names with their defaults (`REQUIRED` when there is none).
    - `kernel(*inputs, **attrs)`: the eager NumPy implementation; constant folding runs it too.
    - `infer(*input_types, **attrs) -> Type`: the shape/dtype rule; raises ValueError or
      TypeError with a message naming the op and the shapes when the inputs do not fit.
    - `emit`: how generated code spells the op: a Python expression whose free names are the
      input and attribute names (`"np.maximum(x, 0)"`), or `emit(attrs) -> str` picking one.
    - `helpers`: module-level functions (NumPy only) the emitted expression calls; codegen copies
      their source into the generated module.
    - `grad(ad) -> tuple`: the vector-Jacobian rule, written with other ops through a
      `GradContext` (below): one input adjoint per input (None where none flows), which autodiff
      sums back to each input's shape. `NO_GRAD` declares the op's result constant in its inputs
      almost everywhere (comparisons, argmax, shape queries, random draws); None: no rule, so
      differentiating through the op is an error.
    - `effects`: the op has a side effect (printing, randomness, writing state): never folded,
      merged or removed, and ordered by control edges.
    - `can_raise`: the op may raise on valid-typed inputs (e.g. indexing out of range), so it is
      not hoisted out of a loop that may run zero times.
    """
    name: str
    inputs: tuple[str, ...]
    kernel: Callable[..., Any]
    infer: Callable[..., Type]
    emit: str | Callable[[Mapping[str, Any]], str]
    attrs: Mapping[str, Any] = field(default_factory=dict)
    helpers: tuple[Callable[..., Any], ...] = ()
    grad: Callable[[GradContext], tuple[Any, ...]] | None = None
    effects: bool = False
    can_raise: bool = False
    commutative: bool = False
    elementwise: bool = False
    operator: str | None = None
    """The Python AST operator class name this op implements (`"Add"` for `+`, `"USub"`, `"Lt"`)."""
    fresh: bool = False
    """The result is a newly allocated array (or a scalar) sharing memory with no input, so a
    later op may overwrite it once nothing else reads it (ufuncs, matmul, conv, reductions)."""
    fresh_items: bool = False
    """With `fresh`, for a tuple result: its items are distinct arrays sharing memory with no
    input nor each other, so a later op may overwrite one taken out of the tuple once."""
    inplace: str | Callable[[Mapping[str, Any]], str] | None = None
    """The op writing its result into an existing buffer `out` of the result's shape and dtype
    (`"np.add(x, y, out=out)"`, or a function of the attributes as `emit` may be); set for ops
    fusion and memory planning may run in place. `out` is any input of an elementwise op, the
    first input of any other."""
    into: Callable[[Mapping[str, Any]], str | None] | None = None
    """`into(attrs)`: the op writing its result into a buffer `out` of the result's shape and
    dtype that shares no memory with the inputs (`"np.matmul(x, y, out=out)"`), or None for
    attributes without one; where memory planning may place a result (a stack's row).
    Elementwise ops use their in-place form."""
    into_order: Callable[[Mapping[str, Any]], str] | None = None
    """`into_order(attrs)`: the memory order ("C" or "F") of a buffer `into` writes fastest,
    where it is not "C" (a turned matmul writes its result's transpose); a kept buffer
    (codegen/buffers.py) is made in it. Any order computes the same numbers."""
    specialize: Callable[[tuple[Type, ...], Mapping[str, Any]], Spelling | None] | None = None
    """`specialize(input_types, attrs)`: a faster spelling for these static input types (conv2d
    with its window geometry fixed, `x.sum()` for a tensor), or None where `emit` serves."""
    writes: int | None = None
    """The input the op writes in place (`setitem`, `assign`, `list_append`: 0); its result is
    that very object."""
    same_object: bool = False
    """The op's array result is input 0 itself, not a copy or a view (`setitem`, `depend`)."""
    reads_only: bool = False
    """An effect that only looks at its inputs: it neither writes them nor keeps them (`print`,
    `assert`)."""
    expand: Callable[[GradContext], Any] | None = None
    """`expand(ad) -> value`: the op as simpler ops, built where autodiff needs its internals
    (dropout's mask); otherwise the op stays whole."""
    static: Callable[..., Any] | None = None
    """`static(*input_types, **attrs)`: the result when the input *types* alone decide it (the
    shape of a tensor whose dims are all known, its rank or dtype), else None. The frontend
    uses it as a compile-time value instead of a node, as MindSpore folds `ops.shape(x)`."""
    numba: str | Callable[[tuple[Type, ...], Mapping[str, Any]], Spelling | None] | None = None
    """How a Numba kernel (codegen/native) computes the op, or None: a loop using it stays in
    NumPy. For an `elementwise` op, the expression of one result element over the input names,
    with NumPy's casts written out: `R` is the result's scalar type, `T` the inputs' common one
    (`"R(x) + R(y)"`, `"np.tanh(R(x))"`; see codegen/native/elements.py).
    For other ops, an expression over whole values (`"np.dot(x, y)"`), with the same view or
    copy behaviour as the NumPy spelling. A callable picks a `Spelling` (its helpers are
    Numba-compatible functions copied into the module) for these input types and attributes,
    or returns None where the op has no Numba form for them."""

    batch: Callable[[BatchContext], Any] | None = None
    """vmap's batching rule (graph/batching.py): the op applied to a whole batch, the batched
    inputs carrying the batch axis first, returning the batched result (batch axis first), or
    None where these inputs have no rule; then, or without a rule, vmap runs the op in a
    compiled loop over the examples (shown in `amber dump`)."""
    onnx: str | Callable[..., Any] | None = None
    """How the ONNX target (codegen/onnx) computes the op, or None: exporting a graph using it is
    a CompileError at the user's line naming the op. An ONNX operator name (`"Tanh"`) for an
    elementwise op whose inputs are cast to the result's dtype first; else a rule
    `rule(e, *inputs)` over an `OnnxEmitter` (ops/onnx.py) and the inputs' ONNX names (a tuple
    for a tuple input, None for None), returning the result's name (a tuple for a tuple)."""

    def numba_spelling(self, types: tuple[Type, ...], attrs: Mapping[str, Any]
                       ) -> Spelling | None:
        """How a Numba kernel computes this op on inputs of `types` (see `numba`), or None."""
        if self.numba is None or isinstance(self.numba, str):
            return None if self.numba is None else Spelling(self.numba, dict(attrs))
        return self.numba(types, attrs)

    def template(self, attrs: Mapping[str, Any]) -> str:
        """The emit expression for these attribute values."""
        return self.emit if isinstance(self.emit, str) else self.emit(attrs)

    def into_template(self, attrs: Mapping[str, Any]) -> str | None:
        """The expression writing the result into a fresh buffer `out`, or None (see `into`)."""
        if self.into is not None:
            return self.into(attrs)
        return self.inplace_template(attrs) if self.elementwise and self.inplace else None

    def buffer_order(self, attrs: Mapping[str, Any]) -> str:
        """The memory order of a buffer for `into_template` (see `into_order`)."""
        return "C" if self.into_order is None else self.into_order(attrs)

    def inplace_template(self, attrs: Mapping[str, Any]) -> str:
        """The in-place expression for these attribute values."""
        assert self.inplace is not None, f"{self.name} has no in-place form"
        return self.inplace if isinstance(self.inplace, str) else self.inplace(attrs)

    def spelling(self, types: tuple[Type, ...], attrs: Mapping[str, Any]) -> Spelling:
        """How generated code computes this op on inputs of `types`: `specialize`'s choice,
        else `emit` with the op's helpers."""
        special = self.specialize(types, attrs) if self.specialize is not None else None
        return special or Spelling(self.template(attrs), dict(attrs), self.helpers)

    def full_attrs(self, attrs: Mapping[str, Any]) -> dict[str, Any]:
        """`attrs` completed with defaults; raises TypeError naming unknown or missing ones."""
        unknown = set(attrs) - set(self.attrs)
        if unknown:
            raise TypeError(f"{self.name}: unknown attribute(s) {', '.join(sorted(unknown))}")
        full = {**self.attrs, **attrs}
        missing = [k for k, v in full.items() if v is REQUIRED]
        if missing:
            raise TypeError(f"{self.name}: missing attribute(s) {', '.join(missing)}")
        return full

    def __call__(self, *inputs: Any, **attrs: Any) -> Any:
        """Run the kernel eagerly on canonical (inputs, attrs)."""
        return self.kernel(*inputs, **self.full_attrs(attrs))


def NO_GRAD(ad: GradContext) -> tuple[Any, ...]:
    """The `grad` of an op whose result does not vary with its inputs (almost everywhere)."""
    return ()


class GradContext(Protocol):
    """What a gradient rule sees (graph/autodiff.py implements it). Its values are symbols that
    build IR nodes: `+ - * / ** @`, unary `-` and comparisons work on them and on Python
    numbers, so a rule reads like the derivative it states."""
    g: Any
    """The adjoint of the op's result."""
    attrs: Mapping[str, Any]
    """The node's attributes, defaults filled in."""
    types: tuple[Type, ...]
    """The input types; `out_type` is the result's."""
    out_type: Type

    def input(self, k: int) -> Any:
        """Input k's forward value, as the backward pass can read it."""

    def wants(self, k: int) -> bool:
        """True if input k takes an adjoint (a rule may skip work for the others)."""

    def constant(self, k: int) -> Any:
        """Input k's value when it is a compile-time Python number, else None (a rule may
        then fold arithmetic on it rather than build nodes whose dtype a value decides)."""

    @property
    def out(self) -> Any:
        """The op's forward result, as the backward pass can read it."""

    def op(self, op: OpDef | str, *inputs: Any, **attrs: Any) -> Any:
        """Another op applied to symbols or constants."""


class BatchContext(Protocol):
    """What a batching rule sees (graph/batching.py implements it). `inputs` are IR values; a
    batched one carries the batch axis first, an unbatched one is the same for every example.
    `types` and `out_type` are the types of one example."""
    inputs: tuple[Any, ...]
    batched: tuple[bool, ...]
    types: tuple[Type, ...]
    out_type: Type
    attrs: Mapping[str, Any]

    def op(self, op: OpDef | str, *inputs: Any, **attrs: Any) -> Any:
        """Another op applied to values."""

    def apply(self, *inputs: Any, **attrs: Any) -> Any:
        """This node's op on other inputs and attrs (the node's attrs where not given)."""

    @property
    def size(self) -> Any:
        """The batch size, a run-time int value."""

    @property
    def static_size(self) -> int | None:
        """The batch size when it is known at compile time."""

    def constant(self, value: Any) -> Any:
        """A constant value."""


@dataclass(frozen=True, slots=True)
class Spelling:
    """One way generated code computes an op: an emit template, the attribute values its free
    names take, and the helper functions it calls."""
    template: str
    attrs: Mapping[str, Any]
    helpers: tuple[Callable[..., Any], ...] = ()


@dataclass(frozen=True, slots=True)
class Dyn:
    """Inside an attribute (e.g. getitem's `index`), a reference to the k-th variadic input: the
    part of the structure only known at run time. Prints as `$k`."""
    k: int

    def __repr__(self) -> str:
        return f"${self.k}"


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()


def _bind(self: Any, *args: Any, **kwargs: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """`(inputs, attrs)` of the spelling's op for these arguments, defaults filled in."""
    inputs, attrs = self.binder(*args, **kwargs)
    return tuple(inputs), self.op.full_attrs(attrs)


def _call(self: Any, *args: Any, **kwargs: Any) -> Any:
    """Run the spelling's op eagerly on these arguments."""
    inputs, attrs = self.bind(*args, **kwargs)
    return self.op.kernel(*inputs, **attrs)


@dataclass(frozen=True, slots=True, eq=False)
class OpFunction:
    """A public functional spelling of an op: `ops.relu`, `ops.reduce_mean`, `np.tanh`, the
    `x.sum` method. Calling it runs eagerly; the frontend calls `bind` with IR values instead."""
    name: str
    op: OpDef
    binder: Binder

    bind = _bind
    __call__ = _call

    def __repr__(self) -> str:
        return f"<amber op function {self.name} -> {self.op.name}>"


class Primitive:
    """MindSpore's primitive-instance style: `ops.ReduceMean(keep_dims=True)(x, axis)`.

    Subclasses set `op` and define `binder(self, *args, **kwargs)`; constructor arguments are
    kept on the instance (they are compile-time constants)."""
    op: OpDef

    def binder(self, *args: Any, **kwargs: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
        raise NotImplementedError(f"{type(self).__name__} does not define binder")

    bind = _bind
    __call__ = _call

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"
