#!/usr/bin/env python3
"""The fuzz build's dictionary: the words of tests/fuzz/lesson.dict, then every operation of
the op table as a lesson writes it, so that a new operation is in the dictionary without
being typed into it.

Usage: dictionary.py WORDS OP_ENTRIES OUTPUT
    (WORDS: tests/fuzz/lesson.dict; OP_ENTRIES: the program tests/op_entries.c)

A function is written `name(`, an infix operator ` symbol ` (between spaces), a prefix one
`symbol ` and a postfix one as it is (`.T`); indexing and lists are brackets, in WORDS already.
"""
import subprocess
import sys


def main(argv):
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    words_path, program, output = argv[1:]
    with open(words_path, encoding="utf-8") as f:
        words = f.read()
    spelled = {"function": "{}(", "infix": " {} ", "prefix": "{} ", "postfix": "{}"}
    lines = ["", "# The operations of the op table, written by tests/fuzz/dictionary.py"]
    rows = subprocess.run([program], check=True, capture_output=True, text=True).stdout.splitlines()
    for name, syntax, text, _ in (row.split(" ") for row in rows):
        if syntax not in spelled:
            continue
        word = spelled[syntax].format(text[:-1] if syntax == "function" else text)
        quoted = '"' + word.replace("\\", "\\\\").replace('"', '\\"') + '"'
        if "=" + quoted not in words:
            lines.append(f"op_{name}_{syntax}={quoted}")
    with open(output, "w", encoding="utf-8") as f:
        f.write(words + "\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
