"""Loop-invariant code motion: IR text in, IR text out."""


def test_for(check_pass):
    check_pass("licm", """
        graph @f(%x: f32[4], %w: f32[4], %n: int) {
          %0 = constant(value=0) : int
          %1 = constant(value=1) : int
          %a = for %0, %n, %1, %x : f32[4] {
            body(%i: int, %a_1: f32[4]) {
              %e = exp(%w) : f32[4]
              %f = mul(%e, %w) : f32[4]
              %g = add(%a_1, %f) : f32[4]
              %p = print(%w) : none
              yield %g
            }
          }
          return %a
        }
    """, """
        graph @f(%x: f32[4], %w: f32[4], %n: int) {
          %0 = constant(value=0) : int
          %1 = constant(value=1) : int
          %e = exp(%w) : f32[4]
          %f = mul(%e, %w) : f32[4]
          %a = for %0, %n, %1, %x : f32[4] {
            body(%i: int, %a_1: f32[4]) {
              %g = add(%a_1, %f) : f32[4]
              %p = print(%w) : none
              yield %g
            }
          }
          return %a
        }
    """)


def test_can_raise_stays(check_pass):
    check_pass("licm", """
        graph @f(%x: f32[4], %n: int) {
          %0 = constant(value=0) : int
          %1 = constant(value=1) : int
          %a = for %0, %n, %1, %x : f32[4] {
            body(%i: int, %a_1: f32[4]) {
              %k = int(%x) : int
              %g = add(%a_1, %k) : f32[4]
              yield %g
            }
          }
          return %a
        }
    """, """
        graph @f(%x: f32[4], %n: int) {
          %0 = constant(value=0) : int
          %1 = constant(value=1) : int
          %a = for %0, %n, %1, %x : f32[4] {
            body(%i: int, %a_1: f32[4]) {
              %k = int(%x) : int
              %g = add(%a_1, %k) : f32[4]
              yield %g
            }
          }
          return %a
        }
    """)
