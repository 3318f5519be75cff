"""`jit`: run a Cell class, a Cell instance or a function compiled (the wrappers; what they
share, from call keys to caches, is `specializations.JitBase`)."""
from __future__ import annotations

import functools
import types
from typing import Any, Callable, Hashable

from ..frontend.errors import CompileError
from ..common.tensor import as_results, as_tensors
from ..nn.cell import Cell
from .context import CompileOptions
from . import context as _ctx
from .dynamic import DynamicShapes
from .fast_path import MISS
from ..frontend.targets import FunctionWithRoot
from .roots import FunctionRoot, RootOf
from .specializations import JitBase, JitStats
from .tracebacks import user_facing


class JitMethod(JitBase):
    """Installed as `__call__` of a `@jit` Cell class: every instance's call runs compiled,
    while `construct` stays plain Python (the eager oracle)."""

    def __init__(self, cls: type, eager_call: Callable[..., Any], fallback: bool,
                 options: CompileOptions | None, dynamic: Any = None,
                 backend: str | None = None) -> None:
        super().__init__(fallback, options, dynamic, backend)
        self.cls = cls
        self.__wrapped__ = eager_call
        self.__name__ = "__call__"
        self.__qualname__ = f"{cls.__qualname__}.__call__"
        self.__doc__ = f"Run {cls.__qualname__}.construct compiled by amber."

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        return self if instance is None else types.MethodType(self, instance)

    def __call__(self, instance: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return as_tensors(self._run(instance, args, kwargs))  # NOTE: a Cell call's result
        except CompileError as err:
            raise user_facing(err)  # AMBER_TRACEBACK_FILTERING=off shows amber's frames too

    def _target(self, instance: Any) -> Any:
        return instance

    def _function(self, instance: Any) -> Any:
        return plain_function(type(instance).construct)

    def _eager(self, instance: Any, args: tuple, kwargs: dict) -> Any:
        return self.__wrapped__(instance, *args, **kwargs)

    def _title(self, instance: Any) -> str:
        return f"{type(instance).__qualname__}.construct"

    def _cache_key(self, instance: Any, key: Hashable) -> Hashable:
        return (type(instance), key)  # NOTE: a subclass may override construct

    def __repr__(self) -> str:
        return f"<amber.jit {self.cls.__qualname__}.__call__>"


class JitFunction(JitBase):
    """`jit(f)` for a function or `jit(net)` for one Cell instance: a callable running compiled,
    with `__wrapped__` the original.

    A jit function in a class body is a method (MindSpore 2.x's `@jit def construct(self, x)`):
    read through an instance it is that instance's method, compiled with `self` bound (its
    parameters and attributes read like a Cell's), one specialization cache per class."""

    def __init__(self, target: Any, fallback: bool, options: CompileOptions | None,
                 dynamic: Any = None, backend: str | None = None) -> None:
        super().__init__(fallback, options, dynamic, backend)
        self._instance = None if _is_function(target) else target
        self._method = False
        """True once read through an instance: the instance argument of `_run` is `self`."""
        self._roots = RootOf(target) if isinstance(target, types.FunctionType) else None
        """A plain function's cells and Parameters (globals, closures), compiled as its `self`."""
        if self._instance is None:
            functools.update_wrapper(self, target)
        else:
            self.__wrapped__ = target

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        instance = self._instance if self._roots is None else self._roots.get()
        try:
            return as_results(self._run(instance, args, kwargs))
        except CompileError as err:
            raise user_facing(err)  # AMBER_TRACEBACK_FILTERING=off shows amber's frames too

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        if instance is None or self._instance is not None:
            return self
        self._method = True
        return BoundJit(self, instance)

    def _target(self, instance: Any) -> Any:
        if isinstance(instance, FunctionRoot):
            return FunctionWithRoot(self.__wrapped__, instance)
        if self._method and instance is not None:
            return types.MethodType(self.__wrapped__, instance)
        return self.__wrapped__ if instance is None else instance

    def _function(self, instance: Any) -> Any:
        if instance is None or self._method or isinstance(instance, FunctionRoot):
            return self.__wrapped__
        return plain_function(type(instance).construct)

    def _eager(self, instance: Any, args: tuple, kwargs: dict) -> Any:
        if instance is None or isinstance(instance, FunctionRoot):
            return self.__wrapped__(*args, **kwargs)
        if self._method:
            return self.__wrapped__(instance, *args, **kwargs)
        call = type(instance).__call__
        if isinstance(call, JitMethod):  # NOTE: its class is jit too: go straight to Python
            return call._eager(instance, args, kwargs)
        construct = type(instance).__dict__.get("construct")
        if isinstance(construct, JitFunction):  # NOTE: and so is its construct
            return construct.__wrapped__(instance, *args, **kwargs)
        if call is Cell.__call__:  # NOTE: as Python, also under GRAPH_MODE (fallback=True)
            instance.check_inputs(*args, **kwargs)
            return instance.construct(*args, **kwargs)
        return instance(*args, **kwargs)

    def _title(self, instance: Any) -> str:
        if instance is None or isinstance(instance, FunctionRoot):
            return getattr(self.__wrapped__, "__qualname__", "function")
        name = self.__wrapped__.__name__ if self._method else "construct"
        return f"{type(instance).__qualname__}.{name}"

    def _cache_key(self, instance: Any, key: Hashable) -> Hashable:
        return (type(instance), key) if self._method else key

    def __repr__(self) -> str:
        return f"<amber.jit {self._title(self._instance)}>"


class JitCell(JitFunction):
    """`jit(cell)`: calls run compiled, and everything else is the cell's, as torch.compile's
    wrapper of a module behaves: attributes read and written, `set_train`,
    `trainable_params`, `parameters_and_names`, `cells_and_names`, `insert_child_to_cell`,
    checkpoints, `repr`; `isinstance(wrapper, type(cell))` holds, so a containing Cell
    registers it as a sub-cell. Methods that return the cell (`set_train()`, `to_float(...)`)
    return the wrapper, so `jit(net).set_train()` stays compiled."""

    _CHAINED = frozenset({"set_train", "set_grad", "to_float", "add_flags",
                          "add_flags_recursive"})
    """The cell's methods that return the cell itself, for chaining."""

    def __init__(self, cell: Any, fallback: bool, options: CompileOptions | None,
                 dynamic: Any = None, backend: str | None = None) -> None:
        super().__init__(cell, fallback, options, dynamic, backend)
        self.__dict__["_ready"] = True  # NOTE: from here on, new attributes go to the cell

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        fast = self._fast  # NOTE: `_run`'s first step, here: a train step's call, one frame less
        if fast is not None and _ctx._context.jit_enabled:
            result = fast(self._instance, args, kwargs)
            if result is not MISS:
                return as_tensors(result)
        try:
            return as_tensors(self._run(self._instance, args, kwargs))  # a Cell call's result
        except CompileError as err:
            raise user_facing(err)  # AMBER_TRACEBACK_FILTERING=off shows amber's frames too

    @property  # type: ignore[misc]
    def __class__(self) -> type:  # NOTE: what isinstance sees; type(self) stays JitCell
        return type(self.__dict__["_instance"])

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or "_instance" not in self.__dict__:
            raise AttributeError(name)
        value = getattr(self.__dict__["_instance"], name)
        if name in self._CHAINED:
            return self._chained(value)
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        if not self.__dict__.get("_ready") or name in self.__dict__:
            object.__setattr__(self, name, value)  # the wrapper's own state
        else:
            setattr(self.__dict__["_instance"], name, value)

    def __delattr__(self, name: str) -> None:
        delattr(self.__dict__["_instance"], name)

    def _chained(self, method: Any) -> Any:
        cell = self.__dict__["_instance"]

        @functools.wraps(method)
        def call(*args: Any, **kwargs: Any) -> Any:
            result = method(*args, **kwargs)
            return self if result is cell else result
        return call

    def __dir__(self) -> list[str]:
        return sorted(set(dir(self.__dict__["_instance"])) | set(super().__dir__()))

    def __repr__(self) -> str:
        return repr(self.__dict__["_instance"])


class BoundJit:
    """A jit method read through an instance (`net.construct` when construct is decorated with
    `amber.jit`): calling it runs compiled with `self` = the instance; `__wrapped__` is the
    plain bound method (what compiled callers inline)."""
    __slots__ = ("jit", "instance")

    def __init__(self, jit: JitFunction, instance: Any) -> None:
        self.jit = jit
        self.instance = instance

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.jit._run(self.instance, args, kwargs)

    @property
    def __wrapped__(self) -> Any:
        return types.MethodType(self.jit.__wrapped__, self.instance)

    @property
    def stats(self) -> JitStats:
        return self.jit.stats

    @property
    def code(self) -> str | None:
        return self.jit.code

    def __repr__(self) -> str:
        return f"<amber.jit {self.jit._title(self.instance)} of {self.instance!r}>"[:200]


def plain_function(func: Any) -> Any:
    """`func` without amber.jit wrappers (a jit-decorated construct is its def)."""
    while isinstance(func, JitBase):
        func = func.__wrapped__
    return func


def _signature_dict(signature: Any) -> dict[Any, Any]:
    """MindSpore's `input_signature` as `dynamic`: a spec for the first argument, a tuple or
    list of them by position (None skips one), or a dict by name."""
    if isinstance(signature, dict):
        return dict(signature)
    if isinstance(signature, tuple | list):
        return {i: spec for i, spec in enumerate(signature) if spec is not None}
    return {0: signature}


def _is_function(target: Any) -> bool:
    return isinstance(target, types.FunctionType | types.MethodType)


MINDSPORE_JIT_OPTIONS = frozenset({"capture_mode", "jit_level", "fullgraph", "backend", "mode",
                                   "hash_args", "jit_config", "compile_once"})
"""Keyword arguments of MindSpore's `jit` that choose among its own compilers and backends:
accepted, with no effect (amber has one compiler). Its `dynamic` and `input_signature` are
amber's `dynamic` (see `jit`)."""


MINDSPORE_BACKENDS = frozenset({"ms_backend", "GE"})
"""MindSpore's own `jit(backend=...)` names: accepted, with no effect."""


def jit(target: Any = None, *, fallback: bool = False, opt_level: int | None = None,
        dynamic: Any = None, input_signature: Any = None, backend: str | None = None,
        **mindspore_options: Any) -> Any:
    """Compile a Cell subclass (returned, with a compiled `__call__`), a Cell instance or a
    function (returned wrapped); a function in a class body (`@jit def construct(self, x)`, as
    MindSpore 2.x writes it) becomes a method running compiled. `fallback=True` runs code the
    compiler rejects as plain Python, with a warning; `opt_level` and `backend` ("auto",
    "numpy" or "numba": see `CompileOptions`; MindSpore's "ms_backend" and "GE" mean the
    default) override `set_context(...)` for this target.

    `dynamic` says which array axes are symbolic sizes, compiled once for every size: None
    (default) makes an axis symbolic once it changes between calls; True (or MindSpore's 1)
    makes axis 0 (the batch) of every array argument symbolic from the first call; a dict maps
    an argument name or position to its axes (`{"x": 0}`, `{"h": [1]}`, `{"x": {0: "B"}, "y":
    {0: "B"}}` to tie sizes together) or to `Tensor(shape=[None, 1, 32, 32], dtype=float32)`;
    False compiles every shape separately. MindSpore's `input_signature` (a spec, or a tuple or
    dict of them) is the same as a dict. A Cell's `set_inputs` takes precedence."""
    unknown = sorted(set(mindspore_options) - MINDSPORE_JIT_OPTIONS)
    if unknown:
        raise TypeError(f"jit: unknown option(s) {', '.join(unknown)}")
    if backend in MINDSPORE_BACKENDS:
        backend = None
    if input_signature is not None:
        if dynamic is not None:
            raise TypeError("jit: give dynamic or input_signature, not both")
        dynamic = _signature_dict(input_signature)
    if type(dynamic) is int and dynamic in (0, 1):  # NOTE: MindSpore's 0 is its default
        dynamic = None if dynamic == 0 else True
    if target is None:
        return functools.partial(jit, fallback=fallback, opt_level=opt_level, dynamic=dynamic,
                                 backend=backend, **mindspore_options)
    options = None if opt_level is None else CompileOptions(opt_level)
    declared = DynamicShapes(dynamic)  # NOTE: a bad `dynamic` is reported here, not later
    if backend is not None:  # NOTE: checked now (forcing numba without Numba fails here)
        CompileOptions(backend=backend).codegen_backend
    if isinstance(target, JitBase):  # a jit or gradient function: itself, with this `dynamic`
        if dynamic is not None:
            if target.dynamic_shapes.dynamic not in (None, dynamic):
                raise TypeError(f"jit: {target.__wrapped__!r} is already compiled with dynamic="
                                f"{target.dynamic_shapes.dynamic!r}, not {dynamic!r}")
            target.dynamic_shapes = declared
        return target
    if isinstance(target, type):
        if not callable(getattr(target, "construct", None)):
            raise TypeError(f"jit: class {target.__qualname__} has no construct method; decorate "
                            "an nn.Cell subclass")
        if isinstance(target.__dict__.get("__call__"), JitMethod):
            return target
        eager = target.__call__
        if isinstance(eager, JitMethod):  # a subclass of a jit class: share the eager call
            eager = eager.__wrapped__
        target.__call__ = JitMethod(target, eager, fallback, options, dynamic, backend)
        return target
    if isinstance(target, Cell):
        return JitCell(target, fallback, options, dynamic, backend)
    if _is_function(target) or callable(getattr(target, "construct", None)):
        return JitFunction(target, fallback, options, dynamic, backend)
    raise TypeError(f"jit: expected an nn.Cell subclass, a Cell instance or a function, "
                    f"not {type(target).__name__}")
