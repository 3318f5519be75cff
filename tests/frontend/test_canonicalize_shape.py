"""canonicalize: the exact output for representative functions (golden text), locations of new
nodes, synthetic names, and that the cached parse is left alone."""
from __future__ import annotations

import textwrap

import gast
import pytest

from amber.codegen.pyast import to_source
from amber.frontend.canonicalize import SYNTHETIC_PREFIX, canonicalize
from amber.frontend.errors import CompileError
from amber.frontend.source import parse_function


def text(fn) -> str:
    tree = canonicalize(parse_function(fn))
    source = to_source(gast.gast_to_ast(gast.Module(body=[tree], type_ignores=[])))
    return "".join(line.rstrip() + "\n" for line in source.splitlines())


def scan(xs, n):
    total = 0
    for i in range(n):
        if xs[i] < 0:
            continue
        if xs[i] > 100:
            return -1
        total += xs[i]
        if total > 50:
            break
    print(total)
    return total


def test_range_loop_with_break_return_continue():
    assert text(scan) == textwrap.dedent("""\
        def scan(xs, n):
            __amber_ret_value = None
            __amber_ret_flag = False
            total = 0
            __amber_range_i0 = 0
            __amber_range_stop0 = n
            __amber_brk0 = False
            while __amber_range_i0 < __amber_range_stop0 and not __amber_brk0:
                i = __amber_range_i0
                __amber_range_i0 = __amber_range_i0 + 1
                if xs[i] < 0:
                    pass
                elif xs[i] > 100:
                    __amber_ret_value = -1
                    __amber_ret_flag = True
                    __amber_brk0 = True
                else:
                    total += xs[i]
                    if total > 50:
                        __amber_brk0 = True
            if not __amber_ret_flag:
                print(total)
                __amber_ret_value = total
            return __amber_ret_value
        """)


def first_negative(xs, step):
    for x in xs:
        if x < 0:
            break
    for k in range(10, 0, step):
        if k == 3:
            break
    return x, k


def test_list_loop_keeps_for_and_variable_step_checks_zero():
    assert text(first_negative) == textwrap.dedent("""\
        def first_negative(xs, step):
            __amber_brk0 = False
            for __amber_item0 in xs:
                if not __amber_brk0:
                    x = __amber_item0
                    if x < 0:
                        __amber_brk0 = True
            __amber_range_i1 = 10
            __amber_range_step1 = step
            if __amber_range_step1 == 0:
                raise ValueError('range() arg 3 must not be zero')
            __amber_brk1 = False
            while (__amber_range_i1 < 0 if __amber_range_step1 > 0 else
                __amber_range_i1 > 0) and not __amber_brk1:
                k = __amber_range_i1
                __amber_range_i1 = __amber_range_i1 + __amber_range_step1
                if k == 3:
                    __amber_brk1 = True
            return x, k
        """)


def skip_big(xs):
    for x in xs:
        if x > 0:
            if x > 5:
                continue
            print(x)
        print("after", x)
    while True:
        x -= 1
        if x < 0:
            break
        continue


def test_continue_flag_and_while_true():
    assert text(skip_big) == textwrap.dedent("""\
        def skip_big(xs):
            for x in xs:
                __amber_cont0 = False
                if x > 0:
                    if x > 5:
                        __amber_cont0 = True
                    else:
                        print(x)
                if not __amber_cont0:
                    print('after', x)
            __amber_brk1 = False
            while not __amber_brk1:
                x -= 1
                if x < 0:
                    __amber_brk1 = True
            return None
        """)


def sign(x):
    if x > 0:
        return 1
    elif x < 0:
        return -1
    return 0


def test_tail_returns_need_no_flag():
    assert text(sign) == textwrap.dedent("""\
        def sign(x):
            __amber_ret_value = None
            if x > 0:
                __amber_ret_value = 1
            elif x < 0:
                __amber_ret_value = -1
            else:
                __amber_ret_value = 0
            return __amber_ret_value
        """)


def single_return(x):
    y = x + 1
    return y * 2, y


def test_single_final_return_is_kept():
    assert text(single_return) == textwrap.dedent("""\
        def single_return(x):
            y = x + 1
            return y * 2, y
        """)


def shadowed(n):
    range = lambda k: [k, k + 1]  # noqa: E731 (not compiled; only parsed)
    for i in range(n):
        if i > n:
            break
    return i


def test_shadowed_range_is_not_rewritten():
    tree = canonicalize(parse_function(shadowed))
    assert not any(isinstance(n, gast.While) for n in gast.walk(tree))


def test_new_nodes_point_at_the_user_statement():
    tree = canonicalize(parse_function(scan))
    first = scan.__code__.co_firstlineno
    lines = {n.targets[0].id: n.lineno for n in gast.walk(tree) if isinstance(n, gast.Assign)
             and n.targets[0].id.startswith(SYNTHETIC_PREFIX) and n.value.__class__ is
             gast.Constant and n.value.value is True}
    assert lines == {"__amber_ret_flag": first + 6, "__amber_brk0": first + 9}
    loop = next(n for n in gast.walk(tree) if isinstance(n, gast.While))
    assert (loop.lineno, loop.col_offset) == (first + 2, 4)
    assert all(n.lineno >= first for n in gast.walk(tree) if hasattr(n, "lineno"))


def test_cached_parse_is_not_mutated_and_output_is_deterministic():
    parsed = parse_function(scan)
    before = gast.dump(parsed.node, include_attributes=True)
    once = gast.dump(canonicalize(parsed), include_attributes=True)
    twice = gast.dump(canonicalize(parse_function(scan)), include_attributes=True)
    assert once == twice
    assert gast.dump(parsed.node, include_attributes=True) == before


def test_user_names_are_never_synthetic():
    tree = canonicalize(parse_function(skip_big))
    names = {n.id for n in gast.walk(tree) if isinstance(n, gast.Name)}
    assert {n for n in names if not n.startswith(SYNTHETIC_PREFIX)} == {"xs", "x", "print"}


def loop_else(xs):
    for x in xs:
        if x:
            break
    else:
        return 1
    return 0


def test_loop_else_runs_unless_the_loop_broke():
    tree = canonicalize(parse_function(loop_else))
    loops = [n for n in gast.walk(tree) if isinstance(n, gast.For | gast.While)]
    assert loops and not any(loop.orelse for loop in loops)
    guard = next(n for n in gast.walk(tree) if isinstance(n, gast.If) and isinstance(
        n.test, gast.UnaryOp) and n.test.operand.id.startswith(SYNTHETIC_PREFIX + "brk"))
    assert guard.lineno == loop_else.__code__.co_firstlineno + 5
