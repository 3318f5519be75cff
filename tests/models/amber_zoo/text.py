"""Text models the model zoo's way: a TextCNN (ExpandDims, an Embedding, convolutions over whole
word vectors, SequentialCells with tuple-kernel max pools, ReduceMax, Dropout, string
initializers), a SentimentNet (a frozen embedding table from NumPy, a two-layer bidirectional
LSTM, stride-1 slices of its output), a loss written out of primitives (OneHot with a depth from
`ops.shape`, `scalar_to_tensor`), and a training callback class."""
import os

import amber
import amber.nn as nn
import amber.ops as ops
from amber import Tensor
from amber.nn.cell import Cell
from amber.ops import operations as P
from amber.train.callback import Callback


class EvalCallback(Callback):
    """Keeps the best accuracy; defined here as model files define theirs."""

    def __init__(self, save_path="./"):
        super(EvalCallback, self).__init__()
        self.best_acc = 0
        self.save_path = os.path.join(save_path, "best_acc.ckpt")

    def epoch_end(self, run_context):
        self.best_acc = max(self.best_acc, run_context.original_args())


class SoftmaxCrossEntropyExpand(Cell):
    def __init__(self, sparse=False):
        super(SoftmaxCrossEntropyExpand, self).__init__()
        self.exp = ops.Exp()
        self.reduce_sum = ops.ReduceSum(keep_dims=True)
        self.onehot = ops.OneHot()
        self.on_value = Tensor(1.0, amber.float32)
        self.off_value = Tensor(0.0, amber.float32)
        self.div = ops.Div()
        self.log = ops.Log()
        self.sum_cross_entropy = ops.ReduceSum(keep_dims=False)
        self.mul = ops.Mul()
        self.reduce_mean = ops.ReduceMean(keep_dims=False)
        self.sparse = sparse
        self.reduce_max = ops.ReduceMax(keep_dims=True)
        self.sub = ops.Sub()

    def construct(self, logit, label):
        logit_max = self.reduce_max(logit, -1)
        exp = self.exp(self.sub(logit, logit_max))
        softmax_result = self.div(exp, self.reduce_sum(exp, -1))
        if self.sparse:
            label = self.onehot(label, ops.shape(logit)[1], self.on_value, self.off_value)
        loss = self.sum_cross_entropy(self.mul(self.log(softmax_result), label), -1)
        loss = self.mul(ops.scalar_to_tensor(-1.0), loss)
        return self.reduce_mean(loss, -1)


class TextCNN(nn.Cell):
    def __init__(self, vocab_len=30, word_len=12, num_classes=2, vec_length=6):
        super(TextCNN, self).__init__()
        self.vec_length = vec_length
        self.word_len = word_len
        self.unsqueeze = ops.ExpandDims()
        self.embedding = nn.Embedding(vocab_len, vec_length, embedding_table="uniform")
        self.layer1 = self.make_layer(kernel_height=3)
        self.layer2 = self.make_layer(kernel_height=4)
        self.concat = ops.Concat(1)
        self.fc = nn.Dense(8 * 2, num_classes, weight_init="normal", bias_init="zeros")
        self.drop = nn.Dropout(p=0.5)
        self.reducemax = ops.ReduceMax(keep_dims=False)

    def make_layer(self, kernel_height):
        return nn.SequentialCell([
            nn.Conv2d(1, 8, kernel_size=(kernel_height, self.vec_length), padding=1,
                      pad_mode="pad", has_bias=True, weight_init="normal", bias_init="zeros"),
            nn.ReLU(),
            nn.MaxPool2d(kernel_size=(self.word_len - kernel_height + 1, 1)),
        ])

    def construct(self, x):
        x = self.embedding(self.unsqueeze(x, 1))
        x1 = self.reducemax(self.layer1(x), (2, 3))
        x2 = self.reducemax(self.layer2(x), (2, 3))
        x = self.drop(self.concat((x1, x2)))
        return self.fc(x)


class SentimentNet(nn.Cell):
    def __init__(self, weight, num_hiddens=6, num_layers=2, num_classes=2, seq_len=10):
        super(SentimentNet, self).__init__()
        vocab_size, embed_size = weight.shape
        self.seq_len = seq_len
        self.embedding = nn.Embedding(vocab_size, embed_size, embedding_table=Tensor(weight))
        self.embedding.embedding_table.requires_grad = False
        self.trans = P.Transpose()
        self.perm = (1, 0, 2)
        self.encoder = nn.LSTM(input_size=embed_size, hidden_size=num_hiddens,
                               num_layers=num_layers, has_bias=True, bidirectional=True,
                               dropout=0.0)
        self.concat = P.Concat(1)
        self.squeeze = P.Squeeze(axis=0)
        self.decoder = nn.Dense(num_hiddens * 4, num_classes)

    def construct(self, inputs):
        embeddings = self.trans(self.embedding(inputs), self.perm)
        output, _ = self.encoder(embeddings)
        last = self.seq_len - 1
        encoding = self.concat((self.squeeze(output[0:1:1]),
                                self.squeeze(output[last:last + 1:1])))
        return self.decoder(encoding)
