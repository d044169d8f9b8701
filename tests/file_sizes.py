#!/usr/bin/env python3
"""No source file of the tracer is too long to read as one thing.

Usage: file_sizes.py TRACER_DIR

Every .c and .h file under TRACER_DIR has at most 1,000 lines, and every file of the checking
stage (TRACER_DIR/check) at most 700: a file that grows past that does more than one job and is
split by job, as the checker is into names, calls, indexing and the backward pass.
"""
import os
import sys

MAX_LINES = 1000
MAX_CHECK_LINES = 700


def lines(path):
    with open(path, encoding="utf-8") as f:
        return sum(1 for _ in f)


def main():
    root = sys.argv[1]
    sources = sorted(os.path.join(d, name) for d, _, names in os.walk(root) for name in names
                     if name.endswith((".c", ".h")))
    check_dir = os.path.join(root, "check")
    check = [p for p in sources if os.path.dirname(p) == check_dir]
    failures = []
    if not sources or not check:
        failures.append(f"no {'sources' if not sources else 'files of the checking stage'} found under {root}")
    for path in sources:
        n = lines(path)
        limit = MAX_CHECK_LINES if path in check else MAX_LINES
        if n > limit:
            failures.append(f"{path}: {n} lines, more than {limit}; split it by job")
    for f in failures:
        print(f)
    if failures:
        return 1
    print(f"{len(sources)} sources, none over {MAX_LINES} lines; the {len(check)} of the checking stage "
          f"none over {MAX_CHECK_LINES}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
