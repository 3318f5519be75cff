"""MindSpore's high-level `Model`: `train`, `eval`, `predict` and `fit` over a dataset, with
callbacks and metrics. The train step (forward, backward, optimizer update) is one
`nn.TrainOneStepCell` compiled once by `amber.jit`; evaluation and prediction run the network
compiled too. The loop itself (batches, callbacks, metrics) is plain Python."""
from __future__ import annotations

import warnings
from typing import Any, Iterator

import numpy as np

from ..common.tensor import Tensor
from ..communication.management import from_rank_zero, get_group_size
from ..communication.parallel import data_parallel, get_auto_parallel_context
from ..nn.cell import Cell
from ..nn.wrap import TrainOneStepCell, WithEvalCell, WithLossCell
from ..runtime import jit
from .checkpointing import ModelCheckpoint
from .hooks import CallbackManager, InternalCallbackParam, RunContext
from .metrics import Loss, Metric, get_metrics

__all__ = ["Model"]


def _check_level(name: str, level: str) -> None:
    if level != "O0":
        raise ValueError(f"Model: {name}={level!r} is not supported: amber trains in the "
                         f"parameters' own dtype (mixed precision is not implemented); use "
                         f"{name}=\"O0\"")


def _dataset_size(dataset: Any, what: str) -> int:
    if not hasattr(dataset, "create_tuple_iterator") or not hasattr(dataset, "get_dataset_size"):
        raise TypeError(f"Model.{what}: expected a dataset (amber.dataset / mindspore.dataset), "
                        f"got {type(dataset).__name__}")
    size = dataset.get_dataset_size()
    if size <= 0:
        raise ValueError(f"Model.{what}: the dataset is empty")
    return size


