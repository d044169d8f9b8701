#!/usr/bin/env python3
"""GPT-2 small's forward pass at its real size: the tracer against PyTorch in float64.

    gpt2_small.py TRACER LESSON.yaml TOKENIZER_DIR

Writes random weights of GPT-2 small's size in Hugging Face's layout (config.json and an F32
model.safetensors of 124M parameters, about 500 MB) into a temporary folder, with the
tokenizer of TOKENIZER_DIR (any GPT-2 tokenizer: the tiny one of tests/tokenizer/tiny keeps
the ids small), then traces the lesson's 12-layer forward pass of a 16-token sentence,
printing the logits and one layer's attention (--only), and runs the same forward pass in
PyTorch (float64, from the same file) in a process of its own. Prints each one's wall time
and peak memory (maximum resident set) and their ratios. TRACER_BENCH_RUNS (default 1) runs
each that many times and keeps the median.
"""

import json
import os
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np

LAYERS, D, HEADS, VOCAB, POSITIONS = 12, 768, 12, 50257, 1024
TEXT = "The cat sat on the mat the cat sat on the mat the cat sat on"  # 16 tokens of the tiny tokenizer

TORCH_FORWARD = r'''
import json, math, struct, sys
import numpy as np, torch
folder, ids = sys.argv[1], json.loads(sys.argv[2])
raw = open(folder + "/model.safetensors", "rb").read()
n_head = struct.unpack("<Q", raw[:8])[0]
head = json.loads(raw[8:8 + n_head])
def t(name):
    e = head[name]
    a, b = e["data_offsets"]
    return torch.from_numpy(np.frombuffer(raw, "<f4", (b - a) // 4, 8 + n_head + a).reshape(e["shape"]).astype(np.float64))
cfg = json.load(open(folder + "/config.json"))
L, H, D = cfg["n_layer"], cfg["n_head"], cfg["n_embd"]
n, dh = len(ids), D // H
ln = lambda x, g, b: torch.nn.functional.layer_norm(x, (D,), g, b, eps=1e-5)
wte = t("wte.weight")
x = wte[torch.tensor(ids)] + t("wpe.weight")[:n]
mask = torch.triu(torch.full((n, n), float("-inf"), dtype=torch.float64), 1)
for i in range(L):
    p = "h.%d." % i
    h = ln(x, t(p + "ln_1.weight"), t(p + "ln_1.bias"))
    qkv = h @ t(p + "attn.c_attn.weight") + t(p + "attn.c_attn.bias")
    q, k, v = (a.reshape(n, H, dh).transpose(0, 1) for a in qkv.split(D, dim=-1))
    w = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(dh) + mask, dim=-1)
    x = x + ((w @ v).transpose(0, 1).reshape(n, D) @ t(p + "attn.c_proj.weight") + t(p + "attn.c_proj.bias"))
    h = ln(x, t(p + "ln_2.weight"), t(p + "ln_2.bias"))
    m = torch.nn.functional.gelu(h @ t(p + "mlp.c_fc.weight") + t(p + "mlp.c_fc.bias"), approximate="tanh")
    x = x + (m @ t(p + "mlp.c_proj.weight") + t(p + "mlp.c_proj.bias"))
logits = ln(x, t("ln_f.weight"), t("ln_f.bias"))[-1] @ wte.T
print(float(logits.sum()))
'''


def write_model(folder, tokenizer_dir):
    rng = np.random.default_rng(1)
    shapes = {"wte.weight": (VOCAB, D), "wpe.weight": (POSITIONS, D)}
    for i in range(LAYERS):
        p = f"h.{i}."
        shapes.update({p + "ln_1.weight": (D,), p + "ln_1.bias": (D,), p + "attn.c_attn.weight": (D, 3 * D),
                       p + "attn.c_attn.bias": (3 * D,), p + "attn.c_proj.weight": (D, D), p + "attn.c_proj.bias": (D,),
                       p + "ln_2.weight": (D,), p + "ln_2.bias": (D,), p + "mlp.c_fc.weight": (D, 4 * D),
                       p + "mlp.c_fc.bias": (4 * D,), p + "mlp.c_proj.weight": (4 * D, D), p + "mlp.c_proj.bias": (D,)})
    shapes.update({"ln_f.weight": (D,), "ln_f.bias": (D,)})
    head, at = {}, 0
    for name, shape in shapes.items():
        size = 4 * int(np.prod(shape))
        head[name] = {"dtype": "F32", "shape": list(shape), "data_offsets": [at, at + size]}
        at += size
    text = json.dumps(head).encode()
    text += b" " * (-len(text) % 8)
    with open(os.path.join(folder, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for name, shape in shapes.items():
            ones = name.endswith(("ln_1.weight", "ln_2.weight", "ln_f.weight"))
            a = np.ones(shape) if ones else rng.normal(0, 0.02, shape)
            f.write(a.astype("<f4").tobytes())
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump({"n_layer": LAYERS, "n_head": HEADS, "n_embd": D, "n_positions": POSITIONS,
                   "vocab_size": VOCAB}, f)
    shutil.copy(os.path.join(tokenizer_dir, "encoder.json"), os.path.join(folder, "vocab.json"))
    shutil.copy(os.path.join(tokenizer_dir, "vocab.bpe"), os.path.join(folder, "merges.txt"))


def run(command):
    """Median wall time and peak memory (MiB) over TRACER_BENCH_RUNS runs, each as its own process."""
    walls, peaks = [], []
    for _ in range(int(os.environ.get("TRACER_BENCH_RUNS", "1"))):
        start = time.perf_counter()
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        walls.append(time.perf_counter() - start)
        if status != 0:
            sys.exit(f"{command[:3]}: exit status {status}\n{proc.stderr.read().decode()}")
        peaks.append(usage.ru_maxrss / 1024)
    return statistics.median(walls), statistics.median(peaks)


def main():
    tracer, lesson, tokenizer_dir = sys.argv[1:4]
    with tempfile.TemporaryDirectory() as folder:
        write_model(folder, tokenizer_dir)
        ids = subprocess.run([tracer, "--weights", folder, "--text", TEXT, "--save", os.path.join(folder, "ids"),
                              "--only", "tokens", "--brief", lesson], capture_output=True, text=True)
        if ids.returncode != 0:
            sys.exit(ids.stderr)
        tokens = [int(v) for v in np.load(os.path.join(folder, "ids", "tokens.npy"))]
        print(f"GPT-2 small's size, random F32 weights, {len(tokens)} tokens")
        t_wall, t_peak = run([tracer, "--weights", folder, "--text", TEXT, "--only", "logits,layer6.weights", lesson])
        p_wall, p_peak = run([sys.executable, "-c", TORCH_FORWARD, folder, json.dumps(tokens)])
        print("| | wall | peak memory |\n|---|---|---|")
        print(f"| tracer | {t_wall:.2f} s | {t_peak:.0f} MiB |")
        print(f"| PyTorch (float64) | {p_wall:.2f} s | {p_peak:.0f} MiB |")
        print(f"| ratio | {t_wall / p_wall:.2f} | {t_peak / p_peak:.2f} |")


if __name__ == "__main__":
    main()
