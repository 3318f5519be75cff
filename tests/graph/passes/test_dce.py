"""Dead code elimination: IR text in, IR text out."""


def test_if(check_pass):
    check_pass("dce", """
        graph @f(%x: f32[4], %c: b1[]) {
          %y, %z = if %c : f32[4], f32[4] {
            then {
              %r = relu(%x) : f32[4]
              %e = exp(%x) : f32[4]
              yield %r, %e
            }
            else {
              yield %x, %x
            }
          }
          return %y
        }
    """, """
        graph @f(%x: f32[4], %c: b1[]) {
          %y = if %c : f32[4] {
            then {
              %r = relu(%x) : f32[4]
              yield %r
            }
            else {
              yield %x
            }
          }
          return %y
        }
    """)


def test_while_cond_keeps(check_pass):
    check_pass("dce", """
        graph @f(%x: f32[4]) {
          %0 = constant(value=0) : int
          %1 = constant(value=1) : int
          %5 = constant(value=5) : int
          %w, %k = while %x, %0 : f32[4], int {
            cond(%a: f32[4], %i: int) {
              %lt = lt(%i, %5) : bool
              yield %lt
            }
            body(%a_1: f32[4], %i_1: int) {
              %a2 = mul(%a_1, %x) : f32[4]
              %i2 = add(%i_1, %1) : int
              yield %a2, %i2
            }
          }
          return %w
        }
    """, """
        graph @f(%x: f32[4]) {
          %0 = constant(value=0) : int
          %1 = constant(value=1) : int
          %2 = constant(value=5) : int
          %w, %k = while %x, %0 : f32[4], int {
            cond(%a: f32[4], %i: int) {
              %lt = lt(%i, %2) : bool
              yield %lt
            }
            body(%a_1: f32[4], %i_1: int) {
              %a2 = mul(%a_1, %x) : f32[4]
              %i2 = add(%i_1, %1) : int
              yield %a2, %i2
            }
          }
          return %w
        }
    """)


def test_effect_in_loop(check_pass):
    check_pass("dce", """
        graph @f(%x: f32[4], %n: int) {
          %0 = constant(value=0) : int
          %1 = constant(value=1) : int
          %a = for %0, %n, %1, %x : f32[4] {
            body(%i: int, %a_1: f32[4]) {
              %p = print(%i) : none
              %a2 = add(%a_1, %x) : f32[4]
              yield %a2
            }
          }
          return %x
        }
    """, """
        graph @f(%x: f32[4], %n: int) {
          %0 = constant(value=0) : int
          %1 = constant(value=1) : int
          for %0, %n, %1 {
            body(%i: int) {
              %p = print(%i) : none
              yield
            }
          }
          return %x
        }
    """)
