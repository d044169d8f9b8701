#!/usr/bin/env python3
"""No line of any lesson's text trace is wider than the width it was traced at.

Usage: fits_width.py TRACER LESSON.yaml...  Each lesson is traced at 60, 80 and 120 columns,
plain, with shade pictures (--heatmap, no colour) and with colour pictures (escapes removed
before measuring). Widths are display columns as a terminal shows them, worked out here with
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


def main():
    tracer, lessons = sys.argv[1], sys.argv[2:]
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "COLUMNS", "COLORTERM")}
    failures = 0
    for lesson in lessons:
        for width in (60, 80, 120):
            for extra in ([], ["--heatmap"], ["--heatmap", "--color=always"]):
                args = [tracer, "--width", str(width)] + extra + [lesson]
                run = subprocess.run(args, capture_output=True, env=env)
                if run.returncode != 0:
                    print(" ".join(args), "failed:", run.stderr.decode(errors="replace"))
                    failures += 1
                    continue
                text = run.stdout.decode("utf-8")
                for number, line in enumerate(text.split("\n"), 1):
                    if columns(line) > width:
                        print(f"{' '.join(args)}: line {number} is {columns(line)} columns wide:")
                        print("  " + ESCAPE.sub("", line))
                        failures += 1
    if failures:
        print(f"{failures} line(s) wider than the width")
        return 1
    print(f"{len(lessons)} lessons fit 60, 80 and 120 columns, with and without pictures")
    return 0


if __name__ == "__main__":
    sys.exit(main())
