#!/usr/bin/env python3
"""--explain W[i, j]@s, one weight's training update, checked two ways on tests/train/attention.yaml:

1. Against PyTorch (float64): the same model from the tracer's initial weights, the same
   batches, torch.optim's SGD, Adam and AdamW (with weight decay, momentum and clipping) run to
   step s; the weight, its gradient and the optimizer's state before and after the step
   (optimizer.state_dict(): exp_avg, exp_avg_sq, momentum_buffer) agree with the numbers the
   tracer shows within a relative 1e-9.
2. Every line again, in Python's float64 arithmetic on the numbers shown: each result is the
   same bits; every number is printed in the work at full precision; and the weight after the
   update is, to the bit, the trained weight of a run that stops after that step. The JSON
   trace with its updates fits doc/trace.schema.json (when jsonschema is installed).

3. A trained given the loss does not depend on (tests/train/unused.yaml): training goes on and
   leaves it as it was, as PyTorch does with a parameter whose gradient is None (Adam skips it,
   clip_grad_norm_ leaves it out of the norm): the losses and the trained weights agree.

Usage: train_explain.py TRACER LESSON. Exit 77 (skipped) when torch cannot be imported."""
import json
import math
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train_torch  # noqa: E402  (exits 77 without torch)
from train_torch import batch, model_loss, run, variant  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

try:
    import jsonschema
except ImportError:
    jsonschema = None

BOUND = 1e-9

# name, the optimizer's lines in train:, the settings, torch's optimizer, clip
CASES = [
    ("adam", "  optimizer: adam\n  lr: 0.01\n",
     dict(opt="adam", lr=0.01, b1=0.9, b2=0.999, eps=1e-8, wd=0.0),
     lambda p: torch.optim.Adam(p, lr=0.01, foreach=False), 0),
    ("adam_decay_clip", "  optimizer: adam\n  lr: 0.02\n  betas: [0.8, 0.99]\n  eps: 1.0e-6\n"
     "  weight_decay: 0.01\n  clip: 0.5\n",
     dict(opt="adam", lr=0.02, b1=0.8, b2=0.99, eps=1e-6, wd=0.01, clip=0.5),
     lambda p: torch.optim.Adam(p, lr=0.02, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.01, foreach=False), 0.5),
    # beta1 below 0.5: torch.lerp's weight 1 - beta1 is 0.5 or more, and it computes from g's end
    ("adamw_low_beta", "  optimizer: adamw\n  lr: 0.01\n  betas: [0.3, 0.9]\n  weight_decay: 0.1\n",
     dict(opt="adamw", lr=0.01, b1=0.3, b2=0.9, eps=1e-8, wd=0.1),
     lambda p: torch.optim.AdamW(p, lr=0.01, betas=(0.3, 0.9), weight_decay=0.1, foreach=False), 0),
    ("sgd_momentum_clip", "  optimizer: sgd\n  lr: 0.1\n  momentum: 0.9\n  weight_decay: 0.001\n  clip: 0.1\n",
     dict(opt="sgd", lr=0.1, momentum=0.9, wd=0.001, clip=0.1),
     lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, weight_decay=0.001, foreach=False), 0.1),
    ("sgd", "  optimizer: sgd\n  lr: 0.2\n", dict(opt="sgd", lr=0.2, momentum=0.0, wd=0.0),
     lambda p: torch.optim.SGD(p, lr=0.2, foreach=False), 0),
]
# (given, index, step): a matrix's entry late and at the first update, a vector's entry
REQUESTS = [("W_Q", (0, 1), 5), ("E", (3, 2), 0), ("gamma", (2,), 7)]


def close(a, b):
    return abs(a - b) <= BOUND * max(abs(a), abs(b), 1e-300)


