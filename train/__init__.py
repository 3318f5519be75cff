"""MindSpore's `mindspore.train`: `Model` (train / eval / predict / fit over a dataset, the
train step compiled once), the callbacks and the metrics; `mindspore.train.serialization`'s
checkpoint functions. See docs/mindspore-training.md."""
from . import callback, metrics, serialization
from .callback import (Callback, CheckpointConfig, EarlyStopping, History, LambdaCallback,
                       LossMonitor, ModelCheckpoint, RunContext, TimeMonitor)
from .metrics import (F1, MAE, MSE, Accuracy, Fbeta, Loss, Metric, Precision, Recall,
                      Top1CategoricalAccuracy, Top5CategoricalAccuracy,
                      TopKCategoricalAccuracy, get_metric_fn, rearrange_inputs)
from .model import Model
from .serialization import load_checkpoint, load_param_into_net, save_checkpoint

__all__ = ["Model", "Callback", "RunContext", "LossMonitor", "TimeMonitor", "ModelCheckpoint",
           "CheckpointConfig", "EarlyStopping", "History", "LambdaCallback", "Metric",
           "rearrange_inputs", "Accuracy", "Loss", "TopKCategoricalAccuracy",
           "Top1CategoricalAccuracy", "Top5CategoricalAccuracy", "MAE", "MSE", "Precision",
           "Recall", "Fbeta", "F1", "get_metric_fn", "save_checkpoint", "load_checkpoint",
           "load_param_into_net"]
