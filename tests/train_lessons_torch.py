#!/usr/bin/env python3
"""The course's trained lessons checked against PyTorch (float64): each lesson's model is
built again in PyTorch from the tracer's initial weights (the JSON trace's
training.trained[].before), fed the same batches (splitmix64 and the draws of doc/training.md,
written again here) and stepped by torch.optim.Adam. The loss at every step and the trained
weights must agree within a relative 1e-9 (doc/training.md states the bound).

Over the first COMPARED steps of each lesson, run as a lesson of that many steps: the two
programs add in different orders, and a long run of Adam magnifies the last bits of such a
difference step after step (lesson 23 agrees to 1e-14 at step 200, 1e-10 at step 300, 1e-8 at
step 400; at its last step, 800, the losses differ by 5%), so a whole long run cannot be
compared with any other program to 1e-9. That the whole run is the same bits at every
thread count and on every machine is tested elsewhere (tests/json.sha256).

Usage: train_lessons_torch.py TRACER LESSON.yaml... Exit 77 (skipped) when torch, numpy or
PyYAML cannot be imported."""
import json
import math
import os
import re
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import torch
    import yaml
except ImportError as e:
    print(f"SKIP: {e}: the comparison with PyTorch needs python3-torch, python3-numpy and python3-yaml")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_torch import BOUND, relative, tokens  # noqa: E402  (splitmix64 written once, in Python)

torch.set_default_dtype(torch.float64)
COMPARED = 250


def draw(spec, rows, n, step):
    """The batch of one step, as doc/training.md defines each draw."""
    vocab, seed = spec["vocab"], spec.get("seed", 0)
    ids = np.array(tokens(rows * n, vocab, seed + step), dtype=np.int64).reshape(rows, n)
    if spec["draw"] == "repeat":
        ids[:, n // 2:] = ids[:, : n // 2]
    elif spec["draw"] == "shifted":
        lo, hi = spec["shifts"]
        for r in range(rows):
            s = lo + (r + step) % (hi - lo + 1)
            for j in range(s, n):
                ids[r, j] = ids[r, j - s]
    return ids


def causal(n):
    return torch.triu(torch.full((n, n), float("-inf")), diagonal=1)


def previous_token_head(w, ids):
    """lessons/21_previous_token_head.yaml: one head names the token one place back."""
    n, d = ids.shape[1], w["E"].shape[1]
    x = w["E"][torch.from_numpy(ids)] + w["P"]
    a = torch.softmax((x @ w["W_Q"]) @ (x @ w["W_K"]).transpose(-1, -2) / math.sqrt(d) + causal(n), dim=-1)
    logits = a @ (x @ w["W_V"]) @ w["W_U"]
    targets = np.concatenate([ids[:, 0:1], ids[:, 0 : n - 1]], axis=1)
    return torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                             torch.from_numpy(targets).reshape(-1))


def induction_head(w, ids):
    """lessons/23_induction_head.yaml: two attention layers, each added to the residual stream."""
    n, d = ids.shape[1], w["E"].shape[1]
    x = w["E"][torch.from_numpy(ids)] + w["P"]
    for layer in "01":
        a = torch.softmax((x @ w["W_Q" + layer]) @ (x @ w["W_K" + layer]).transpose(-1, -2) / math.sqrt(d)
                          + causal(n), dim=-1)
        x = x + a @ (x @ w["W_V" + layer])
    logits = x @ w["W_U"]
    return torch.nn.functional.cross_entropy(logits[:, : n - 1].reshape(-1, logits.shape[-1]),
                                             torch.from_numpy(ids[:, 1:]).reshape(-1))


def heads_specialise(w, ids):
    """lessons/24_heads_specialise.yaml: two heads side by side, two readouts (the token before,
    the first token), their losses added."""
    n, d = ids.shape[1], w["E"].shape[1]
    x = w["E"][torch.from_numpy(ids)] + w["P"]
    h = x
    for head in "12":
        a = torch.softmax((x @ w["W_Q" + head]) @ (x @ w["W_K" + head]).transpose(-1, -2) / math.sqrt(d)
                          + causal(n), dim=-1)
        h = h + a @ (x @ w["W_V" + head])
    back = np.concatenate([ids[:, 0:1], ids[:, 0 : n - 1]], axis=1)
    first = np.repeat(ids[:, 0:1], n, axis=1)
    loss = 0
    for readout, targets in (("W_back", back), ("W_first", first)):
        logits = h @ w[readout]
        loss = loss + torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                                        torch.from_numpy(targets).reshape(-1))
    return loss


MODELS = {"21_previous_token_head": previous_token_head, "23_induction_head": induction_head,
          "24_heads_specialise": heads_specialise}


def shortened(path, folder):
    """The lesson with at most COMPARED steps (and the table of the loss left to the tracer)."""
    with open(path) as f:
        text = f.read()
    steps = int(re.search(r"^  steps: (\d+)$", text, flags=re.M).group(1))
    text = re.sub(r"^  steps: \d+$", f"  steps: {min(steps, COMPARED)}", text, flags=re.M)
    text = re.sub(r"^  show: .*\n", "", text, flags=re.M)
    short = os.path.join(folder, os.path.basename(path))
    with open(short, "w") as f:
        f.write(text)
    return short


def check(tracer, lesson, folder):
    name = os.path.splitext(os.path.basename(lesson))[0]
    path = shortened(lesson, folder)
    with open(path) as f:
        train = yaml.safe_load(f)["train"]
    p = subprocess.run([tracer, "--format", "json", path], capture_output=True, text=True)
    if p.returncode != 0:
        return [f"{name}: the tracer exited {p.returncode}:\n{p.stderr}"]
    trace = json.loads(p.stdout)
    tr = trace["training"]
    names = [g["name"] for g in tr["trained"]]
    w = {g["name"]: torch.tensor(np.array(g["before"], dtype=float), requires_grad=True) for g in tr["trained"]}
    if train["optimizer"] != "adam" or set(train) - {"loss", "trained", "optimizer", "lr", "steps", "data", "show"}:
        return [f"{name}: this test builds only Adam with its default settings"]
    opt = torch.optim.Adam([w[k] for k in names], lr=train["lr"], foreach=False)
    (given, spec), = train["data"].items()
    example = next(s for s in trace["stages"] if s["name"] == given)["values"]
    rows, n = spec.get("batch", len(example)), len(example[0])
    worst_loss = 0.0
    for step, got in enumerate(tr["losses"]):
        opt.zero_grad()
        loss = MODELS[name](w, draw(spec, rows, n, step))
        rel = abs(got - loss.item()) / abs(loss.item())
        worst_loss = max(worst_loss, rel)
        if rel > BOUND:
            return [f"{name}: step {step}: loss {got!r} here, {loss.item()!r} in torch"]
        loss.backward()
        opt.step()
    trained = {s["name"]: s["values"] for s in trace["stages"] if s["kind"] == "given"}
    worst_weight = max(relative(trained[k], w[k].detach().numpy()) for k in names)
    if worst_weight > BOUND:
        return [f"{name}: trained weights differ by {worst_weight:.1e} (relative)"]
    if len(tr["losses"]) != train["steps"]:
        return [f"{name}: {len(tr['losses'])} steps of {train['steps']}"]
    print(f"ok  {name}: {len(tr['losses'])} steps, loss within {worst_loss:.1e}, weights within "
          f"{worst_weight:.1e} of PyTorch")
    return []


def main():
    tracer, lessons = sys.argv[1], sys.argv[2:]
    with tempfile.TemporaryDirectory() as folder:
        failures = [f for path in lessons for f in check(tracer, path, folder)]
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
