"""amber: compile MindSpore-style Python models into static graphs and readable NumPy code."""
import sys as _sys

from . import ops
from . import common, nn
from .common import dtype
from .common.dtype import (bool_, float16, float32, float64, int8, int16, int32, int64,
                           uint8)
from .nn import Parameter, ParameterTuple
from .checkpoint import load_checkpoint, load_param_into_net, save_checkpoint
from .tensor import Tensor, get_seed, set_seed
from .frontend import CompileError, CompileTypeError, CompileValueError
from .runtime import GRAPH_MODE, PYNATIVE_MODE, get_context, jit, set_context, set_device
from .runtime import context
from . import mnp, train
from . import dataset
# NOTE: MindSpore exports mindspore.train's names at the top level (`from mindspore import Model`)
from .train import (F1, MAE, MSE, Accuracy, Callback, CheckpointConfig, EarlyStopping, Fbeta,
                    History, LambdaCallback, Loss, LossMonitor, Metric, Model, ModelCheckpoint,
                    Precision, Recall, RunContext, TimeMonitor, Top1CategoricalAccuracy,
                    Top5CategoricalAccuracy, TopKCategoricalAccuracy)
from . import communication
from .communication import (ParallelMode, get_auto_parallel_context,
                            reset_auto_parallel_context, set_auto_parallel_context)
from .ops import constexpr
from .runtime.grad import GradOperation, grad, value_and_grad
from .runtime.onnx_export import export

# NOTE: MindSpore spells these `ops.GradOperation`, `ops.grad`, `ops.value_and_grad`; they
# compile, so they live in runtime/ and the facade lists them with the ops.
ops.GradOperation, ops.grad, ops.value_and_grad = GradOperation, grad, value_and_grad
from .runtime.transforms import derivative, jacfwd, jacrev, jvp, vmap
from .runtime.vjp import linearize, vjp
ops.jvp, ops.vjp, ops.jacfwd, ops.jacrev, ops.vmap = jvp, vjp, jacfwd, jacrev, vmap
ops.linearize, ops.derivative = linearize, derivative

# NOTE: MindSpore's module paths `mindspore.numpy` and `mindspore.context`: registered under
# these names instead of files, since an amber/numpy.py would shadow NumPy itself for any
# script run from the package directory.
numpy = mnp
_sys.modules[f"{__name__}.numpy"] = mnp
_sys.modules[f"{__name__}.context"] = context

from .version import __version__
