"""Programs from TensorFlow AutoGraph's reference tests (issue 14), part 2 of 3, conditionals:
if/else with names bound, deleted or set to None on one path, early returns, nested and
successive ifs, and/or chains, conditional expressions, and dicts and lists changed in branches
and loops. Rewritten for NumPy: each runs with Python values (decided while compiling) and with
0-d arrays standing for scalar tensors (If/While/For regions), with inputs reaching both
branches, zero-trip loops and early exits. tf.Variable becomes a 0-d Parameter, tf.TensorArray a
list, a tensor to iterate an array. AutoGraph refuses several of these (a name bound on one path
only, None on one path, dtype or shape changing in a loop, loop/else); Python runs them, so
amber must too. Refused ones are in test_peer_autograph_refused.py."""
import numpy as np

from amber import Parameter, nn
from harness import runs


def T(n):
    """A scalar tensor: a 0-d int32 array (tf.constant(int) is int32)."""
    return np.array(n, np.int32)


def B(c):
    """A boolean scalar tensor."""
    return np.array(c)


# -- cond_basic ------------------------------------------------------------------------------

class IfAddsToVariable(nn.Cell):
    def __init__(self):
        super().__init__()
        self.v = Parameter(np.array(7, np.int32))

    def construct(self, c):
        self.v = 0
        if c:
            self.v += 1
        return self.v * 1


runs(True, False, B(True), B(False))(IfAddsToVariable)


class IfElseAddsToVariable(nn.Cell):
    def __init__(self):
        super().__init__()
        self.v = Parameter(np.array(7, np.int32))

    def construct(self, c):
        self.v = 0
        if c:
            self.v += 1
        else:
            self.v += 2
        return self.v * 1


runs(True, False, B(True), B(False))(IfElseAddsToVariable)


@runs(0, 1, T(0), T(1))
def if_one_var(n):
    i = 0
    if i < n:
        i += 1
    return i


@runs(0, 1, T(0), T(1))
def if_else_one_var(n):
    i = 0
    if i < n:
        i += 1
    else:
        i += 2
    return i


@runs(0, 1, T(0), T(1))
def if_two_vars(n):
    i = 0
    j = 1
    if i < n:
        i += 1
        j *= 10
    return i, j


@runs(0, 1, T(0), T(1))
def if_else_two_vars(n):
    i = 0
    j = 1
    if i < n:
        i += 1
        j *= 10
    else:
        i += 2
        j *= 20
    return i, j


@runs(True, False, B(True), B(False))
def if_creates_var(c):
    if c:
        i = 1
    return i


@runs(True, False, B(True), B(False))
def if_else_creates_var(c):
    if c:
        i = 1
    else:
        i = 2
    return i


@runs(True, False, B(True), B(False))
def else_creates_var(c):
    if c:
        pass
    else:
        i = 2
    return i


@runs(True, False, B(True), B(False))
def if_destroys_var(c):
    i = 1
    if c:
        del i
    return i


@runs(True, False, B(True), B(False))
def if_else_destroys_var(c):
    i = 1
    if c:
        del i
    else:
        del i
    return i


@runs(True, False, B(True), B(False))
def else_destroys_var(c):
    i = 2
    if c:
        pass
    else:
        del i
    return i


@runs(True, False, B(True), B(False))
def if_returns_none(c):
    i = 0
    j = 1
    if c:
        i = None
        j = 2
    return i, j


@runs(True, False, B(True), B(False))
def if_else_returns_none(c):
    if c:
        i = None
        j = 1
    else:
        i = None
        j = 2
    return i, j


@runs(True, False, B(True), B(False))
def else_returns_none(c):
    i = 1
    j = 1
    if c:
        pass
    else:
        i = None
        j = 2
    return i, j


@runs(True, False, B(True), B(False))
def if_local_var(c):
    i = 0
    if c:
        j = 1
        i = j + 1
    return i


@runs(True, False, B(True), B(False))
def if_else_local_var(c):
    i = 0
    if c:
        j = 1
    else:
        j = 2
        i = j + 1
    return i


@runs(True, False, B(True), B(False))
def if_locally_modified_var(c):
    i = 0
    j = 2
    if c:
        j = j + 1
        i = j + 1
    return i


TWO_BY_TWO = [(a, b) for a in (0, 1, T(0), T(1)) for b in (0, 1, T(1))]


@runs(*TWO_BY_TWO)
def successive_ifs(n1, n2):
    s = 0
    i = 0
    if i < n1:
        s = s * 10 + i
        i += 1
    i = 0
    if i < n2:
        s = s * 10 + i
        i += 1
    return s


@runs(*TWO_BY_TWO)
def successive_if_elses(n1, n2):
    s = 0
    i = 0
    if i < n1:
        s = s * 10 + i
        i += 1
    else:
        s = s * 11 + i
        i += 2
    i = 0
    if i < n2:
        s = s * 10 + i
        i += 1
    else:
        s = s * 11 + i
        i += 2
    return s


