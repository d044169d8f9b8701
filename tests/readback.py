#!/usr/bin/env python3
"""Every number the text trace prints reads back to the value it stands for.

    readback.py TRACER LESSON.yaml [LESSON.yaml ...]
    readback.py TRACER --generated DIR     (also writes and checks lessons of every magnitude)

For each lesson this runs the tracer twice, `--format text` and `--format json`, and reads the
text back: every number in a box (the values of a stage, and the numbers a document printed)
and every scalar must be within half a unit of its own last printed digit of the value the
JSON trace holds at the same place (1.3937e+65 within 0.00005e+65 of exp(150), 0.3345 within
0.00005 of 0.33452...), with exact rational arithmetic, so nothing here rounds; and a value
that is not zero never prints as zero (1e-5 is not 0.0000) unless it is rounding noise beside
its tensor's largest magnitude (below NOISE_RATIO of it, format.h) or the table says that
0.0000 stands for values too small to show. A matrix drawn whole as a picture, its numbers
left out, shows each row's largest value, which must read back too. inf, -inf and
nan must be spelled as such. A work line `name[i, j] = ... = v` must end in the value of
name[i, j]. Boxes shown by their corners are read through their gaps (… and ⋮), so every
shown number is still compared with the value at its own place.

--generated writes lessons whose givens span 1e-300 to 1e300 and the subnormals, with results
that overflow, underflow and mix magnitudes in one tensor, and checks them the same way.

Needs only Python 3 (no numpy). Exit status: 0 every number reads back, 1 otherwise, 2 usage.
"""

import json
import math
import os
import random
import re
import subprocess
import sys
from fractions import Fraction

NUMBER = re.compile(r"^-?(\d{1,3}(,\d{3})+|\d+)(\.\d+)?(e[+-]\d+)?$|^-?inf$|^nan$")
GAPS = ("…", "⋮")
SLICE_GAP = re.compile(r"^\s*⋮ \((\d+) more slices\)\s*$")
STAGE_HEAD = re.compile(r"^(Given (\S+)  \[|Step \S+  (\S+) =( |$))")  # a long formula wraps after its =
BAR = re.compile(r"^\s*\S.*? │[^│]*│ +(\S+)\s*$")
WORK = re.compile(r"^(\S+?)\[([\d, ]+)\] = .* = (\S+)$")
# The note under a table whose small values print as 0.0000, and under a matrix drawn whole as
# a picture (its numbers left out), with each row's largest value beside the picture.
HIDDEN = re.compile(r"^\s*\(\S+ is 0, or a value below \S+ in size\)$")
PICTURED = re.compile(r"^\s*\(its numbers[ :]")
PICTURE_NOTE = re.compile(r"^.*│[^│]*│  (\S+) at .+$")


# A value below this fraction of its tensor's largest finite magnitude may print as zero
# (FORMAT_NOISE_RATIO in tracer/base/format.h).
NOISE_RATIO = Fraction(1, 10**12)


class Mismatch(Exception):
    pass


def run(tracer, fmt, path):
    proc = subprocess.run([tracer, "--color", "never", "--format", fmt, path],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)
    if proc.returncode != 0:
        raise Mismatch("tracer --format %s exited %d: %s"
                       % (fmt, proc.returncode, proc.stderr.decode("utf-8", "replace").strip()))
    return proc.stdout.decode("utf-8")


def last_unit(token):
    """Fraction: one unit of the last printed digit of a number token."""
    mantissa, _, exponent = token.partition("e")
    decimals = len(mantissa.partition(".")[2])
    return Fraction(10) ** (int(exponent or 0) - decimals)


