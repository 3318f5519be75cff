"""A small Transformer the model zoo's way: an embedding lookup over a Parameter that also
returns `table.value()`, a sinusoid position table as a constant Tensor, multi-head attention
from BatchMatMul(transpose_b=True), masks built with `tuple_to_array`, `DType` and `Cast`, Dense
layers `.to_float(mstype.float32)`, a causal mask from a `@constexpr` function, and a greedy
decoder whose loop grows the sequence and picks with TopK, GatherNd and Select."""
import math

import numpy as np

import amber as ms
import amber.nn as nn
import amber.ops as ops
from amber.common.parameter import Parameter
from amber.common.tensor import Tensor
from amber.ops.primitive import constexpr


def normal_weight(shape, num_units):
    return Tensor(np.random.normal(0.0, num_units ** -0.5, shape).astype(np.float32))


def weight_variable(shape):
    limit = math.sqrt(3.0 / max(1.0, (shape[0] + shape[1]) / 2.0))
    return Tensor(np.random.uniform(-limit, limit, shape).astype(np.float32))


def position_encoding(length, depth):
    depth = depth // 2
    positions = np.arange(length, dtype=np.float32)
    increment = np.log(1e4) / (depth - 1)
    inv = np.exp(np.arange(depth, dtype=np.float32) * -increment)
    scaled = np.expand_dims(positions, 1) * np.expand_dims(inv, 0)
    return np.concatenate([np.sin(scaled), np.cos(scaled)], axis=1)


@constexpr
def causal_mask(seq_length):
    return Tensor(np.tril(np.ones((seq_length, seq_length))), dtype=ms.float32)


class EmbeddingLookup(nn.Cell):
    def __init__(self, vocab_size, embedding_size):
        super(EmbeddingLookup, self).__init__()
        self.embedding_size = embedding_size
        self.embedding_table = Parameter(normal_weight([vocab_size, embedding_size],
                                                       embedding_size))
        self.gather = ops.Gather()
        self.reshape = ops.Reshape()
        self.shape = ops.Shape()

    def construct(self, input_ids):
        input_shape = self.shape(input_ids)
        flat_ids = self.reshape(input_ids, (-1,))
        output = self.gather(self.embedding_table, flat_ids, 0)
        output = self.reshape(output, input_shape + (self.embedding_size,))
        return output, self.embedding_table.value()


class EmbeddingPostprocessor(nn.Cell):
    def __init__(self, embedding_size, max_position_embeddings=16, dropout_prob=0.1):
        super(EmbeddingPostprocessor, self).__init__()
        self.scores_mul = Tensor([math.sqrt(float(embedding_size))], dtype=ms.float32)
        self.multiply = ops.Mul()
        self.add = ops.Add()
        self.dropout = nn.Dropout(p=dropout_prob)
        self.expand_dims = ops.ExpandDims()
        self.position_table = Tensor(position_encoding(max_position_embeddings, embedding_size),
                                     ms.float32)
        self.shape = ops.Shape()

    def construct(self, word_embeddings):
        input_len = self.shape(word_embeddings)[1]
        output = self.multiply(word_embeddings, self.scores_mul)
        positions = self.expand_dims(self.position_table[0:input_len:1, ::], 0)
        return self.dropout(self.add(output, positions))


class MultiheadAttention(nn.Cell):
    def __init__(self, batch_size, width, heads=2, dropout_prob=0.1):
        super(MultiheadAttention, self).__init__()
        self.batch_size, self.heads, self.size_per_head = batch_size, heads, width // heads
        self.scores_mul = Tensor([1.0 / math.sqrt(float(self.size_per_head))], dtype=ms.float32)
        self.reshape = ops.Reshape()
        self.query_layer = nn.Dense(width, width, has_bias=False,
                                    weight_init=weight_variable([width, width])
                                    ).to_float(ms.float32)
        self.key_layer = nn.Dense(width, width, has_bias=False,
                                  weight_init=weight_variable([width, width]))
        self.value_layer = nn.Dense(width, width, has_bias=False,
                                    weight_init=weight_variable([width, width]))
        self.out_layer = nn.Dense(width, width, has_bias=False,
                                  weight_init=weight_variable([width, width]))
        self.matmul_trans_b = ops.BatchMatMul(transpose_b=True)
        self.matmul = ops.BatchMatMul()
        self.multiply = ops.Mul()
        self.transpose = ops.Transpose()
        self.multiply_data = Tensor([-10000.0], dtype=ms.float32)
        self.softmax = nn.Softmax()
        self.dropout = nn.Dropout(p=dropout_prob)
        self.expand_dims = ops.ExpandDims()
        self.sub = ops.Sub()
        self.add = ops.Add()
        self.cast = ops.Cast()
        self.get_dtype = ops.DType()

    def construct(self, from_tensor, to_tensor, from_len, to_len, attention_mask):
        shape_from = (self.batch_size, from_len, self.heads, self.size_per_head)
        shape_to = (self.batch_size, to_len, self.heads, self.size_per_head)
        query = self.transpose(self.reshape(self.query_layer(from_tensor), shape_from),
                               (0, 2, 1, 3))
        key = self.transpose(self.reshape(self.key_layer(to_tensor), shape_to), (0, 2, 1, 3))
        scores = self.multiply(self.matmul_trans_b(query, key), self.scores_mul)
        mask = self.expand_dims(attention_mask, 1)
        dtype = self.get_dtype(scores)
        adder = self.multiply(self.sub(self.cast(ops.tuple_to_array((1.0,)), dtype),
                                       self.cast(mask, dtype)), self.multiply_data)
        probs = self.dropout(self.softmax(self.add(adder, scores)))
        value = self.transpose(self.reshape(self.value_layer(to_tensor), shape_to),
                               (0, 2, 1, 3))
        context = self.transpose(self.matmul(probs, value), (0, 2, 1, 3))
        context = self.reshape(context, (-1, self.heads * self.size_per_head))
        return self.out_layer(context)