@runs(*TWO_BY_TWO)
def nested_ifs(n1, n2):
    i = 0
    l = 0
    if i < n1:
        j = 0
        s = 0
        if j < n2:
            s = s * 10 + i * j
            j += 1
        l = l * 1000 + s
        i += 1
    return l


@runs(*TWO_BY_TWO)
def nested_if_elses(n1, n2):
    i = 0
    l = 0
    if i < n1:
        j = 0
        s = 0
        if j < n2:
            s = s * 10 + i * j
            j += 1
        else:
            s = s * 11 + i * j
            j += 2
        l = l * 1000 + s
        i += 1
    else:
        j = 0
        s = 0
        if j < n2:
            s = s * 12 + i * j
            j += 3
        else:
            s = s * 13 + i * j
            j += 4
        l = l * 2000 + s
        i += 1
    return l


@runs((True, True), (True, False), (False, True), (B(True), B(True)), (B(True), B(False)),
      (B(False), B(True)), (True, B(False)))
def nested_if_temporarily_undefined_return(c1, c2):
    if c1:
        if c2:
            return 1
    return 2


# -- early_return ----------------------------------------------------------------------------

@runs(0, 1, T(0), T(1))
def return_with_default(x):
    if x > 0:
        print("x", x)
        return x
    return x * x


@runs(True, False, B(True), B(False))
def return_dependent_on_local(c):
    t = np.array(1, np.int32)
    if c:
        return t
    t = np.stack([t, t])
    return t.sum()


@runs(0, 3, 5, T(0), T(3), T(5))
def return_possibly_undefined(x):
    if x > 0:
        if x < 5:
            return x
    else:
        return x * x * x


@runs(-1, 3, 6, T(-1), T(3), T(6))
def nested_ifs_returning(x):
    if x > 0:
        if x < 5:
            return x
        else:
            return x * x
    else:
        return x * x * x


@runs(*[(a, b, n) for a in (True, False) for b in (True, False) for n in (0, 2)],
      (B(True), B(True), T(2)), (B(True), B(False), T(2)), (B(False), True, T(0)))
def possible_return_before_loop(c1, c2, n):
    if c1:
        if c2:
            return 1
    for _ in range(n):
        pass
    return 2


@runs(0, 3, 5, T(0), T(3), T(5))
def unreachable_return(x):
    if x > 0:
        if x < 5:
            return x
        else:
            return x * x
    else:
        return x * x * x
    return x * x * x * x


# -- logical_expression ----------------------------------------------------------------------

BOOL_TRIPLES = ((False, True, False), (False, False, False), (True, True, True),
                (True, False, True), (False, True, True), (False, False, True),
                (B(False), B(True), B(False)), (B(False), B(False), B(False)),
                (B(True), B(True), B(True)), (B(True), B(False), B(True)),
                (B(False), B(False), B(True)), (False, B(True), B(False)))


@runs(*BOOL_TRIPLES)
def composite_ors_with_callable(x, y, z):
    z1 = lambda: z
    return x or y or z1()


@runs(*BOOL_TRIPLES)
def composite_ors(x, y, z):
    return x or y or z


@runs(*BOOL_TRIPLES)
def composite_ands(x, y, z):
    return x and y and z


@runs(*BOOL_TRIPLES)
def composite_mixed(x, y, z):
    return x or y or z and y and z


@runs((1, 1), (1, 2), (T(1), T(1)), (T(1), T(2)), (T(1), 2))
def equality(x, y):
    return x == y


@runs((1, 1), (1, 2), (T(1), T(1)), (T(1), T(2)), (1, T(2)))
def inequality(x, y):
    return x != y


@runs((1, 1, 2), (1, 1, 1), (T(1), T(1), T(2)), (T(1), T(1), T(1)), (T(2), T(1), T(1)))
def multiple_equality(x, y, z):
    return x == y == z


@runs(*[(a, b, c) for a, b, c in ((1, 2, 3), (2, 1, 3), (3, 2, 1), (3, 1, 2), (1, 3, 2),
                                  (2, 3, 1))],
      (T(1), T(2), T(3)), (T(2), T(1), T(3)), (T(1), T(3), T(2)), (T(3), T(2), T(1)))
def comparison(x, y, z):
    return x < y and y < z


# -- basic_ifexp -----------------------------------------------------------------------------

@runs(-1, 1, 5, T(-1), T(1), T(5))
def consecutive_conds(x):
    if x > 0:
        x = -x if x < 5 else x
    else:
        x = -2 * x if x < 5 else 1
    if x > 0:
        x = -x if x < 5 else x
    else:
        x = (3 * x) if x < 5 else x
    return x


@runs(T(-1), T(1), T(5), tag="tensor", refused_on_numpy1=(
    "-x keeps int32 where 2 * x is int64 under NumPy 1, so the conditional expressions' dtype "
    "depends on the branch taken"))
