#!/usr/bin/env python3
"""Training checked against PyTorch (float64): tests/train/attention.yaml built again in
PyTorch from the tracer's initial weights (the JSON trace's training.trained[].before), fed
the same batches (splitmix64, ported below) and stepped by torch.optim's SGD, Adam and AdamW
(with and without clipping by the global gradient norm). The loss at every step and the
trained weights must agree within a relative 1e-9. Then: the loss training reports at step
k is, to the bit, the loss of a fresh trace of the model with the weights after k steps
(read back from --save) on that step's batch; the trace is the same bits at 1, 2 and 3
threads; and the memory a run holds does not grow with the number of steps. And
tests/train/text_bigram.yaml, trained on windows of a text's bytes, the same way, and
text_validation.yaml, with its validation losses and counting baselines.

Usage: train_torch.py TRACER LESSON [--no-memory-check] (a sanitizer's quarantine holds freed
memory, so a sanitized build skips that part). Exit 77 (skipped) when torch cannot be imported."""
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
except ImportError as e:
    print(f"SKIP: {e}: the comparison with PyTorch needs python3-torch and python3-numpy")
    sys.exit(77)

torch.set_default_dtype(torch.float64)
BOUND = 1e-9
M64 = (1 << 64) - 1


def tokens(size, vocab, seed):
    """kernel_fill_tokens: floor(u * vocab) for splitmix64's draws from seed."""
    state, out = seed & M64, []
    for _ in range(size):
        state = (state + 0x9E3779B97F4A7C15) & M64
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        z ^= z >> 31
        out.append(min(math.floor((z >> 11) * 2.0 ** -53 * vocab), vocab - 1))
    return out


def batch(step, rows=4, n=6, vocab=6, seed=3):
    """The repeat draw: each row's second half a copy of its first."""
    ids = np.array(tokens(rows * n, vocab, seed + step), dtype=np.int64).reshape(rows, n)
    ids[:, n // 2:] = ids[:, : n // 2]
    return ids


def model_loss(w, ids):
    """tests/train/attention.yaml, step by step."""
    n = ids.shape[1]
    x = w["E"][torch.from_numpy(ids)] + w["P"]
    mask = torch.triu(torch.full((n, n), float("-inf")), diagonal=1)
    scores = (x @ w["W_Q"]) @ (x @ w["W_K"]).transpose(-1, -2) / math.sqrt(8) + mask
    weights = torch.softmax(scores, dim=-1)
    h = torch.nn.functional.layer_norm(x + weights @ (x @ w["W_V"]), (8,), w["gamma"], w["beta"], eps=1e-5)
    logits = h @ w["W_U"]
    t = torch.from_numpy(np.concatenate([ids[:, 0:1], ids[:, 0 : n - 1]], axis=1))
    return torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), t.reshape(-1))


def run(tracer, lesson, *args):
    p = subprocess.run([tracer, *args, lesson], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"FAIL: the tracer exited {p.returncode} on {lesson}:\n{p.stderr}")
    return p.stdout


def variant(base, folder, name, optimizer, steps=60):
    text = re.sub(r"  optimizer: adam\n  lr: 0.01\n", optimizer, base)
    text = text.replace("  steps: 60\n", f"  steps: {steps}\n")
    path = os.path.join(folder, name + ".yaml")
    with open(path, "w") as f:
        f.write(text)
    return path


def relative(a, b):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


def compare(tracer, path, make_optimizer, clip, failures):
    trace = json.loads(run(tracer, path, "--format", "json"))
    tr = trace["training"]
    names = [g["name"] for g in tr["trained"]]
    w = {g["name"]: torch.tensor(np.array(g["before"], dtype=float), requires_grad=True) for g in tr["trained"]}
    opt = make_optimizer([w[k] for k in names])
    worst_loss = 0.0
    for step, got in enumerate(tr["losses"]):
        opt.zero_grad()
        loss = model_loss(w, batch(step))
        rel = abs(got - loss.item()) / abs(loss.item())
        worst_loss = max(worst_loss, rel)
        if rel > BOUND:
            failures.append(f"{os.path.basename(path)}: step {step}: loss {got!r} here, {loss.item()!r} in torch")
            return
        loss.backward()
        if clip:
            torch.nn.utils.clip_grad_norm_([w[k] for k in names], clip)
        opt.step()
    trained = {s["name"]: s["values"] for s in trace["stages"] if s["kind"] == "given"}
    worst_weight = max(relative(trained[k], w[k].detach().numpy()) for k in names)
    if worst_weight > BOUND:
        failures.append(f"{os.path.basename(path)}: trained weights differ by {worst_weight:.1e} (relative)")
    if len(tr["losses"]) < 50:
        failures.append(f"{os.path.basename(path)}: only {len(tr['losses'])} steps")
    print(f"ok  {os.path.basename(path)}: {len(tr['losses'])} steps, loss within {worst_loss:.1e}, "
          f"weights within {worst_weight:.1e} of PyTorch")


