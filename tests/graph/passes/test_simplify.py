"""Algebraic simplification: IR text in, IR text out."""


def test_rules(check_pass):
    check_pass("simplify", """
        graph @f(%x: f32[4], %i: i32[4]) {
          %1 = constant(value=1) : int
          %0 = constant(value=0) : int
          %2 = constant(value=2) : int
          %a = mul(%x, %1) : f32[4]
          %b = add(%a, %0) : f32[4]
          %c = add(%i, %0) : i32[4]
          %d = pow(%x, %2) : f32[4]
          %n1 = neg(%x) : f32[4]
          %n2 = neg(%n1) : f32[4]
          %s1 = add(%b, %d) : f32[4]
          %s2 = add(%s1, %n2) : f32[4]
          %s3 = mul(%c, %c) : i32[4]
          %t = make_tuple(%s2, %s3) : (f32[4], i32[4])
          return %t
        }
    """, """
        graph @f(%x: f32[4], %i: i32[4]) {
          %0 = constant(value=1) : int
          %1 = constant(value=0) : int
          %2 = constant(value=2) : int
          %b = add(%x, %1) : f32[4]
          %d = mul(%x, %x) : f32[4]
          %n1 = neg(%x) : f32[4]
          %s1 = add(%b, %d) : f32[4]
          %s2 = add(%s1, %x) : f32[4]
          %s3 = mul(%i, %i) : i32[4]
          %t = make_tuple(%s2, %s3) : (f32[4], i32[4])
          return %t
        }
    """)


def test_alias_guard(check_pass):
    check_pass("simplify", """
        graph @f(%x: f32[4]) {
          %1 = constant(value=1) : int
          %a = mul(%x, %1) : f32[4]
          return %a
        }
    """, """
        graph @f(%x: f32[4]) {
          %0 = constant(value=1) : int
          %a = mul(%x, %0) : f32[4]
          return %a
        }
    """)


def test_transpose(check_pass):
    check_pass("simplify", """
        graph @f(%x: f32[2,3,4]) {
          %a = transpose(%x, perm=(1, 0, 2)) : f32[3,2,4]
          %b = transpose(%a, perm=(1, 0, 2)) : f32[2,3,4]
          %c = transpose(%x, perm=(2, 0, 1)) : f32[4,2,3]
          %d = transpose(%c, perm=(0, 2, 1)) : f32[4,3,2]
          %e = exp(%b) : f32[2,3,4]
          %f = exp(%d) : f32[4,3,2]
          %t = make_tuple(%e, %f) : (f32[2,3,4], f32[4,3,2])
          return %t
        }
    """, """
        graph @f(%x: f32[2,3,4]) {
          %a = transpose(%x, perm=(1, 0, 2)) : f32[3,2,4]
          %c = transpose(%x, perm=(2, 0, 1)) : f32[4,2,3]
          %d = transpose(%x, perm=(2, 1, 0)) : f32[4,3,2]
          %e = exp(%x) : f32[2,3,4]
          %f = exp(%d) : f32[4,3,2]
          %t = make_tuple(%e, %f) : (f32[2,3,4], f32[4,3,2])
          return %t
        }
    """)


def test_each_arithmetic_rule_on_tensors(check_pass):
    """x + 0 (ints), x + -0.0, x - 0, x * 1, x / 1, x ** 1, x ** 2, -(-x); each result is
    only read (by the adds), so returning `x` itself cannot alias anything."""
    check_pass("simplify", """
        graph @f(%x: f32[4], %i: i64[4]) {
          %zero = constant(value=0) : int
          %nzero = constant(value=-0.0) : float
          %one = constant(value=1) : int
          %two = constant(value=2) : int
          %a1 = add(%i, %zero) : i64[4]
          %a3 = add(%x, %nzero) : f32[4]
          %s1 = sub(%x, %zero) : f32[4]
          %m1 = mul(%x, %one) : f32[4]
          %d1 = div(%x, %one) : f32[4]
          %p1 = pow(%x, %one) : f32[4]
          %p2 = pow(%x, %two) : f32[4]
          %n1 = neg(%x) : f32[4]
          %n2 = neg(%n1) : f32[4]
          %r1 = add(%a3, %s1) : f32[4]
          %r2 = add(%m1, %d1) : f32[4]
          %r3 = add(%p1, %p2) : f32[4]
          %r4 = add(%n2, %a1) : f64[4]
          return %r1, %r2, %r3, %r4
        }
    """, """
        graph @f(%x: f32[4], %i: i64[4]) {
          %zero = constant(value=0) : int
          %nzero = constant(value=-0.0) : float
          %one = constant(value=1) : int
          %two = constant(value=2) : int
          %p2 = mul(%x, %x) : f32[4]
          %n1 = neg(%x) : f32[4]
          %r1 = add(%x, %x) : f32[4]
          %r2 = add(%x, %x) : f32[4]
          %r3 = add(%x, %p2) : f32[4]
          %r4 = add(%x, %i) : f64[4]
          return %r1, %r2, %r3, %r4
        }
    """)


