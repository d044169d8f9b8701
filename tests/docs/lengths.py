#!/usr/bin/env python3
"""lessons/README.md's table of trace lengths against the golden files.

Usage: lengths.py LESSONS_README GOLDEN_DIR

Every lesson with a golden file has a row `| `NAME` | BEFORE | NOW |`, and NOW is the number
of lines of golden/NAME.txt (the default trace at 80 columns): a lesson whose trace grows or
shrinks updates its row, and a new lesson adds one (BEFORE `new`: it came after the review).
"""
import os
import re
import sys


def main():
    readme, golden = sys.argv[1], sys.argv[2]
    rows = {}
    for line in open(readme, encoding="utf-8"):
        m = re.match(r"\| `([0-9]{2}_[a-z0-9_]+)` \| ([0-9,]+|new) \| ([0-9,]+) \|$", line.rstrip("\n"))
        if m:
            rows[m.group(1)] = int(m.group(3).replace(",", ""))
    bad = 0
    names = sorted(f[:-4] for f in os.listdir(golden) if re.match(r"[0-9]{2}_.*\.txt$", f))
    for name in names:
        with open(os.path.join(golden, name + ".txt"), encoding="utf-8") as f:
            lines = f.read().count("\n")
        if name not in rows:
            print(f"{readme}: no row for {name} in the table of trace lengths ({lines} lines)")
            bad += 1
        elif rows[name] != lines:
            print(f"{readme}: {name} is said to print {rows[name]} lines; its golden file has {lines}")
            bad += 1
    for name in sorted(set(rows) - set(names)):
        print(f"{readme}: the table of trace lengths names {name}, which has no golden file")
        bad += 1
    print(f"{len(names)} lessons, {bad} rows wrong")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