class Layer(nn.Cell):
    """Pre-norm attention (self, then optionally cross) and a feed-forward block."""

    def __init__(self, batch_size, width, cross=False):
        super(Layer, self).__init__()
        self.cross = cross
        self.norm1 = nn.LayerNorm((width,))
        self.attention = MultiheadAttention(batch_size, width)
        if cross:
            self.norm2 = nn.LayerNorm((width,))
            self.cross_attention = MultiheadAttention(batch_size, width)
        self.norm3 = nn.LayerNorm((width,))
        self.ff1 = nn.Dense(width, width * 2, activation="relu")
        self.ff2 = nn.Dense(width * 2, width)
        self.dropout = nn.Dropout(p=0.1)
        self.reshape = ops.Reshape()

    def construct(self, x, mask, seq_len, memory=None, memory_mask=None, memory_len=1):
        x = self.reshape(x, (-1, ops.shape(x)[-1]))
        h = self.norm1(x)
        x = x + self.dropout(self.attention(h, h, seq_len, seq_len, mask))
        if self.cross:
            h = self.norm2(x)
            x = x + self.cross_attention(h, memory, seq_len, memory_len, memory_mask)
        return x + self.dropout(self.ff2(self.ff1(self.norm3(x))))


class Transformer(nn.Cell):
    def __init__(self, batch_size=2, vocab_size=20, width=8, num_layers=2, max_decode=3):
        super(Transformer, self).__init__()
        self.batch_size, self.width, self.max_decode = batch_size, width, max_decode
        self.lookup = EmbeddingLookup(vocab_size, width)
        self.post = EmbeddingPostprocessor(width)
        self.encoder = nn.CellList([Layer(batch_size, width) for _ in range(num_layers)])
        self.decoder = nn.CellList([Layer(batch_size, width, cross=True)
                                    for _ in range(num_layers)])
        self.final_norm = nn.LayerNorm((width,))
        self.batch_matmul = ops.BatchMatMul()
        self.matmul = ops.MatMul(transpose_b=True)
        self.log_softmax = nn.LogSoftmax(axis=-1)
        self.cast = ops.Cast()
        self.shape = ops.Shape()
        self.reshape = ops.Reshape()
        self.topk = ops.TopK(sorted=True)
        self.gather_nd = ops.GatherNd()
        self.select = ops.Select()
        self.concat = ops.Concat(axis=-1)
        self.tile = ops.Tile()
        self.equal = ops.Equal()
        self.batch_ids = Tensor(np.arange(batch_size).reshape(batch_size, 1), ms.int32)
        self.eos = Tensor(np.full((batch_size, 1), 2), ms.int32)
        self.start = Tensor(np.ones((batch_size, 1)), ms.int32)
        self.add_flags(loop_can_unroll=True)

    def attention_mask(self, input_mask):
        shape = self.shape(input_mask)
        mask = self.cast(self.reshape(input_mask, (shape[0], 1, shape[1])), ms.float32)
        ones = ops.ones((shape[0], shape[1], 1), ms.float32)
        return self.batch_matmul(ones, mask)

    def encode(self, ids, mask):
        seq_len = self.shape(ids)[1]
        x, table = self.lookup(ids)
        x = self.post(x)
        attention = self.attention_mask(mask)
        for layer in self.encoder:
            x = layer(x, attention, seq_len)
        return self.final_norm(x), table, attention

    def decode(self, ids, memory, memory_mask, table):
        seq_len = self.shape(ids)[1]
        memory_len = self.shape(memory_mask)[2]
        x, _ = self.lookup(ids)
        x = self.post(x)
        mask = self.attention_mask(ops.ones_like(ids)) * ops.expand_dims(causal_mask(seq_len), 0)
        cross_mask = memory_mask[::, 0:1:1, ::]
        cross_mask = self.tile(cross_mask, (1, seq_len, 1))
        for layer in self.decoder:
            x = layer(x, mask, seq_len, memory, cross_mask, memory_len)
        logits = self.matmul(self.final_norm(x), table)
        return self.log_softmax(logits)

    def construct(self, source_ids, source_mask, target_ids):
        memory, table, memory_mask = self.encode(source_ids, source_mask)
        train_log_probs = self.decode(target_ids, memory, memory_mask, table)
        ids = self.start
        for _ in range(self.max_decode):
            log_probs = self.decode(ids, memory, memory_mask, table)
            last = self.reshape(log_probs, (self.batch_size, -1, ops.shape(log_probs)[-1]))
            last = last[::, -1, ::]
            _, best = self.topk(last, 2)
            first = self.gather_nd(best, self.concat((self.batch_ids, self.batch_ids * 0)))
            first = self.reshape(first, (self.batch_size, 1))
            finished = self.equal(ids[::, -1:], self.eos)
            ids = self.concat((ids, self.select(finished, self.eos, first)))
        return train_log_probs, ids
