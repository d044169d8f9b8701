#!/usr/bin/env python3
"""The op rule: no code outside the op table asks which operation it has.

Usage: op_rule.py TRACER_DIR

An operation is one entry of the op table (op.h and op.c, the families op_*.c, ops.c and
ops.h, which find an entry); the rest of the program asks the entry for what it needs
(.elementwise, .domain, .truth, .syntax, ...), so that adding an operation touches the kernel
and one table. This reads every C file under TRACER_DIR outside the table, comments and
strings blanked out, and fails on each comparison of an entry's name, symbol, token or kernel
variant, as strcmp(op->name, "log"), op->symbol[0] == '@' or n->op->variant == KERNEL_ANY.
Before that it checks itself on such lines, so that it cannot pass by finding nothing.
"""
import pathlib
import re
import sys

TABLE = re.compile(r"^(op|ops|op_\w+)\.[ch]$")

# An entry's field that tells which operation it is, read through a pointer named op.
FIELD = r"\bop\s*->\s*(?:name|symbol|work_symbol|token|variant)\b(?:\s*\[[^\]]*\])?"
COMPARED = re.compile(FIELD + r"\s*[=!]=|[=!]=\s*[\w>.()-]*" + FIELD)
CALL = re.compile(r"\b(?:strn?cmp|memcmp|strstr|strcasecmp)\s*\(")

MUST_FIND = [
    'if (strcmp(op->name, "log") == 0 && v[0] < 0)',
    'bool bracket = v[0] < 0 && strcmp(op->symbol, "**") == 0;',
    "if (n->op->variant == KERNEL_ANY) {",
    "if (op->symbol[0] == '@')",
    "if ('^' == n->op->token)",
    'if (!strncmp(n->op->name, "soft", 4))',
]
MUST_PASS = [
    'strbuf_printf(sb, "%s(", op->name);',
    "if (op->syntax == OP_INFIX && op->binds_before_minus)",
    "if (truth_of(n) == TRUTH_ANY)",
    'if (strcmp(s->name, e->name) == 0)',
]


def blank(text):
    """The C text with comments, strings and character constants blanked (lines kept)."""
    def spaces(m):
        return re.sub(r"[^\n]", " ", m.group(0))
    return re.sub(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', spaces, text, flags=re.S)


def call_args(text, start):
    """The text between the parenthesis that opens at start and the one that closes it."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return text[start + 1:i]
    return text[start + 1:]


def comparisons(text):
    """The offsets in text (blanked) where an entry's identity is compared."""
    found = [m.start() for m in COMPARED.finditer(text)]
    for m in CALL.finditer(text):
        if re.search(FIELD, call_args(text, m.end() - 1)):
            found.append(m.start())
    return sorted(found)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    for line in MUST_FIND:
        if not comparisons(blank(line)):
            sys.exit(f"op_rule.py misses a comparison of an operation's name: {line}")
    for line in MUST_PASS:
        if comparisons(blank(line)):
            sys.exit(f"op_rule.py takes for a comparison of an operation's name: {line}")
    root = pathlib.Path(sys.argv[1])
    files = sorted(p for p in root.rglob("*.[ch]") if not TABLE.match(p.name))
    if not files:
        sys.exit(f"no C files under {root}")
    broken = 0
    for path in files:
        source = path.read_text()
        text = blank(source)
        for at in comparisons(text):
            line = text.count("\n", 0, at) + 1
            print(f"{path}:{line}: compares which operation it is: "
                  f"{source.splitlines()[line - 1].strip()}")
            broken += 1
    if broken:
        print(f"{broken} comparison(s) of an operation's name outside the op table: give the entry "
              "a field that says what the code needs to know (tracer/README.md, how to add an operation)")
        sys.exit(1)
    print(f"{len(files)} files outside the op table: none compares an operation's name")


if __name__ == "__main__":
    main()
