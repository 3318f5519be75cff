"""The on-disk compile cache: generated modules kept between processes, trusted only after checks.

Layout: `<root>/<first key>/<full key>.py` (the generated module, readable) beside
`<full key>.json` (its metadata). The root is `$AMBER_CACHE_DIR` or `~/.cache/amber`
(XDG_CACHE_HOME aware), created private to the user (0700).

Keys. The full key hashes everything the code depends on: the source of every function compiled
into it, its guards, the input signature, the pass options and the amber version. The sources
and guards are only known after the frontend ran, so a lookup goes in two steps:
1. the *first key* hashes what is known before compiling (amber and Python versions, pass
   options, the target's name and own source, the input signature) and names a directory of
   candidate entries;
2. each candidate's metadata lists the compiled functions as (name, file, first line, line count,
   SHA-256 of their text) and the guards (description, expected value); a candidate is used only
   if re-reading those file lines gives the same hashes, every guard re-read from the instance
   still gives its expected value, the instance's parameters (gathered by the recorded paths)
   have the recorded shapes and dtypes, and the `.py` file hashes to the recorded SHA-256.
The metadata also carries the parameter and input paths, the line map and the user classes the
module needs (exception types, by module and qualified name), so a valid entry is called
without running the frontend, the passes or codegen.

Guards are re-read in a new process through their pickled reader (the frontend's `Guard.read`,
with modules and module globals pickled by name) and compared by `fingerprint`, a text naming the
value the same way in every process (plain values by repr, classes and functions by qualified
name). An entry with a guard that has no such form (a closure cell, an object known only by its
address) is not written at all.

Safety. Files are written to a temporary name in the same directory and renamed into place, so a
reader (another process compiling the same key) never sees a partial file; the metadata is
written last and is the commit record. It carries a hash of its own content, so a truncated or
garbled file, a mismatched `.py` or another amber version is a miss (recompiled and rewritten),
never executed. A directory that cannot be written degrades to the memory cache with one warning.
"""
from __future__ import annotations

import base64
import functools
import hashlib
import importlib
import io
import json
import linecache
import os
import pickle
import sys
import tempfile
import textwrap
import time
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np

from ..graph.ir import Loc
from .compiled import CompiledFunction, as_plain_array
from .guards import same_value
from .loader import load_function, source_hash
from .paths import make_param_getter
from .warn import warn_user

FORMAT = 1
_KEY_CHARS = 24
_warned_roots: set[str] = set()


_COMPILER_PACKAGES = ("ops", "frontend", "graph", "codegen", "runtime")
_fingerprint: list[str] = []


def amber_version() -> str:
    """amber's version plus a fingerprint of the compiler's own files, so an entry written by
    a different compiler (an upgrade, or an edited checkout with the same version) is a miss."""
    from .. import __version__  # NOTE: lazy: the package sets it after importing runtime
    if not _fingerprint:
        _fingerprint.append(_compiler_fingerprint())
    return f"{__version__}+{_fingerprint[0]}"


def _compiler_fingerprint() -> str:
    """Path, size and modification time of every compiler source file: a stat each, no reads."""
    root = Path(__file__).resolve().parent.parent
    h = hashlib.sha256()
    for package in _COMPILER_PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            stat = path.stat()
            h.update(f"{path.relative_to(root)}:{stat.st_size}:{stat.st_mtime_ns}\n".encode())
    return h.hexdigest()[:12]


def _digest(*parts: str) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode("utf-8"))
        h.update(b"\0")
    return h.hexdigest()[:_KEY_CHARS]


def first_key(target_name: str, target_source: str, signature: str, options: str) -> str:
    """The lookup key computable before compiling (see the module docstring)."""
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    return _digest(f"amber-cache/{FORMAT}", amber_version(), python, options, target_name,
                   target_source, signature)


# -- compiled sources ------------------------------------------------------------------------

@dataclass(frozen=True)
class SourceRecord:
    """Where one compiled function's text lives, and the hash of that text."""
    name: str
    file: str
    line: int
    count: int
    sha: str

    def is_current(self) -> bool:
        """True if the file still holds the same text at the same place."""
        text = _read_lines(self.file, self.line, self.count)
        return text is not None and _text_hash(text) == self.sha