def test_each_arithmetic_rule_on_python_scalars(check_pass):
    """0 + n, -0.0 + s, s - 0.0, 1 * n, n ** 2 (exact for Python ints)."""
    check_pass("simplify", """
        graph @f(%n: int, %s: float) {
          %zero = constant(value=0) : int
          %fzero = constant(value=0.0) : float
          %nzero = constant(value=-0.0) : float
          %one = constant(value=1) : int
          %two = constant(value=2) : int
          %a2 = add(%zero, %n) : int
          %a4 = add(%nzero, %s) : float
          %s2 = sub(%s, %fzero) : float
          %m2 = mul(%one, %n) : int
          %p3 = pow(%n, %two) : int
          return %a2, %a4, %s2, %m2, %p3
        }
    """, """
        graph @f(%n: int, %s: float) {
          %zero = constant(value=0) : int
          %fzero = constant(value=0.0) : float
          %nzero = constant(value=-0.0) : float
          %one = constant(value=1) : int
          %two = constant(value=2) : int
          %p3 = mul(%n, %n) : int
          return %n, %s, %s, %n, %p3
        }
    """)


def test_rules_that_would_change_bits_or_types_do_not_apply(check_pass):
    """x + 0 and 0.0 + x on floats (-0.0 + 0 is +0.0); s - -0.0 (is s + 0.0, shrunk from
    fuzzing); 0 - n; an operand changing the type (i * 1.0, b * 1, n / 1, -(-b)); Python
    float ** 2 (may raise OverflowError where s * s gives inf); 0-d ** 2 (a NumPy scalar
    power); 2 ** n; x * 2."""
    text = """
        graph @f(%x: f32[4], %i: i64[4], %n: int, %s: float, %b: bool, %z: f32[]) {
          %zero = constant(value=0) : int
          %fzero = constant(value=0.0) : float
          %nzero = constant(value=-0.0) : float
          %one = constant(value=1) : int
          %fone = constant(value=1.0) : float
          %two = constant(value=2) : int
          %a1 = add(%x, %zero) : f32[4]
          %a2 = add(%fzero, %x) : f32[4]
          %s1 = sub(%s, %nzero) : float
          %s2 = sub(%zero, %n) : int
          %m1 = mul(%i, %fone) : f64[4]
          %m2 = mul(%b, %one) : int
          %m3 = mul(%x, %two) : f32[4]
          %d1 = div(%n, %one) : float
          %p1 = pow(%s, %two) : float
          %p2 = pow(%z, %two) : f32[]
          %p3 = pow(%two, %n) : int
          %n1 = neg(%b) : int
          %n2 = neg(%n1) : int
          %e1 = exp(%a1) : f32[4]
          %e2 = exp(%a2) : f32[4]
          return %e1, %e2, %s1, %s2, %m1, %m2, %m3, %d1, %p1, %p2, %p3, %n2
        }
    """
    check_pass("simplify", text, text)


