#!/usr/bin/env python3
"""--save and the streamed JSON, read back with numpy.

    save_numpy.py TRACER BLOCK.yaml LESSON.yaml...

* Every lesson: `TRACER --save DIR --format json LESSON` in one run; manifest.json must list
  exactly the JSON trace's stages (names, kinds, expressions, shapes, in order), each file must
  be a float64 C-order .npy that numpy.load reads, with exactly the JSON's values (17 digits
  read back to the same double; inf and nan included), shape-only stages have no file, and no
  temporary file is left.
* The GPT-2 block (tests/bench/gpt2_block.yaml) at n = 128: every stage saved with --threads 1
  and 7 has the bits of the default thread count's, and the saved output agrees with the same
  block computed here with numpy (tests/bench/gpt2_block.py), an independent check of every
  kernel at full width; and at n = 320, past the 2^24 values the JSON trace once stopped at:
  the JSON streams out and the .npy files are written in constant memory (peak memory within
  32 MiB of the text trace's, for a JSON of hundreds of megabytes).

Exit 77 (meson's skip, loudly) without a python3 that has numpy.
"""

import filecmp
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from need_numpy import numpy_or_skip  # noqa: E402

np = numpy_or_skip("the --save test")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "bench"))
import gpt2_block  # noqa: E402  the numpy block of the benchmark

MEMORY_SLACK_MIB = 32
failures = []


def fail(message):
    failures.append(message)
    print("FAIL " + message)


def json_array(values):
    """The JSON trace's values (non-finite numbers are the strings inf, -inf, nan)."""
    def conv(v):
        if isinstance(v, list):
            return [conv(x) for x in v]
        return float(v)
    return np.array(conv(values), dtype=np.float64)


def same_bits(a, b):
    """Equal to the bit, except that a nan is a nan whatever its sign and payload."""
    if a.shape != b.shape or not np.array_equal(np.isnan(a), np.isnan(b)):
        return False
    keep = ~np.isnan(a)
    return np.array_equal(a[keep].view(np.uint64), b[keep].view(np.uint64))


def check_saved(tracer, lesson, folder):
    proc = subprocess.run([tracer, "--save", folder, "--format", "json", lesson], capture_output=True)
    if proc.returncode != 0:
        fail("%s: exit status %d: %s" % (lesson, proc.returncode, proc.stderr.decode().strip()))
        return
    trace = json.loads(proc.stdout)
    with open(os.path.join(folder, "manifest.json")) as f:
        manifest = json.load(f)
    stages = trace["stages"]
    listed = manifest["stages"]
    if manifest["lesson"] != trace["file"] or manifest["dtype"] != "<f8":
        fail("%s: manifest header %r" % (lesson, {k: manifest[k] for k in ("lesson", "dtype")}))
    if [(s["name"], s["kind"], s["expr"], s["shape"]) for s in stages] != \
            [(s["name"], s["kind"], s["expr"], s["shape"]) for s in listed]:
        fail("%s: manifest.json does not list the trace's stages" % lesson)
        return
    files = set(os.listdir(folder))
    for stage, entry in zip(stages, listed):
        if stage["values"] is None:
            if entry["file"] is not None:
                fail("%s: shape-only stage %s has a file" % (lesson, stage["name"]))
            continue
        # a gradient's '/' (dloss/dW) cannot stand in a file name: it is written '.'
        if entry["file"] != stage["name"].replace("/", ".") + ".npy" or entry["file"] not in files:
            fail("%s: stage %s: file %r missing" % (lesson, stage["name"], entry["file"]))
            continue
        saved = np.load(os.path.join(folder, entry["file"]))
        want = json_array(stage["values"]).reshape(stage["shape"])
        if saved.dtype != np.dtype("<f8") or not saved.flags["C_CONTIGUOUS"]:
            fail("%s: %s is %s, not little-endian float64 in C order" % (lesson, entry["file"], saved.dtype))
        elif not same_bits(saved, want):  # -0 included: JSON writes it -0.0
            bad = np.argwhere(~((saved == want) | (np.isnan(saved) & np.isnan(want))))
            fail("%s: %s differs from the JSON trace at %s" % (lesson, entry["file"], bad[:3].tolist()))
        # a block's result under the names results: gives it (out for layer2.y), the same bits
        for alias, file in (entry.get("aliases") or {}).items():
            if file != alias + ".npy" or file not in files:
                fail("%s: stage %s: the file %r of its other name %s is missing" % (lesson, stage["name"], file, alias))
            elif not same_bits(np.load(os.path.join(folder, file)), want):
                fail("%s: %s differs from %s" % (lesson, file, entry["file"]))
    # a file written whole is renamed from a temporary name beside it: none may be left
    leftovers = [f for f in files if not f.endswith(".npy") and f != "manifest.json"]
    if leftovers:
        fail("%s: temporary files left: %s" % (lesson, leftovers))