def _text_hash(text: str) -> str:
    return hashlib.sha256(textwrap.dedent(text).encode("utf-8")).hexdigest()


def _read_lines(file: str, line: int, count: int) -> str | None:
    if not os.path.isfile(file):
        return None
    linecache.checkcache(file)  # NOTE: drop a stale copy if the file changed since last read
    lines = linecache.getlines(file)
    if line < 1 or line - 1 + count > len(lines):
        return None
    return "".join(lines[line - 1:line - 1 + count])


def source_record(item: Any, files: Sequence[str] = ()) -> SourceRecord | None:
    """A record for one entry of the frontend's `sources`: a function's dedented source text
    (found in one of `files`) or a function object; None when it is in no readable file."""
    if isinstance(item, str):
        return locate_source(item, files)
    import inspect
    try:
        func = inspect.unwrap(getattr(item, "__func__", item))
        lines, first = inspect.getsourcelines(func)
        file = inspect.getsourcefile(func) or ""
    except (OSError, TypeError):
        return None
    if not os.path.isfile(file):
        return None
    text = "".join(lines)
    return SourceRecord(getattr(func, "__qualname__", "?"), os.path.abspath(file), first,
                        len(lines), _text_hash(text))


def locate_source(text: str, files: Sequence[str]) -> SourceRecord | None:
    """Where in `files` the function source `text` (dedented, as the frontend keeps it) is."""
    want = text.splitlines(keepends=True)
    if not want:
        return None
    head = want[0].strip()
    name = head.split("(")[0].removeprefix("def ").strip() if head.startswith("def ") else head
    for file in dict.fromkeys(files):
        if not os.path.isfile(file):
            continue
        lines = linecache.getlines(file)
        for i, line in enumerate(lines):
            if line.strip() == head:
                block = "".join(lines[i:i + len(want)])
                if textwrap.dedent(block) == text:
                    return SourceRecord(name, os.path.abspath(file), i + 1, len(want),
                                        _text_hash(block))
    return None


def target_source(func: Any) -> str | None:
    """Identifies the text of the target's own function (part of the first key): its file and
    the hash of its lines; None when it is not in a readable file."""
    func = getattr(func, "__func__", func)
    code = getattr(func, "__code__", None)
    if code is None or not os.path.isfile(code.co_filename):
        return None
    # NOTE: line numbers from the code objects, not inspect.getsource: a fresh process would
    # spend ~10 ms compiling the tokenizer's regular expressions.
    last = max(_last_line(code), code.co_firstlineno)
    text = _read_lines(code.co_filename, code.co_firstlineno, last - code.co_firstlineno + 1)
    if text is None:
        return None
    return f"{os.path.abspath(code.co_filename)}:{code.co_firstlineno}:{_text_hash(text)}"


def _last_line(code: types.CodeType) -> int:
    lines = [line for _, _, line in code.co_lines() if line is not None]
    nested = [_last_line(c) for c in code.co_consts if isinstance(c, types.CodeType)]
    return max(lines + nested, default=code.co_firstlineno)


# -- guards ----------------------------------------------------------------------------------

class _ReaderPickler(pickle.Pickler):
    """Pickles guard readers, naming modules and module namespaces instead of copying them."""

    def persistent_id(self, obj: Any) -> tuple[str, str, str | None] | None:
        if isinstance(obj, types.ModuleType):
            return "module", obj.__name__, getattr(obj, "__file__", None)
        if type(obj) is dict and _is_module_dict(obj):
            return "globals", obj["__name__"], obj.get("__file__")
        return None


class _ReaderUnpickler(pickle.Unpickler):
    """Loads what `_ReaderPickler` wrote, refusing a module now loaded from another file."""

    def persistent_load(self, pid: Any) -> Any:
        kind, name, file = pid
        module = sys.modules.get(name) or importlib.import_module(name)
        if getattr(module, "__file__", None) != file:
            raise pickle.UnpicklingError(f"module {name} is now "
                                         f"{getattr(module, '__file__', None)}, not {file}")
        return module if kind == "module" else module.__dict__


def _is_module_dict(namespace: dict) -> bool:
    module = sys.modules.get(namespace.get("__name__", None) or "")  # type: ignore[arg-type]
    return module is not None and getattr(module, "__dict__", None) is namespace


