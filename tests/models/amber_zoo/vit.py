"""A Vision Transformer the model zoo's way: a configuration object holding layer classes and
shared activation cells, a stem unpacking `img.shape`, residual cells wrapping SequentialCells
(`construct(self, x, **kwargs)`), stochastic depth reading `self.training`, a class token and
position table as Parameters from `initializer(Normal(sigma=1.0), shape)`, and `@ms.jit` on the
top construct (MindSpore 2.x style)."""
import numpy as np

import amber as ms
import amber.ops as ops
from amber.common.initializer import initializer
from amber.common.parameter import Parameter
from amber.nn import Cell, Dense, Dropout, SequentialCell


class VitConfig:
    def __init__(self, d_model=16, depth=2, heads=2, mlp_dim=32, patch_size=4, image_size=16,
                 num_classes=10, drop_path_rate=0.1):
        self.d_model, self.depth, self.heads, self.mlp_dim = d_model, depth, heads, mlp_dim
        self.dim_head = d_model // heads
        self.patch_size, self.image_size, self.num_classes = patch_size, image_size, num_classes
        self.drop_path_rate = drop_path_rate
        self.network_norm = ms.nn.LayerNorm((d_model,))
        self.network_init = ms.common.initializer.Normal(sigma=1.0)
        self.init = ms.common.initializer.XavierUniform()
        self.body_norm = ms.nn.LayerNorm
        self.attention_activation = ms.nn.Softmax()
        self.feedforward_activation = ms.nn.GELU()


class DropPath(Cell):
    def __init__(self, drop_prob):
        super(DropPath, self).__init__()
        self.shape = ops.Shape()
        self.ones = ops.Ones()
        self.dropout = Dropout(p=drop_prob)

    def construct(self, x):
        if self.training:
            x_shape = self.shape(x)
            mask = self.ones((x_shape[0], 1, 1), ms.float32)
            x = self.dropout(mask) * x
        return x


class BatchDense(Cell):
    def __init__(self, in_features, out_features, initialization):
        super().__init__()
        self.out_features = out_features
        self.dense = Dense(in_features, out_features)
        self.dense.weight.set_data(initializer(initialization, [out_features, in_features]))
        self.reshape = ops.Reshape()

    def construct(self, x):
        bs, seq_len, d_model = x.shape
        out = self.dense(self.reshape(x, (bs * seq_len, d_model)))
        return self.reshape(out, (bs, seq_len, self.out_features))


class ResidualCell(Cell):
    def __init__(self, cell):
        super().__init__()
        self.cell = cell

    def construct(self, x, **kwargs):
        return self.cell(x, **kwargs) + x


class Attention(Cell):
    def __init__(self, config):
        super().__init__()
        self.heads, self.dim_head = config.heads, config.dim_head
        inner = config.heads * config.dim_head
        self.scale = ms.Tensor([config.dim_head ** -0.5])
        self.to_q = Dense(config.d_model, inner)
        self.to_k = Dense(config.d_model, inner)
        self.to_v = Dense(config.d_model, inner)
        self.to_out = Dense(inner, config.d_model)
        self.dropout = Dropout(p=0.1)
        self.activation = config.attention_activation
        self.reshape = ops.Reshape()
        self.transpose = ops.Transpose()
        self.mul = ops.Mul()
        self.q_matmul_k = ops.BatchMatMul(transpose_b=True)
        self.attn_matmul_v = ops.BatchMatMul()

    def construct(self, x):
        bs, seq_len, d_model, h, d = x.shape[0], x.shape[1], x.shape[2], self.heads, \
            self.dim_head
        x_2d = self.reshape(x, (-1, d_model))
        q, k, v = self.to_q(x_2d), self.to_k(x_2d), self.to_v(x_2d)
        q = self.mul(self.transpose(self.reshape(q, (bs, seq_len, h, d)), (0, 2, 1, 3)),
                     self.scale)
        k = self.transpose(self.reshape(k, (bs, seq_len, h, d)), (0, 2, 1, 3))
        v = self.transpose(self.reshape(v, (bs, seq_len, h, d)), (0, 2, 1, 3))
        scores = self.activation(ops.cast(self.q_matmul_k(q, k), x.dtype))
        out = self.transpose(self.attn_matmul_v(scores, v), (0, 2, 1, 3))
        out = self.to_out(self.reshape(out, (bs * seq_len, h * d)))
        out = self.reshape(out, (bs, seq_len, d_model))
        return ops.cast(self.dropout(ops.cast(out, ms.float32)), out.dtype)


class FeedForward(Cell):
    def __init__(self, config):
        super().__init__()
        self.ff1 = BatchDense(config.d_model, config.mlp_dim, config.init)
        self.activation = config.feedforward_activation
        self.dropout = Dropout(p=0.1)
        self.ff2 = BatchDense(config.mlp_dim, config.d_model, config.init)

    def construct(self, x):
        y = self.dropout(self.activation(self.ff1(x)))
        return self.dropout(self.ff2(y))


class ViT(Cell):
    def __init__(self, config):
        super().__init__()
        d, p = config.d_model, config.patch_size
        num_patches = (config.image_size // p) ** 2
        self.patch_size = p
        self.patch_to_embedding = BatchDense(3 * p * p, d, config.init)
        self.cls_token = Parameter(initializer(config.network_init, (1, 1, d)), name="cls",
                                   requires_grad=True)
        self.pos_embedding = Parameter(initializer(config.network_init, (1, num_patches + 1, d)),
                                       name="pos_embedding", requires_grad=True)
        self.tile = ops.Tile()
        self.cat_1 = ops.Concat(axis=1)
        self.reshape = ops.Reshape()
        self.transpose = ops.Transpose()
        self.dropout = Dropout(p=0.1)
        rates = [x.item() for x in np.linspace(0, config.drop_path_rate, config.depth)]
        layers = []
        for i in range(config.depth):
            layers.append(SequentialCell([
                ResidualCell(SequentialCell([config.body_norm((d,)), Attention(config),
                                             DropPath(rates[i])])),
                ResidualCell(SequentialCell([config.body_norm((d,)), FeedForward(config),
                                             DropPath(rates[i])])),
            ]))
        self.body = SequentialCell(layers)
        self.norm = config.network_norm
        self.head = SequentialCell([Dense(d, config.num_classes)])

    @ms.jit
    def construct(self, img):
        p = self.patch_size
        bs, channels, h, w = img.shape
        x = self.reshape(img, (bs, channels, h // p, p, w // p, p))
        x = self.transpose(x, (0, 2, 4, 1, 3, 5))
        x = self.reshape(x, (bs, (h // p) * (w // p), channels * p * p))
        x = self.patch_to_embedding(x)
        bs, seq_len, _ = x.shape
        cls_tokens = self.tile(self.cls_token, (bs, 1, 1))
        x = self.cat_1((cls_tokens, x))
        x += self.pos_embedding[:, :(seq_len + 1)]
        x = self.dropout(x)
        x = self.body(x)
        x = self.norm(x)
        x = x[:, 0]
        return self.head(x)


def vit_small():
    return ViT(VitConfig())