def peak_mib(argv):
    """Peak resident memory of a whole run (stdout counted and thrown away) and its bytes."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    count = 0
    while True:
        chunk = proc.stdout.read(1 << 20)
        if not chunk:
            break
        count += len(chunk)
    stderr = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        fail("%s: %s" % (" ".join(argv), stderr.decode().strip()))
    return usage.ru_maxrss / 1024.0, count


def block_lesson(template, n, folder):
    path = os.path.join(folder, "gpt2_block_%d.yaml" % n)
    with open(path, "w") as f:
        f.write(template.replace("1024", str(n)))
    return path


def check_block(tracer, block, tmp):
    with open(block) as f:
        template = f.read()
    # values: n = 128 against numpy
    small = block_lesson(template, 128, tmp)
    folder = os.path.join(tmp, "block128")
    proc = subprocess.run([tracer, "--save", folder, small], capture_output=True)
    if proc.returncode != 0:
        fail("block n=128: %s" % proc.stderr.decode().strip())
        return
    # the same bits on 1 and 7 threads as on the default count, in every stage
    for threads in ("1", "7"):
        other = os.path.join(tmp, "block128_threads" + threads)
        proc = subprocess.run([tracer, "--threads", threads, "--save", other, small], capture_output=True)
        names = sorted(f for f in os.listdir(folder) if f.endswith(".npy"))
        differ = [f for f in names if not filecmp.cmp(os.path.join(folder, f), os.path.join(other, f), shallow=False)]
        if proc.returncode != 0 or differ or sorted(os.listdir(other)) != sorted(os.listdir(folder)):
            fail("block n=128 on %s threads: stages differ from the default count's: %s" % (threads, differ[:5]))
    print("block n=128: every stage the same bits on 1, 7 and %d threads" % os.cpu_count())
    ours = np.load(os.path.join(folder, "out.npy"))
    theirs = gpt2_block.numpy_block(128)
    # the weights come from the same splitmix64 draws; numpy's log, cos and sin may round an
    # ulp away from the C library's, and sums run in other orders: agreement to 1e-10
    worst = float(np.max(np.abs(ours - theirs)))
    if not worst <= 1e-10:
        fail("block n=128: the saved output differs from numpy's by %.3g" % worst)
    else:
        print("block n=128: the saved output agrees with numpy's to %.2g" % worst)

    # constant memory: n = 320, past the 2^24 values of the old JSON limit
    big = block_lesson(template, 320, tmp)
    text_mib, _ = peak_mib([tracer, big])
    json_mib, json_bytes = peak_mib([tracer, "--format", "json", big])
    save_mib, _ = peak_mib([tracer, "--save", os.path.join(tmp, "block320"), big])
    with open(os.path.join(tmp, "block320", "manifest.json")) as f:
        values = sum(int(np.prod(s["shape"])) for s in json.load(f)["stages"])
    print("block n=320: %d values; peak memory: text %.0f MiB, JSON %.0f MiB (%.0f MB written), "
          "--save %.0f MiB" % (values, text_mib, json_mib, json_bytes / 1e6, save_mib))
    if values <= 1 << 24:
        fail("block n=320 holds only %d values, not past 2^24" % values)
    if json_mib > text_mib + MEMORY_SLACK_MIB:
        fail("the JSON trace took %.0f MiB, more than the text trace's %.0f + %d" % (json_mib, text_mib,
                                                                                   MEMORY_SLACK_MIB))
    if save_mib > text_mib + MEMORY_SLACK_MIB:
        fail("--save took %.0f MiB, more than the text trace's %.0f + %d" % (save_mib, text_mib, MEMORY_SLACK_MIB))


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    tracer, block, lessons = sys.argv[1], sys.argv[2], sys.argv[3:]
    with tempfile.TemporaryDirectory() as tmp:
        for i, lesson in enumerate(lessons):
            check_saved(tracer, lesson, os.path.join(tmp, "lesson%d" % i))
        print("%d lessons saved and read back with numpy" % len(lessons))
        check_block(tracer, block, tmp)
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