def _dump_reader(read: Any) -> bytes:
    buffer = io.BytesIO()
    _ReaderPickler(buffer, protocol=4).dump(read)
    return buffer.getvalue()


def _load_reader(blob: bytes) -> Any:
    return _ReaderUnpickler(io.BytesIO(blob)).load()  # noqa: S301 (our own 0700 directory)


def fingerprint(value: Any) -> str | None:
    """Text naming `value` the same way in any process, or None if it has no such name (an
    object known only by its address)."""
    if isinstance(value, bool | int | float | complex | str | bytes | type(None)
                  | type(Ellipsis) | np.generic):
        return f"{type(value).__name__}:{value!r}"
    if isinstance(value, np.dtype):
        return f"dtype:{value.str}"
    if isinstance(value, np.ndarray):  # a constant baked into the code: by content
        data = hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest()
        return f"ndarray:{value.dtype.str}{list(value.shape)}:{data}"
    if isinstance(value, tuple | list):
        parts = [fingerprint(v) for v in value]
        if None in parts:
            return None
        return f"{type(value).__name__}({','.join(p for p in parts if p is not None)})"
    if isinstance(value, dict):
        items = [(fingerprint(k), fingerprint(v)) for k, v in value.items()]
        if any(k is None or v is None for k, v in items):
            return None
        return "dict(" + ",".join(f"{k}={v}" for k, v in items) + ")"
    if isinstance(value, types.ModuleType):
        return f"module:{value.__name__}"
    if isinstance(value, types.MethodType):
        owner = fingerprint(value.__self__)
        return None if owner is None else f"method:{owner}.{value.__func__.__qualname__}"
    if isinstance(value, type | types.FunctionType | types.BuiltinFunctionType):
        return f"{type(value).__name__}:{value.__module__}.{value.__qualname__}"
    text = repr(value)
    if " at 0x" in text:
        return None
    return f"{type(value).__module__}.{type(value).__qualname__}:{text}"


class LoadedGuard:
    """A guard restored from disk: its reader unpickled, its expected value the one read when
    the entry was validated (which had the recorded fingerprint)."""

    def __init__(self, description: str, read: Any, expected: Any) -> None:
        self.description, self.read, self.expected = description, read, expected

    def holds(self, instance: Any) -> bool:
        """True if re-reading the value from `instance` gives the expected one."""
        try:
            return same_value(self.read(instance), self.expected)
        except Exception:  # the guarded attribute is gone
            return False


def _encode_guard(guard: Any) -> dict[str, str] | None:
    expected = fingerprint(guard.expected)
    if expected is None:
        return None
    try:
        blob = _dump_reader(guard.read)
        _load_reader(blob)  # NOTE: proves it loads back (e.g. no classes local to a function)
    except Exception:  # closure cells, lambdas, local classes: this entry cannot be persisted
        return None
    return {"description": str(guard.description), "expected": expected,
            "reader": base64.b64encode(blob).decode("ascii")}


def _decode_guard(data: dict[str, str], instance: Any) -> LoadedGuard | None:
    """The guard, if re-reading it from `instance` gives the recorded fingerprint."""
    read = _load_reader(base64.b64decode(data["reader"]))
    value = read(instance)
    if fingerprint(value) != data["expected"]:
        return None
    return LoadedGuard(data["description"], read, value)


# -- metadata --------------------------------------------------------------------------------

_UNSEALED = "0" * 64


def _seal(meta: dict[str, Any]) -> str:
    """`meta` as JSON whose last field is the SHA-256 of the text (with that field zeroed)."""
    body = json.dumps({**meta, "sha256": _UNSEALED}, indent=1)
    digest = hashlib.sha256(body.encode("utf-8")).hexdigest()
    head, _, tail = body.rpartition(_UNSEALED)
    return head + digest + tail


def _unseal(text: str) -> dict[str, Any]:
    """The metadata in `text`; ValueError if it is not exactly what `_seal` wrote."""
    meta = json.loads(text)
    digest = meta.pop("sha256")
    head, found, tail = text.rpartition(f'"{digest}"')
    # NOTE: hashing the text itself (not a re-encoding) keeps a warm start cheap.
    if not found or hashlib.sha256(f'{head}"{_UNSEALED}"{tail}'.encode("utf-8")).hexdigest() \
            != digest:
        raise ValueError("metadata hash mismatch")
    if meta.get("format") != FORMAT or meta.get("amber_version") != amber_version():
        raise ValueError("written by another amber version")
    return meta