@runs(-1, 1, 5, tag="python")
def cond_with_multiple_values(x):
    if x > 0:
        x = -x if x < 5 else x
        y = 2 * x if x < 5 else x
        z = -y if y < 5 else y
    else:
        x = 2 * x if x < 5 else x
        y = -x if x < 5 else x
        z = -y if y < 5 else y
    return x, y, z


@runs(np.array([1.0]), np.zeros(0), np.array([1.0, 2.0, 3.0]))
def ifexp_with_imbalanced_structure(x):
    parts = [v for v in x] if x.size > 0 else []
    return x * 2 + 1, len(parts)


# -- composite_names_in_control_flow ---------------------------------------------------------

@runs(0, 1, T(0), T(1))
def if_basic_dict(a):
    x = {"a": a}
    if x["a"] > 0:
        x["b"] = 1
    else:
        x["b"] = -1
    return x


@runs(0, 1, T(0), T(1))
def if_basic_list(a):
    x = [a, 0]
    if x[0] > 0:
        x[1] = 1
    else:
        x[1] = -1
    return x


@runs(0, 1, T(0), T(1))
def if_imbalanced(a):
    x = {"a": a}
    if x["a"] > 0:
        x["b"] = 1
    return x


@runs(0, 1, T(0), T(1))
def else_imbalanced(a):
    x = {"a": a}
    if x["a"] > 0:
        pass
    else:
        x["b"] = 1
    return x


@runs(0, 1, T(0), T(1))
def if_imbalanced_nested(a):
    x = {"a": {"a": a}}
    if x["a"]["a"] > 0:
        x["a"]["b"] = 1
    return x


@runs(0, 1, T(0), T(1))
def else_imbalanced_nested(a):
    x = {"a": {"a": a}}
    if x["a"]["a"] > 0:
        pass
    else:
        x["a"]["b"] = 1
    return x


@runs(0, 1, T(0), T(1))
def if_buggy(a):
    x = {"a": {"a": a}}
    if x["a"]["a"] > 0:
        x["b"]["a"] = 1
    else:
        x["b"]["a"] = -1
    return x


@runs(0, 1, T(0), T(1))
def if_imbalanced_buggy(a):
    x = {"a": {"a": a}}
    if x["a"]["a"] > 0:
        x["b"]["a"] = 1
    return x


WHILE_BASIC = [(x, a, 0) for x in (0, 1, 2, T(0), T(1), T(2)) for a in (3, T(7))]


@runs(*WHILE_BASIC)
def while_basic_dict(x, a, b):
    y = {"a": a, "b": b}
    while x > 0:
        x -= 1
        y["a"] += 1
    return y


@runs(*WHILE_BASIC)
def while_basic_list(x, a, b):
    y = [a, b]
    while x > 0:
        x -= 1
        y[0] += 1
    return y


@runs(*[(0, b) for b in (3, 4, 5, 6, T(3), T(6))])
def while_state_only_dict(a, b):
    y = {"a": a, "b": b}
    while y["b"] <= 10:
        y["a"] += 1
        y["b"] *= 2
    return y


@runs(*[(0, b) for b in (3, 4, 5, 6, T(3), T(6))])
def while_state_only_list(a, b):
    y = [a, b]
    while y[1] <= 10:
        y[0] += 1
        y[1] *= 2
    return y


@runs(5, 10, 11, T(5), T(10), T(11))
def while_imbalanced(b):
    y = {"b": b}
    while y["b"] <= 10:
        y["a"] = y["b"] + 1
        y["b"] *= 2
    return y


FOR_BASIC = [(n, 1, 1, 1) for n in (0, 1, 2, T(0), T(1), T(2))]


@runs(*FOR_BASIC)
def for_basic_dict(n, x, a, b):
    y = {"a": a, "b": b}
    for i in range(n):
        x -= 1
        y["a"] += i
    return y


@runs(*FOR_BASIC)
def for_basic_list(n, x, a, b):
    y = [a, b]
    for i in range(n):
        x -= 1
        y[0] += i
    return y


@runs(*[(n, 1, 1) for n in (0, 1, 2, T(0), T(1), T(2))])
def for_state_only_dict(n, a, b):
    y = {"a": a, "b": b}
    for _ in range(n):
        y["a"] += 1
    return y


@runs(*[(n, 1, 1) for n in (0, 1, 2, T(0), T(1), T(2))])
def for_state_only_list(n, a, b):
    y = [a, b]
    for _ in range(n):
        y[0] += 1
    return y


@runs(*[(n, 0) for n in (0, 1, 2, T(0), T(1), T(2))])
def for_imbalanced(n, x):
    y = {}
    for i in range(n):
        x -= i
        y["a"] = x
    return y


def test_program(program, check_program):
    """Compiled and eager agree on every input."""
    check_program(program)
