"""What a disk cache entry records about its code, and how each record is checked in a new
process: the compiled functions' source locations and hashes, the guards (their readers pickled,
their values by `fingerprint`), the line map, the parameter signature and the user classes the
module names. See `diskcache.py` for how entries are keyed, stored and validated."""
from __future__ import annotations

import base64
import hashlib
import importlib
import io
import linecache
import os
import pickle
import sys
import textwrap
import types
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ..frontend.guards import Guard
from ..graph.ir import Loc


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
        text = read_lines(self.file, self.line, self.count)
        return text is not None and text_hash(text) == self.sha


def text_hash(text: str) -> str:
    return hashlib.sha256(textwrap.dedent(text).encode("utf-8")).hexdigest()


def read_lines(file: str, line: int, count: int) -> str | None:
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
        return source_at(item) or locate_source(item, files)
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
                        len(lines), text_hash(text))


def source_at(text: str) -> SourceRecord | None:
    """The record of a text that says where it was read (the frontend's `SourceText`: `file`,
    `first_line`), if that place still holds it."""
    file, line = getattr(text, "file", None), getattr(text, "first_line", None)
    want = text.splitlines(keepends=True)
    if not file or not line or not want:
        return None
    block = read_lines(file, line, len(want))
    if block is None:
        return None
    lines = block.splitlines(keepends=True)
    indent = lines[0][:len(lines[0]) - len(lines[0].lstrip())]
    if [ln[len(indent):] if ln.startswith(indent) else ln for ln in lines] != want:
        return None
    head = want[0].strip()
    name = head.split("(")[0].removeprefix("def ").strip() if head.startswith("def ") else head
    return SourceRecord(name, os.path.abspath(file), line, len(want), text_hash(block))


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
                                        text_hash(block))
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
    text = read_lines(code.co_filename, code.co_firstlineno, last - code.co_firstlineno + 1)
    defaults = _defaults(func)
    if text is None or defaults is None:
        return None
    return f"{os.path.abspath(code.co_filename)}:{code.co_firstlineno}:{text_hash(text)}{defaults}"


def _defaults(func: Any) -> str | None:
    """The function's default argument values by `fingerprint` ("" when it has none): the
    compiled code bakes them in, and one `def` run twice (a factory's `def f(x, k=k)`) gives
    functions of one name and source with different defaults. None if one has no stable name."""
    values = (getattr(func, "__defaults__", None), getattr(func, "__kwdefaults__", None))
    if values == (None, None):
        return ""
    found = fingerprint([values[0] or (), sorted((values[1] or {}).items())])
    return None if found is None else f" defaults={found}"


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
    if isinstance(value, types.CodeType):  # NOTE: by place; the source records check its text
        return f"code:{value.co_filename}:{value.co_firstlineno}:{value.co_name}"
    if isinstance(value, types.FunctionType):
        defaults = _defaults(value)
        return None if defaults is None else \
            f"function:{value.__module__}.{value.__qualname__}{defaults}"
    if isinstance(value, type | types.BuiltinFunctionType):
        return f"{type(value).__name__}:{value.__module__}.{value.__qualname__}"
    text = repr(value)
    if " at 0x" in text:
        return None
    return f"{type(value).__module__}.{type(value).__qualname__}:{text}"


def encode_guard(guard: Any) -> dict[str, str] | None:
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


def decode_guard(data: dict[str, str], instance: Any) -> Guard | None:
    """The guard, if re-reading it from `instance` gives the recorded fingerprint."""
    read = _load_reader(base64.b64decode(data["reader"]))
    value = read(instance)
    if fingerprint(value) != data["expected"]:
        return None
    return Guard(data["description"], read, value)


# -- line map, user classes, parameter signature ----------------------------------------------

def encode_line_map(line_map: dict[int, Loc]) -> dict[str, Any]:
    """Compactly: the files, and one `generated:file:line:col` string (parsed only on error);
    the callers of an inlined line follow as `<file:line:col`, innermost first."""
    files = sorted({loc.file for top in line_map.values() for loc in top.chain()})
    index = {f: i for i, f in enumerate(files)}
    rows = ";".join(f"{n}:" + "<".join(f"{index[loc.file]}:{loc.line}:{loc.col}"
                                      for loc in top.chain())
                    for n, top in sorted(line_map.items()))
    return {"files": files, "rows": rows}


def decode_line_map(data: dict[str, Any]) -> dict[int, Loc]:
    files = data["files"]
    out = {}
    for row in filter(None, data["rows"].split(";")):
        n, _, chain = row.partition(":")
        loc = None
        for part in reversed(chain.split("<")):  # NOTE: outermost first, to link callers
            f, line, col = map(int, part.split(":"))
            loc = Loc(files[f], line, col, caller=loc)
        assert loc is not None
        out[int(n)] = loc
    return out


def encode_externals(externals: dict[str, Any]) -> dict[str, list[str]] | None:
    """Each external class by (module, qualified name); None if one cannot be found by name."""
    out = {}
    for ident, value in externals.items():
        module, qualname = getattr(value, "__module__", ""), getattr(value, "__qualname__", "")
        try:
            found = resolve_name(module, qualname)
        except (ImportError, AttributeError):
            return None
        if found is not value:
            return None
        out[ident] = [module, qualname]
    return out


def resolve_name(module: str, qualname: str) -> Any:
    obj = sys.modules.get(module) or importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def encode_param_sig(sig: Any) -> list[Any]:
    return [None if shape is None else [list(shape), np.dtype(dtype).str] for shape, dtype in sig]


def decode_param_sig(rows: Sequence[Any]) -> tuple:
    return tuple((None, None) if row is None else (tuple(row[0]), np.dtype(row[1]))
                 for row in rows)
