"""Generators compiled code refuses (a CompileError at the line marked `# ERR`, see
`harness.check_rejected`): a generator that escapes its consumer (stored, returned, driven by
next), a value sent in, a yield inside try/except consumed by a loop (the loop body's exceptions
would reach the generator), a recursive `yield from`, a contextmanager helper that may not yield
exactly once, a jump out of its with block past code after its yield, a generator consumed
where it may not run, and a generator reading a name the consumer defines."""
import contextlib

from harness import check_rejected, f32, runs

POS = f32([1.0, 2.0, 3.0])
scale = 2.0


def _items(x, n):
    for i in range(n):
        yield x[i] * scale


@runs(POS)
def stored_generator(x):
    g = _items(x, 2)  # ERR
    return sum(g)


@runs(POS)
def returned_generator(x):
    return _items(x, 2)  # ERR


@runs(POS)
def generator_driven_by_next(x):
    return next(_items(x, 2))  # ERR


def _receiver(x):
    got = yield x  # ERR
    yield got


@runs(POS)
def value_sent_into_generator(x):
    return list(_receiver(x))


def _guarded(x, n):
    for i in range(n):
        try:
            yield x[i]  # ERR
        except ValueError:
            pass


@runs(POS)
def yield_inside_try_except(x):
    s = 0.0
    for v in _guarded(x, 3):
        s = s + v
    return s


def _forever(x):
    yield x
    yield from _forever(x)  # ERR


@runs(POS)
def recursive_yield_from(x):
    for v in _forever(x):
        return v
    return x


@contextlib.contextmanager
def _maybe(x):
    if x.sum() > 0:
        yield x
    else:
        yield -x


@runs(POS)
def contextmanager_with_two_yields(x):
    with _maybe(x) as y:  # ERR
        z = y * 2.0
    return z


@contextlib.contextmanager
def _noisy():
    yield
    print("after the yield")


@runs(POS)
def return_out_of_contextmanager_block(x):
    with _noisy():
        if x.sum() > 0:
            return x  # ERR
    return -x


@runs(POS)
def generator_after_and(x):
    return x.sum() > 100 and sum(_items(x, 2))  # ERR


@runs(POS)
def generator_reads_a_consumer_name(x):
    scale = 3.0
    return sum(_items(x, 2)) * scale  # ERR


def test_rejected(program, capsys):
    check_rejected(program, capsys)