def peak_kib(tracer, lesson):
    """The tracer's own peak, measured by /usr/bin/time: a child of this process would count
    the pages it shared with it (PyTorch's hundreds of MiB) before it ran the tracer."""
    p = subprocess.run(["/usr/bin/time", "-f", "%M", tracer, "--brief", lesson], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit(f"FAIL: the tracer failed on {lesson}: {p.stderr}")
    return int(p.stderr.strip().splitlines()[-1])


def text_windows(text, step, rows, n, seed, held=0):
    """draw from text: row r is the n bytes from a place drawn as ids are, 0 to len - held - n."""
    starts = tokens(rows, len(text) - held - n + 1, seed + step)
    return np.array([list(text[s:s + n]) for s in starts], dtype=np.int64)


def validation_batches(text, rows, n, held):
    """validation: the held-out tail's fixed windows, batches of `rows`: as many batches as fit
    without overlap (1 to 8), the windows spread evenly, the first at the tail's start and the
    last at the text's end."""
    count = min(max(held // n // rows, 1), 8)
    windows, tail = rows * count, len(text) - held
    starts = [tail + (i * (held - n) // (windows - 1) if windows > 1 else 0) for i in range(windows)]
    ids = np.array([list(text[s:s + n]) for s in starts], dtype=np.int64)
    return [ids[b * rows:(b + 1) * rows] for b in range(count)]


def counting_baselines(text, held):
    """Witten-Bell byte bigram and trigram models (interpolated down to add-one byte counts)
    counted on the text before its tail, each in nats per byte of the tail (doc/training.md),
    from dictionaries of counts."""
    fit = len(text) - held
    unigram = {}
    for j in range(fit):
        unigram[text[j]] = unigram.get(text[j], 0) + 1
    counts = {}  # context -> {next byte: count}
    for j in range(1, fit):
        for k in (1, 2):
            if j >= k:
                row = counts.setdefault(text[j - k:j], {})
                row[text[j]] = row.get(text[j], 0) + 1

    def mixed(context, c, shorter):
        row = counts.get(context)
        if not row:
            return shorter
        return (row.get(c, 0) + len(row) * shorter) / (sum(row.values()) + len(row))

    two, three = [], []
    for j in range(fit, len(text)):
        c = text[j]
        p1 = (unigram.get(c, 0) + 1) / (fit + 256)
        p2 = mixed(text[j - 1:j], c, p1)
        p3 = mixed(text[j - 2:j], c, p2)
        two.append(np.log(p2))
        three.append(np.log(p3))
    return -math.fsum(two) / held, -math.fsum(three) / held


def compare_text(tracer, path, failures, validation=0.0):
    """tests/train/text_bigram.yaml: a byte bigram model on windows of bytes.text, with Adam;
    text_validation.yaml: the same with the last quarter held out, its validation loss measured
    in PyTorch on the same weights and its counting baselines counted again here."""
    name = os.path.basename(path)
    trace = json.loads(run(tracer, path, "--format", "json"))
    tr = trace["training"]
    w = {g["name"]: torch.tensor(np.array(g["before"], dtype=float), requires_grad=True) for g in tr["trained"]}
    with open(os.path.join(os.path.dirname(path), "bytes.text"), "rb") as f:
        text = f.read()
    held = int(validation * len(text))
    opt = torch.optim.Adam([w["E"], w["W_U"]], lr=0.05, foreach=False)

    def loss_of(ids):
        ids = torch.from_numpy(ids)
        logits = w["E"][ids] @ w["W_U"]
        return torch.nn.functional.cross_entropy(logits[:, 0:11].reshape(-1, 256), ids[:, 1:12].reshape(-1))

    def validation_loss():
        with torch.no_grad():
            return sum(loss_of(b).item() for b in validation_batches(text, 8, 12, held)) / len(
                validation_batches(text, 8, 12, held))

    val = tr.get("validation")
    if held and not val:
        failures.append(f"{name}: no validation in the trace")
        return
    measured = dict(zip(val["steps"], val["losses"])) if held else {}
    worst = worst_val = 0.0
    for step, got in enumerate(tr["losses"]):
        if step in measured:
            want = validation_loss()
            worst_val = max(worst_val, abs(measured[step] - want) / want)
        opt.zero_grad()
        loss = loss_of(text_windows(text, step, 8, 12, 3, held))
        worst = max(worst, abs(got - loss.item()) / abs(loss.item()))
        if worst > BOUND:
            failures.append(f"{name}: step {step}: loss {got!r} here, {loss.item()!r} in torch")
            return
        loss.backward()
        opt.step()
    trained = {s["name"]: s["values"] for s in trace["stages"] if s["kind"] == "given"}
    weights = max(relative(trained[k], w[k].detach().numpy()) for k in ("E", "W_U"))
    if weights > BOUND:
        failures.append(f"{name}: trained weights differ by {weights:.1e} (relative)")
    if held:
        if len(measured) < 5:
            failures.append(f"{name}: the validation loss was measured at only {len(measured)} steps")
        worst_val = max(worst_val, abs(val["after"] - validation_loss()) / val["after"])
        two, three = counting_baselines(text, held)
        worst_val = max(worst_val, abs(val["bigram"] - two) / two, abs(val["trigram"] - three) / three)
        if worst_val > BOUND:
            failures.append(f"{name}: the validation losses or baselines differ by {worst_val:.1e} (relative)")
    print(f"ok  {name}: {len(tr['losses'])} steps on windows of a text, loss within {worst:.1e}, "
          f"weights within {weights:.1e}" + (f", validation and baselines within {worst_val:.1e}" if held else "")
          + " of PyTorch")


def main():
    tracer, lesson = sys.argv[1], sys.argv[2]
    memory_check = "--no-memory-check" not in sys.argv[3:]
    with open(lesson) as f:
        base = f.read()
    failures = []
    compare_text(tracer, os.path.join(os.path.dirname(lesson), "text_bigram.yaml"), failures)
    compare_text(tracer, os.path.join(os.path.dirname(lesson), "text_validation.yaml"), failures, validation=0.25)
    with tempfile.TemporaryDirectory() as folder:
        cases = [
            ("adam", "  optimizer: adam\n  lr: 0.01\n", lambda p: torch.optim.Adam(p, lr=0.01, foreach=False), 0),
            ("adam_decay_clip", "  optimizer: adam\n  lr: 0.02\n  betas: [0.8, 0.99]\n  eps: 1.0e-6\n"
             "  weight_decay: 0.01\n  clip: 0.5\n",
             lambda p: torch.optim.Adam(p, lr=0.02, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.01, foreach=False),
             0.5),
            ("adamw", "  optimizer: adamw\n  lr: 0.01\n  weight_decay: 0.1\n",
             lambda p: torch.optim.AdamW(p, lr=0.01, weight_decay=0.1, foreach=False), 0),
            ("sgd_momentum", "  optimizer: sgd\n  lr: 0.1\n  momentum: 0.9\n  weight_decay: 0.001\n",
             lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, weight_decay=0.001, foreach=False), 0),
            ("sgd", "  optimizer: sgd\n  lr: 0.2\n", lambda p: torch.optim.SGD(p, lr=0.2, foreach=False), 0),
        ]
        for name, block, make, clip in cases:
            compare(tracer, variant(base, folder, name, block), make, clip, failures)

        # The loss reported at step k is that of a fresh trace with the weights after k steps.
        k = 10
        full = json.loads(run(tracer, lesson, "--format", "json"))["training"]["losses"]
        short = variant(base, folder, "ten_steps", "  optimizer: adam\n  lr: 0.01\n", steps=k)
        saved = os.path.join(folder, "saved")
        run(tracer, short, "--save", saved)
        given = ["E", "P", "W_Q", "W_K", "W_V", "W_U", "gamma", "beta"]
        ids = batch(k).tolist()
        fresh = base.split("train:")[0]
        for g in given:
            fresh = re.sub(rf"^  {g}: .*$", f"  {g}: {{file: {saved}/{g}.npy}}", fresh, flags=re.M)
        fresh = re.sub(r"^  ids: .*$", f"  ids: {ids}", fresh, flags=re.M)
        fresh_path = os.path.join(folder, "fresh.yaml")
        with open(fresh_path, "w") as f:
            f.write(fresh)
        loss = [s for s in json.loads(run(tracer, fresh_path, "--format", "json"))["stages"] if s["name"] == "loss"]
        if loss[0]["values"] != full[k]:
            failures.append(f"the loss at step {k} is {full[k]!r} in training, {loss[0]['values']!r} in a fresh trace")
        else:
            print(f"ok  the loss at step {k} is the bits of a fresh trace with its weights: {full[k]!r}")

        # The same bits at every thread count.
        outputs = {t: run(tracer, lesson, "--format", "json", "--threads", str(t)) for t in (1, 2, 3)}
        if len(set(outputs.values())) != 1:
            failures.append("the JSON trace differs between --threads 1, 2 and 3")
        else:
            print("ok  the same JSON trace at --threads 1, 2 and 3")

        # Memory flat: 10,000 steps hold what 100 steps hold; the losses add 78 KiB, and a leak
        # of 16 bytes a step would add 156 KiB more.
        if not memory_check:
            print("SKIP the memory check: a sanitizer's quarantine keeps what is freed")
            return 1 if failures else 0
        small = variant(base, folder, "hundred", "  optimizer: adam\n  lr: 0.01\n", steps=100)
        large = variant(base, folder, "ten_thousand", "  optimizer: adam\n  lr: 0.01\n", steps=10000)
        if not os.path.exists("/usr/bin/time"):
            print("SKIP the memory check: it needs /usr/bin/time (the package time)")
            return 77
        a, b = peak_kib(tracer, small), peak_kib(tracer, large)
        if b - a > 200:
            failures.append(f"10,000 steps peak at {b} KiB, 100 steps at {a} KiB: memory grows with the steps")
        else:
            print(f"ok  memory flat: {a} KiB at 100 steps, {b} KiB at 10,000")
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
