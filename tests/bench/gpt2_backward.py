#!/usr/bin/env python3
"""Time one GPT-2 small block's forward and backward pass traced by the tracer against the same
computation in PyTorch.

    gpt2_backward.py TRACER LESSON.yaml     the benchmark (meson test --benchmark)
    gpt2_backward.py --torch N              the PyTorch side alone, at n = N

LESSON.yaml is tests/bench/gpt2_block.yaml, written for n = 1024; for another n every 1024 in it
is replaced, and steps are added: total = sum(out), then the gradient of total with respect to
X and to every weight, bias and LayerNorm parameter of the block (17 gradients). For each n both
sides run as whole processes, one after the other, RUNS times (median wall time), and their peak
resident memory is read from the kernel (getrusage of the child): the tracer writing its text
trace to /dev/null, and this script started again with --torch, which builds the same random
weights (gpt2_block.py's copy of the tracer's generator), computes the block in float64 with
PyTorch's autograd, its default threads, and calls backward() on the sum of the output.

Environment: TRACER_BENCH_SIZES (default "128 512 1024"), TRACER_BENCH_RUNS (default 3).
Exit 77 (meson's skip) when no python3 with numpy and torch is found.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from need_numpy import numpy_or_skip  # noqa: E402

np = numpy_or_skip("the GPT-2 backward benchmark")
try:
    import torch
except ImportError:
    print("SKIP: the GPT-2 backward benchmark needs python3 with torch")
    sys.exit(77)

import gpt2_block  # noqa: E402  the weights' generator, the timing of a whole process

# What the lesson differentiates total with respect to: X and every parameter of the block.
WRT = ["X", "ln1_gamma", "ln1_beta", "W_Q", "b_Q", "W_K", "b_K", "W_V", "b_V", "W_O", "b_O",
       "ln2_gamma", "ln2_beta", "W_fc", "b_fc", "W_proj", "b_proj"]


def backward_lesson(template, n):
    """gpt2_block.yaml at n, with total = sum(out) and a gradient step for each of WRT."""
    steps = ["  - total: sum(out)\n"] + ["  - d%s: grad(total, %s)\n" % (name, name) for name in WRT]
    return template.replace("1024", str(n)).rstrip("\n") + "\n" + "".join(steps)


def torch_block(n):
    """The lesson's steps in float64 with autograd, then the gradient of sum(out)."""
    D, H, F = gpt2_block.D_MODEL, gpt2_block.HEADS, gpt2_block.D_MLP
    w = lambda shape, seed, scale=0.02: torch.tensor(
        gpt2_block.normal(int(np.prod(shape)), scale, seed).reshape(shape), dtype=torch.float64, requires_grad=True)
    X = w((n, D), 1, 1.0)
    ln1_gamma = torch.ones(D, dtype=torch.float64, requires_grad=True)
    ln1_beta = torch.zeros(D, dtype=torch.float64, requires_grad=True)
    W_Q, b_Q = w((D, D), 2), w((D,), 3)
    W_K, b_K = w((D, D), 4), w((D,), 5)
    W_V, b_V = w((D, D), 6), w((D,), 7)
    W_O, b_O = w((D, D), 8), w((D,), 9)
    ln2_gamma = torch.ones(D, dtype=torch.float64, requires_grad=True)
    ln2_beta = torch.zeros(D, dtype=torch.float64, requires_grad=True)
    W_fc, b_fc = w((D, F), 10), w((F,), 11)
    W_proj, b_proj = w((F, D), 12), w((D,), 13)
    d_head = D // H

    def layernorm(x, gamma, beta, eps=1e-5):
        mean = x.mean(-1, keepdim=True)
        var = ((x - mean) ** 2).mean(-1, keepdim=True)
        return (x - mean) / torch.sqrt(var + eps) * gamma + beta

    h1 = layernorm(X, ln1_gamma, ln1_beta)
    Q, K, V = h1 @ W_Q + b_Q, h1 @ W_K + b_K, h1 @ W_V + b_V
    split = lambda t: t.reshape(n, H, d_head).transpose(0, 1)
    mask = torch.triu(torch.full((n, n), -torch.inf, dtype=torch.float64), 1)
    scores = split(Q) @ split(K).transpose(1, 2) / np.sqrt(d_head) + mask
    weights = torch.softmax(scores, -1)
    merged = (weights @ split(V)).transpose(0, 1).reshape(n, D)
    x1 = X + (merged @ W_O + b_O)
    hidden = layernorm(x1, ln2_gamma, ln2_beta) @ W_fc + b_fc
    activated = 0.5 * hidden * (1.0 + torch.tanh(np.sqrt(2.0 / np.pi) * (hidden + 0.044715 * hidden ** 3)))
    out = x1 + (activated @ W_proj + b_proj)
    out.sum().backward()
    return X.grad


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--torch":
        torch_block(int(sys.argv[2]))
        return 0
    args = gpt2_block.bench_args(__doc__, "128 512 1024")
    if not args:
        return 2
    tracer, template, sizes, runs = args
    print("GPT-2 small block (d 768, 12 heads, MLP 3072, causal), forward and the gradient of sum(out) "
          "with respect to X and every weight, fp64; %d CPUs; torch %s with %d threads; median of %d runs, "
          "whole processes" % (os.cpu_count(), torch.__version__, torch.get_num_threads(), runs))
    print("wall: elapsed seconds; cpu: user + system seconds of all threads (steadier on a busy "
          "machine); MiB: peak resident memory")
    gpt2_block.table(tracer, "torch", sizes, runs, lambda n: backward_lesson(template, n),
                     lambda n: [sys.executable, os.path.abspath(__file__), "--torch", str(n)])
    return 0


if __name__ == "__main__":
    sys.exit(main())