def reads_back(token, value, largest=0.0, hidden_said=False):
    """True when the printed token stands for the double `value`, one of a tensor whose largest
    finite magnitude is `largest`; hidden_said: its table says 0.0000 may stand for a value
    too small to show. A percentage (52.22%) stands for value * 100, exactly."""
    if token.endswith("%") and NUMBER.match(token[:-1]) and math.isfinite(value):
        token, exact = token[:-1], Fraction(value) * 100
        hidden_said = True  # a percentage rounds as it may (show: percent)
    else:
        exact = Fraction(value) if math.isfinite(value) else None
    if not NUMBER.match(token):
        raise Mismatch("%r is not a number as the tracer prints them" % token)
    if token in ("inf", "-inf", "nan") or not math.isfinite(value):
        spelled = "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
        return token == spelled
    printed = Fraction(token.replace(",", ""))
    if (printed == 0 and value != 0 and not Fraction(abs(value)) < Fraction(largest) * NOISE_RATIO
            and not hidden_said):
        raise Mismatch("%r printed as %s: a value that is not zero must not vanish unless the table "
                       "says that %s stands for small values too" % (value, token, token))
    return abs(printed - exact) <= last_unit(token) / 2


def flatten(v):
    if isinstance(v, list):
        out = []
        for x in v:
            out.extend(flatten(x))
        return out
    if isinstance(v, str):
        return [{"inf": math.inf, "-inf": -math.inf, "nan": math.nan}[v]]
    return [float(v)]


def is_picture(box):
    """A shade picture beside or under a table: no number in it. It may hold a gap: the
    picture of a table too wide for the screen leaves out the columns the table leaves out."""
    return not any(NUMBER.match(t.rstrip("%")) for row in box for t in row)


def boxes(lines):
    """The boxes in these lines, in order: each a list of rows of tokens; a slice gap ('⋮ (N
    more slices)') is the string 'gap'. Side-by-side boxes are told apart by their place
    among the │ segments of a line. Pictures are left out; bars (label │████▏ │ value, one
    line per entry of a vector) read as one row of their values."""
    done, open_boxes, bars = [], [], []
    for line in lines:
        if SLICE_GAP.match(line):
            done.append("gap")
            continue
        if "┌" in line:
            open_boxes = [[] for _ in range(line.count("┌"))]
            continue
        if "└" in line:
            done.extend(b for b in open_boxes if not is_picture(b))
            open_boxes = []
            continue
        bar = BAR.match(line)
        if bar and not open_boxes:
            bars.append(bar.group(1))
            continue
        if bars and line.strip() == "⋮":
            bars.append("…")
            continue
        if "│" in line and open_boxes:
            cells = line.split("│")[1::2]
            if len(cells) != len(open_boxes):
                raise Mismatch("a box line with %d boxes, expected %d: %r"
                               % (len(cells), len(open_boxes), line))
            for box, text in zip(open_boxes, cells):
                box.append(text.split())
    if bars:
        done.append([bars])
    return done


def shown_indices(items, total, is_gap):
    """Indices of items shown along an axis of `total` entries, reading one gap marker."""
    gap = [k for k, item in enumerate(items) if is_gap(item)]
    if not gap:
        if len(items) != total:
            raise Mismatch("%d entries shown of %d, with no gap" % (len(items), total))
        return list(range(total))
    g = gap[0]
    after = len(items) - g - 1
    return list(range(g)) + [None] + list(range(total - after, total))


def check_boxes(found, shape, values, what, hidden_said=False):
    """Every number in the boxes against values (flat, row-major) of this shape."""
    if len(shape) == 0:
        raise Mismatch("%s: a scalar printed as a box" % what)
    rows = shape[-2] if len(shape) >= 2 else 1
    cols = shape[-1]
    slices = 1
    for d in shape[:-2]:
        slices *= d
    if rows * cols == 0:
        if found:
            raise Mismatch("%s: an empty tensor printed a box" % what)
        return 0
    slice_at = shown_indices(found, slices, lambda b: b == "gap")
    largest = max((abs(v) for v in values if math.isfinite(v)), default=0.0)
    count = 0
    for box, s in zip(found, slice_at):
        if s is None:
            continue
        row_at = shown_indices(box, rows, lambda r: all(t in GAPS for t in r))
        for row, r in zip(box, row_at):
            if r is None:
                continue
            col_at = shown_indices(row, cols, lambda t: t in GAPS)
            for token, c in zip(row, col_at):
                if c is None:
                    continue
                flat = (s * rows + r) * cols + c
                if not reads_back(token, values[flat], largest, hidden_said):
                    raise Mismatch("%s at flat index %d: printed %s, the value is %r"
                                   % (what, flat, token, values[flat]))
                count += 1
    return count


