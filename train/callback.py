"""MindSpore's `mindspore.train.callback`: the `Callback` protocol and the callbacks `Model`
runs: `LossMonitor`, `TimeMonitor`, `ModelCheckpoint` + `CheckpointConfig`, `EarlyStopping`,
`History`, `LambdaCallback`."""
from .checkpointing import CheckpointConfig, ModelCheckpoint
from .hooks import Callback, CallbackManager, InternalCallbackParam, RunContext
from .monitors import EarlyStopping, History, LambdaCallback, LossMonitor, TimeMonitor

__all__ = ["Callback", "RunContext", "CallbackManager", "InternalCallbackParam", "LossMonitor",
           "TimeMonitor", "ModelCheckpoint", "CheckpointConfig", "EarlyStopping", "History",
           "LambdaCallback"]