def test_each_structural_rule(check_pass):
    """not not b, transpose twice, reshape twice, same-dtype cast, select on a constant,
    an item of a tuple being built."""
    check_pass("simplify", """
        graph @f(%x: f32[2,3], %y: f32[2,3], %b: bool, %n: int, %c: b1[2,3]) {
          %yes = constant(value=True) : bool
          %no = constant(value=False) : bool
          %nb1 = not(%b) : bool
          %nb2 = not(%nb1) : bool
          %nn1 = not(%n) : bool
          %nn2 = not(%nn1) : bool
          %t1 = transpose(%x) : f32[3,2]
          %t2 = transpose(%t1) : f32[2,3]
          %r1 = reshape(%x, shape=(6,)) : f32[6]
          %r2 = reshape(%r1, shape=(3, 2)) : f32[3,2]
          %k1 = cast(%x, dtype=f32) : f32[2,3]
          %k2 = cast(%x, dtype=i64) : i64[2,3]
          %w1 = select(%yes, %x, %y) : f32[2,3]
          %w2 = select(%no, %x, %y) : f32[2,3]
          %w3 = select(%c, %x, %y) : f32[2,3]
          %pair = make_tuple(%x, %y) : (f32[2,3], f32[2,3])
          %second = tuple_getitem(%pair, index=-1) : f32[2,3]
          %e1 = exp(%t2) : f32[2,3]
          %e2 = exp(%r2) : f32[3,2]
          %e3 = exp(%k1) : f32[2,3]
          %e4 = exp(%w1) : f32[2,3]
          %e5 = exp(%w2) : f32[2,3]
          %e6 = exp(%second) : f32[2,3]
          return %nb2, %nn2, %e1, %e2, %e3, %k2, %e4, %e5, %w3, %e6
        }
    """, """
        graph @f(%x: f32[2,3], %y: f32[2,3], %b: bool, %n: int, %c: b1[2,3]) {
          %yes = constant(value=True) : bool
          %no = constant(value=False) : bool
          %nb1 = not(%b) : bool
          %nn1 = not(%n) : bool
          %nn2 = bool(%n) : bool
          %t1 = transpose(%x) : f32[3,2]
          %r1 = reshape(%x, shape=(6,)) : f32[6]
          %r2 = reshape(%x, shape=(3, 2)) : f32[3,2]
          %k2 = cast(%x, dtype=i64) : i64[2,3]
          %w3 = select(%c, %x, %y) : f32[2,3]
          %pair = make_tuple(%x, %y) : (f32[2,3], f32[2,3])
          %e1 = exp(%x) : f32[2,3]
          %e2 = exp(%r2) : f32[3,2]
          %e3 = exp(%x) : f32[2,3]
          %e4 = exp(%x) : f32[2,3]
          %e5 = exp(%y) : f32[2,3]
          %e6 = exp(%y) : f32[2,3]
          return %b, %nn2, %e1, %e2, %e3, %k2, %e4, %e5, %w3, %e6
        }
    """)


def test_tuple_items(check_pass):
    """(a, b)[1] is b itself, even where b is returned; a slice of a tuple is not an item."""
    check_pass("simplify", """
        graph @f(%x: f32[2,3], %y: f32[2,3]) {
          %pair = make_tuple(%x, %y) : (f32[2,3], f32[2,3])
          %second = tuple_getitem(%pair, index=1) : f32[2,3]
          %firsts = tuple_getitem(%pair, index=slice(None, 1, None)) : (f32[2,3],)
          %out = make_tuple(%second, %firsts) : (f32[2,3], (f32[2,3],))
          return %out
        }
    """, """
        graph @f(%x: f32[2,3], %y: f32[2,3]) {
          %pair = make_tuple(%x, %y) : (f32[2,3], f32[2,3])
          %firsts = tuple_getitem(%pair, index=slice(None, 1, None)) : (f32[2,3],)
          %out = make_tuple(%y, %firsts) : (f32[2,3], (f32[2,3],))
          return %out
        }
    """)


