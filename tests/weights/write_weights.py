#!/usr/bin/env python3
"""Write the weight files that the error cases weights_* of tests/errors read (through
--weights), good ones and broken ones, each broken in one way, and every_file.yaml, a lesson
that reads the good ones (for the test of allocation failures).

    write_weights.py OUTDIR STAMP
"""
import json
import os
import struct
import sys

import numpy as np


def safetensors(path, tensors, header=None):
    """tensors: name -> (dtype, bytes, shape), laid out one after the other."""
    head, data = {}, b""
    for name, (dtype, raw, shape) in tensors.items():
        head[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = header if header is not None else json.dumps(head).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    p = lambda name: os.path.join(out, name)
    w = np.arange(12, dtype="<f4").reshape(4, 3)
    np.save(p("good.npy"), np.arange(6, dtype="<f4").reshape(2, 3))
    safetensors(p("good.safetensors"), {
        "wte.weight": ("F32", w.tobytes(), [4, 3]),
        "wpe.weight": ("F32", w[:2].tobytes(), [2, 3]),
        "flags": ("U8", bytes([1, 0, 1]), [3]),
    })
    # As Hugging Face saves GPT-2: names under "transformer.", Q, K and V side by side.
    safetensors(p("hf.safetensors"), {
        "transformer.h.0.attn.c_attn.weight": ("F32", np.arange(12, dtype="<f4").tobytes(), [2, 6]),
        "transformer.wte.weight": ("F32", w.tobytes(), [4, 3]),
    })
    # Two layers, h.0 and h.1, named as GPT2Model saves them (no prefix), and a tensor of none.
    ones = np.ones(2, dtype="<f4")
    safetensors(p("two_layers.safetensors"), {
        "h.0.ln_1.weight": ("F32", ones.tobytes(), [2]),
        "h.1.ln_1.weight": ("F32", ones.tobytes(), [2]),
        "ln_f.weight": ("F32", ones.tobytes(), [2]),
    })
    nan = np.zeros((2, 2), "<f8")
    nan[1, 0] = np.nan
    np.save(p("nan.npy"), nan)
    np.save(p("huge.npy"), np.array([1, 2 ** 60], "<i8"))
    np.save(p("unsigned.npy"), np.array([1, 2], "<u2"))
    with open(p("good.npy"), "rb") as f:
        whole = f.read()
    with open(p("cut.npy"), "wb") as f:
        f.write(whole[:-5])
    safetensors(p("not_json.safetensors"), {}, header=b"{'wte.weight': 1}")
    raw = w.tobytes()
    safetensors(p("past_end.safetensors"), {}, header=json.dumps(
        {"w": {"dtype": "F32", "shape": [4, 3], "data_offsets": [0, 48]}}).encode())
    safetensors(p("overlap.safetensors"), {}, header=json.dumps({
        "a": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},
        "b": {"dtype": "F32", "shape": [2, 3], "data_offsets": [12, 36]}}).encode() + b" " * 0)
    with open(p("overlap.safetensors"), "ab") as f:
        f.write(raw[:36])
    safetensors(p("disagree.safetensors"), {"w": ("F32", raw, [4, 4])})
    with open(p("good.safetensors"), "rb") as f:
        whole = f.read()
    with open(p("cut.safetensors"), "wb") as f:
        f.write(whole[:20])
    with open(p("config.json"), "w") as f:
        json.dump({"n_layer": 2, "n_head": 4, "n_embd": 64, "layer_norm_epsilon": 1e-05,
                   "model_type": "gpt2", "n_ctx": 2 ** 60}, f)
    with open(p("not_json.json"), "w") as f:
        f.write("{n_head: 4}")
    # A mistake on the third line: located by line and column, not by byte.
    with open(p("not_json_lines.json"), "w") as f:
        f.write('{\n  "n_head": 12,\n  "n_embd": tru\n}\n')
    # More values than a JSON text may hold (2^20): a list of 2^20 zeros is one more, with the
    # list. In a config and in a .safetensors header (as a shape, refused only after reading).
    zeros = ",".join(["0"] * 2 ** 20)
    with open(p("many_values.json"), "w") as f:
        f.write('{"n_head": [' + zeros + ']}')
    safetensors(p("many_values.safetensors"), {}, header=(
        '{"w": {"dtype": "F32", "shape": [' + zeros + '], "data_offsets": [0, 0]}}').encode())
    with open(p("list.json"), "w") as f:
        f.write("[1, 2]")
    with open(p("strings.json"), "w") as f:
        json.dump({"n_head": "4"}, f)
    safetensors(p("none.safetensors"), {})
    with open(p("inf.json"), "w") as f:
        f.write('{"n_head": 1e999}')
    np.save(p("five_axes.npy"), np.zeros((1, 1, 1, 1, 2), "<f4"))
    np.save(p("empty.npy"), np.zeros((0, 3), "<f4"))
    np.save(p("scalar.npy"), np.array(2.5, "<f8"))
    with open(p("every_file.yaml"), "w") as f:
        f.write("title: Givens from every kind of file\ngiven:\n"
                "  W: {file: good.safetensors, tensor: wte.weight, slice: [1, 3]}\n"
                "  X: {file: good.npy, shape: [2, 3]}\n"
                "  n_head: {file: config.json}\n"
                "  P: {file: good.safetensors, tensor: wpe.weight}\n"
                "steps:\n  - Y: X @ W.T * n_head\n  - Z: P + X\n")
    with open(sys.argv[2], "w") as f:
        f.write("written\n")


main()
