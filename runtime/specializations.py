"""The machinery every jit object shares: specializations by call key, the fast call path,
the memory and disk caches, compiling, statistics (`JitBase`; `jit.py` and `grad.py` say what
their targets are).

Each call computes the specialization key (argument shapes, dtypes and scalar values), finds the
instance's binding for it (entry + gathered parameters), checks in one generated function that
the guarded objects and the parameters are the same ones, and calls the generated function.
Everything else (symbolic sizes, memory cache search, disk cache, compiling, recompile warnings)
happens only when that check fails. Code compiled for symbolic sizes (see `dynamic.py`) is
bound under each concrete key it serves, so a call of a size seen before costs what a static
call does.
"""
from __future__ import annotations

import contextlib
import dataclasses
import functools
import threading
import time
import weakref
from dataclasses import dataclass
from typing import Any, Callable, Hashable

from ..frontend.errors import CompileError
from . import context as _ctx
from .compiled import CompiledFunction, add_note, as_plain_array
from .context import CompileOptions, get_context
from .diskcache import DiskCache
from .records import target_source
from .guards import GuardPlan
from .dynamic import DynamicShapes, Shapes, symbolic_note
from .keys import (call_key, describe_key, holds_wide_int, key_components, persistable,
                   what_changed)
from .fast_path import MISS, fast_call
from .entries import Store, _eager_marker, _has_entries, _source_file, entry_from_artifact
from .paths import access
from .pipeline import Artifact, compile_target
from .tiers import FOREGROUND, NativeTiers, tiered
from . import log, recorder
from .warn import warn_user

RECOMPILE_WARNING = 8
"""After this many recompiles of one function, warn (once) naming what keeps changing."""

MAX_BINDINGS = 512
"""Concrete keys one instance keeps bound (symbolic code serves many); then they start over."""


@dataclass
class JitStats:
    """Counters of one jit function: specializations made, of which compiled / read from disk."""
    specializations: int = 0
    compiles: int = 0
    disk_hits: int = 0
    disk_misses: int = 0
    """Disk lookups that found nothing usable (then compiled, or read after another process
    compiled the key)."""
    seconds: float = 0.0
    """Time spent making specializations (disk lookups, compiles, loading the code)."""

    @property
    def recompiles(self) -> int:
        """Specializations after the first: what the recompile warning counts."""
        return max(0, self.specializations - 1)


class _Binding:
    """One instance's view of one entry: its parameters, gathered and kept as plain arrays, and
    the `GuardPlan` telling on each call that the guarded objects and the parameters are still
    the very ones seen when the binding was made (any change makes a new binding)."""
    __slots__ = ("entry", "arrays", "eager", "plan", "holds", "fast")

    def __init__(self, entry: CompiledFunction, instance: Any, arrays: tuple[Any, ...]) -> None:
        """Bind `entry` to `instance`, whose guards hold and whose parameters are `arrays`."""
        self.entry = entry
        self.eager = entry.origin == "eager"
        self.arrays = arrays
        self.plan = GuardPlan(entry.guards, instance, entry.param_paths)
        self.holds = self.plan.holds
        self.fast: Any = _UNMADE
        """Its `fast_path.fast_call` (None where there is none), made once it is called last."""


class _InstanceState:
    """The bindings of one instance (or of a plain function: instance None), by call key."""
    __slots__ = ("ref", "bindings", "__weakref__")

    def __init__(self, ref: Callable[[], Any]) -> None:
        self.ref = ref
        self.bindings: dict[Hashable, _Binding] = {}


def _none() -> None:
    return None


_UNMADE = object()


