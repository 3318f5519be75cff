"""`amber cache path|list|clear`: where the disk cache is, what is in it, and emptying it."""
from __future__ import annotations

import argparse
from typing import Any

from ..runtime import DiskCache, get_context

ACTIONS = ("path", "list", "clear")


def register(sub: Any) -> argparse.ArgumentParser:
    """Add the `cache` subcommand."""
    parser = sub.add_parser("cache", help="the disk cache: show its path, list or clear it")
    parser.add_argument("action", choices=ACTIONS,
                        help="path: print the directory; list: one line per entry; clear: "
                        "delete every entry")
    parser.set_defaults(handler=run)
    return parser


def run(ns: argparse.Namespace) -> int:
    cache = DiskCache(get_context().resolved_cache_dir())
    if ns.action == "path":
        print(cache.root)
    elif ns.action == "list":
        entries = list(cache.entries())
        for e in entries:
            state = "" if e.valid else "  [damaged]"
            print(f"{e.created}  {e.size:>8} B  {e.target}{e.signature}  {e.path}{state}")
        print(f"{len(entries)} entries in {cache.root}")
    else:
        removed = cache.clear()
        print(f"removed {removed} entries from {cache.root}")
    return 0
