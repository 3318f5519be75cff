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
          %d = sub(%a, %c) : f32[3]
          %e = sum(%b) : f32[]
          %t = add(%d, %e) : f32[3]
          return %t
        }
    """, """
        graph @f(%x: f32[4,3]) {
          %a = sum(%x, axis=0) : f32[3]
          %b = sum(%x, axis=1) : f32[4]
          %d = sub(%a, %a) : f32[3]
          %e = sum(%b) : f32[]
          %t = add(%d, %e) : f32[3]
          return %t
        }
    """)


def test_arrays_someone_keeps_or_writes_stay_their_own_objects(check_pass):
    """Two equal arrays both returned, or one written through a view, must stay two arrays
    (merging would make a write to one show in the other)."""
    text = """
        graph @f(%x: f32[4,3]) {
          %a = sum(%x, axis=0) : f32[3]
          %c = sum(%x, axis=0) : f32[3]
          %z1 = zeros(shape=(3,), dtype=f32) : f32[3]
          %z2 = zeros(shape=(3,), dtype=f32) : f32[3]
          %v = reshape(%z2, shape=(3,)) : f32[3]
          %one = constant(value=1.0) : float
          %w = setitem(%v, %one, index=(0,)) : f32[3]
          %s = add(%z1, %w) : f32[3]
          return %a, %c, %s
        }
    """
    check_pass("cse", text, text)


def test_never_across_siblings_or_out_of_a_block(check_pass):
    """then/else, and a While's cond/body, are siblings: nothing flows between them, nor from
    a nested block out to the nodes after its region."""
    check_pass("cse", """
        graph @f(%x: f32[4], %c: b1[]) {
          %y = if %c : f32[4] {
            then {
              %a = exp(%x) : f32[4]
              yield %a
            }
            else {
              %b = exp(%x) : f32[4]
              yield %b
            }
          }
          %w = while %y : f32[4] {
            cond(%v: f32[4]) {
              %s = sum(%x) : f32[]
              %go = gt(%s, %v) : b1[4]
              %any = any(%go) : b1[]
              yield %any
            }
            body(%v_1: f32[4]) {
              %s_1 = sum(%x) : f32[]
              %v2 = add(%v_1, %s_1) : f32[4]
              yield %v2
            }
          }
          %d = exp(%x) : f32[4]
          %z = add(%w, %d) : f32[4]
          return %z
        }
    """, """
        graph @f(%x: f32[4], %c: b1[]) {
          %y = if %c : f32[4] {
            then {
              %a = exp(%x) : f32[4]
              yield %a
            }
            else {
              %b = exp(%x) : f32[4]
              yield %b
            }
          }
          %w = while %y : f32[4] {
            cond(%v: f32[4]) {
              %s = sum(%x) : f32[]
              %go = gt(%s, %v) : b1[4]
              %any = any(%go) : b1[]
              yield %any
            }
            body(%v_1: f32[4]) {
              %s_1 = sum(%x) : f32[]
              %v2 = add(%v_1, %s_1) : f32[4]
              yield %v2
            }
          }
          %d = exp(%x) : f32[4]
          %z = add(%w, %d) : f32[4]
          return %z
        }
    """)


def test_into_nested_loops_at_any_depth(check_pass):
    check_pass("cse", """
        graph @f(%x: f32[4], %n: int) {
          %zero = constant(value=0) : int
          %one = constant(value=1) : int
          %e = exp(%x) : f32[4]
          %a = for %zero, %n, %one, %x : f32[4] {
            body(%i: int, %a_1: f32[4]) {
              %b = for %zero, %n, %one, %a_1 : f32[4] {
                body(%j: int, %b_1: f32[4]) {
                  %e_1 = exp(%x) : f32[4]
                  %zero_1 = constant(value=0) : int
                  %b2 = add(%b_1, %e_1) : f32[4]
                  yield %b2
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
              %b = for %zero, %n, %one, %a_1 : f32[4] {
                body(%j: int, %b_1: f32[4]) {
                  %b2 = add(%b_1, %e) : f32[4]
                  yield %b2
                }
              }
              yield %b
            }
          }
          return %a
        }
    """)


def test_effects_regions_and_ordered_reads_are_never_merged(check_pass):
    """Two fresh lists are two objects; two prints print twice; two equal Ifs stay two regions;
    a read ordered after an effect (`after`) is not the read before it."""
    check_pass("cse", """
        graph @f(%x: f32[4], %c: bool) {
          %l1 = list_new(%x) : list[f32[4]]
          %l2 = list_new(%x) after %l1 : list[f32[4]]
          %p = print(%x) after %l2 : none
          %q = print(%x) after %p : none
          %r1 = relu(%x) : f32[4]
          %r2 = relu(%x) after %q : f32[4]
          %y1 = if %c : f32[4] {
            then {
              yield %x
            }
            else {
              yield %r1
            }
          }
          %y2 = if %c : f32[4] {
            then {
              yield %x
            }
            else {
              yield %r1
            }
          }
          return %l1, %l2, %r1, %r2, %y1, %y2
        }
    """, """
        graph @f(%x: f32[4], %c: bool) {
          %l1 = list_new(%x) : list[f32[4]]
          %l2 = list_new(%x) after %l1 : list[f32[4]]
          %p = print(%x) after %l2 : none
          %q = print(%x) after %p : none
          %r1 = relu(%x) : f32[4]
          %r2 = relu(%x) after %q : f32[4]
          %y1 = if %c : f32[4] {
            then {
              yield %x
            }
            else {
              yield %r1
            }
          }
          %y2 = if %c : f32[4] {
            then {
              yield %x
            }
            else {
              yield %r1
            }
          }
          return %l1, %l2, %r1, %r2, %y1, %y2
        }
    """)


def test_constants_merge_by_value_and_type(check_pass):
    """`1`, `1.0`, `True` and `-0.0`/`0.0` are different constants."""
    check_pass("cse", """
        graph @f() {
          %a = constant(value=1) : int
          %b = constant(value=1.0) : float
          %c = constant(value=True) : bool
          %d = constant(value=1) : int
          %e = constant(value=0.0) : float
          %g = constant(value=-0.0) : float
          %t = make_tuple(%a, %b, %c, %d, %e, %g) : (int, float, bool, int, float, float)
          return %t
        }
    """, """
        graph @f() {
          %a = constant(value=1) : int
          %b = constant(value=1.0) : float
          %c = constant(value=True) : bool
          %e = constant(value=0.0) : float
          %g = constant(value=-0.0) : float
          %t = make_tuple(%a, %b, %c, %a, %e, %g) : (int, float, bool, int, float, float)
          return %t
        }
    """)