class JitBase:
    """What every jit object shares: the cache, the fast call path, compiling, statistics."""

    def __init__(self, fallback: bool, options: CompileOptions | None,
                 dynamic: Any = None, backend: str | None = None) -> None:
        self.fallback = fallback
        self.options = options
        """Compile options of this target; None follows `set_context`."""
        self.dynamic_shapes = DynamicShapes(dynamic)
        """Which axes of the array arguments are symbolic sizes (see `dynamic.py`)."""
        self.backend = backend
        """The backend of this target; None follows the options."""
        self.stats = JitStats()
        self.last: CompiledFunction | None = None
        """The specialization the last call ran (what `.code`, `.graph`, `.ir` show)."""
        self._cache: dict[Hashable, list[CompiledFunction]] = {}
        self._states: dict[int, _InstanceState] = {}
        self._last_binding: tuple[_InstanceState, Hashable, _Binding] | None = None
        """(state, call key, binding) of the last call whose guards held: a call of the same
        instance with an equal key takes its binding without the two dict lookups (its guards
        are still checked)."""
        self._fast: Callable[[Any, tuple, dict], Any] | None = None
        """The fast call of the last binding (see fast_path.py): tried first on each call."""
        self._history: list[dict[str, str]] = []
        self._reason = ""
        """Why the next specialization is made, when the call key alone does not say."""
        self._warned = False
        self._lock = threading.RLock()
        self._tiers = NativeTiers()

    # -- what subclasses say about their target ----------------------------------------------
    def _target(self, instance: Any) -> Any:
        raise NotImplementedError

    def _function(self, instance: Any) -> Any:
        """The Python function whose source is the target's own code."""
        raise NotImplementedError

    def _eager(self, instance: Any, args: tuple, kwargs: dict) -> Any:
        raise NotImplementedError

    def _title(self, instance: Any) -> str:
        raise NotImplementedError

    def _cache_key(self, instance: Any, key: Hashable) -> Hashable:
        return key

    # -- the call path -----------------------------------------------------------------------
    def _run(self, instance: Any, args: tuple, kwargs: dict) -> Any:
        if not _ctx._context.jit_enabled:
            return self._eager(instance, args, kwargs)
        fast = self._fast
        if fast is not None:
            result = fast(instance, args, kwargs)
            if result is not MISS:
                return result
        key = call_key(args, kwargs)
        last = self._last_binding  # NOTE: the common case, one instance called with one key
        if last is not None and last[1] == key and last[0].ref() is instance:
            binding = last[2]
        else:
            state = self._states.get(id(instance))
            binding = None
            if state is not None and state.ref() is instance:
                binding = state.bindings.get(key)
                if binding is not None:
                    self._remember(state, key, binding)
        if binding is None or not binding.holds(instance):
            binding = self._bind(instance, key, args, kwargs)
            if self._tiers.holding:  # NOTE: kernels compile after the call that made them
                try:
                    return self._call(binding, instance, args, kwargs)
                finally:
                    self._tiers.release()
        entry = binding.entry  # NOTE: `_call` inline: this is the hot path
        if self.last is not entry:  # NOTE: a write is a Python call under JitCell.__setattr__
            self.last = entry
        if binding.eager:
            return self._eager(instance, args, kwargs)
        try:
            if entry.gather is None:
                return entry.fn(*binding.arrays, *args)
            return entry.fn(*binding.arrays, *entry.gather(args, kwargs))
        except Exception as exc:
            entry.annotate(exc)
            raise

    def _call(self, binding: _Binding, instance: Any, args: tuple, kwargs: dict) -> Any:
        """Run the code of `binding` on this call's arguments."""
        entry = self.last = binding.entry
        if binding.eager:
            return self._eager(instance, args, kwargs)
        try:
            if entry.gather is None:
                return entry.fn(*binding.arrays, *args)
            return entry.fn(*binding.arrays, *entry.gather(args, kwargs))
        except Exception as exc:
            entry.annotate(exc)
            raise

    def _bind(self, instance: Any, key: Hashable, args: tuple, kwargs: dict) -> _Binding:
        """Slow path: find a cached entry that fits this instance, or make one. Under symbolic
        sizes the entry is found by the call's symbolic key, and bound under its concrete one."""
        with self._lock:
            shapes, skey = self._signature(instance, key, args, kwargs)
            binding = self._find(instance, skey)
            if binding is None and self._learn(instance, args, kwargs):
                shapes, skey = self._signature(instance, key, args, kwargs)
                binding = self._find(instance, skey)
            if binding is None:
                binding = self._new_binding(instance, key, skey, shapes, args, kwargs)
            state = self._state(instance)
            if len(state.bindings) >= MAX_BINDINGS:
                state.bindings.clear()
            state.bindings[key] = binding
            self._remember(state, key, binding)
            return binding

    def _remember(self, state: _InstanceState, key: Hashable, binding: _Binding) -> None:
        """Make `binding` the last one (its fast call made the first time)."""
        if binding.fast is _UNMADE:
            entry = binding.entry
            binding.fast = None if binding.eager or entry.gather is not None else \
                fast_call(key, state.ref, binding.plan, entry, binding.arrays)
        self._last_binding = (state, key, binding)
        self._fast = binding.fast

    def _signature(self, instance: Any, key: Hashable, args: tuple,
                   kwargs: dict) -> tuple[Shapes, Hashable]:
        return self.dynamic_shapes.signature(self._function(instance), instance, key, args,
                                             kwargs)

    def _find(self, instance: Any, skey: Hashable) -> _Binding | None:
        for entry in self._cache.get(self._cache_key(instance, skey), ()):
            binding = _try_binding(entry, instance)
            if binding is not None:
                return binding
        return None

    def _learn(self, instance: Any, args: tuple, kwargs: dict) -> bool:
        """Automatic mode, before compiling: axes that changed size become symbolic (with a
        warning naming them); True if any did. A call whose own shapes do not compile (a
        layer's input check, a shape rule) is an error to report, not a reason to go symbolic:
        its graph is built first, and on a CompileError the axes stay as they were."""
        dynamic = self.dynamic_shapes
        before = {path: set(axes) for path, axes in dynamic.learned.items()}
        news = dynamic.learn(self._cache_key(instance, None), args, kwargs)
        if not news:
            return False
        try:
            self._artifact(instance, args, kwargs, self.options or get_context().options,
                           self._title(instance), "", interpret=True)
        except CompileError:
            dynamic.learned = before
            return False
        warn_user(f"amber: {self._title(instance)}: {news}")
        self._reason = "sizes made symbolic: " + news.split(" changed between calls")[0]
        return True

    def _new_binding(self, instance: Any, key: Hashable, skey: Hashable, shapes: Shapes,
                     args: tuple, kwargs: dict) -> _Binding:
        """Compile for `skey` and bind; in automatic mode, a symbolic compile that fails falls
        back to compiling this shape (and every later one) apart."""
        try:
            entry = self._specialize(instance, skey, args, kwargs, shapes)
        except (CompileError, NotImplementedError) as err:
            if not (shapes and self.dynamic_shapes.automatic) or self.dynamic_shapes.declared(
                    self._function(instance), instance, args, kwargs):
                if shapes and self._compiles_static(instance, args, kwargs):
                    add_note(err, symbolic_note(shapes))
                raise  # NOTE: sizes the user declared symbolic are not given up silently
            if not self._compiles_static(instance, args, kwargs):
                raise  # NOTE: fails with its own shapes too (e.g. a wrong arity): the real error
            self.dynamic_shapes.refuse()
            first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
            warn_user(f"amber: {self._title(instance)} cannot be compiled for symbolic sizes "
                      f"({first}); compiling each shape separately")
            self._reason = f"symbolic sizes refused ({first})"
            skey, shapes = key, {}
            found = self._find(instance, key)
            if found is not None:
                return found
            entry = self._specialize(instance, key, args, kwargs, shapes)
        self._cache.setdefault(self._cache_key(instance, skey), []).append(entry)
        binding = _try_binding(entry, instance)
        assert binding is not None, f"{self._title(instance)}: new code does not fit"
        return binding

    def _compiles_static(self, instance: Any, args: tuple, kwargs: dict) -> bool:
        """Whether this call's graph builds with its concrete shapes (so a failure with
        symbolic ones is due to the symbols)."""
        try:
            self._artifact(instance, args, kwargs, self.options or get_context().options,
                           self._title(instance), "", interpret=True)
        except (CompileError, NotImplementedError):
            return False
        return True

    def _state(self, instance: Any) -> _InstanceState:
        state = self._states.get(id(instance))
        if state is not None and state.ref() is instance:
            return state
        ident = id(instance)
        if instance is None:
            state = _InstanceState(_none)
        else:
            try:
                ref = weakref.ref(instance, lambda r: self._forget(ident, r))
            except TypeError:  # not weakly referenceable: keep it alive instead
                ref = functools.partial(lambda obj: obj, instance)
            state = _InstanceState(ref)
        self._states[ident] = state
        return state

    def _forget(self, ident: int, ref: Any) -> None:
        state = self._states.get(ident)
        if state is not None and state.ref is ref:
            del self._states[ident]
        last = self._last_binding
        if last is not None and last[0].ref is ref:  # NOTE: not keeping its parameters alive
            self._last_binding = self._fast = None

    # -- specializing ------------------------------------------------------------------------
    def _specialize(self, instance: Any, key: Hashable, args: tuple, kwargs: dict,
                    shapes: Shapes | None = None) -> CompiledFunction:
        start = time.perf_counter()
        ctx = get_context()
        options = self.options or ctx.options
        if self.backend is not None:
            options = dataclasses.replace(options, backend=self.backend)
        if options.backend != "numpy" and holds_wide_int(key):
            options = dataclasses.replace(options, backend="numpy")  # NOTE: see holds_wide_int
        options = dataclasses.replace(options, native=options.native_parts)  # NOTE: before
        # auto's NumPy tier replaces the backend
        title, signature = self._title(instance), describe_key(key)
        # NOTE: compile-first: the background compiles queued meanwhile wait (tiers.py)
        gate = FOREGROUND.held() if options.backend == "numba" else contextlib.nullcontext()
        with gate:
            disk, first = self._disk_slot(ctx, instance, key, options, signature)
            # NOTE: save_graphs asks to see the stages, so it compiles even when disk has the code
            if disk is None or first is None or ctx.save_graphs:
                entry = self._compile_and_store(None, None, instance, args, kwargs, options, title,
                                                signature, shapes)
            else:
                entry = self._warm_tier(disk, first, instance, options, title, signature,
                                        len(args)) if tiered(options.backend) else None
                if entry is None:
                    entry = disk.lookup(first, instance, len(args))
                if entry is None:
                    self.stats.disk_misses += 1
                    with disk.compile_lock(first):  # NOTE: one process compiles, the others wait
                        entry = disk.lookup(first, instance, len(args))  # ... and find its entry
                        if entry is None:
                            entry = self._compile_and_store(disk, first, instance, args, kwargs,
                                                            options, title, signature, shapes)
                if entry.origin == "disk":
                    self.stats.disk_hits += 1
        self._count(instance, key, entry, title)
        self.stats.seconds += time.perf_counter() - start
        return entry

    def _warm_tier(self, disk: DiskCache, first: str, instance: Any, options: CompileOptions,
                   title: str, signature: str, nargs: int) -> CompiledFunction | None:
        """Tiering from the disk cache: the NumPy tier's entry now and the native entry under
        `first` (its kernels from Numba's cache) in the background; None when either is not on
        disk (then the native entry is looked up, or compiled, as usual)."""
        if not _has_entries(disk, first):
            return None
        numpy_first = self._numpy_first_key(disk, instance, options, signature)
        if numpy_first is None or not _has_entries(disk, numpy_first):
            return None  # NOTE: not a lookup: code without kernels has no NumPy tier, no miss
        entry = disk.lookup(numpy_first, instance, nargs)
        if entry is not None:
            self._tiers.start(entry, lambda: disk.lookup(first, instance, nargs), title)
        return entry

    def _compile_and_store(self, disk: DiskCache | None, first: str | None, instance: Any,
                           args: tuple, kwargs: dict, options: CompileOptions, title: str,
                           signature: str, shapes: Shapes | None = None) -> CompiledFunction:
        store = numpy_store = None
        if disk is not None and first is not None:
            store = self._store(disk, first, instance, title, signature)
            if tiered(options.backend):
                numpy_first = self._numpy_first_key(disk, instance, options, signature)
                if numpy_first is not None:
                    numpy_store = self._store(disk, numpy_first, instance, title, signature)
        entry, _ = self._compile(instance, args, kwargs, options, title, signature,
                                 shapes or {}, store, numpy_store,
                                 None if store is None else disk)
        return entry

    def _store(self, disk: DiskCache, first: str, instance: Any, title: str,
               signature: str) -> Store:
        """Writes an entry under the disk key `first`."""
        files = [_source_file(self._function(instance))]

        def store(entry: CompiledFunction, artifact: Artifact) -> str | None:
            path = disk.store(first, entry, artifact.sources, title, signature, files)
            return None if path is None else str(path)
        return store

    def _disk_slot(self, ctx: _ctx.Context, instance: Any, key: Hashable,
                   options: CompileOptions, signature: str) -> tuple[DiskCache | None, str | None]:
        if not ctx.disk_cache_enabled() or not persistable(key):
            return None, None
        disk = DiskCache(ctx.resolved_cache_dir())
        if not disk.trusted():
            return None, None
        return disk, self._first_key(disk, instance, options, signature)

    def _first_key(self, disk: DiskCache, instance: Any, options: CompileOptions,
                   signature: str) -> str | None:
        """The disk key of this target compiled with `options`; None if its source is not
        known."""
        func = self._function(instance)
        source = target_source(func)
        if source is None:
            return None
        name = f"{getattr(func, '__module__', '?')}.{getattr(func, '__qualname__', '?')}"
        if instance is not None:
            name += f"@{type(instance).__module__}.{type(instance).__qualname__}"
        return disk.first_key(name, source, signature, self._cache_token(options))

    def _numpy_first_key(self, disk: DiskCache, instance: Any, options: CompileOptions,
                         signature: str) -> str | None:
        """The disk key of the NumPy tier of code compiled with `options` (tiers.py)."""
        return self._first_key(disk, instance, dataclasses.replace(options, backend="numpy"),
                               signature)

    def _cache_token(self, options: CompileOptions) -> str:
        """What besides the source and signature the compiled code depends on."""
        return options.cache_token()

    def _compile(self, instance: Any, args: tuple, kwargs: dict, options: CompileOptions,
                 title: str, signature: str, shapes: Shapes, store: Store | None = None,
                 numpy_store: Store | None = None, disk: DiskCache | None = None
                 ) -> tuple[CompiledFunction, Artifact | None]:
        """Compile and load; under tiering (see tiers.py) the entry starts as NumPy code
        (`numpy_store` keeps that on disk) while its kernels compile in the background;
        `disk` keeps their Numba files private and counted."""
        tiering = tiered(options.backend)
        try:  # NOTE: under tiering the code is NumPy first; kernels come later (tiers.py)
            artifact = self._artifact(instance, args, kwargs,
                                      dataclasses.replace(options, backend="numpy")
                                      if tiering else options, title, signature, shapes=shapes)
        except CompileError as err:
            eager = self.fallback and not (shapes and self.dynamic_shapes.automatic)
            _record_refusal(title, signature, err, "eager fallback" if eager else "error")
            if not eager:
                raise
            warn_user(f"amber: {title} runs eagerly (jit fallback=True) because it cannot be "
                      f"compiled:\n{err}")
            return CompiledFunction(fn=_eager_marker, source="", filename="", function_name="",
                                    line_map={}, origin="eager"), None
        self.stats.compiles += 1
        tiers = (self._tiers, numpy_store) if tiering else None
        return entry_from_artifact(artifact, title, len(args), store,
                                   None if disk is None else disk.native_kernels, tiers), artifact

    def _artifact(self, instance: Any, args: tuple, kwargs: dict, options: CompileOptions,
                  title: str, signature: str, interpret: bool = False,
                  shapes: Shapes | None = None) -> Artifact:
        """Compile the target for these arguments (with `shapes`' symbolic sizes; only the
        graph, not optimized, when `interpret`)."""
        return compile_target(self._target(instance), args, kwargs, options,
                              fallback=self.fallback, title=title, signature=signature,
                              optimize_graph=not interpret, shapes=shapes)

    def _count(self, instance: Any, key: Hashable, entry: CompiledFunction, title: str) -> None:
        """Record a new specialization; warn once when they keep coming."""
        self.stats.specializations += 1
        parts = key_components(key)
        if instance is not None:
            parts["instance type"] = type(instance).__qualname__
        for guard in entry.guards:
            parts[f"guard {guard.description}"] = repr(guard.expected)
        for path, (shape, dtype) in zip(entry.param_paths, entry.param_sig):
            if shape is not None:
                parts[f"parameter {path}"] = f"{dtype}{list(shape)}"
        self._history.append(parts)
        changed = what_changed(self._history[-2:]) if len(self._history) > 1 else []
        reason = "first call" if len(self._history) == 1 else \
            "new " + "; ".join(changed or ["(nothing visible in the arguments)"])
        if entry.origin == "compiled":
            log.info("amber: compiled %s%s in %.1f ms (%s)", title, describe_key(key),
                     entry.seconds * 1e3, reason)
        if self._reason:
            reason, self._reason = f"{self._reason}; {reason}", ""
        if (rec := recorder.active()) is not None:
            rec.emit("specialization", function=title, jit=id(self), key=describe_key(key),
                     origin=entry.origin, reason=reason, seconds=entry.seconds,
                     cache_path=entry.cache_path, trace=entry.trace,
                     code=None if entry.trace else _code_of(entry))
        if self.stats.recompiles >= RECOMPILE_WARNING and not self._warned:
            self._warned = True
            changing = what_changed(self._history) or ["(nothing visible in the arguments)"]
            symbolic = self.dynamic_shapes.describe()
            warn_user(f"amber: {title} was recompiled {self.stats.recompiles} times; what keeps "
                      f"changing: {'; '.join(changing)}."
                      + (f" Already symbolic (any size): {symbolic}." if symbolic else "")
                      + " Keep these fixed (pass varying numbers as arrays; declare sizes that "
                      "vary with set_inputs or jit(..., dynamic=...)) to reuse the compiled "
                      "code.")

    # -- introspection -----------------------------------------------------------------------
    def wait_kernels(self, timeout: float | None = None) -> bool:
        """Under `backend="auto"`, block until the Numba kernels compiling in the background
        (see runtime/tiers.py) are ready and switched in, at most `timeout` seconds; True if
        none is still compiling. Calls never need this: they run NumPy code until then."""
        return self._tiers.wait(timeout)

    @property
    def code(self) -> str | None:
        """The generated source of the last specialization used (None before the first call)."""
        return None if self.last is None else self.last.source

    @property
    def graph(self) -> Any:
        """The optimized IR graph of the last specialization (None if it came from disk)."""
        return None if self.last is None else self.last.graph

    @property
    def ir(self) -> str | None:
        """The optimized IR text of the last specialization."""
        return None if self.last is None else self.last.ir

    def cache_clear(self) -> None:
        """Forget every in-memory specialization (the disk cache is untouched)."""
        with self._lock:
            self._cache.clear()
            self._tiers.cancel()  # NOTE: kernels of forgotten entries are no longer wanted
            self._states.clear()
            self._last_binding = self._fast = None
            self._history.clear()
            self.last = None


