"""The on-disk compile cache: generated modules kept between processes, trusted only after checks.

Layout: `<root>/<first key>/<full key>.py` (the generated module, readable) beside
`<full key>.json` (its metadata). The root is `$AMBER_CACHE_DIR` or the platform's user cache
directory (cachedir.py), created private to the user (0700); a root or key folder that others
could write is not used (one warning; see cachedir.py's trust rules). Its size is kept under a limit by
evicting the least recently used entries; one process compiles a key while others wait for
its entry (cachedir.py).

Keys. The full key hashes everything the code depends on: the source of every function compiled
into it, its guards, the input signature, the pass options and the amber version. The sources
and guards are only known after the frontend ran, so a lookup goes in two steps:
1. the *first key* hashes what is known before compiling (amber, Python and NumPy versions,
   pass options, the target's name and own source, the input signature) and names a directory
   of candidate entries (NumPy's version, because types follow the running NumPy's promotion:
   NumPy 1 and 2 give different dtypes to the same code);
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
never executed. Entries of another amber version are *stale*: `amber cache list` marks them and
`amber cache prune` deletes them (with damaged ones). A directory that cannot be written
degrades to the memory cache with one warning.
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np

from ..version import __version__, compiler_fingerprint
from . import log
from .cachedir import (NATIVE_FOLDER, StoredEntry, evict, key_lock, make_private,
                       make_private_dirs, max_bytes, native_files, remove_empty_folders,
                       stored_entries, untrusted_reason)
from .compiled import CompiledFunction, as_plain_array
from .loader import load_function, source_hash
from .paths import make_param_getter
from .records import (SourceRecord, decode_guard, decode_line_map, decode_param_sig, encode_guard,
                      encode_externals, encode_line_map, encode_param_sig, resolve_name,
                      source_record)
from .warn import warn_user

FORMAT = 1
_KEY_CHARS = 24


@dataclass
class CacheStats:
    """What the disk cache did in this process (all jit objects together)."""
    hits: int = 0
    misses: int = 0
    stores: int = 0
    evictions: int = 0


STATS = CacheStats()
_warned_roots: set[str] = set()
_untrusted: set[str] = set()
"""Cache roots and key folders found untrusted in this process (warned about once)."""
_warned_targets: set[str] = set()


def _unstorable(sources: Sequence[Any], records: Sequence[Any], guards: Sequence[Any],
                encoded: Sequence[Any], externals: Any) -> str | None:
    """Why an entry cannot be written (None when it can): a new process could not check it."""
    if not records:
        return "no compiled source was recorded"
    for item, record in zip(sources, records):
        if record is None:
            head = str(item).split("\n", 1)[0].strip()
            return f"the source of `{head}` is not in a readable file"
    for guard, blob in zip(guards, encoded):
        if blob is None:
            return (f"the compile-time value of {guard.description} cannot be recognised in "
                    f"another process (no stable name or it cannot be re-read)")
    if externals is None:
        return "the code names a class that cannot be imported by name"
    return None


def _warn_once(target: str, message: str) -> None:
    if target not in _warned_targets:
        _warned_targets.add(target)
        warn_user(message)


def amber_version(root: Path | None = None) -> str:
    """amber's version plus a fingerprint of the content of the compiler's own files, so an
    entry written by a different compiler (an upgrade, or an edited checkout with the same
    version) is a miss. `root` keeps the fingerprint between processes (version.py)."""
    return f"{__version__}+{compiler_fingerprint(root)}"


def _digest(*parts: str) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode("utf-8"))
        h.update(b"\0")
    return h.hexdigest()[:_KEY_CHARS]


def first_key(target_name: str, target_source: str, signature: str, options: str,
              root: Path | None = None) -> str:
    """The lookup key computable before compiling (see the module docstring)."""
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    return _digest(f"amber-cache/{FORMAT}", amber_version(root), python, np.__version__, options,
                   target_name, target_source, signature)


# -- metadata --------------------------------------------------------------------------------

_UNSEALED = "0" * 64


def _seal(record: dict[str, Any]) -> str:
    """`record` as JSON whose last field is the SHA-256 of the text (with that field zeroed)."""
    body = json.dumps({**record, "sha256": _UNSEALED}, indent=1)
    digest = hashlib.sha256(body.encode("utf-8")).hexdigest()
    head, _, tail = body.rpartition(_UNSEALED)
    return head + digest + tail


class StaleEntry(ValueError):
    """Metadata written by another amber version (or compiler): intact, but never used."""


def _unseal(text: str) -> dict[str, Any]:
    """The metadata in `text`; ValueError if it is not exactly what `_seal` wrote (StaleEntry
    if it is, but by another amber)."""
    record = json.loads(text)
    digest = record.pop("sha256")
    head, found, tail = text.rpartition(f'"{digest}"')
    # NOTE: hashing the text itself (not a re-encoding) keeps a warm start cheap.
    if not found or hashlib.sha256(f'{head}"{_UNSEALED}"{tail}'.encode("utf-8")).hexdigest() \
            != digest:
        raise ValueError("metadata hash mismatch")
    if record.get("format") != FORMAT or record.get("amber_version") != amber_version():
        raise StaleEntry(f"written by amber {record.get('amber_version', '?')}")
    return record


@dataclass(frozen=True)
class EntryInfo:
    """One disk entry as `amber cache list` shows it."""
    path: Path
    target: str
    signature: str
    created: str
    size: int
    state: str
    """"ok"; "stale" (written by another amber version, never used); "damaged"."""
    last_used: float = 0.0

    @property
    def valid(self) -> bool:
        return self.state == "ok"


class DiskCache:
    """The compile cache under `root` (see the module docstring for the layout and checks)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def first_key(self, target_name: str, target_source: str, signature: str,
                  options: str) -> str:
        """`first_key` with the compiler fingerprint kept in this cache's directory."""
        return first_key(target_name, target_source, signature, options, self.root)

    # -- reading -----------------------------------------------------------------------------
    def lookup(self, first: str, instance: Any, nargs: int) -> CompiledFunction | None:
        """A valid entry under `first` for `instance`, loaded and ready to bind; else None."""
        folder = self.root / first
        if not self.trusted(folder):
            return None
        try:
            candidates = sorted(folder.glob("*.json"), key=_mtime, reverse=True)
        except OSError:
            return None
        for meta_path in candidates:
            entry = self._load(meta_path, first, instance, nargs)
            if entry is not None:
                STATS.hits += 1
                _touch(meta_path)  # NOTE: its modification time is its last use (eviction)
                log.debug("amber: disk cache hit %s in %.1f ms", meta_path.with_suffix(".py"),
                          entry.seconds * 1e3)
                return entry
        STATS.misses += 1
        return None

    def compile_lock(self, first: str) -> Any:
        """A context manager holding the lock of key `first` while one process compiles it
        (see cachedir.py); yields whether the lock was had."""
        if not self.writable or not self.trusted(self.root / first):
            return contextlib.nullcontext(False)
        try:
            self._make_dirs(self.root / first)
        except OSError:
            return contextlib.nullcontext(False)
        return key_lock(self.root / first)

    def _load(self, meta_path: Path, first: str, instance: Any,
              nargs: int) -> CompiledFunction | None:
        start = time.perf_counter()
        try:
            record = _unseal(meta_path.read_text(encoding="utf-8"))
            if record["first_key"] != first or record["key"] != meta_path.stem:
                return None
            if not all(SourceRecord(**r).is_current() for r in record["sources"]):
                return None
            guards = tuple(decode_guard(g, instance) for g in record["guards"])
            if None in guards:
                return None
            py_path = meta_path.with_suffix(".py")
            source = py_path.read_bytes().decode("utf-8")
            if source_hash(source) != record["source_sha256"]:
                return None
            entry = CompiledFunction(
                fn=_never_called, source=source, filename=str(py_path),
                function_name=record["function_name"],
                line_map={}, load_line_map=functools.partial(decode_line_map,
                                                             record["line_map"]),
                param_paths=tuple(record["params"]),
                param_sig=decode_param_sig(record["param_sig"]),
                input_paths=tuple(record["inputs"]), guards=guards, ir=record.get("ir", ""),
                origin="disk", cache_path=str(py_path))
            entry.prepare(nargs)
            params = make_param_getter(instance, entry.param_paths)(instance)
            if not entry.params_fit([as_plain_array(p) for p in params]):
                return None
            entry.externals = {ident: resolve_name(module, qualname)
                               for ident, (module, qualname) in record["externals"].items()}
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
        if not self.writable or not self.trusted(self.root / first):
            return None
        files = [loc.file for top in entry.line_map.values() for loc in top.chain()] + list(files)
        records = [source_record(item, files) for item in sources]
        kept = [g for g in entry.guards if not getattr(g.read, "memory_only", False)]
        guards = [encode_guard(g) for g in kept]
        externals = encode_externals(entry.externals)
        reason = _unstorable(sources, records, kept, guards, externals)
        if reason is not None:
            _warn_once(target, f"amber: {target} ({signature}) cannot be kept in the disk cache: "
                               f"{reason}; it is recompiled in every new process")
            return None
        record = {
            "format": FORMAT, "amber_version": amber_version(), "first_key": first,
            "target": target, "signature": signature,
            "created": time.strftime("%Y-%m-%dT%H:%M:%S"),
            "sources": [r.__dict__ for r in records],  # type: ignore[union-attr]
            "guards": guards, "params": list(entry.param_paths),
            "param_sig": encode_param_sig(entry.param_sig), "inputs": list(entry.input_paths),
            "function_name": entry.function_name, "line_map": encode_line_map(entry.line_map),
            "source_sha256": source_hash(entry.source), "ir": entry.ir, "externals": externals,
        }
        guard_text = json.dumps([(g["description"], g["expected"]) for g in guards if g])
        key_parts = [first, json.dumps(record["sources"], sort_keys=True), guard_text,
                     json.dumps(record["param_sig"])]
        record["key"] = key = _digest(*key_parts)
        folder = self.root / first
        try:
            self._make_dirs(folder)
            _atomic_write(folder / f"{key}.py", entry.source)
            _atomic_write(folder / f"{key}.json", sealed := _seal(record))
        except OSError as err:
            self._warn_unwritable(err)
            return None
        STATS.stores += 1
        log.debug("amber: disk cache stored %s (%d bytes)", folder / f"{key}.py",
                  len(entry.source) + len(sealed))
        self.enforce_limit()
        return folder / f"{key}.py"

    def enforce_limit(self, limit: int | None | bool = True) -> tuple[int, int]:
        """Evict least recently used entries if the directory is over `limit` bytes (True: the
        `AMBER_CACHE_MAX_MB` limit). Returns (entries removed, bytes freed)."""
        try:
            removed, freed = evict(self.root, max_bytes() if limit is True else limit or None)
        except OSError:
            return 0, 0
        STATS.evictions += removed
        return removed, freed

    def _make_dirs(self, folder: Path) -> None:
        make_private_dirs(folder)

    @contextlib.contextmanager
    def native_kernels(self, module: str) -> Iterator[None]:
        """Around loading the newly stored `module` whose kernels Numba compiles and caches
        beside it: their folder is made private first (Numba would make it by the umask) and
        emptied of the key's old files (damaged ones would fail the load), their files made
        private after; then they count toward the size limit."""
        native = Path(module).parent / NATIVE_FOLDER
        with contextlib.suppress(OSError):
            make_private_dirs(native)
            for path in native_files(native.parent).get(Path(module).stem, []):
                path.unlink(missing_ok=True)
        try:
            yield
        finally:
            make_private(native_files(native.parent).get(Path(module).stem, []))
            self.enforce_limit()

    def trusted(self, folder: Path | None = None) -> bool:
        """False (after one warning per folder) if the root, or key `folder` under it, may be
        written by someone else (cachedir.py's trust rules): then it is not used at all."""
        places = (self.root,) if folder is None else (self.root, folder, folder / NATIVE_FOLDER)
        for place in places:
            if str(place) in _untrusted:
                return False
            reason = untrusted_reason(place)
            if reason is not None:
                _untrusted.add(str(place))
                what = "the compile cache" if place == self.root else "a folder of the compile cache"
                warn_user(f"amber: not using {what} {place}: {reason}, and the cache holds code "
                          f"amber runs. Make it yours and private (chmod 700 {place}) or set "
                          "AMBER_CACHE_DIR to a folder only you can write; until then compiled "
                          "code is cached in memory only")
                return False
        return True

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
        """Every entry's summary, least recently used first (stale and damaged ones too)."""
        if not self.root.is_dir():
            return
        amber_version(self.root)  # NOTE: computes the fingerprint with this cache's memo
        for stored in stored_entries(self.root):
            yield _entry_info(stored)

    def prune(self) -> tuple[int, int, int]:
        """Delete stale and damaged entries, then evict to the size limit. Returns (stale or
        damaged entries removed, entries evicted, bytes freed)."""
        removed = freed = 0
        for info in list(self.entries()):
            if not info.valid:
                StoredEntry(info.path.with_suffix(".json"), info.size, 0.0).delete()
                removed, freed = removed + 1, freed + info.size
        if self.root.is_dir():
            remove_empty_folders(self.root)
        evicted, evicted_bytes = self.enforce_limit()
        return removed, evicted, freed + evicted_bytes

    def clear(self) -> int:
        """Delete every entry (and stray temporary files); returns how many entries went."""
        if not self.root.is_dir():
            return 0
        removed = 0
        for folder in self.root.iterdir():
            if not folder.is_dir() or len(folder.name) != _KEY_CHARS:
                continue
            for path in folder.iterdir():
                if path.suffix in (".py", ".json", ".tmp", ".lock"):
                    removed += path.suffix == ".json"
                    path.unlink(missing_ok=True)
            numba = folder / "__pycache__"  # NOTE: Numba's cache of an entry's kernels
            if numba.is_dir():
                for path in numba.iterdir():
                    if path.suffix in (".nbi", ".nbc"):
                        path.unlink(missing_ok=True)
                try:
                    numba.rmdir()
                except OSError:
                    pass
            try:
                folder.rmdir()
            except OSError:  # something that is not ours is in there: leave it
                pass
        return removed


