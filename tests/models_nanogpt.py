"""A GPT block in the shape of karpathy/nanoGPT ``model.py`` (``CausalSelfAttention``, ``MLP``, ``Block``).

The lines that matter are copied as upstream writes them: pre-LayerNorm
residuals ``x = x + self.attn(self.ln_1(x))``, a causal ``masked_fill`` and
a softmax. ``bug="residual"`` writes the residual in place (``ln_1`` saved
``x``); ``bug="softmax"`` masks the attention after the softmax in place
(softmax saved its output). Both lines are marked ``# W:<name>``.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn
from torch.nn import functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd: int, n_head: int, block_size: int, bug: str = "") -> None:
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.n_head, self.n_embd, self.bug = n_head, n_embd, bug
        mask = torch.tril(torch.ones(block_size, block_size))
        self.register_buffer("bias", mask.view(1, 1, block_size, block_size))

    def forward(self, x: Tensor) -> Tensor:
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        causal = self.bias[:, :, :T, :T] == 0  # type: ignore[index]
        if self.bug == "softmax":
            att = F.softmax(att, dim=-1)
            att.masked_fill_(causal, 0.0)  # W:gpt_softmax_bug
        else:
            att = att.masked_fill(causal, float("-inf"))
            att = F.softmax(att, dim=-1)
        y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)  # type: ignore[no-any-return]


class MLP(nn.Module):
    def __init__(self, n_embd: int) -> None:
        super().__init__()
        self.c_fc = nn.Linear(n_embd, 4 * n_embd)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * n_embd, n_embd)

    def forward(self, x: Tensor) -> Tensor:
        return self.c_proj(self.gelu(self.c_fc(x)))  # type: ignore[no-any-return]


class Block(nn.Module):
    def __init__(
        self, n_embd: int = 16, n_head: int = 2, block_size: int = 8, bug: str = ""
    ) -> None:
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head, block_size, bug)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = MLP(n_embd)
        self.bug = bug

    def forward(self, x: Tensor) -> Tensor:
        if self.bug == "residual":
            x += self.attn(self.ln_1(x))  # W:gpt_residual_bug
        else:
            x = x + self.attn(self.ln_1(x))
        x = x + self.mlp(self.ln_2(x))
        return x


class GPT(nn.Module):
    """Token and position embeddings, two blocks, a final LayerNorm and head."""

    def __init__(
        self, vocab: int = 32, n_embd: int = 16, block_size: int = 8, bug: str = ""
    ) -> None:
        super().__init__()
        self.wte = nn.Embedding(vocab, n_embd)
        self.wpe = nn.Embedding(block_size, n_embd)
        self.h = nn.ModuleList([Block(n_embd, 2, block_size, bug), Block(n_embd, 2, block_size)])
        self.ln_f = nn.LayerNorm(n_embd)
        self.lm_head = nn.Linear(n_embd, vocab, bias=False)

    def forward(self, idx: Tensor) -> Tensor:
        pos = torch.arange(0, idx.size(1), dtype=torch.long)
        x = self.wte(idx) + self.wpe(pos)
        for block in self.h:
            x = block(x)
        return self.lm_head(self.ln_f(x))  # type: ignore[no-any-return]
