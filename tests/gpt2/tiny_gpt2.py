#!/usr/bin/env python3
"""The GPT-2 lesson on a tiny GPT-2, against the same forward pass written here in PyTorch.

    tiny_gpt2.py TRACER LESSON.yaml TOKENIZER_DIR WORK_DIR

Writes a small GPT-2 in the layout Hugging Face ships `gpt2` in (config.json,
model.safetensors in F32, vocab.json and merges.txt): 2 layers, d 64, 4 heads, 32 positions,
random weights, and the tokenizer of tests/tokenizer/tiny (its 256 bytes and 13 merges: a
byte-level vocabulary cannot be smaller than its 256 bytes). It is written three times: with
the tensors named as GPT2Model saves them (wte.weight), as GPT2LMHeadModel does
(transformer.wte.weight), and as one .npy file per tensor (wte.weight.npy), read by a variant
of the lesson written here from the lesson itself, each tensor: taken from its .npy file. The
lesson runs on each with --weights and --save, and every layer's
output, the last position's logits and probabilities are compared with a GPT-2 forward pass written below from Hugging Face's
formulas (Conv1D: x @ W + b, GELU's tanh form, LayerNorm with eps 1e-5, the causal mask, the
unembedding tied to wte), in float64 on the same float32 weights: relative difference at most
1e-10. The ten likeliest next tokens, as PyTorch ranks them and the vocabulary file spells
them, must label the bars of the lesson's top-10, and the sentence's tokens the rows of x and of
each layer's attention. Exit 77 (meson's skip), loudly, without PyTorch.
"""

import json
import math
import os
import re
import shutil
import struct
import subprocess
import sys

SKIP = ("SKIP: the tiny GPT-2 comparison needs python3 with torch and numpy "
        "(Debian: apt-get install python3-torch python3-numpy)")

try:
    import numpy as np
    import torch
except ImportError:
    if os.path.exists("/usr/bin/python3") and os.path.realpath(sys.executable) != "/usr/bin/python3" \
            and not os.environ.get("TRACER_TORCH_REEXEC"):
        os.execve("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv,
                  dict(os.environ, TRACER_TORCH_REEXEC="1"))
    print("*" * 78 + "\n" + SKIP + "\n" + "*" * 78, file=sys.stderr)
    sys.exit(77)

LAYERS, D, HEADS, POSITIONS = 2, 64, 4, 32
TEXT = "The cat sat on the mat"
# The tiny tokenizer's ids of TEXT, worked out by hand from its merges file: each word with
# its space is one merge ("The" 258, " cat" 260, " sat" 262, " on" 264, " the" 266, " mat" 268).
IDS = [258, 260, 262, 264, 266, 268]
TOLERANCE = 1e-10


def tensors(vocab, rng):
    """GPT-2's tensors, in GPT-2's shapes: Conv1D weights are [in, out]."""
    t = {"wte.weight": rng.normal(0, 0.5, (vocab, D)), "wpe.weight": rng.normal(0, 0.1, (POSITIONS, D))}
    for i in range(LAYERS):
        p = f"h.{i}."
        t[p + "ln_1.weight"] = 1 + rng.normal(0, 0.1, D)
        t[p + "ln_1.bias"] = rng.normal(0, 0.1, D)
        t[p + "attn.c_attn.weight"] = rng.normal(0, 0.3, (D, 3 * D))
        t[p + "attn.c_attn.bias"] = rng.normal(0, 0.1, 3 * D)
        t[p + "attn.c_proj.weight"] = rng.normal(0, 0.1, (D, D))
        t[p + "attn.c_proj.bias"] = rng.normal(0, 0.1, D)
        t[p + "ln_2.weight"] = 1 + rng.normal(0, 0.1, D)
        t[p + "ln_2.bias"] = rng.normal(0, 0.1, D)
        t[p + "mlp.c_fc.weight"] = rng.normal(0, 0.2, (D, 4 * D))
        t[p + "mlp.c_fc.bias"] = rng.normal(0, 0.1, 4 * D)
        t[p + "mlp.c_proj.weight"] = rng.normal(0, 0.1, (4 * D, D))
        t[p + "mlp.c_proj.bias"] = rng.normal(0, 0.1, D)
    t["ln_f.weight"] = 1 + rng.normal(0, 0.1, D)
    t["ln_f.bias"] = rng.normal(0, 0.1, D)
    return {name: a.astype("<f4") for name, a in t.items()}


def write_safetensors(path, named):
    head, data = {}, b""
    for name, a in named.items():
        raw = a.tobytes()
        head[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(head).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)


