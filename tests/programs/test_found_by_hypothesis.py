"""Programs `test_random_programs.py` found miscompiled, as hypothesis shrank them (renamed, run on
the generator's inputs, unused generator boilerplate removed from the last one). The first four
failed with an UnboundLocalError on a compiler temporary: a value computed on one path (often a
repeated `a.sum() > 0`) was reused on a path that skipped it. The last three reuse a value that
an in-place write changed: a loop-invariant value hoisted out of the loop though each iteration
mutates it, `b + b` computed once for two in-place adds on aliases of the same array, and `b[1]`
read once though `a[1] = ...` wrote it through the alias `a = b` in between. The last two came
from the flavors for issue 14: an in-place write after an early return made a version of the
return value (unbound on the path that had not returned) that a later loop read, and a dict
gaining a key in a nested branch left uses by a discarded branch in the graph ("internal
error: graph invalid"). The `nesting` flavor found the two after them: a branch that always
raises counted as one where the return value stays unbound, so codegen split the return value's
variable and copied it while still unbound (UnboundLocalError in generated code). The `lists`
flavor found the last: `max(vals)` of a list holding one run-time number iterated over it; the `nesting` flavor, an
UnboundLocalError reported at the line before (CPython 3.11 fuses an assignment with the next
line's read of a local into one instruction once the code is warm). An independent generator
found the Cell at the end (issue 29): `v * 1.0` and `z * 1` were dropped as identities, so `z`
was `y` itself and the later `y[2] = ...` changed it; the `aliasing` flavor now makes copies by
identity ops too."""
import numpy as np

from amber import nn
from harness import f32, runs

INPUTS = tuple((a, b, n) for a, b in (
    (f32([1.0, 2.0, 3.0]), f32([-1.0, -2.0, 0.5])),
    (f32([-1.5, 0.5, -0.25]), f32([2.0, -3.0, 0.25])),
    (f32([0.0, 0.0, 0.0]), f32([0.5, 0.5, 0.5]))) for n in (0, 2))


@runs(*INPUTS)
def return_in_branch_then_nested_return_in_loop(a, b, n):
    k = 0
    m = n
    if a.sum() > 0:
        return a
    for i0 in range(1):
        if a.sum() > 0:
            if a.sum() > 0:
                return a
    return a


@runs(*INPUTS)
def zero_trip_while_then_return_in_tensor_loop(a, b, n):
    k = 0
    m = n
    k = k + 1
    w0 = 0
    while w0 < 0 and (a.sum() > 0):
        w0 += 1
        if a.sum() > 0:
            k = k + 1
    k = k + 1
    k = k + 1
    if a.sum() > 0:
        k = k + 1
    else:
        k = k + 1
        if a.sum() > 0:
            return a, b, k
        k = k + 1
    for i1 in a:
        a = a + i1
        if a.sum() > 0:
            return a, b, k
    return a, b, k


@runs(*INPUTS)
def print_after_zero_trip_while_then_returns(a, b, n):
    k = 0
    m = n
    if a.sum() > 0:
        return a, b, k
    if a.sum() > 0:
        k = k + 1
        w0 = 0
        while w0 < 0 and (a.sum() > 0):
            w0 += 1
            k = k + 1
            if a.sum() > 0:
                k = k + 1
                k = k + 1
            k = k + w0
        print("at", k, m, a.sum() > 0)
    else:
        if a.sum() > 0:
            return a, b, k
        if a.sum() > 0:
            a = np.tanh(a + a)
            k = k + 1
    if a.sum() > 0:
        k = k + 1
    k = k + 1
    k = k + 1
    w1 = 0
    while w1 < 1 and (a.sum() > 0):
        w1 += 1
        if a.sum() > 0:
            return a, b, k
    return a, b, k


@runs(*INPUTS)
def empty_range_loop_then_repeated_guarded_returns(a, b, n):
    k = 0
    m = n
    if a.sum() > 0:
        for i0 in range(0):
            if a.sum() > 0:
                k = k + 1
            if a.sum() > 0:
                k = k + 1
        if a.sum() > 0:
            return a, b, k
        k = k + 1
    k = k + 1
    if a.sum() > 0:
        if a.sum() > 0:
            return a, b, k
    if a.sum() > 0:
        if a.sum() > 0:
            return a, b, k
    for i1 in range(1):
        if a.sum() > 0:
            return a, b, k
    return a, b, k


@runs(*INPUTS)
def loop_invariant_value_mutated_in_place(a, b, n):
    for i0 in range(2):
        b = np.tanh(a + a)
        b[0] = a[0] + 0
        b += a
    return a, b


@runs(*INPUTS)
def aliased_inplace_adds(a, b, n):
    a = b
    a += a
    b += b
    return a, b


@runs(*INPUTS)
def aliased_item_write_then_read(a, b, n):
    w0 = 0
    while w0 < 1 and (a.sum() > 0):
        w0 += 1
        a = b
        a[1] = a[1] + 1
        a[0] = b[1] + 0
    return a, b