def _record_refusal(title: str, signature: str, err: CompileError, outcome: str) -> None:
    """A CompileError, with where it points in the user's code, for the compile report."""
    if (rec := recorder.active()) is not None:
        rec.emit("refusal", function=title, key=signature, outcome=outcome,
                 message=getattr(err, "message", str(err)), file=getattr(err, "file", ""),
                 line=getattr(err, "line", 0), col=getattr(err, "col", 0),
                 source_line=getattr(err, "source_line", ""), text=str(err))


def _code_of(entry: CompiledFunction) -> dict[str, Any] | None:
    """The generated code of an entry read from the disk cache (which keeps no IR)."""
    if not entry.source:
        return None
    line_map = entry.line_map or (entry.load_line_map() if entry.load_line_map else {})
    return recorder.describe_code(entry.source, line_map)


def _try_binding(entry: CompiledFunction, instance: Any) -> _Binding | None:
    """A binding of `entry` to `instance` if its guards hold and its parameters fit."""
    if entry.guards_hold is not None and not entry.guards_hold(instance):
        return None
    try:
        raw = [access(instance, path)[1] for path in entry.param_paths]
    except (AttributeError, IndexError, KeyError, TypeError, ValueError):
        return None
    arrays = tuple(map(as_plain_array, raw))
    return _Binding(entry, instance, arrays) if entry.params_fit(arrays) else None