def test_no_new_alias_escapes_through_a_view(check_pass):
    """`x * 1` and `x.reshape(6).reshape(2, 3)` made arrays of their own; returned as views
    they would now alias the caller's `x`. A transpose of a transpose was a view of `x` anyway."""
    check_pass("simplify", """
        graph @f(%x: f32[2,3]) {
          %one = constant(value=1) : int
          %a = mul(%x, %one) : f32[2,3]
          %v = reshape(%a, shape=(3, 2)) : f32[3,2]
          %r1 = transpose(%x) : f32[3,2]
          %r2 = reshape(%r1, shape=(6,)) : f32[6]
          %r3 = reshape(%r2, shape=(2, 3)) : f32[2,3]
          %t1 = transpose(%x) : f32[3,2]
          %t2 = transpose(%t1) : f32[2,3]
          %out = make_tuple(%v, %r3, %t2) : (f32[3,2], f32[2,3], f32[2,3])
          return %out
        }
    """, """
        graph @f(%x: f32[2,3]) {
          %one = constant(value=1) : int
          %a = mul(%x, %one) : f32[2,3]
          %v = reshape(%a, shape=(3, 2)) : f32[3,2]
          %r1 = transpose(%x) : f32[3,2]
          %r2 = reshape(%r1, shape=(6,)) : f32[6]
          %r3 = reshape(%r2, shape=(2, 3)) : f32[2,3]
          %t1 = transpose(%x) : f32[3,2]
          %out = make_tuple(%v, %r3, %x) : (f32[3,2], f32[2,3], f32[2,3])
          return %out
        }
    """)


def test_involutions_keep_their_type(check_pass):
    """~~i and logical_not twice on bools are the input; logical_not twice on floats makes
    bools, so it stays."""
    check_pass("simplify", """
        graph @f(%i: i64[3], %b: b1[3], %x: f32[3]) {
          %i1 = invert(%i) : i64[3]
          %i2 = invert(%i1) : i64[3]
          %b1 = logical_not(%b) : b1[3]
          %b2 = logical_not(%b1) : b1[3]
          %x1 = logical_not(%x) : b1[3]
          %x2 = logical_not(%x1) : b1[3]
          %s = sum(%i2) : i64[]
          %t = any(%b2) : b1[]
          return %s, %t, %x2
        }
    """, """
        graph @f(%i: i64[3], %b: b1[3], %x: f32[3]) {
          %i1 = invert(%i) : i64[3]
          %b1 = logical_not(%b) : b1[3]
          %x1 = logical_not(%x) : b1[3]
          %x2 = logical_not(%x1) : b1[3]
          %s = sum(%i) : i64[]
          %t = any(%b) : b1[]
          return %s, %t, %x2
        }
    """)


def test_a_uniform_constant_operand_becomes_its_value(check_pass):
    """x * full(c) -> x * c (a 0-d array of the dtype) where x alone has the result's type;
    not where the constant's dtype or shape decides the result's (f32 x * f64 array is f64;
    broadcasting x up to the constant's shape), nor for an array of several values."""
    check_pass("simplify", """
        graph @f(%x: f32[2,2], %v: f32[2]) {
          %c = constant(value=array<f32[2,2]>[0.25, 0.25, 0.25, 0.25]) : f32[2,2]
          %d = constant(value=array<f64[2,2]>[0.25, 0.25, 0.25, 0.25]) : f64[2,2]
          %e = constant(value=array<f32[2,2]>[0.25, 0.5, 0.25, 0.25]) : f32[2,2]
          %a = mul(%x, %c) : f32[2,2]
          %b = sub(%c, %x) : f32[2,2]
          %m = mul(%x, %d) : f64[2,2]
          %n = add(%v, %c) : f32[2,2]
          %o = div(%x, %e) : f32[2,2]
          return %a, %b, %m, %n, %o
        }
    """, """
        graph @f(%x: f32[2,2], %v: f32[2]) {
          %c = constant(value=array<f32[2,2]>[0.25, 0.25, 0.25, 0.25]) : f32[2,2]
          %d = constant(value=array<f64[2,2]>[0.25, 0.25, 0.25, 0.25]) : f64[2,2]
          %e = constant(value=array<f32[2,2]>[0.25, 0.5, 0.25, 0.25]) : f32[2,2]
          %0 = constant(value=array<f32[]>[0.25]) : f32[]
          %a = mul(%x, %0) : f32[2,2]
          %1 = constant(value=array<f32[]>[0.25]) : f32[]
          %b = sub(%1, %x) : f32[2,2]
          %m = mul(%x, %d) : f64[2,2]
          %n = add(%v, %c) : f32[2,2]
          %o = div(%x, %e) : f32[2,2]
          return %a, %b, %m, %n, %o
        }
    """)
