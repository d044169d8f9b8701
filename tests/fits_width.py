#!/usr/bin/env python3
"""No line of any lesson's text trace, nor of a --diff report, is wider than the width it was
made at.

Usage: fits_width.py TRACER LESSON.yaml... [--diff ORIGINAL EDITED]...  Each lesson is traced at
60, 80 and 120 columns, plain, with shade pictures (--heatmap, no colour) and with colour
pictures (escapes removed before measuring); each pair after --diff is compared at 40, 60, 80
and 120 columns, plain and in colour. Widths are display columns as a terminal shows them, worked out here with
Python's own Unicode tables: East Asian wide characters such as 猫 take two columns,
combining accents none.
"""
import os
import re
import subprocess
import sys
import unicodedata

ESCAPE = re.compile(r"\x1b\[[0-9;]*m")


def columns(line):
    line = ESCAPE.sub("", line)
    width = 0
    for ch in line:
        if unicodedata.combining(ch):
            continue
        width += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return width


def too_wide(args, width, env, statuses):
    """The lines of the tracer's output wider than width, each printed; None when it failed."""
    run = subprocess.run(args, capture_output=True, env=env)
    if run.returncode not in statuses:
        print(" ".join(args), "failed:", run.stderr.decode(errors="replace"))
        return None
    wide = 0
    for number, line in enumerate(run.stdout.decode("utf-8").split("\n"), 1):
        if columns(line) > width:
            print(f"{' '.join(args)}: line {number} is {columns(line)} columns wide:")
            print("  " + ESCAPE.sub("", line))
            wide += 1
    return wide


def main():
    tracer, rest = sys.argv[1], sys.argv[2:]
    lessons, pairs = [], []
    while rest:
        if rest[0] == "--diff":
            pairs.append(rest[1:3])
            rest = rest[3:]
        else:
            lessons.append(rest.pop(0))
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "COLUMNS", "COLORTERM")}
    failures = 0
    for lesson in lessons:
        for width in (60, 80, 120):
            for extra in ([], ["--heatmap"], ["--heatmap", "--color=always"]):
                wide = too_wide([tracer, "--width", str(width)] + extra + [lesson], width, env, (0,))
                failures += 1 if wide is None else wide
    for original, edited in pairs:
        for width in (40, 60, 80, 120):
            for extra in ([], ["--color=always"]):
                args = [tracer, "--diff", "--width", str(width)] + extra + [original, edited]
                wide = too_wide(args, width, env, (0, 1))
                failures += 1 if wide is None else wide
    if failures:
        print(f"{failures} line(s) wider than the width")
        return 1
    print(f"{len(lessons)} lessons fit 60, 80 and 120 columns, with and without pictures; "
          f"{len(pairs)} --diff reports fit 40, 60, 80 and 120")
    return 0


if __name__ == "__main__":
    sys.exit(main())
