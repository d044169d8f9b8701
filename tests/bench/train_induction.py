#!/usr/bin/env python3
"""Time the training of the induction-head model (tests/bench/train_induction.yaml: two layers of
attention, no MLP, vocabulary 16, d 32, 16 learned positions, batches of 64 sequences repeated
twice, Adam lr 0.01, 200 steps) by the tracer against the same training in PyTorch.

    train_induction.py TRACER LESSON.yaml     the benchmark (meson test --benchmark)
    train_induction.py --torch FOLDER STEPS   the PyTorch side alone (prints its last loss)

Both sides are whole processes, run one after the other RUNS times (median wall and CPU time,
largest peak resident memory, the last two from /usr/bin/time: getrusage of a child of this
process would count the pages it shared with it, PyTorch's hundreds of MiB, before it exec'd). The tracer trains and then traces
the lesson, writing its text trace to /dev/null, as a student runs it. PyTorch (float64, its
default threads) starts from the tracer's initial weights (read once, before timing, from the
JSON trace and written as .npy files), draws the same batches (train_torch.py's port of the
tracer's generator), takes the same 200 Adam steps, and then runs the model once on the
example sequence, as the trace does. Before timing, the last loss of both is compared: the
two are the same run (relative 1e-9).

Environment: TRACER_BENCH_RUNS (default 3). Exit 77 (meson's skip) without numpy and torch.
"""
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import train_torch  # noqa: E402  exits 77 without numpy and torch

import numpy as np  # noqa: E402
import torch  # noqa: E402

TRAINED = ["E", "P", "W_Q0", "W_K0", "W_V0", "W_Q1", "W_K1", "W_V1", "W_U"]
VOCAB, N, BATCH, SEED, D = 16, 16, 64, 1, 32
EXAMPLE = [[3, 9, 12, 0, 7, 14, 5, 1, 3, 9, 12, 0, 7, 14, 5, 1]]


def batch(step):
    """The repeat draw of step `step`: each row's second half a copy of its first."""
    ids = np.array(train_torch.tokens(BATCH * N, VOCAB, SEED + step), dtype=np.int64).reshape(BATCH, N)
    ids[:, N // 2:] = ids[:, : N // 2]
    return torch.from_numpy(ids)


def model_loss(w, ids, mask):
    """tests/bench/train_induction.yaml's steps up to loss = mean(losses)."""
    x0 = w["E"][ids] + w["P"]
    a0 = torch.softmax((x0 @ w["W_Q0"]) @ (x0 @ w["W_K0"]).transpose(-1, -2) / math.sqrt(D) + mask, dim=-1)
    x1 = x0 + a0 @ (x0 @ w["W_V0"])
    a1 = torch.softmax((x1 @ w["W_Q1"]) @ (x1 @ w["W_K1"]).transpose(-1, -2) / math.sqrt(D) + mask, dim=-1)
    x2 = x1 + a1 @ (x1 @ w["W_V1"])
    logits = x2 @ w["W_U"]
    return torch.nn.functional.cross_entropy(logits[:, 0:N - 1].reshape(-1, VOCAB), ids[:, 1:N].reshape(-1))


def torch_training(folder, steps):
    torch.set_default_dtype(torch.float64)
    w = {k: torch.tensor(np.load(os.path.join(folder, k + ".npy")), requires_grad=True) for k in TRAINED}
    mask = torch.triu(torch.full((N, N), float("-inf")), diagonal=1)
    opt = torch.optim.Adam([w[k] for k in TRAINED], lr=0.01)
    for step in range(steps):
        opt.zero_grad()
        loss = model_loss(w, batch(step), mask)
        last = loss.item()
        loss.backward()
        opt.step()
    with torch.no_grad():  # the traced run on the example sequence
        model_loss(w, torch.tensor(EXAMPLE), mask)
    print(repr(last))


def run(argv):
    """Wall seconds, peak resident MiB and CPU seconds (user + system, all threads) of one
    whole process, its output thrown away."""
    with tempfile.NamedTemporaryFile("r") as times:
        start = time.perf_counter()
        subprocess.run(["/usr/bin/time", "-o", times.name, "-f", "%U %S %M", *argv], stdout=subprocess.DEVNULL,
                       check=True)
        wall = time.perf_counter() - start
        user, system, kib = times.read().split()[-3:]
    return wall, int(kib) / 1024.0, float(user) + float(system)


def measure(argv, runs):
    """Median wall time, largest peak memory, median CPU time."""
    results = [run(argv) for _ in range(runs)]
    return (statistics.median(r[0] for r in results), max(r[1] for r in results),
            statistics.median(r[2] for r in results))


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--torch":
        torch_training(sys.argv[2], int(sys.argv[3]))
        return 0
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    if not os.path.exists("/usr/bin/time"):
        print("SKIP: the training benchmark needs /usr/bin/time (the package time)")
        return 77
    tracer, lesson = sys.argv[1], sys.argv[2]
    runs = int(os.environ.get("TRACER_BENCH_RUNS", "3"))
    with open(lesson) as f:
        steps = int(re.search(r"^  steps: (\d+)$", f.read(), re.M).group(1))
    trace = json.loads(subprocess.run([tracer, "--format", "json", lesson], capture_output=True, text=True,
                                      check=True).stdout)["training"]
    with tempfile.TemporaryDirectory() as folder:
        for g in trace["trained"]:
            np.save(os.path.join(folder, g["name"] + ".npy"), np.array(g["before"], dtype=float))
        torch_argv = [sys.executable, os.path.abspath(__file__), "--torch", folder, str(steps)]
        theirs = float(subprocess.run(torch_argv, capture_output=True, text=True, check=True).stdout)
        ours = trace["losses"][-1]
        if abs(ours - theirs) > 1e-9 * abs(theirs):
            print(f"FAIL: the last loss is {ours!r} in the tracer, {theirs!r} in PyTorch: not the same run")
            return 1
        print("Induction head (tests/bench/train_induction.yaml): 2 attention layers, vocab 16, d 32, 16 positions, "
              "batch 64, Adam lr 0.01, %d steps, fp64; %d CPUs; torch %s with %d threads; median of %d runs, "
              "whole processes; last loss %.6f in both" % (steps, os.cpu_count(), torch.__version__,
                                                          torch.get_num_threads(), runs, ours))
        print("wall: elapsed seconds; cpu: user + system seconds of all threads (steadier on a busy "
              "machine); MiB: peak resident memory")
        t_wall, t_mib, t_cpu = measure([tracer, lesson], runs)
        p_wall, p_mib, p_cpu = measure(torch_argv, runs)
    print("%-8s  %8s  %8s  %8s" % ("", "wall s", "cpu s", "MiB"))
    print("%-8s  %8.3f  %8.3f  %8.0f" % ("tracer", t_wall, t_cpu, t_mib))
    print("%-8s  %8.3f  %8.3f  %8.0f" % ("PyTorch", p_wall, p_cpu, p_mib))
    print("%-8s  %8.2f  %8.2f  %8.2f" % ("ratio", t_wall / p_wall, t_cpu / p_cpu, t_mib / p_mib))
    return 0


if __name__ == "__main__":
    sys.exit(main())