def torch_numbers(tr, make, clip, given, index, step):
    """The weight, gradient and optimizer state of one element around step `step`, in PyTorch."""
    names = [g["name"] for g in tr["trained"]]
    w = {g["name"]: torch.tensor(np.array(g["before"], dtype=float), requires_grad=True) for g in tr["trained"]}
    opt = make([w[k] for k in names])
    for s in range(step + 1):
        opt.zero_grad()
        model_loss(w, batch(s)).backward()
        if clip:
            torch.nn.utils.clip_grad_norm_([w[k] for k in names], clip)
        if s == step:
            p = w[given]
            state = opt.state_dict()["state"].get(names.index(given), {})
            out = {"w": p.detach()[index].item(), "g": p.grad[index].item()}
            for key, torch_key in (("m_before", "exp_avg"), ("v_before", "exp_avg_sq"),
                                   ("b_before", "momentum_buffer")):
                if torch_key in state and state[torch_key] is not None:
                    out[key] = state[torch_key][index].item()
        opt.step()
        if s == step:
            state = opt.state_dict()["state"][names.index(given)]
            for key, torch_key in (("m", "exp_avg"), ("v", "exp_avg_sq"), ("b", "momentum_buffer")):
                if torch_key in state and state[torch_key] is not None:
                    out[key] = state[torch_key][index].item()
            out["w_after"] = w[given].detach()[index].item()
    return out


def recompute(c, u, t):
    """Each line's arithmetic on the numbers shown: the list of (name, shown, recomputed)."""
    v = u["values"]
    checks = []

    def same(name, got):
        checks.append((name, v[name], got))

    g = v["g"]
    if c.get("clip"):  # a clipped update shows the norm it was clipped by
        same("scale", c["clip"] / (v["norm"] + 1e-6))
        same("g", v["g_unclipped"] * v["scale"] if v["scale"] < 1 else v["g_unclipped"])
    w = v["w"]
    if c["opt"] == "sgd":
        d = g
        if c["wd"]:
            same("decayed", g + c["wd"] * w)
            d = v["decayed"]
        if c["momentum"]:
            same("b", d if t == 1 else c["momentum"] * v["b_before"] + d)
            d = v["b"]
        same("step", c["lr"] * d)
    else:
        d = g
        if c["opt"] == "adamw":
            same("shrink", 1 - c["lr"] * c["wd"])
            same("w_decayed", w * v["shrink"])
            w = v["w_decayed"]
        elif c["wd"]:
            same("decayed", g + c["wd"] * w)
            d = v["decayed"]
        same("lerp_weight", 1 - c["b1"])
        lw = v["lerp_weight"]
        m0 = v["m_before"]
        same("m", m0 + lw * (d - m0) if lw < 0.5 else d - (d - m0) * (1 - lw))
        same("g_squared", d * d)
        same("one_minus_beta2", 1 - c["b2"])
        same("v", c["b2"] * v["v_before"] + v["one_minus_beta2"] * v["g_squared"])
        same("beta1_t", c["b1"] ** t)
        same("beta2_t", c["b2"] ** t)
        same("bias1", 1 - v["beta1_t"])
        same("bias2", 1 - v["beta2_t"])
        same("m_hat", v["m"] / v["bias1"])
        same("v_hat", v["v"] / v["bias2"])
        same("step_size", c["lr"] / v["bias1"])
        same("sqrt_v", math.sqrt(v["v"]))
        same("bias2_sqrt", math.sqrt(v["bias2"]))
        same("root_v_hat", v["sqrt_v"] / v["bias2_sqrt"])
        same("denom", v["root_v_hat"] + c["eps"])
        same("ratio", v["m"] / v["denom"])
        same("step", v["step_size"] * v["ratio"])
    same("w_after", w - v["step"])
    return checks


def shortest(x):
    """The shortest text that reads back to x, as the tracer prints it (%g, whole numbers plain)."""
    if x == int(x) and abs(x) < 1e15:
        return str(int(x))
    for p in range(1, 18):
        s = "%.*g" % (p, x)
        if float(s) == x:
            return s
    return repr(x)


