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


def test_dead_carried_values_and_dead_regions(check_pass):
    """A counter nobody reads leaves the while (cond and body params, init, output); an If and
    a For whose results nobody reads go entirely."""
    check_pass("dce", """
        graph @f(%x: f32[4], %n: int, %c: bool) {
          %zero = constant(value=0) : int
          %one = constant(value=1) : int
          %w, %k, %u = while %x, %zero, %zero : f32[4], int, int {
            cond(%a: f32[4], %i: int, %t: int) {
              %lt = lt(%i, %n) : bool
              yield %lt
            }
            body(%a_1: f32[4], %i_1: int, %t_1: int) {
              %a2 = mul(%a_1, %x) : f32[4]
              %i2 = add(%i_1, %one) : int
              %t2 = add(%t_1, %one) : int
              yield %a2, %i2, %t2
            }
          }
          %y = if %c : f32[4] {
            then {
              %e = exp(%x) : f32[4]
              yield %e
            }
            else {
              yield %x
            }
          }
          %s = for %zero, %n, %one, %x : f32[4] {
            body(%j: int, %s_1: f32[4]) {
              %s2 = add(%s_1, %x) : f32[4]
              yield %s2
            }
          }
          return %w
        }
    """, """
        graph @f(%x: f32[4], %n: int, %c: bool) {
          %zero = constant(value=0) : int
          %one = constant(value=1) : int
          %w, %k = while %x, %zero : f32[4], int {
            cond(%a: f32[4], %i: int) {
              %lt = lt(%i, %n) : bool
              yield %lt
            }
            body(%a_1: f32[4], %i_1: int) {
              %a2 = mul(%a_1, %x) : f32[4]
              %i2 = add(%i_1, %one) : int
              yield %a2, %i2
            }
          }
          return %w
        }
    """)


def test_dead_while_goes_whole(check_pass):
    """Found by fuzzing: a While nothing reads used to be swept block by block, and erasing the
    cond's `lt` (still yielded) failed; the whole region goes at once now."""
    check_pass("dce", """
        graph @f(%x: f32[2,3]) {
          %v4 = constant(value=0) : int
          %w = while %v4 : int {
            cond(%j: int) {
              %v5 = constant(value=0) : int
              %v6 = lt(%j, %v5) : bool
              yield %v6
            }
            body(%j_1: int) {
              %v7 = constant(value=1) : int
              %v8 = add(%j_1, %v7) : int
              yield %v8
            }
          }
          return %x
        }
    """, """
        graph @f(%x: f32[2,3]) {
          return %x
        }
    """)


def test_emptied_regions_keep_effects_only(check_pass):
    """An If whose outputs are dead keeps only its print; its dead pure nodes go."""
    check_pass("dce", """
        graph @f(%x: f32[4], %c: bool) {
          %y, %z = if %c : f32[4], f32[4] {
            then {
              %e = exp(%x) : f32[4]
              %p = print(%e) : none
              %r = relu(%x) : f32[4]
              yield %e, %r
            }
            else {
              %t = tanh(%x) : f32[4]
              yield %t, %t
            }
          }
          return %x
        }
    """, """
        graph @f(%x: f32[4], %c: bool) {
          if %c {
            then {
              %e = exp(%x) : f32[4]
              %p = print(%e) : none
              yield
            }
            else {
              yield
            }
          }
          return %x
        }
    """)


def test_carried_value_read_by_the_cond_stays(check_pass):
    """`i` only decides when the loop stops, but that decides `a`: it stays."""
    check_pass("dce", """
        graph @f(%x: f32[4], %n: int) {
          %zero = constant(value=0) : int
          %one = constant(value=1) : int
          %a, %i = while %x, %zero : f32[4], int {
            cond(%a_1: f32[4], %i_1: int) {
              %go = lt(%i_1, %n) : bool
              yield %go
            }
            body(%a_2: f32[4], %i_2: int) {
              %a3 = exp(%a_2) : f32[4]
              %i3 = add(%i_2, %one) : int
              yield %a3, %i3
            }
          }
          return %a
        }
    """, """
        graph @f(%x: f32[4], %n: int) {
          %zero = constant(value=0) : int
          %one = constant(value=1) : int
          %a, %i = while %x, %zero : f32[4], int {
            cond(%a_1: f32[4], %i_1: int) {
              %go = lt(%i_1, %n) : bool
              yield %go
            }
            body(%a_2: f32[4], %i_2: int) {
              %a3 = exp(%a_2) : f32[4]
              %i3 = add(%i_2, %one) : int
              yield %a3, %i3
            }
          }
          return %a
        }
    """)
