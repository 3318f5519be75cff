"""Python lists and dicts changed inside construct: a write through one name is seen through
every other (nested dicts, aliases, helpers), in branches and loops; dicts that differ in keys
between branches; empty containers filled in loops; lists built at run time popped, extended,
concatenated and indexed."""
import numpy as np

from harness import f32, i32, runs

POS = f32([1.0, 2.0, 3.0])
NEG = f32([-1.0, -2.0, 0.5])
N3, N0, N1 = i32([3]), i32([0]), i32([1])


@runs(POS, NEG)
def dict_item_written_in_place_through_an_alias_then_grown(x):
    d = {"a": x.copy()}
    e = d
    e["a"] += 1  # the array in place: both names still hold one dict
    d["b"] = 2
    return d["a"], len(e), e["b"], e is d


@runs(POS, NEG)
def containers_holding_an_array_written_in_place_stay_shared(x):
    y = x.copy()
    d = {"y": y}
    other = d
    pair = (d, [y])
    same = pair
    y *= 2
    d["z"] = 1
    pair[1].append(3)
    return len(other), len(same[1]), other["y"], same[0] is d


@runs(POS, NEG)
def nested_dict_item_assigned(x):
    d = {"a": {"b": x}, "n": 1}
    inner = d["a"]
    d["a"]["b"] = x * 2
    inner["c"] = x + 1  # the same dict as d["a"]
    return d["a"]["b"], d["a"]["c"], len(inner)


@runs(POS, NEG)
def dict_gains_a_key_in_one_branch(x):
    d = {"a": x}
    if x.sum() > 0:
        d["b"] = x * 2
    if "b" in d:
        return d["a"] + d["b"]
    return d["a"]


@runs(POS, NEG)
def nested_dict_gains_a_key_in_one_branch(x):
    d = {"a": {"b": x}}
    if x.sum() > 0:
        d["a"]["c"] = x * 2
    return len(d["a"]), d["a"]["b"]


@runs(POS, NEG)
def dict_changed_in_both_branches(x):
    d = {"k": x, "n": 0}
    if x[0] > 0:
        d["k"] = d["k"] * 2
        d["n"] = 1
    else:
        d["k"] = -d["k"]
    return d


def _fill(cache, x):
    cache["k"], cache["v"] = x * 0.1 + cache["k"], x * 0.2 + cache["v"]
    return x + cache["k"]


@runs((POS, 3), (NEG, 0))
def dict_updated_by_a_helper_in_a_loop(x, n):
    cache = {"k": np.zeros(3, np.float32), "v": np.zeros(3, np.float32)}
    out = x
    for i in range(n):
        out = _fill(cache, out)
    return out, cache["k"], cache["v"]


@runs((POS, 3), (NEG, 0))
def empty_dict_filled_in_a_loop(x, n):
    d = {}
    for i in range(n):
        d["a"] = x * i
    return len(d)


@runs((POS, 3), (NEG, 0))
def empty_tuple_grown_in_a_constant_loop(x, n):
    t = ()
    for i in range(3):
        t = t + (x * i,)
    res = ()
    for i in range(n):  # n is a Python int: a constant range
        res = res + (x * i,)
    return t, res


@runs((POS, 3), (POS, 1), (NEG, 0))
def list_items_updated_in_a_loop(x, n):
    lst = [x, x * 2]
    for i in range(n):
        lst[i % 2] = lst[i % 2] + 1
    return lst[0], lst[1]


@runs((POS, 3), (POS, 1), (NEG, 0))
def list_items_augmented_in_a_loop(x, n):
    lst = [x * 1, x * 2]
    first = lst[0]
    for i in range(n):
        lst[i % 2] += 1  # in place: `first` is the same array
    return lst[0], lst[1], first


@runs((POS, 2), (NEG, 0))
def list_item_of_an_argument_augmented(x, n):
    lst = [x]
    lst[0] += 1.0  # the argument itself changes, as eagerly
    return lst[0]


@runs((POS, 3), (NEG, 1))
def dict_items_updated_in_a_loop(x, n):
    d = {"a": x, "b": x * 2}
    for i in range(n):
        d["a"] = d["a"] + 1
        d["b"] += 1.0
    return d["a"], d["b"]


@runs(POS, NEG)
def dict_methods(x):
    d = dict(foo=x, bar=x * 2)
    d.update({"baz": x + 1}, qux=3)
    first = d.pop("foo")
    missing = d.pop("nope", 7)
    d.setdefault("bar", x * 0)
    d.setdefault("new", x - 1)
    more = dict([("a", 1), ("b", x)])
    return first, missing, d, more, d.get("zzz", 5), d.get("bar")


@runs((POS, N3), (POS, N0), (NEG, N1))
def runtime_list_concatenated(x, n):
    items = [x]
    for i in range(int(n[0])):
        items = items + [x * i]
        items += [x]
    return len(items), items[-1]


@runs((POS, N3), (POS, N1))
def runtime_list_popped(x, n):
    items = [x, x * 2, x * 3, x * 4]
    last = x
    for i in range(int(n[0])):
        last = items.pop()
    first = items.pop(0)
    return len(items), last, first


@runs((POS, N3), (NEG, N0))
def runtime_list_inserted_and_extended(x, n):
    items = []
    for i in range(int(n[0])):
        items.insert(0, x * i)
        items.extend([x, x + 1])
    copy = items.copy()
    copy.append(x)
    return items, len(copy)


@runs(POS, NEG)
def runtime_list_sliced_after_enumerate(x):
    out = []
    for i, v in enumerate(x):
        out.append(v * i)
    return out[1:], out[-1], len(out[:2])


@runs(POS, NEG)
def compile_time_list_methods(x):
    items = [x, x * 2, x * 3]
    items.reverse()
    copied = items.copy()
    copied.append(x)
    names = ["a", "b", "c"]
    names.remove("b")
    return items, len(copied), names, names.index("c")


def test_program(program, check_program):
    """Compiled and eager agree on every input."""
    check_program(program)