def _entry_info(stored: StoredEntry) -> EntryInfo:
    py_path = stored.code
    try:
        record = _unseal(stored.meta.read_text(encoding="utf-8"))
        intact = source_hash(py_path.read_text(encoding="utf-8")) == record["source_sha256"]
        return EntryInfo(py_path, record["target"], record["signature"], record["created"],
                         stored.size, "ok" if intact else "damaged", stored.last_used)
    except StaleEntry:
        try:
            record = json.loads(stored.meta.read_text(encoding="utf-8"))
            return EntryInfo(py_path, str(record.get("target", "?")),
                             str(record.get("signature", "?")), str(record.get("created", "?")),
                             stored.size, "stale", stored.last_used)
        except (OSError, ValueError, AttributeError):
            pass
    except Exception:  # NOTE: damaged: listed so that `amber cache prune` is found
        pass
    return EntryInfo(py_path, "?", "?", "?", stored.size, "damaged", stored.last_used)


def _touch(path: Path) -> None:
    try:
        os.utime(path)
    except OSError:  # a read-only cache still serves its entries
        pass


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _atomic_write(path: Path, text: str) -> None:
    """Write `text` to `path` so that readers see the old file or the whole new one."""
    if path.is_dir() and not path.is_symlink():
        with contextlib.suppress(OSError):
            path.rmdir()  # NOTE: an empty folder in the way (a fault): the file takes its place
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
