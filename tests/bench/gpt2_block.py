#!/usr/bin/env python3
"""Time one GPT-2 small block traced by the tracer against the same block in numpy.

    gpt2_block.py TRACER LESSON.yaml        the benchmark (meson test --benchmark)
    gpt2_block.py --numpy N [--save DIR]    the numpy side alone, at n = N

LESSON.yaml is tests/bench/gpt2_block.yaml, written for n = 1024; for another n every 1024 in it
is replaced. For each n both sides run as whole processes, one after the other, RUNS times
(median wall time) and their peak resident memory is read from the kernel (getrusage of the
child): the tracer writing its text trace to /dev/null, and this script started again with
--numpy, which builds the same random weights (the tracer's splitmix64 and Box-Muller, written
again with numpy) and computes the block with numpy and its BLAS (OpenBLAS where installed,
with its default threads).

Environment: TRACER_BENCH_SIZES (default "128 1024"; "2048" and "4096" also work, 4096 needs
about 8 GiB for the tracer and 5 GiB for numpy), TRACER_BENCH_RUNS (default 3).
Exit 77 (meson's skip) when no python3 with numpy is found.
"""

import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from need_numpy import numpy_or_skip  # noqa: E402

np = numpy_or_skip("the GPT-2 block benchmark")

D_MODEL, HEADS, D_MLP = 768, 12, 3072

# ------------------------------------------------------------------ the numpy side


def normal(count, scale, seed):
    """The tracer's init: random, distribution: normal (kernel.h): splitmix64 uniforms, then
    Box-Muller pairs r cos(2 pi u2), r sin(2 pi u2) with r = sqrt(-2 log(1 - u1)), times scale."""
    pairs = (count + 1) // 2
    golden = np.uint64(0x9E3779B97F4A7C15)
    z = np.uint64(seed) + np.arange(1, 2 * pairs + 1, dtype=np.uint64) * golden
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z ^= z >> np.uint64(31)
    u = (z >> np.uint64(11)).astype(np.float64) * 2.0 ** -53
    u1, u2 = u[0::2], u[1::2]
    r = np.sqrt(-2.0 * np.log(1.0 - u1))
    out = np.empty(2 * pairs)
    out[0::2] = r * np.cos(2.0 * np.pi * u2) * scale
    out[1::2] = r * np.sin(2.0 * np.pi * u2) * scale
    return out[:count]


def layernorm(x, gamma, beta, eps=1e-5):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


def numpy_block(n, save=None):
    """The lesson's steps, one numpy statement each; every step's result stays bound, as a
    notebook would keep it."""
    w = lambda shape, seed, scale=0.02: normal(int(np.prod(shape)), scale, seed).reshape(shape)
    X = w((n, D_MODEL), 1, 1.0)
    ones, zeros = np.ones(D_MODEL), np.zeros(D_MODEL)
    W_Q, b_Q = w((D_MODEL, D_MODEL), 2), w((D_MODEL,), 3)
    W_K, b_K = w((D_MODEL, D_MODEL), 4), w((D_MODEL,), 5)
    W_V, b_V = w((D_MODEL, D_MODEL), 6), w((D_MODEL,), 7)
    W_O, b_O = w((D_MODEL, D_MODEL), 8), w((D_MODEL,), 9)
    W_fc, b_fc = w((D_MODEL, D_MLP), 10), w((D_MLP,), 11)
    W_proj, b_proj = w((D_MLP, D_MODEL), 12), w((D_MODEL,), 13)
    d_head = D_MODEL // HEADS

    h1 = layernorm(X, ones, zeros)
    Q = h1 @ W_Q + b_Q
    K = h1 @ W_K + b_K
    V = h1 @ W_V + b_V
    split = lambda t: t.reshape(n, HEADS, d_head).transpose(1, 0, 2)
    Q_heads, K_heads, V_heads = split(Q), split(K), split(V)
    mask = np.triu(np.full((n, n), -np.inf), 1)
    scores = Q_heads @ K_heads.transpose(0, 2, 1) / np.sqrt(d_head) + mask
    e = np.exp(scores - scores.max(-1, keepdims=True))
    weights = e / e.sum(-1, keepdims=True)
    del e
    heads_out = weights @ V_heads
    merged = heads_out.transpose(1, 0, 2).reshape(n, D_MODEL)
    attn = merged @ W_O + b_O
    x1 = X + attn
    h2 = layernorm(x1, ones, zeros)
    hidden = h2 @ W_fc + b_fc
    activated = 0.5 * hidden * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (hidden + 0.044715 * hidden ** 3)))
    mlp = activated @ W_proj + b_proj
    out = x1 + mlp
    if save:
        np.save(os.path.join(save, "out.npy"), out)
    return out


