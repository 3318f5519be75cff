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


def test_can_raise_leaves_only_a_loop_that_runs_and_only_before_effects(check_pass):
    """`int(s)` raises on NaN. It leaves a For of 3 trips when nothing observable comes before
    it in the body (the error still comes first), not after a print; a While's cond always runs
    once, its body maybe never."""
    check_pass("licm", """
        graph @f(%x: f32[4], %s: float, %n: int) {
          %zero = constant(value=0) : int
          %one = constant(value=1) : int
          %three = constant(value=3) : int
          %a = for %zero, %three, %one, %x : f32[4] {
            body(%i: int, %a_1: f32[4]) {
              %k = int(%s) : int
              %b = add(%a_1, %k) : f32[4]
              %p = print(%b) : none
              %m = int(%s) : int
              %e = exp(%x) : f32[4]
              %c = add(%b, %m) : f32[4]
              %d = add(%c, %e) : f32[4]
              yield %d
            }
          }
          %w = while %a : f32[4] {
            cond(%w_1: f32[4]) {
              %q = float(%n) : float
              %big = gt(%w_1, %q) : b1[4]
              %go = any(%big) : bool
              yield %go
            }
            body(%w_2: f32[4]) {
              %h = float(%n) : float
              %w3 = sub(%w_2, %h) : f32[4]
              yield %w3
            }
          }
          return %w
        }
    """, """
        graph @f(%x: f32[4], %s: float, %n: int) {
          %zero = constant(value=0) : int
          %one = constant(value=1) : int
          %three = constant(value=3) : int
          %k = int(%s) : int
          %e = exp(%x) : f32[4]
          %a = for %zero, %three, %one, %x : f32[4] {
            body(%i: int, %a_1: f32[4]) {
              %b = add(%a_1, %k) : f32[4]
              %p = print(%b) : none
              %m = int(%s) : int
              %c = add(%b, %m) : f32[4]
              %d = add(%c, %e) : f32[4]
              yield %d
            }
          }
          %q = float(%n) : float
          %w = while %a : f32[4] {
            cond(%w_1: f32[4]) {
              %big = gt(%w_1, %q) : b1[4]
              %go = any(%big) : bool
              yield %go
            }
            body(%w_2: f32[4]) {
              %h = float(%n) : float
              %w3 = sub(%w_2, %h) : f32[4]
              yield %w3
            }
          }
          return %w
        }
    """)


def test_out_of_nested_loops(check_pass):
    """`exp(x)` climbs out of both loops, `exp(x) * i` out of the inner one; what reads `j`, a
    carried value, or is ordered after an effect stays."""
    check_pass("licm", """
        graph @f(%x: f32[4], %n: int) {
          %zero = constant(value=0) : int
          %one = constant(value=1) : int
          %a = for %zero, %n, %one, %x : f32[4] {
            body(%i: int, %a_1: f32[4]) {
              %b = for %zero, %n, %one, %a_1 : f32[4] {
                body(%j: int, %b_1: f32[4]) {
                  %e = exp(%x) : f32[4]
                  %f = mul(%e, %i) : f32[4]
                  %g = add(%b_1, %f) : f32[4]
                  %h = mul(%g, %j) : f32[4]
                  %p = print(%e) : none
                  %r = relu(%x) after %p : f32[4]
                  %s = add(%h, %r) : f32[4]
                  yield %s
                }
              }
              yield %b
            }
          }
          return %a
        }
    """, """
        graph @f(%x: f32[4], %n: int) {
          %zero = constant(value=0) : int
          %one = constant(value=1) : int
          %e = exp(%x) : f32[4]
          %a = for %zero, %n, %one, %x : f32[4] {
            body(%i: int, %a_1: f32[4]) {
              %f = mul(%e, %i) : f32[4]
              %b = for %zero, %n, %one, %a_1 : f32[4] {
                body(%j: int, %b_1: f32[4]) {
                  %g = add(%b_1, %f) : f32[4]
                  %h = mul(%g, %j) : f32[4]
                  %p = print(%e) : none
                  %r = relu(%x) after %p : f32[4]
                  %s = add(%h, %r) : f32[4]
                  yield %s
                }
              }
              yield %b
            }
          }
          return %a
        }
    """)


def test_python_scalar_arithmetic_may_raise(check_pass):
    """Found by fuzzing: `a // b` on Python ints raises ZeroDivisionError (NumPy would only
    warn), so it must not leave a loop that may run zero times; nor may an add of tensors whose
    shapes are known only at run time (they may not broadcast)."""
    text = """
        graph @f(%a: int, %b: int, %n: int, %u: f32[?], %v: f32[?]) {
          %zero = constant(value=0) : int
          %one = constant(value=1) : int
          %r, %s = for %zero, %n, %one, %a, %u : int, f32[?] {
            body(%i: int, %r_1: int, %s_1: f32[?]) {
              %q = floordiv(%a, %b) : int
              %w = add(%u, %v) : f32[?]
              yield %q, %w
            }
          }
          return %r, %s
        }
    """
    check_pass("licm", text, text)