class Model:
    """`Model(network, loss_fn=None, optimizer=None, metrics=None, eval_network=None,
    eval_indexes=None, amp_level="O0")`. With an optimizer, `train` runs
    `TrainOneStepCell(WithLossCell(network, loss_fn), optimizer)` (or `network` itself as
    the loss when `loss_fn` is None). `metrics` (names or name -> Metric) are computed by
    `eval` from `WithEvalCell(network, loss_fn)` (loss, outputs, label), or from
    `eval_network`'s outputs picked by `eval_indexes` [loss, outputs, label]."""

    def __init__(self, network: Cell, loss_fn: Cell | None = None, optimizer: Cell | None = None,
                 metrics: Any = None, eval_network: Cell | None = None,
                 eval_indexes: list[int] | None = None, amp_level: str = "O0",
                 boost_level: str = "O0", **kwargs: Any) -> None:
        if not isinstance(network, Cell):
            raise TypeError(f"Model: network must be a Cell, got {type(network).__name__}")
        _check_level("amp_level", amp_level)
        _check_level("boost_level", boost_level)
        unsupported = {k for k, v in kwargs.items() if v is not None}
        if unsupported:
            raise NotImplementedError(f"Model: {', '.join(sorted(unsupported))} not supported by "
                                      "amber (no loss scaling or mixed precision)")
        if eval_indexes is not None and (not isinstance(eval_indexes, list)
                                         or len(eval_indexes) != 3):
            raise ValueError("Model: eval_indexes must be a list of 3 ints [loss, outputs, "
                             "label]")
        self._network, self._loss_fn, self._optimizer = network, loss_fn, optimizer
        self._metric_fns = get_metrics(metrics)
        self._parallel_mode = get_auto_parallel_context("parallel_mode")
        """The parallel mode when built, which the train step follows (as MindSpore's Model)."""
        self._device_number = 1 if self._parallel_mode == "stand_alone" else \
            get_auto_parallel_context("device_num")
        self._train_network = self._build_train_network()
        self._eval_network, self._eval_indexes = self._build_eval_network(eval_network,
                                                                          eval_indexes)
        self._compiled: dict[str, Any] = {}

    # -- the networks ----------------------------------------------------------------------------
    def _build_train_network(self) -> Cell | None:
        if self._optimizer is None:
            return None
        loss_net = self._network if self._loss_fn is None else WithLossCell(self._network,
                                                                            self._loss_fn)
        return TrainOneStepCell(loss_net, self._optimizer)

    def _build_eval_network(self, eval_network: Cell | None, eval_indexes: list[int] | None
                            ) -> tuple[Cell | None, list[int] | None]:
        if eval_network is not None:
            return eval_network, eval_indexes
        if self._metric_fns is None:
            return None, None
        if self._loss_fn is None:
            raise ValueError("Model: metrics need a loss_fn or an eval_network")
        return WithEvalCell(self._network, self._loss_fn), [0, 1, 2]

    @property
    def train_network(self) -> Cell | None:
        """The TrainOneStepCell `train` runs (None without an optimizer)."""
        return self._train_network

    @property
    def predict_network(self) -> Cell:
        return self._network

    @property
    def eval_network(self) -> Cell | None:
        return self._eval_network

    def _run(self, role: str, cell: Cell, *inputs: Any) -> Any:
        """`cell(*inputs)` compiled, one `amber.jit` per role, made on first use."""
        if role not in self._compiled:
            self._compiled[role] = jit(cell)
        with warnings.catch_warnings():
            # NOTE: a last, smaller batch makes the batch axis symbolic (one more compile);
            # expected in a dataset loop, so not worth a warning to Model's users
            warnings.filterwarnings("ignore", message=r"amber: .* changed between calls")
            return self._compiled[role](*inputs)

    # -- training --------------------------------------------------------------------------------
    def _params(self, dataset: Any, epoch: int, sink: bool, sink_size: int) -> Any:
        steps = _dataset_size(dataset, "train")
        if sink and sink_size not in (-1, 0):
            steps = sink_size
        cb_params = InternalCallbackParam()
        cb_params.update(
            train_network=self._train_network, network=self._network, epoch_num=epoch,
            batch_num=steps, cur_epoch_num=0, cur_step_num=0, mode="train",
            loss_fn=self._loss_fn, optimizer=self._optimizer, parallel_mode=self._parallel_mode,
            device_number=self._device_number, train_dataset=dataset, dataset_sink_mode=sink,
            net_outputs=None, train_dataset_element=None, last_save_ckpt_step=None,
            latest_ckpt_file=None)
        return cb_params

    def train(self, epoch: int, train_dataset: Any, callbacks: Any = None,
              dataset_sink_mode: bool = False, sink_size: int = -1,
              initial_epoch: int = 0) -> None:
        """Train for epochs `initial_epoch + 1 .. epoch` over `train_dataset`, calling
        `callbacks` (a Callback or a list). With `dataset_sink_mode`, an epoch is `sink_size`
        steps (-1: the dataset's size) and step hooks run once per epoch, as MindSpore's sink
        mode reports them; the steps themselves are the same compiled train step."""
        self._fit(epoch, train_dataset, callbacks, dataset_sink_mode, sink_size, initial_epoch,
                  valid=None)

    def fit(self, epoch: int, train_dataset: Any, valid_dataset: Any = None,
            valid_frequency: int = 1, callbacks: Any = None,
            train_dataset_sink_mode: bool = False, valid_dataset_sink_mode: bool = False,
            initial_epoch: int = 0, sink_size: int = -1) -> None:
        """`train`, evaluating on `valid_dataset` every `valid_frequency` epochs before the
        epoch-end hooks run (their `cb_params.eval_results` holds the metrics and
        `eval_loss`)."""
        if isinstance(valid_frequency, bool) or not isinstance(valid_frequency, int) \
                or valid_frequency < 1:
            raise ValueError(f"Model.fit: valid_frequency must be a positive int, got "
                             f"{valid_frequency!r}")
        valid = None if valid_dataset is None else (valid_dataset, valid_frequency)
        self._fit(epoch, train_dataset, callbacks, train_dataset_sink_mode, sink_size,
                  initial_epoch, valid)

    def _fit(self, epoch: int, dataset: Any, callbacks: Any, sink: bool, sink_size: int,
             initial_epoch: int, valid: tuple[Any, int] | None) -> None:
        if self._train_network is None:
            raise RuntimeError("Model.train: no optimizer was given to Model, so there is "
                               "nothing to train")
        if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 1:
            raise ValueError(f"Model.train: epoch must be a positive int, got {epoch!r}")
        if not 0 <= initial_epoch < epoch:
            raise ValueError(f"Model.train: initial_epoch must be in [0, {epoch}), got "
                             f"{initial_epoch!r}")
        if data_parallel() and not self._train_network.reducer_flag and get_group_size() > 1:
            raise RuntimeError(  # NOTE: else each rank would train a model of its own, silently
                "Model.train: the parallel mode is DATA_PARALLEL but this Model was built "
                "before it was set, so its train step does not average the ranks' gradients; "
                "call set_auto_parallel_context(parallel_mode=ParallelMode.DATA_PARALLEL, ...) "
                "before Model(...)")
        cb_params = self._params(dataset, epoch, bool(sink), sink_size)
        cb_params.cur_step_num = initial_epoch * cb_params.batch_num
        run_context = RunContext(cb_params)
        parallel = self._train_network.reducer_flag and get_group_size() > 1
        with CallbackManager(callbacks) as hooks:
            cb_params.list_callback = hooks
            hooks.on_train_begin(run_context)
            if parallel:
                self._checkpoint_files_of_rank_zero(hooks)
            batches = self._batches(dataset, cb_params.batch_num, sink)
            for cur in range(initial_epoch + 1, epoch + 1):
                cb_params.cur_epoch_num = cur
                self._train_epoch(hooks, run_context, next(batches), bool(sink))
                if valid is not None and cur % valid[1] == 0:
                    cb_params.eval_results = self._evaluate(valid[0], hooks, with_loss=True)
                hooks.on_train_epoch_end(run_context)
                if run_context.get_stop_requested():
                    break
            hooks.on_train_end(run_context)
            if parallel:  # NOTE: also keeps every rank here until rank 0's last file is written
                self._checkpoint_files_of_rank_zero(hooks)

    @staticmethod
    def _checkpoint_files_of_rank_zero(hooks: CallbackManager) -> None:
        """Every rank's ModelCheckpoints take the directory, prefix and latest file of rank 0's
        (which alone writes in a data-parallel job), in order; every rank runs train, so every
        rank takes part, whichever ranks were given a ModelCheckpoint."""
        checkpoints = [cb for cb in hooks.callbacks if isinstance(cb, ModelCheckpoint)]
        for cb, files in zip(checkpoints, from_rank_zero([cb.files for cb in checkpoints])):
            cb.files = files

    @staticmethod
    def _batches(dataset: Any, steps: int, sink: bool) -> Iterator[Iterator[list]]:
        """One iterator of batches per epoch: a pass over the dataset, or (sink mode) the next
        `steps` batches, passes continuing one after another."""
        rows = dataset.create_tuple_iterator(output_numpy=True)
        if not sink:
            while True:
                yield rows
        def endless() -> Iterator[list]:
            while True:
                yield from rows
        stream = endless()
        while True:
            yield (next(stream) for _ in range(steps))

    def _train_epoch(self, hooks: Any, run_context: RunContext, batches: Iterator[list],
                     sink: bool) -> None:
        cb_params = run_context.original_args()
        self._train_network.set_train(True)
        hooks.on_train_epoch_begin(run_context)
        if sink:
            hooks.on_train_step_begin(run_context)
        for batch in batches:
            cb_params.train_dataset_element = batch
            if not sink:
                hooks.on_train_step_begin(run_context)
            cb_params.net_outputs = np.asarray(self._run("train", self._train_network, *batch)
                                               ).view(Tensor)
            cb_params.cur_step_num += 1
            if not sink:
                hooks.on_train_step_end(run_context)
                if run_context.get_stop_requested():
                    break
        if sink:
            hooks.on_train_step_end(run_context)

    # -- evaluation and prediction -------------------------------------------------------------
    def eval(self, valid_dataset: Any, callbacks: Any = None,
             dataset_sink_mode: bool = False) -> dict[str, Any]:
        """The metrics over `valid_dataset`: {name: value}."""
        with CallbackManager(callbacks) as hooks:
            return self._evaluate(valid_dataset, hooks, with_loss=False)

    def _evaluate(self, dataset: Any, hooks: Any, with_loss: bool) -> dict[str, Any]:
        if self._eval_network is None:
            raise RuntimeError("Model.eval: give Model metrics (and a loss_fn or an "
                               "eval_network) to evaluate")
        cb_params = InternalCallbackParam(
            eval_network=self._eval_network, valid_dataset=dataset, metrics=self._metric_fns,
            mode="eval", batch_num=_dataset_size(dataset, "eval"), cur_step_num=0,
            cur_epoch_num=1, net_outputs=None, dataset_sink_mode=False, network=self._network)
        run_context = RunContext(cb_params)
        metrics = dict(self._metric_fns or {})
        eval_loss = Loss() if with_loss and self._eval_indexes is not None else None
        for metric in metrics.values():
            metric.clear()
        self._eval_network.set_train(False)
        hooks.on_eval_begin(run_context)
        hooks.on_eval_epoch_begin(run_context)
        for batch in dataset.create_tuple_iterator(num_epochs=1, output_numpy=True):
            hooks.on_eval_step_begin(run_context)
            outputs = self._run("eval", self._eval_network, *batch)
            outputs = tuple(outputs) if isinstance(outputs, tuple | list) else (outputs,)
            cb_params.net_outputs = outputs
            self._update_metrics(metrics, outputs)
            if eval_loss is not None:
                eval_loss.update(np.asarray(outputs[self._eval_indexes[0]]))
            cb_params.cur_step_num += 1
            hooks.on_eval_step_end(run_context)
        results = {name: metric.eval() for name, metric in metrics.items()}
        if eval_loss is not None:
            results["eval_loss"] = eval_loss.eval()
        cb_params.eval_results = results
        hooks.on_eval_epoch_end(run_context)
        hooks.on_eval_end(run_context)
        return results

    def _update_metrics(self, metrics: dict[str, Metric], outputs: tuple) -> None:
        arrays = tuple(np.asarray(o) for o in outputs)
        for metric in metrics.values():
            if self._eval_indexes is None:
                metric.update(*arrays)
            elif isinstance(metric, Loss):
                metric.update(arrays[self._eval_indexes[0]])
            else:
                metric.update(arrays[self._eval_indexes[1]], arrays[self._eval_indexes[2]])

    def predict(self, *predict_data: Any) -> Any:
        """The network's output for `predict_data`, compiled, in inference mode."""
        self._network.set_train(False)
        out = self._run("predict", self._network, *predict_data)
        return np.asarray(out).view(Tensor) if isinstance(out, np.ndarray) else out