def unused_given(tracer, schema, failures):
    """tests/train/unused.yaml in PyTorch: U is trained but unread."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "train", "unused.yaml")
    trace = json.loads(run(tracer, path, "--format", "json"))
    if jsonschema:
        jsonschema.validate(trace, schema)
    tr = trace["training"]
    w = {g["name"]: torch.tensor(np.array(g["before"], dtype=float), requires_grad=True) for g in tr["trained"]}
    e = torch.tensor(np.array([s for s in trace["stages"] if s["name"] == "E"][0]["values"], dtype=float))
    ids = torch.tensor([[0, 1, 2, 3]])
    opt = torch.optim.Adam([w["W"], w["U"]], lr=0.1, foreach=False)
    for step, got in enumerate(tr["losses"]):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy((e[ids] @ w["W"]).reshape(-1, 4), ids.reshape(-1))
        if not close(got, loss.item()):
            failures.append(f"unused.yaml: step {step}: loss {got!r} here, {loss.item()!r} in torch")
        loss.backward()
        torch.nn.utils.clip_grad_norm_([w["W"], w["U"]], 0.5)
        opt.step()
    given = {s["name"]: np.array(s["values"], dtype=float) for s in trace["stages"] if s["kind"] == "given"}
    if not np.array_equal(given["U"], np.array(tr["trained"][1]["before"])):
        failures.append("unused.yaml: U moved, though the loss does not depend on it")
    if train_torch.relative(given["W"], w["W"].detach().numpy()) > BOUND:
        failures.append("unused.yaml: W trained differently from PyTorch")
    if tr.get("notes") != ["the loss does not depend on U: training leaves it as it was"]:
        failures.append(f"unused.yaml: the notes are {tr.get('notes')!r}")
    print("ok  unused.yaml: U left as it was, W and the losses as in PyTorch")


def main():
    tracer, lesson = sys.argv[1], sys.argv[2]
    with open(lesson) as f:
        base = f.read()
    failures = []
    checked = 0
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "doc", "trace.schema.json")) as f:
        schema = json.load(f)
    with tempfile.TemporaryDirectory() as folder:
        for name, block, c, make, clip in CASES:
            path = variant(base, folder, name, block, steps=12)
            args = []
            for given, index, step in REQUESTS:
                args += ["--explain", f"{given}[{','.join(map(str, index))}]@{step}"]
            trace = json.loads(run(tracer, path, "--format", "json", *args))
            if jsonschema:
                jsonschema.validate(trace, schema)
            tr = trace["training"]
            text = run(tracer, path, "--brief", "--width", "400", *args)
            for (given, index, step), u in zip(REQUESTS, tr["updates"]):
                where = f"{name}: {given}{list(index)}@{step}"
                v = u["values"]
                # 1. PyTorch
                want = torch_numbers(tr, make, clip, given, index, step)
                if "b" in want and c["opt"] == "sgd" and c["momentum"]:
                    if step == 0:
                        want.pop("b_before", None)
                for key, x in want.items():
                    if key not in v and key in ("m_before", "v_before", "b_before"):
                        continue
                    if key not in v or not close(v[key], x):
                        failures.append(f"{where}: {key} is {v.get(key)!r} here, {x!r} in torch")
                # 2. every line again, bit for bit
                for key, shown, got in recompute(c, u, step + 1):
                    checked += 1
                    if shown != got:
                        failures.append(f"{where}: {key} is shown as {shown!r}; its line gives {got!r}")
                work = " ".join(u["work"])
                for key, x in v.items():
                    if shortest(x) not in work:
                        failures.append(f"{where}: {key} = {shortest(x)} is not in the work")
                for line in u["work"]:
                    if line.strip() not in text:
                        failures.append(f"{where}: the text trace lacks the line {line.strip()!r}")
                        break
                # the weight after the update is the trained weight of a run that stops there
                short = variant(base, folder, name + "_short", block, steps=step + 1)
                after = [s for s in json.loads(run(tracer, short, "--format", "json"))["stages"]
                         if s["name"] == given][0]["values"]
                for i in index:
                    after = after[i]
                if after != v["w_after"]:
                    failures.append(f"{where}: w_after {v['w_after']!r}, but training to there gives {after!r}")
            print(f"ok  {name}: {len(REQUESTS)} updates against torch.optim, {checked} lines recomputed so far")
    unused_given(tracer, schema, failures)
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
