"""`amber cache path|list|prune|clear`: where the disk cache is, what is in it, trimming it
(stale and damaged entries, then the size limit) and emptying it."""
from __future__ import annotations

import argparse
from typing import Any

from ..runtime import DiskCache, get_context
from ..runtime.cachedir import max_bytes, untrusted_reason

ACTIONS = ("path", "list", "prune", "clear")


def register(sub: Any) -> argparse.ArgumentParser:
    """Add the `cache` subcommand."""
    parser = sub.add_parser("cache", help="the disk cache: show its path, list, prune or clear it")
    parser.add_argument("action", choices=ACTIONS,
                        help="path: print the directory; list: one line per entry (least "
                        "recently used first); prune: delete entries of other amber versions "
                        "and damaged ones, then the least recently used ones over "
                        "AMBER_CACHE_MAX_MB; clear: delete every entry")
    parser.set_defaults(handler=run)
    return parser


def run(ns: argparse.Namespace) -> int:
    cache = DiskCache(get_context().resolved_cache_dir())
    if ns.action == "path":
        print(cache.root)
    elif ns.action == "list":
        entries = list(cache.entries())
        for e in entries:
            state = "" if e.state == "ok" else f"  [{e.state}]"
            print(f"{e.created}  {e.size:>8} B  {e.target}{e.signature}  {e.path}{state}")
        total = sum(e.size for e in entries)
        stale = sum(e.state == "stale" for e in entries)
        damaged = sum(e.state == "damaged" for e in entries)
        limit = max_bytes()
        shown = "no limit" if limit is None else f"limit {_mb(limit)}"
        extra = "".join(f", {n} {what}" for n, what in ((stale, "stale"), (damaged, "damaged"))
                        if n)
        print(f"{len(entries)} entries ({_mb(total)}, {shown}{extra}) in {cache.root}")
        reason = untrusted_reason(cache.root)
        if reason is not None:
            print(f"not used by amber: {reason}; make it private (chmod 700 {cache.root}) or "
                  "set AMBER_CACHE_DIR to a folder only you can write")
    elif ns.action == "prune":
        removed, evicted, freed = cache.prune()
        print(f"removed {removed} stale or damaged and {evicted} least recently used entries "
              f"({_mb(freed)}) from {cache.root}")
    else:
        removed = cache.clear()
        print(f"removed {removed} entries from {cache.root}")
    return 0


def _mb(size: int) -> str:
    return f"{size / 2**20:.1f} MB"
