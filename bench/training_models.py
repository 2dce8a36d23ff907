"""Small models built from torch.nn for recording training steps (bench/training.py and the
commands in docs/training.md): `python -m slabscope.planner.torch_trace
bench.training_models:MLP --input-shape 64,256 --step adam`."""

from __future__ import annotations

import torch
from torch import nn


class MLP(nn.Module):
    """Four linear layers with ReLU between: input 256 features, output 10."""

    def __init__(self, width: int = 1024):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(256, width), nn.ReLU(), nn.Linear(width, width),
                                    nn.ReLU(), nn.Linear(width, width), nn.ReLU(),
                                    nn.Linear(width, 10))

    def forward(self, x):
        return self.layers(x)


class ConvNet(nn.Module):
    """A VGG-like conv net on 3-channel images: conv, batch norm, ReLU, pooling, then a head."""

    def __init__(self, channels: int = 32):
        super().__init__()
        layers, width = [], 3
        for out in (channels, 2 * channels, 4 * channels):
            layers += [nn.Conv2d(width, out, 3, padding=1), nn.BatchNorm2d(out), nn.ReLU(),
                       nn.Conv2d(out, out, 3, padding=1), nn.BatchNorm2d(out), nn.ReLU(),
                       nn.MaxPool2d(2)]
            width = out
        self.features = nn.Sequential(*layers)
        self.head = nn.Linear(width, 10)

    def forward(self, x):
        return self.head(self.features(x).mean((2, 3)))


class Block(nn.Module):
    """A pre-norm transformer block; attention written out, so softmax and matmuls are ops."""

    def __init__(self, width: int = 256, heads: int = 4):
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.qkv, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(),
                                 nn.Linear(4 * width, width))

    def forward(self, x):
        b, t, w = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, t, 3, self.heads, -1).permute(2, 0, 3, 1, 4)
        attention = torch.softmax(q @ k.transpose(-1, -2) / (w // self.heads) ** 0.5, dim=-1)
        x = x + self.proj((attention @ v).transpose(1, 2).reshape(b, t, w))
        return x + self.mlp(self.norm2(x))


class Transformer(nn.Module):
    """Token embedding, `depth` blocks and a vocabulary head: input token ids (batch, length)."""

    def __init__(self, vocabulary: int = 1000, width: int = 256, depth: int = 4):
        super().__init__()
        self.embed = nn.Embedding(vocabulary, width)
        self.layers = nn.ModuleList(Block(width) for _ in range(depth))
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocabulary)

    def forward(self, ids):
        x = self.embed(ids)
        for layer in self.layers:
            x = layer(x)
        return self.head(self.norm(x))
