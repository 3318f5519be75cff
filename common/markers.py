"""Attribute names by which one layer recognises objects made by a layer above it, without
importing it (the frontend and the runtime's roots see gradient functions this way)."""

GRADIENT_ATTR = "__amber_gradient__"
"""An object whose type has this attribute is a gradient function: `obj.__amber_gradient__` is
its `(forward, GradRequest)`. The frontend compiles a call to it into the caller's graph."""
COMPILE_TIME_ATTR = "__amber_compile_time__"
"""A callable with this attribute (`grad`, `value_and_grad`, `GradOperation`) makes gradient
functions: called inside compiled code, it runs while compiling."""
TRANSFORM_ATTR = "__amber_transform__"
"""An object whose type has this attribute is a function transform (jacfwd, jacrev, jvp, ...):
`obj.__amber_transform__` is its `(forward, TransformRequest)`; the frontend compiles a call to it
into the caller's graph."""
DIRECT_ATTR = "__amber_transform_call__"
"""On `ops.jvp`, `ops.derivative`, `ops.vjp`, `ops.linearize`: the transform's name; the frontend
compiles a call to the first two in place and refuses the others."""
USER_CODE_ATTR = "__amber_user_code__"
"""On such a wrapper: the code object of the user's function it ends up running, whose `def`
line the wrapper's own lines are shown as (in generated code's comments and in errors)."""
FIXED_CLOSURE_ATTR = "__amber_fixed_closure__"
"""On a function amber makes to call a transform or gradient function it holds (its closure is
set once and never rebound): the frontend guards that closure in memory only, since the disk
cache knows the callee by the jit object's key (its function's name and source, the request)."""