def _encode_line_map(line_map: dict[int, Loc]) -> dict[str, Any]:
    """Compactly: the files, and one `generated:file:line:col` string (parsed only on error)."""
    files = sorted({loc.file for loc in line_map.values()})
    index = {f: i for i, f in enumerate(files)}
    rows = ";".join(f"{n}:{index[loc.file]}:{loc.line}:{loc.col}"
                    for n, loc in sorted(line_map.items()))
    return {"files": files, "rows": rows}


def _decode_line_map(data: dict[str, Any]) -> dict[int, Loc]:
    files = data["files"]
    out = {}
    for row in filter(None, data["rows"].split(";")):
        n, f, line, col = map(int, row.split(":"))
        out[n] = Loc(files[f], line, col)
    return out


def _encode_externals(externals: dict[str, Any]) -> dict[str, list[str]] | None:
    """Each external class by (module, qualified name); None if one cannot be found by name."""
    out = {}
    for ident, value in externals.items():
        module, qualname = getattr(value, "__module__", ""), getattr(value, "__qualname__", "")
        try:
            found = _resolve(module, qualname)
        except (ImportError, AttributeError):
            return None
        if found is not value:
            return None
        out[ident] = [module, qualname]
    return out


def _resolve(module: str, qualname: str) -> Any:
    obj = sys.modules.get(module) or importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def _encode_param_sig(sig: Any) -> list[Any]:
    return [None if shape is None else [list(shape), np.dtype(dtype).str] for shape, dtype in sig]


def _decode_param_sig(rows: Sequence[Any]) -> tuple:
    return tuple((None, None) if row is None else (tuple(row[0]), np.dtype(row[1]))
                 for row in rows)


@dataclass(frozen=True)
class EntryInfo:
    """One disk entry as `amber cache list` shows it."""
    path: Path
    target: str
    signature: str
    created: str
    size: int
    valid: bool


