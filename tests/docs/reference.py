#!/usr/bin/env python3
"""The documentation against what it documents.

Usage: reference.py format CHAPTER SCHEMA FUNCTIONS   (doc/lesson-format.md, the lesson schema,
                                                        the program tests/docs/functions.c)
       reference.py commands README CI                 (README.md, .ci/run)

format: the tables of keys in CHAPTER ("## The top-level keys", "## Givens", "## Steps") hold
exactly the schema's keys (top level, a given's mapping, a step), each word of a key's `enum`
and each "(default X)" of its description; the table of functions ("## Functions") holds
exactly the functions of the op table (and grad), with the same parameters: as many required
ones, the same optional ones in the same order, and the same numbers as their defaults.

commands: the README's first command installs the packages .ci/run installs, and builds,
traces and tests with the commands .ci/run runs, so that what a newcomer types is what CI
proves on a clean machine.
"""
import json
import re
import subprocess
import sys


def section(text, heading):
    start = text.index("\n" + heading + "\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end >= 0 else len(text)]


def table_rows(part):
    """The rows of the Markdown tables in part: lists of cells, the header and rule left out."""
    rows = []
    for line in part.split("\n"):
        if line.startswith("|") and not re.match(r"^\|[-| ]+\|$", line):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
            rows.append(cells)
    return [r for r in rows if r[0] not in ("key", "function")]


def check_format(chapter_path, schema_path, functions_path):
    text = open(chapter_path, encoding="utf-8").read()
    schema = json.load(open(schema_path, encoding="utf-8"))
    problems = []
    defs = schema["$defs"]
    tables = {
        "## The top-level keys": schema["properties"],
        "## Givens": defs["givenMapping"]["properties"],
        "## Steps": defs["step"]["properties"],
    }
    for heading, props in tables.items():
        rows = {}
        for cells in table_rows(section(text, heading)):
            m = re.fullmatch(r"`([a-z_]+):`", cells[0])
            if m:
                rows[m.group(1)] = cells
        for key in sorted(set(props) - set(rows)):
            problems.append(f"{heading}: the schema has the key {key}:, the table does not")
        for key in sorted(set(rows) - set(props)):
            problems.append(f"{heading}: the table has the key {key}:, the schema does not")
        for key in sorted(set(rows) & set(props)):
            prop, cells = props[key], rows[key]
            for word in prop.get("enum", []):
                if f"`{word}`" not in cells[1]:
                    problems.append(f"{heading}: {key}: the schema's word {word} is not in the table")
            m = re.search(r"\(default ([^;)]+)", prop.get("description", ""))
            if m and cells[2] != m.group(1):
                problems.append(f"{heading}: {key}: the schema's default is {m.group(1)}, the table says '{cells[2]}'")

    documented = {}
    for cells in table_rows(section(text, "## Functions")):
        m = re.fullmatch(r"`([a-z_]+)\((.*)\)`", cells[0])
        if not m:
            problems.append(f"## Functions: a row that is not a call: {cells[0]}")
            continue
        params = [p.strip() for p in m.group(2).split(",")] if m.group(2) else []
        documented[m.group(1)] = [p for p in params if p != "..."]
    known = {}
    for line in subprocess.run([functions_path], check=True, stdout=subprocess.PIPE, text=True).stdout.splitlines():
        name, *params = line.split()
        known[name] = params
    for name in sorted(set(known) - set(documented)):
        problems.append(f"## Functions: the tracer has the function {name}, the table does not")
    for name in sorted(set(documented) - set(known) - {"grad"}):
        problems.append(f"## Functions: the table has {name}, a function the tracer does not have")
    for name in sorted(set(known) & set(documented)):
        code, doc = known[name], documented[name]
        code_required = [p for p in code if "=" not in p]
        doc_required = [p for p in doc if "=" not in p]
        code_optional = [p.split("=", 1) for p in code if "=" in p]
        doc_optional = [p.split("=", 1) for p in doc if "=" in p]
        if len(code_required) != len(doc_required):
            problems.append(f"{name}: takes {len(code_required)} required arguments ({' '.join(code_required)}), "
                            f"the table shows {len(doc_required)}")
        if [n for n, _ in code_optional] != [n for n, _ in doc_optional]:
            problems.append(f"{name}: its optional arguments are {[n for n, _ in code_optional]}, "
                            f"the table shows {[n for n, _ in doc_optional]}")
            continue
        for (n, code_value), (_, doc_value) in zip(code_optional, doc_optional):
            if code_value and float(code_value) != float(doc_value):
                problems.append(f"{name}: {n} defaults to {code_value}, the table says {doc_value}")
    return problems


def check_commands(readme_path, ci_path):
    readme = open(readme_path, encoding="utf-8").read()
    ci = open(ci_path, encoding="utf-8").read()
    problems = []
    m = re.search(r"apt-get install -y ([a-z0-9. +-]+?) &&", readme)
    ci_packages = re.search(r"^packages=\(([^)]*)\)", ci, re.M)
    if not m or not ci_packages:
        return ["the README's apt-get install or .ci/run's packages=(...) was not found"]
    if m.group(1).split() != ci_packages.group(1).split():
        problems.append(f"the README installs {m.group(1).split()}, .ci/run {ci_packages.group(1).split()}")
    first = readme[m.end():].split("\n", 1)[0]
    for command in [c.strip() for c in first.split("&&")]:
        # .ci/run sets the build folder up through its setup() (meson setup, or --reconfigure).
        ci_form = command.replace("meson setup ", "setup ")
        if command not in ci and ci_form not in ci:
            problems.append(f"the README's command '{command}' is not one .ci/run runs")
    tests = re.search(r"```sh not-run\n(npm install [^\n]*)\n(meson test [^\n]*)\n```", readme)
    if not tests or tests.group(2) not in ci:
        problems.append("the README's test command (meson test ...) is not one .ci/run runs")
    if not tests or tests.group(1) not in ci:
        problems.append("the README's npm install before its tests is not one .ci/run runs")
    return problems


def main(argv):
    if len(argv) == 4 and argv[0] == "format":
        problems = check_format(*argv[1:])
    elif len(argv) == 3 and argv[0] == "commands":
        problems = check_commands(*argv[1:])
    else:
        print(__doc__)
        return 2
    for p in problems:
        print("FAIL: " + p)
    if not problems:
        print(f"ok: {argv[1]} says what {' and '.join(argv[2:])} say")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