def check_pictured(lines, shape, values, what):
    """A matrix drawn whole as a picture, its numbers left out: each row's note of its largest
    value (`│  0.8934 at B`) must read back to the largest of its row, where that lies."""
    rows, cols = shape[-2], shape[-1]
    notes = [m.group(1) for m in (PICTURE_NOTE.match(l) for l in lines) if m]
    if not notes:
        return 0
    if len(notes) != len(values) // cols:
        raise Mismatch("%s: %d notes of the largest value beside the picture, for %d rows"
                       % (what, len(notes), len(values) // cols))
    for r, token in enumerate(notes):
        row = values[r * cols:(r + 1) * cols]
        finite = [v for v in row if not math.isnan(v)]
        if finite and not reads_back(token, max(finite), max(abs(v) for v in finite if math.isfinite(v))):
            raise Mismatch("%s row %d: its largest printed as %s, it is %r" % (what, r, token, max(finite)))
    return len(notes)


def stage_blocks(text):
    """The text of each stage, by the stage's name."""
    blocks, current = {}, None
    for line in text.split("\n"):
        head = STAGE_HEAD.match(line)
        if head:
            current = blocks.setdefault(head.group(2) or head.group(3), [])
        elif current is not None:
            if line.startswith("Document check"):
                break
            current.append(line)
    return blocks


def check_stage(stage, lines):
    count = 0
    name = stage["name"]
    shape = stage["shape"]
    doc_at = next((k for k, l in enumerate(lines) if l.strip() == "as the document printed it:"),
                  len(lines))
    work_at = next((k for k, l in enumerate(lines) if l.strip() == "work:"), len(lines))
    value_lines = lines[:min(doc_at, work_at)]
    values = None if stage["values"] is None else flatten(stage["values"])
    ids_of = stage.get("ids_of")
    if values is not None and len(shape) == 0:
        scalar = [l for l in value_lines if l.startswith("    = ")]
        if len(scalar) != 1:
            raise Mismatch("stage %s: expected one '= value' line" % name)
        token = scalar[0].split("= ", 1)[1].strip()
        if ids_of is not None and " (" in token:
            # an id and its token: 1 (rug)
            token, said = token.split(" (", 1)
            v = values[0]
            if said != ids_of[int(v)] + ")" if v == int(v) and 0 <= v < len(ids_of) else True:
                raise Mismatch("stage %s: the id %r printed with the token %r" % (name, v, said[:-1]))
        if not reads_back(token, values[0]):
            raise Mismatch("stage %s: printed %s, the value is %r" % (name, token, values[0]))
        count += 1
    elif values is not None and ids_of is not None:
        pass  # ids printed as their tokens: words, not numbers (tests/numerics/labels_follow_values)
    elif values is not None and any(PICTURED.match(l) for l in value_lines):
        count += check_pictured(value_lines, shape, values, "stage " + name)
    elif values is not None:
        hidden = any(HIDDEN.match(l) for l in value_lines)
        count += check_boxes(boxes(value_lines), shape, values, "stage " + name, hidden)
    doc = stage.get("document")
    # A given whose document values are its own prints no second box ("document: the same
    # numbers, as the document printed them"): nothing more to read back.
    if doc and doc_at < len(lines):
        doc_lines = lines[doc_at + 1:work_at]
        doc_values = flatten(doc["values"])
        if len(shape) == 0:
            token = next(l for l in doc_lines if l.startswith("    = ")).split("= ", 1)[1].strip()
            if not reads_back(token, doc_values[0]):
                raise Mismatch("stage %s document: printed %s, the value is %r"
                               % (name, token, doc_values[0]))
            count += 1
        else:
            count += check_boxes(boxes(doc_lines), shape, doc_values, "document of " + name)
    for line in stage.get("work") or []:
        m = WORK.match(line)
        if not m or m.group(1) != name or values is None:
            continue
        index = [int(i) for i in m.group(2).split(",")]
        if len(index) != len(shape):
            continue
        flat = 0
        for i, d in zip(index, shape):
            flat = flat * d + i
        if not reads_back(m.group(3), values[flat]):
            raise Mismatch("work line %r ends in %s, the value is %r" % (line, m.group(3), values[flat]))
        count += 1
    return count


def check_lesson(tracer, path):
    text = run(tracer, "text", path)
    trace = json.loads(run(tracer, "json", path))
    blocks = stage_blocks(text)
    stages = trace["stages"]
    count = 0
    for st in stages:
        if st["name"] not in blocks:
            # The text folds the intermediates of a step shown quietly, as its result alone or
            # as a picture (show:); every given and step has its block.
            if st["kind"] in ("intermediate", "gradient"):
                continue
            raise Mismatch("stage %s is in the JSON trace, not in the text" % st["name"])
        if st["show"] != "quiet":  # a quiet stage prints its line alone
            count += check_stage(st, blocks[st["name"]])
    if len(blocks) > len(stages):
        raise Mismatch("the text trace has %d stages, the JSON %d" % (len(blocks), len(stages)))
    return count


# ---------------------------------------------------------------- lessons of every magnitude

def magnitude_lessons(directory, seed=8):
    rng = random.Random(seed)
    paths = []

    def write(name, body):
        path = os.path.join(directory, name + ".yaml")
        with open(path, "w", encoding="utf-8") as f:
            f.write(body)
        paths.append(path)

    def number(exponent):
        return "%.6fe%d" % (rng.uniform(1, 10) * rng.choice((1, -1)), exponent)

    # One lesson per band of 20 decades, each tensor mixing a band's magnitudes.
    for low in range(-300, 300, 20):
        row = ", ".join(number(e) for e in range(low, low + 20, 2))
        write("decades_%+d" % low, """title: "magnitudes from 1e%d"
given:
  x: [%s]
  y: [%s]
  s: %s
steps:
  - p: x * y
  - q: x / y
  - r: x * s
    explain: all
  - big: x * 1e200
  - small: x * 1e-200
  - t: s
""" % (low, row, ", ".join(number(e) for e in range(low, low + 20, 2)), number(low + 10)))
    write("subnormals", """title: "subnormals"
given:
  x: [4.9406564584124654e-324, -1e-320, 2.2250738585072014e-308, 1e-310, 0]
  y: [[1e-300, 3e-310], [5e-324, 1e-323]]
steps:
  - half: x / 2
  - twice: x * 2
  - lifted: x * 1e300
  - prod: y @ y
  - neg: -y
    explain: all
""")
    write("overflow", """title: "overflow and nan"
given:
  x: [100, 150, 200, 710, -800]
  z: [1e300, -1e300, 1e-300, 0]
steps:
  - e: exp(x)
    explain: all
  - m: z * 1e10
  - d: z / 0
  - w: softmax(x)
  - l: log(z)
""")
    # Big tensors shown by their corners, at extreme scales, rank 2 to 4.
    for k, (shape, scale) in enumerate([([50, 30], 1e-300), ([3, 45, 25], 1e250),
                                         ([2, 20, 3, 4], 1e-5), ([17, 2, 2], 1e120)]):
        write("corners_%d" % k, """title: "corners"
given:
  x: {shape: %s, init: random, distribution: uniform, scale: %r, seed: %d}
steps:
  - y: x * 3
  - z: x + 1
""" % (shape, scale, k))
    return paths


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    tracer = argv[1]
    paths = []
    args = argv[2:]
    while args:
        if args[0] == "--generated" and len(args) > 1:
            os.makedirs(args[1], exist_ok=True)
            paths += magnitude_lessons(args[1])
            args = args[2:]
        else:
            paths.append(args[0])
            args = args[1:]
    status = 0
    for path in paths:
        try:
            count = check_lesson(tracer, path)
            print("ok   %s  (%d numbers read back)" % (path, count))
        except (Mismatch, ValueError, KeyError, StopIteration) as exc:
            print("FAIL %s: %s" % (path, exc))
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