@runs(*INPUTS)
def inplace_write_after_an_early_return_then_loop(a, b, n):
    z = np.array(a[0])
    y = z
    if b.sum() > 5:
        a = a + 1
    else:
        if y < z:
            return a, z
    np.add(y, b[1], out=y)
    w2 = 0
    while w2 < 2 and (y < z):
        return a, z
    return a, z


@runs(*INPUTS)
def dict_gains_a_key_in_nested_branches(a, b, n):
    d = {"x": a, "n": {"v": b}}
    if d["x"].sum() > 2:
        if d["x"].sum() > 1:
            d["n"]["w"] = b * 2.0
    d["n"]["w"] = b * 2.0
    return len(d["n"]), d["n"]["w"]


@runs(*INPUTS)
def loop_after_a_branch_that_always_raises(a, b, n):
    if a[0] > 2:
        b = b + late  # UnboundLocalError: `late` is bound only below
        late = a
    for i1 in range(3):
        b = b + late  # the loop body always raises too: it carries b through unchanged
        if b[0] > 0:
            return b
    return b


@runs(*INPUTS)
def while_condition_that_always_raises_in_a_branch(a, b, n):
    if n > 9:
        late = a  # never runs: `late` is local, unbound below
    w0 = 0
    if a.sum() > 3:
        while w0 < 3 and (0 < late.sum()):  # raises at its first check, where it runs
            w0 += 1
            b = b * 2.0
    return b, w0


@runs(*INPUTS)
def unused_read_of_a_variable_bound_only_in_a_loop_body(a, b, n):
    w0 = 0
    while w0 < 1 and (a.sum() > 0):
        w0 += 1
        late = a * 0.5
    late = a + late  # UnboundLocalError where the loop never ran, though `late` is not used
    return a, b


@runs(*INPUTS)
def unused_read_of_a_variable_bound_in_one_branch(a, b, n):
    if a[0] > 0:
        late = a
    unused = late * 2.0  # UnboundLocalError on the other path
    return b


@runs(*INPUTS)
def return_slot_carried_past_a_branch_that_always_raises(a, b, n):
    if a.sum() > 0:
        if 0 < late.sum():  # raises where it runs: `late` is bound only below
            return a, b
    else:
        a = np.tanh(a + a)
    late = a * 0.5
    if a.sum() <= 0:
        w1 = 0
        while w1 < 1 and (a.sum() > 0):
            w1 += 1
            if a.sum() > 0:
                return a, b
    return a, b


@runs(*INPUTS)
def return_in_a_loop_after_a_branch_that_always_raises(a, b, n):
    if a.sum() > 0:
        if 0 < late.sum():
            return a, b
    else:
        a = np.tanh(a + a)
    late = a * 0.5
    w1 = 0
    while w1 < 1:
        w1 += 1
        if a.sum() > 0:
            return a, b
    return a, b


@runs(*INPUTS)
def max_and_min_of_a_list_holding_one_run_time_number(a, b, n):
    k = 0
    vals = []
    for i0 in (1, 2):
        k = k + i0
        vals.append(a.sum())
        k = k + int(max(vals) > min(vals))  # max([s]) is s: no iteration over it
    return k, max([b[0]]), min([a.sum()])


@runs(*INPUTS)
def unbound_read_right_after_an_assignment_on_a_warm_function(a, b, n):
    k = 0
    if n > 9:  # never: `late` is a local variable, unbound until bound below
        late = a
    ld = [{"v": a * 1.0}, {"v": b * 1.0}]
    dd = {"in": {"s": k}}
    if a.sum() > 0:
        a = np.maximum(a, b)
    else:
        for i0 in range(3):
            ld[0]['v'] += a
            late = b * 0.5
            b = b + late
        late = a + late
    if b[2] > 0:
        ld[0]['v'] += b  # generated: `t = assign_item(...)`, then the read of `late`
    a = ld[1]['v'] + b
    if 2 < late.sum():  # UnboundLocalError here, also once CPython has specialized the code
        b = ld[0]['v'] + b
    return dd


class _PassesOnOrShifts(nn.Cell):
    def construct(self, v, k):
        if (k % 2 == 0) and ((v > -0.25).any()):
            pass  # NOTE: `v` is the caller's `y` itself on this path
        else:
            v -= v.min()
        v, (k, g) = v * 1.0, (k * 2 % 5, 0.5)
        return v


@runs((f32([-1.5, 2.0, -0.75, 0.5]), f32([-0.75, 1.5, 1.75, 1.5]), None, 0),
      (f32([1.0, 2.0, 3.0, 4.0]), f32([-1.0, -2.0, -3.0, 0.5]), None, 0))
class CopyByIdentityThenWriteToItsSource(nn.Cell):
    def __init__(self):
        super().__init__()
        self.sub = _PassesOnOrShifts()

    def construct(self, x, y, z, n):
        z = self.sub(y, 0)
        y[2] = x.argmax()  # NOTE: must not reach `z`, a copy in eager Python
        for i1 in (1, 2.5, 3):
            z = z * i1
        return [x, z]


def test_program(program, check_program):
    """Compiled and eager agree on every input."""
    check_program(program)