def npy_lesson(lesson, folder):
    """The lesson with each tensor of model.safetensors read from its own .npy file instead:
    {file: model.safetensors, tensor: "h.{i-1}.ln_1.weight"} becomes {file: "h.{i-1}.ln_1.weight.npy"}."""
    with open(lesson) as f:
        text = f.read()
    text, n = re.subn(r'file: model\.safetensors, tensor: (?:"([^"]+)"|([^",}\s]+))',
                      lambda m: 'file: "%s.npy"' % (m.group(1) or m.group(2)), text)
    text = text.replace("files: [config.json, model.safetensors,", "files: [config.json, wte.weight.npy,")
    if n < 12 or "model.safetensors" in text:
        sys.exit(f"{lesson}: the .npy variant left model.safetensors in it ({n} tensors replaced)")
    path = os.path.join(folder, "gpt2_npy.yaml")
    with open(path, "w") as f:
        f.write(text)
    return path


def write_model(folder, weights, vocab, tokenizer_dir, prefix):
    os.makedirs(folder, exist_ok=True)
    config = {"model_type": "gpt2", "n_layer": LAYERS, "n_head": HEADS, "n_embd": D,
              "n_positions": POSITIONS, "n_ctx": POSITIONS, "vocab_size": vocab,
              "layer_norm_epsilon": 1e-5, "activation_function": "gelu_new"}
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    if prefix == "npy":
        for name, a in weights.items():
            np.save(os.path.join(folder, name + ".npy"), a)
    else:
        write_safetensors(os.path.join(folder, "model.safetensors"), {prefix + k: v for k, v in weights.items()})
    shutil.copy(os.path.join(tokenizer_dir, "encoder.json"), os.path.join(folder, "vocab.json"))
    shutil.copy(os.path.join(tokenizer_dir, "vocab.bpe"), os.path.join(folder, "merges.txt"))


def forward(w, ids):
    """GPT-2's forward pass as Hugging Face's modeling_gpt2 computes it, in float64."""
    W = {k: torch.from_numpy(v.astype(np.float64)) for k, v in w.items()}
    n, dh = len(ids), D // HEADS
    ln = lambda x, g, b: torch.nn.functional.layer_norm(x, (D,), g, b, eps=1e-5)
    x = W["wte.weight"][torch.tensor(ids)] + W["wpe.weight"][:n]
    causal = torch.tril(torch.ones(n, n, dtype=torch.bool))
    layers = []
    for i in range(LAYERS):
        p = f"h.{i}."
        h = ln(x, W[p + "ln_1.weight"], W[p + "ln_1.bias"])
        qkv = h @ W[p + "attn.c_attn.weight"] + W[p + "attn.c_attn.bias"]  # Conv1D
        q, k, v = (t.reshape(n, HEADS, dh).transpose(0, 1) for t in qkv.split(D, dim=-1))
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(dh)
        scores = scores.masked_fill(~causal, float("-inf"))
        a = torch.softmax(scores, dim=-1) @ v
        a = a.transpose(0, 1).reshape(n, D) @ W[p + "attn.c_proj.weight"] + W[p + "attn.c_proj.bias"]
        x = x + a
        h = ln(x, W[p + "ln_2.weight"], W[p + "ln_2.bias"])
        m = torch.nn.functional.gelu(h @ W[p + "mlp.c_fc.weight"] + W[p + "mlp.c_fc.bias"], approximate="tanh")
        x = x + (m @ W[p + "mlp.c_proj.weight"] + W[p + "mlp.c_proj.bias"])
        layers.append(x.numpy())
    logits = ln(x, W["ln_f.weight"], W["ln_f.bias"]) @ W["wte.weight"].T  # tied to wte
    return layers, logits.numpy()


def compare(name, got, want):
    if got.shape != want.shape:
        return f"{name}: shape {got.shape}, PyTorch's {want.shape}"
    diff = np.abs(got - want)
    rel = diff.max() / np.abs(want).max()
    if rel > TOLERANCE:
        worst = np.argsort(diff.ravel())[::-1][:4]
        pairs = ", ".join(f"[{i}] {got.ravel()[i]!r} vs {want.ravel()[i]!r}" for i in worst)
        return f"{name}: relative difference {rel:.3g} > {TOLERANCE}: {pairs}"
    print(f"{name}: {got.shape}, relative difference {rel:.3g}")
    return None


