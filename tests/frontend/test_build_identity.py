"""A list or dict made in compiled code is one object wherever it ends up, as in Python: returned
under two names (or twice inside a container) it comes back as one object, and one written
through an alias is that object too. A container put into itself has no run-time form here and
is refused at its line."""
import numpy as np
import pytest

import amber
from amber import CompileError

X = np.array([1.0, -2.0, 3.0])


def returned_under_two_names(x):
    a = [x]
    b = a
    return a, b


def written_through_an_alias(x):
    a = [x]
    b = a
    b.append(x + 1)
    return a, b


def nested_twice(x):
    a = [x * 2]
    return [a, a], {"p": a, "q": a}


def appended_in_a_branch(x):
    a = [x]
    b = a
    if x.sum() > 0:
        b.append(x * 2)
    return a, b


def appended_in_a_loop(x):
    a = [x]
    for i in range(3):
        a.append(x + i)
    return a, a


def two_equal_lists(x):
    a = [x]
    b = [x]
    return a, b


def same_objects(got, expected):
    """The pairs of places that hold one object in `expected` are the pairs that do in `got`."""
    def places(v, path=()):
        yield path, v
        items = v.items() if isinstance(v, dict) else enumerate(v) \
            if isinstance(v, list | tuple) else ()
        for k, item in items:
            yield from places(item, path + (k,))
    mine = [(p, v) for p, v in places(got) if isinstance(v, list | dict)]
    theirs = [(p, v) for p, v in places(expected) if isinstance(v, list | dict)]
    assert [p for p, _ in mine] == [p for p, _ in theirs]
    for i in range(len(mine)):
        for j in range(i + 1, len(mine)):
            assert (mine[i][1] is mine[j][1]) == (theirs[i][1] is theirs[j][1]), \
                (mine[i][0], mine[j][0])


@pytest.mark.parametrize("program", [returned_under_two_names, written_through_an_alias,
                                     nested_twice, appended_in_a_branch, appended_in_a_loop,
                                     two_equal_lists])
@pytest.mark.parametrize("x", [X, -X])
def test_one_object_wherever_it_ends_up(program, x):
    got, expected = amber.jit(program)(x), program(x)
    same_objects(got, expected)
    np.testing.assert_equal(got, expected)


def into_itself(x):
    a = [x]
    a.append(a)
    return a


def into_itself_through_a_tuple(x):
    d = {"x": x}
    d["pair"] = (d, 1)
    return d


@pytest.mark.parametrize("program, line", [(into_itself, "a.append(a)"),
                                           (into_itself_through_a_tuple, 'd["pair"] = (d, 1)')])
def test_a_container_put_into_itself_is_refused_at_its_line(program, line):
    with pytest.raises(CompileError, match="into itself") as err:
        amber.jit(program)(X)
    assert line in str(err.value) and "test_build_identity.py" in str(err.value)
