"""Constant folding and branch pruning: IR text in, IR text out."""


def test_basic(check_pass):
    check_pass("fold_constants", """
        graph @f(%x: f32[4]) {
          %a = constant(value=2) : int
          %b = constant(value=3) : int
          %c = mul(%a, %b) : int
          %d = add(%x, %c) : f32[4]
          return %d
        }
    """, """
        graph @f(%x: f32[4]) {
          %a = constant(value=2) : int
          %b = constant(value=3) : int
          %c = constant(value=6) : int
          %d = add(%x, %c) : f32[4]
          return %d
        }
    """)


def test_if(check_pass):
    check_pass("fold_constants", """
        graph @f(%x: f32[4]) {
          %t = constant(value=True) : bool
          %y = if %t : f32[4] {
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
    """, """
        graph @f(%x: f32[4]) {
          %t = constant(value=True) : bool
          %r = relu(%x) : f32[4]
          return %r
        }
    """)


def test_zero_trip_for(check_pass):
    check_pass("fold_constants", """
        graph @f(%x: f32[4]) {
          %0 = constant(value=5) : int
          %1 = constant(value=2) : int
          %2 = constant(value=1) : int
          %a = for %0, %1, %2, %x : f32[4] {
            body(%i: int, %a_1: f32[4]) {
              %a2 = add(%a_1, %x) : f32[4]
              yield %a2
            }
          }
          return %a
        }
    """, """
        graph @f(%x: f32[4]) {
          %0 = constant(value=5) : int
          %1 = constant(value=2) : int
          %2 = constant(value=1) : int
          return %x
        }
    """)


def test_passthrough(check_pass):
    check_pass("fold_constants", """
        graph @f(%x: f32[4], %n: int) {
          %0 = constant(value=0) : int
          %1 = constant(value=1) : int
          %k = constant(value=3.0) : float
          %a, %s = for %0, %n, %1, %x, %k : f32[4], float {
            body(%i: int, %a_1: f32[4], %s_1: float) {
              %a2 = mul(%a_1, %s_1) : f32[4]
              yield %a2, %s_1
            }
          }
          return %a
        }
    """, """
        graph @f(%x: f32[4], %n: int) {
          %0 = constant(value=0) : int
          %1 = constant(value=1) : int
          %k = constant(value=3.0) : float
          %a, %s = for %0, %n, %1, %x, %k : f32[4], float {
            body(%i: int, %a_1: f32[4], %s_1: float) {
              %a2 = mul(%a_1, %k) : f32[4]
              yield %a2, %k
            }
          }
          return %a
        }
    """)


def test_no_raise(check_pass):
    check_pass("fold_constants", """
        graph @f() {
          %a = constant(value=1) : int
          %b = constant(value=0) : int
          %c = floordiv(%a, %b) : int
          return %c
        }
    """, """
        graph @f() {
          %a = constant(value=1) : int
          %b = constant(value=0) : int
          %c = floordiv(%a, %b) : int
          return %c
        }
    """)
