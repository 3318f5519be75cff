"""Common subexpression elimination: IR text in, IR text out."""


def test_nested(check_pass):
    check_pass("cse", """
        graph @f(%x: f32[4], %c: b1[]) {
          %a = exp(%x) : f32[4]
          %b = exp(%x) : f32[4]
          %y = if %c : f32[4] {
            then {
              %d = exp(%x) : f32[4]
              %s = add(%d, %b) : f32[4]
              yield %s
            }
            else {
              %e = exp(%x) : f32[4]
              yield %e
            }
          }
          %r1 = print(%a) : none
          %r2 = print(%a) : none
          %z = add(%y, %a) : f32[4]
          return %z
        }
    """, """
        graph @f(%x: f32[4], %c: b1[]) {
          %a = exp(%x) : f32[4]
          %y = if %c : f32[4] {
            then {
              %s = add(%a, %a) : f32[4]
              yield %s
            }
            else {
              yield %a
            }
          }
          %r1 = print(%a) : none
          %r2 = print(%a) : none
          %z = add(%y, %a) : f32[4]
          return %z
        }
    """)


def test_attrs_differ(check_pass):
    check_pass("cse", """
        graph @f(%x: f32[4,3]) {
          %a = sum(%x, axis=0) : f32[3]
          %b = sum(%x, axis=1) : f32[4]
          %c = sum(%x, axis=0) : f32[3]
          %t = make_tuple(%a, %b, %c) : (f32[3], f32[4], f32[3])
          return %t
        }
    """, """
        graph @f(%x: f32[4,3]) {
          %a = sum(%x, axis=0) : f32[3]
          %b = sum(%x, axis=1) : f32[4]
          %t = make_tuple(%a, %b, %a) : (f32[3], f32[4], f32[3])
          return %t
        }
    """)
