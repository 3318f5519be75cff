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
