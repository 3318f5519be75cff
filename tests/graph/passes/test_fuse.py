"""Fusion rewrites: IR text in, IR text out."""


def test_dense(check_pass):
    check_pass("fuse", """
        graph @f(%x: f32[2,3], %w: f32[5,3], %b: f32[5]) {
          %h = dense(%x, %w, %b, has_bias=True) : f32[2,5]
          %r = relu(%h) : f32[2,5]
          return %r
        }
    """, """
        graph @f(%x: f32[2,3], %w: f32[5,3], %b: f32[5]) {
          %0 = transpose(%w) : f32[3,5]
          %h = matmul(%x, %0) : f32[2,5]
          %h_1 = add(%h, %b) : f32[2,5]
          %r = relu(%h_1) : f32[2,5]
          return %r
        }
    """)
