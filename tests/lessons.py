#!/usr/bin/env python3
"""The lessons of a folder, for tests/meson.build: one path per line, in name order.

Usage: lessons.py FOLDER [--names] [--trains | --no-trains] [--grad] [--with-txt]

The test lists are read from the folders when the build is configured, so no list of names
is written by hand; a lesson that downloads its files (a top-level `download:` key) is left
out, as its files are not here. --trains keeps the lessons with a top-level `train:` section
or a given's `trained:`,
--no-trains the others; --grad those whose steps call grad(); --with-txt those with a NAME.txt
beside them (a traced case); --names prints NAME instead of FOLDER/NAME.yaml.
"""
import os
import re
import sys


def main(argv):
    folder, flags = argv[0], set(argv[1:])
    out = []
    for f in sorted(os.listdir(folder)):
        if not f.endswith(".yaml"):
            continue
        path = os.path.join(folder, f)
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        if re.search(r"^download:", text, re.M):
            continue
        # (a given's trained: trains the lesson it names first, as train: does)
        trains = re.search(r"^train:|\btrained: ", text, re.M) is not None
        if "--trains" in flags and not trains or "--no-trains" in flags and trains:
            continue
        if "--grad" in flags and not re.search(r"\bgrad\(", text):
            continue
        if "--with-txt" in flags and not os.path.exists(path[:-5] + ".txt"):
            continue
        out.append(f[:-5] if "--names" in flags else path)
    print("\n".join(out))


if __name__ == "__main__":
    main(sys.argv[1:])