# ------------------------------------------------------------------ timing


def run(argv):
    """Wall seconds, peak resident MiB and CPU seconds (user + system, all threads) of one
    whole process, its output thrown away."""
    start = time.perf_counter()
    with open(os.devnull, "wb") as null:
        proc = subprocess.Popen(argv, stdout=null, stderr=subprocess.PIPE)
        stderr = proc.stderr.read()
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(stderr.decode(errors="replace").strip().splitlines()[0])
    return wall, usage.ru_maxrss / 1024.0, usage.ru_utime + usage.ru_stime


def measure(argv, runs):
    """Median wall time, largest peak memory, median CPU time."""
    results = [run(argv) for _ in range(runs)]
    return (statistics.median(r[0] for r in results), max(r[1] for r in results),
            statistics.median(r[2] for r in results))


def bench_args(usage, default_sizes):
    """The tracer, the lesson's text, the sizes and the runs from the command line
    (TRACER LESSON.yaml) and the environment; None, after the usage, when the line is wrong."""
    if len(sys.argv) != 3:
        print(usage, file=sys.stderr)
        return None
    with open(sys.argv[2]) as f:
        template = f.read()
    sizes = [int(s) for s in os.environ.get("TRACER_BENCH_SIZES", default_sizes).split()]
    return sys.argv[1], template, sizes, int(os.environ.get("TRACER_BENCH_RUNS", "3"))


def table(tracer, other, sizes, runs, lesson_text, other_argv):
    """For each n: the tracer on lesson_text(n), written to a file, against the process
    other_argv(n) (named other), one row of wall time, CPU time and peak memory each."""
    header = ("n", "tracer wall", other + " wall", "ratio", "tracer cpu", other + " cpu", "ratio",
              "tracer MiB", other + " MiB", "ratio")
    print("%6s  %11s  %11s  %6s  %11s  %11s  %6s  %11s  %11s  %6s" % header)
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            path = os.path.join(tmp, "lesson_%d.yaml" % n)
            with open(path, "w") as f:
                f.write(lesson_text(n))
            other_t, other_m, other_c = measure(other_argv(n), runs)
            try:
                tracer_t, tracer_m, tracer_c = measure([tracer, path], runs)
            except RuntimeError as err:
                print("%6d  %11s  %11.3f  %6s  %11s  %11.3f  %6s  %11s  %11.0f  %6s\n        tracer: %s" % (
                    n, "refused", other_t, "-", "-", other_c, "-", "-", other_m, "-", err))
                continue
            print("%6d  %11.3f  %11.3f  %6.2f  %11.3f  %11.3f  %6.2f  %11.0f  %11.0f  %6.2f" % (
                n, tracer_t, other_t, tracer_t / other_t, tracer_c, other_c, tracer_c / other_c,
                tracer_m, other_m, tracer_m / other_m))
            sys.stdout.flush()


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "--numpy":
        save = sys.argv[4] if len(sys.argv) == 5 and sys.argv[3] == "--save" else None
        numpy_block(int(sys.argv[2]), save)
        return 0
    args = bench_args(__doc__, "128 1024")
    if not args:
        return 2
    tracer, template, sizes, runs = args
    blas = _blas_name()
    print("GPT-2 small block (d 768, 12 heads, MLP 3072, causal), fp64; %d CPUs; numpy %s with %s; "
          "median of %d runs, whole processes" % (os.cpu_count(), np.__version__, blas, runs))
    print("wall: elapsed seconds; cpu: user + system seconds of all threads (steadier on a busy "
          "machine); MiB: peak resident memory")
    table(tracer, "numpy", sizes, runs, lambda n: template.replace("1024", str(n)),
          lambda n: [sys.executable, os.path.abspath(__file__), "--numpy", str(n)])
    return 0


def _blas_name():
    """The BLAS library numpy's matrix product runs on, from the process's own mappings."""
    np.ones((2, 2)) @ np.ones((2, 2))
    with open("/proc/self/maps") as maps:
        libs = {line.split()[-1] for line in maps if "blas" in line.lower()}
    names = sorted(os.path.realpath(l) for l in libs if l.startswith("/"))
    return ", ".join(os.path.basename(os.path.dirname(p)) + "/" + os.path.basename(p) for p in names) or "no BLAS"


if __name__ == "__main__":
    sys.exit(main())
