"""Programs from the groups of issue 14 (the control-flow tests of AutoGraph, Paddle dy2static
and MindSpore's graph mode, translated): returns inside loops after in-place updates, tuples
grown in loops, a name bound only in a loop body, an optional Cell attribute used as a key,
None next to arrays in conditions, tuples and lists as NumPy operands, dicts and lists nested
and updated in run-time loops, 0-d Parameters updated through helper methods called from
branches, and a dict gaining a key inside nested branches (once an internal error)."""
import numpy as np

from amber import Parameter, nn
from harness import f32, i32, runs

POS = f32([1.0, 2.0, 3.0])
NEG = f32([-1.0, -2.0, 0.5])


@runs((POS, 3), (NEG, 0))
def return_in_for_after_augmented_add(x, n):
    acc = x * 0
    for i in range(n):
        acc += x
        if acc.sum() > 5:
            return acc
    return acc


@runs((POS, 3), (NEG, 0))
def return_in_while_after_augmented_add(x, n):
    acc = x * 0
    i = 0
    while i < n:
        acc += 1.0
        i += 1
        if acc.sum() > 5:
            return acc, i
    return acc, i


@runs((POS, 3), (NEG, 0), (POS, 1))
def tuple_grown_in_a_constant_range(x, n):
    res = ()
    for i in range(n):
        res = res + (x * i,)
    return res


@runs(POS, NEG)
def bound_only_in_a_run_time_loop_body(x):
    for i in range(int(x.sum() > 0) * 2):
        y = x * i
    return y


class OptionalBias(nn.Cell):
    def __init__(self, bias):
        super().__init__()
        self.bias = Parameter(f32([1.0, 1.0, 1.0])) if bias else None
        self.scales = {None: 1.0, True: 2.0}

    def construct(self, x):
        out = x * self.scales[self.bias is not None or None]
        if self.bias is not None:
            out = out + self.bias
        return out


runs(POS, NEG, init=(True,), tag="bias")(OptionalBias)
runs(POS, NEG, init=(False,), tag="no_bias")(OptionalBias)


@runs(POS, NEG)
def none_or_array_in_a_condition(x):
    o = None
    if x.sum() > 0:
        o = x
    if o is not None and o.sum() > 0:
        return o * 2
    return x


@runs(POS, NEG)
def tuples_and_lists_as_operands(x):
    return x * (1.0, 2.0, 3.0), x + (1, 2, 3), np.maximum(x, [1, 2, 0])


@runs((POS, 3), (NEG, 0))
def list_concatenated_and_popped_in_a_run_time_loop(x, n):
    lst = [x]
    for i in range(int(x.sum() > 0) * n):
        lst = lst + [x * i]
        if i == 1:
            lst.pop()
    return len(lst), lst[-1]


@runs(POS, NEG)
def list_sliced_inside_enumerate(x):
    out = []
    for i, v in enumerate(x):
        out.append(v * i)
        tail = out[1:]
    return len(tail), out[-1]


@runs(POS, NEG)
def dict_in_a_list_gains_a_key_in_a_branch(x):
    cfg = [{"a": x}, {"a": x * 2}]
    if x.sum() > 0:
        cfg[0]["b"] = x + 1
        cfg[1]["a"] = cfg[1]["a"] - 1
    return cfg[1]["a"], "b" in cfg[0], len(cfg[0])


@runs((POS, 3), (NEG, 0))
def nested_dict_item_updated_in_a_run_time_loop(x, n):
    d = {"inner": {"v": x}}
    for i in range(int(x.sum() > 0) * n):
        d["inner"]["v"] = d["inner"]["v"] * 2
    return d["inner"]["v"]


@runs((POS, 3), (NEG, 0))
def list_in_a_dict_augmented_in_a_run_time_loop(x, n):
    d = {"xs": [x * 1, x * 1]}
    for i in range(int(x.sum() > 0) * n):
        d["xs"][i % 2] += 1.0
    return d["xs"][0], d["xs"][1]


@runs((POS, 3), (NEG, 0))
def list_items_updated_in_a_run_time_loop(x, n):
    lst = [x * 1, x * 2]
    for i in range(int(x.sum() > 0) * n):
        lst[i % 2] += 1.0
        lst[0] = lst[0] * 2
    return lst


@runs(POS, NEG)
def nested_dict_gains_a_key_in_nested_branches(a):
    d = {"x": a, "n": {"v": a}}
    if a.sum() > 2:
        if a.sum() > 1:
            d["n"]["w"] = a * 2.0
    d["n"]["w"] = a * 3.0
    return len(d["n"])


@runs(POS, NEG, f32([0.5, 0.5, 0.5]))
def vector_or_element_then_early_return(x):
    v = x
    if x.sum() > 0:
        v = x.sum()
        if v > 3:
            return v
    else:
        v = x[0]
    return v * 2


@runs(i32([3, 2]), i32([0, 5]))
def zero_d_array_aliases_and_out(x):
    z = np.array(x[0])
    y = np.asarray(z)  # the same array
    np.add(z, 1, out=z)
    w = np.array(z)  # a copy
    w += 5
    return z, y, w


@runs(POS, NEG)
def zero_d_view_of_an_argument(x):
    s = x.sum().reshape(())
    t = s
    t += 1
    return s, t


class BumpedThroughHelpers(nn.Cell):
    def __init__(self):
        super().__init__()
        self.p = Parameter(np.array(0.0, np.float32))
        self.q = Parameter(np.array(1, np.int32))

    def bump(self, v):
        self.p += v
        self.q -= 1

    def construct(self, x):
        if x.sum() > 0:
            self.bump(x.sum())
        else:
            for v in x:
                self.bump(v)
        t = self.q  # the Parameter itself: counting t down changes q
        while t > -3:
            t -= 1
        return self.p * 1, self.q * 1


runs(POS, NEG, POS)(BumpedThroughHelpers)


class ParameterAssignedNumbers(nn.Cell):
    def __init__(self):
        super().__init__()
        self.weight = Parameter(np.array(2, np.int32))
        self.scale = Parameter(np.array(2.0, np.float32))

    def construct(self, x):
        self.weight = self.weight + 1
        self.scale = 3
        if x.sum() > 0:
            self.scale = x.sum()
        return self.weight * 1, self.scale * 1


runs(POS, NEG)(ParameterAssignedNumbers)


def test_program(program, check_program):
    """Compiled and eager agree on every input."""
    check_program(program)