class DiskCache:
    """The compile cache under `root` (see the module docstring for the layout and checks)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    # -- reading -----------------------------------------------------------------------------
    def lookup(self, first: str, instance: Any, nargs: int) -> CompiledFunction | None:
        """A valid entry under `first` for `instance`, loaded and ready to bind; else None."""
        folder = self.root / first
        try:
            candidates = sorted(folder.glob("*.json"), key=_mtime, reverse=True)
        except OSError:
            return None
        for meta_path in candidates:
            entry = self._load(meta_path, first, instance, nargs)
            if entry is not None:
                return entry
        return None

    def _load(self, meta_path: Path, first: str, instance: Any,
              nargs: int) -> CompiledFunction | None:
        start = time.perf_counter()
        try:
            meta = _unseal(meta_path.read_text(encoding="utf-8"))
            if meta["first_key"] != first or meta["key"] != meta_path.stem:
                return None
            if not all(SourceRecord(**r).is_current() for r in meta["sources"]):
                return None
            guards = tuple(_decode_guard(g, instance) for g in meta["guards"])
            if None in guards:
                return None
            py_path = meta_path.with_suffix(".py")
            source = py_path.read_bytes().decode("utf-8")
            if source_hash(source) != meta["source_sha256"]:
                return None
            entry = CompiledFunction(
                fn=_never_called, source=source, filename=str(py_path),
                function_name=meta["function_name"],
                line_map={}, load_line_map=functools.partial(_decode_line_map,
                                                             meta["line_map"]),
                param_paths=tuple(meta["params"]),
                param_sig=_decode_param_sig(meta["param_sig"]),
                input_paths=tuple(meta["inputs"]), guards=guards, ir=meta.get("ir", ""),
                origin="disk", cache_path=str(py_path))
            entry.prepare(nargs)
            params = make_param_getter(instance, entry.param_paths)(instance)
            if not entry.params_fit([as_plain_array(p) for p in params]):
                return None
            entry.externals = {ident: _resolve(module, qualname)
                               for ident, (module, qualname) in meta["externals"].items()}
            entry.fn = load_function(source, entry.function_name, str(py_path),
                                     entry.externals)
        except Exception:  # NOTE: any damage at all means "not usable": recompile instead
            return None
        entry.seconds = time.perf_counter() - start
        return entry

    # -- writing -----------------------------------------------------------------------------
    def store(self, first: str, entry: CompiledFunction, sources: Sequence[Any], target: str,
              signature: str, files: Sequence[str] = ()) -> Path | None:
        """Write `entry` under `first`; None if it cannot be persisted (or the dir is unwritable).
        `sources` are located in the files of the line map and `files`."""
        if not self.writable:
            return None
        files = [loc.file for loc in entry.line_map.values()] + list(files)
        records = [source_record(item, files) for item in sources]
        guards = [_encode_guard(g) for g in entry.guards]
        externals = _encode_externals(entry.externals)
        if None in records or None in guards or externals is None or not records:
            return None
        meta = {
            "format": FORMAT, "amber_version": amber_version(), "first_key": first,
            "target": target, "signature": signature,
            "created": time.strftime("%Y-%m-%dT%H:%M:%S"),
            "sources": [r.__dict__ for r in records],  # type: ignore[union-attr]
            "guards": guards, "params": list(entry.param_paths),
            "param_sig": _encode_param_sig(entry.param_sig), "inputs": list(entry.input_paths),
            "function_name": entry.function_name, "line_map": _encode_line_map(entry.line_map),
            "source_sha256": source_hash(entry.source), "ir": entry.ir, "externals": externals,
        }
        guard_text = json.dumps([(g["description"], g["expected"]) for g in guards if g])
        key_parts = [first, json.dumps(meta["sources"], sort_keys=True), guard_text,
                     json.dumps(meta["param_sig"])]
        meta["key"] = key = _digest(*key_parts)
        folder = self.root / first
        try:
            self._make_dirs(folder)
            _atomic_write(folder / f"{key}.py", entry.source)
            _atomic_write(folder / f"{key}.json", _seal(meta))
        except OSError as err:
            self._warn_unwritable(err)
            return None
        return folder / f"{key}.py"

    def _make_dirs(self, folder: Path) -> None:
        if not self.root.is_dir():
            self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
            os.chmod(self.root, 0o700)  # NOTE: mkdir's mode is filtered by the umask
        folder.mkdir(mode=0o700, exist_ok=True)

    def _warn_unwritable(self, err: OSError) -> None:
        root = str(self.root)
        if root not in _warned_roots:
            _warned_roots.add(root)
            warn_user(f"amber: cannot write the compile cache in {root} ({err.strerror or err}); "
                      "compiled code is cached in memory only")

    @property
    def writable(self) -> bool:
        """False once writing here failed in this process (no further attempts are made)."""
        return str(self.root) not in _warned_roots

    # -- housekeeping ------------------------------------------------------------------------
    def entries(self) -> Iterator[EntryInfo]:
        """Every entry's summary (damaged ones too, marked invalid)."""
        if not self.root.is_dir():
            return
        for meta_path in sorted(self.root.glob("*/*.json")):
            py_path = meta_path.with_suffix(".py")
            size = sum(p.stat().st_size for p in (meta_path, py_path) if p.exists())
            try:
                meta = _unseal(meta_path.read_text(encoding="utf-8"))
                valid = source_hash(py_path.read_text(encoding="utf-8")) == meta["source_sha256"]
                yield EntryInfo(py_path, meta["target"], meta["signature"], meta["created"],
                                size, valid)
            except Exception:  # damaged or foreign: listed so `amber cache clear` is found
                yield EntryInfo(py_path, "?", "?", "?", size, False)

    def clear(self) -> int:
        """Delete every entry (and stray temporary files); returns how many entries went."""
        if not self.root.is_dir():
            return 0
        removed = 0
        for folder in self.root.iterdir():
            if not folder.is_dir() or len(folder.name) != _KEY_CHARS:
                continue
            for path in folder.iterdir():
                if path.suffix in (".py", ".json", ".tmp"):
                    removed += path.suffix == ".json"
                    path.unlink(missing_ok=True)
            try:
                folder.rmdir()
            except OSError:  # something that is not ours is in there: leave it
                pass
        return removed


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _atomic_write(path: Path, text: str) -> None:
    """Write `text` to `path` so that readers see the old file or the whole new one."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _never_called(*args: Any) -> Any:
    raise AssertionError("a disk cache entry was called before its module was loaded")