def main():
    tracer, lesson, tokenizer_dir, work = sys.argv[1:5]
    shutil.rmtree(work, ignore_errors=True)
    with open(os.path.join(tokenizer_dir, "encoder.json")) as f:
        vocab = len(json.load(f))
    weights = tensors(vocab, np.random.default_rng(27))
    layers, logits = forward(weights, IDS)
    problems = []
    for prefix in ("", "transformer.", "npy"):
        folder = os.path.join(work, "gpt2" + (prefix and "_" + prefix.rstrip(".")))
        saved = os.path.join(folder, "saved")
        write_model(folder, weights, vocab, tokenizer_dir, prefix)
        variant = npy_lesson(lesson, work) if prefix == "npy" else lesson
        tag = ".npy files: " if prefix == "npy" else prefix
        run = subprocess.run([tracer, "--weights", folder, "--save", saved, "--format", "json", "--text", TEXT,
                              variant], capture_output=True, text=True)
        if run.returncode != 0:
            problems.append(f"{folder}: exit {run.returncode}\n{run.stderr}")
            continue
        stages = {s["name"]: s for s in json.loads(run.stdout)["stages"]}
        load = lambda name: np.load(os.path.join(saved, name + ".npy"))
        if list(load("tokens")) != IDS:
            problems.append(f"{folder}: token ids {list(load('tokens'))}, expected {IDS}")
        for i, want in enumerate(layers):
            problems.append(compare(f"{tag}layer {i}", load(layer_stage(i)), want))
        # The lesson scores the token after the last one: the last row of the logits.
        problems.append(compare(f"{tag}logits", load("logits"), logits[-1]))
        probs = torch.softmax(torch.from_numpy(logits[-1]), dim=-1).numpy()
        problems.append(compare(f"{tag}probs", load("probs"), probs))
        if load("next") != probs.argmax():
            problems.append(f"{tag}next: {load('next')}, PyTorch's most likely is {probs.argmax()}")
        problems += check_labels(tag, stages, probs, token_labels(tokenizer_dir))
    problems = [p for p in problems if p]
    for p in problems:
        print(p, file=sys.stderr)
    sys.exit(1 if problems else 0)


def token_labels(tokenizer_dir):
    """Every token of the vocabulary file as the tracer labels it: GPT-2's byte-to-unicode table
    undone, the bytes read as UTF-8, and \\n, \\t, \\r, other control characters, the backslash
    and bytes that are not whole UTF-8 written out."""
    printable = [*range(ord("!"), ord("~") + 1), *range(0xA1, 0xAC + 1), *range(0xAE, 0xFF + 1)]
    unicode_of = {b: chr(b) for b in printable}
    extra = 0
    for b in range(256):
        if b not in unicode_of:
            unicode_of[b] = chr(256 + extra)
            extra += 1
    byte_of = {u: b for b, u in unicode_of.items()}
    with open(os.path.join(tokenizer_dir, "encoder.json")) as f:
        vocab = json.load(f)
    labels = [None] * len(vocab)
    for token, i in vocab.items():
        raw, out, k = bytes(byte_of[c] for c in token), "", 0
        while k < len(raw):
            n = next((n for n in range(1, 5) if utf8_char(raw[k:k + n])), 0)
            if raw[k] in b"\n\t\r":
                out += {10: "\\n", 9: "\\t", 13: "\\r"}[raw[k]]
                n = 1
            elif n == 0 or raw[k] < 0x20 or raw[k] in (0x5C, 0x7F) or 0x80 <= ord(raw[k:k + n].decode()) < 0xA0:
                out += f"\\x{raw[k]:02X}"
                n = 1
            else:
                out += raw[k:k + n].decode()
            k += n
        labels[i] = out
    return labels


def utf8_char(b):
    try:
        return len(b.decode("utf-8")) == 1
    except UnicodeDecodeError:
        return False


def check_labels(prefix, stages, probs, labels):
    """The ten likeliest next tokens, as PyTorch ranks them, label the bars of top; the rows of x
    and of each head's attention are the sentence's tokens."""
    problems = []
    values, ids = torch.topk(torch.from_numpy(probs), 10)
    want = [labels[i] for i in ids.tolist()]
    top = stages["top"]
    if top["cols"] != want or top["picture"] != "bars":
        problems.append(f"{prefix}top: labels {top['cols']} drawn as {top['picture']}, expected bars of {want}")
    if compare(f"{prefix}top", np.array(top["values"]), values.numpy()):
        problems.append(f"{prefix}top: values {top['values']}, PyTorch's {values.tolist()}")
    words = [labels[i] for i in IDS]
    for name in ("x", "layer1.weights", "layer2.weights"):
        got = [stages[name]["rows"]] + ([stages[name]["cols"]] if name != "x" else [])
        if any(g != words for g in got):
            problems.append(f"{prefix}{name}: labels {got}, expected the tokens {words}")
    return problems


def layer_stage(i):
    """The stage that holds layer i's output (the residual stream after its MLP)."""
    return f"layer{i + 1}.out"


if __name__ == "__main__":
    main()
