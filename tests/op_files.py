#!/usr/bin/env python3
"""Every operation against its data file, and every operation with its files.

Usage (from the project root):
    tests/op_files.py TRACER OP_ENTRIES [NAME...]

OP_ENTRIES is the program tests/op_entries.c: every entry of the op table, one a line. Each
operation has a data file, tests/ops/NAME.yaml (tests/ops/README.md says what it holds). For
each data file this builds a small lesson from each of its cases,

    given: the case's givens, and `upstream` (1, 2, 3, ... in reading order, the result's shape)
    steps:
      - y: the case's step
      - loss: sum(y * upstream)         (when the case has a gradient)
      - d_x: grad(loss, x)              (for each given the case has a gradient for)

runs `TRACER --format json --explain y` on it and compares: y's stage runs the operation (its
"op" is the file's), y's values with the case's `value`, each d_x with the case's `grad`, within
|a - b| <= tolerance * max(1, |b|) (tolerance 1e-12, or the case's `tolerance:`; inf, -inf and
nan must match exactly), and the work shown for every element ends in the last element's value
as printed; the first case's first element is explained alone too (--explain y[0, 0]). Each
error case is traced the same way and must be refused: exit status 1, nothing on standard
output, and standard error holding `error: ` and each of the case's words (`error:` a text,
or a list of texts).

The first test checks the op table's side: every entry has its data file and its
documentation in doc/lesson-format.md (a row of the table of functions, whose parameters
tests/docs/reference.py compares, or for an operator its symbol in the list of expressions);
every function has a numpy version for tests/crosscheck.py and, with a derivative, a PyTorch
one for tests/torchcheck.py (`numpy:` and `torch:` in its data file, or their FUNCTIONS); an
entry with a derivative has a case with a gradient; and every data file names an entry of the
table. Then one test per data file, through TAP. (The fuzz dictionary takes the operations'
names from the table itself: tests/fuzz/dictionary.py.)

The expected numbers are worked out by tests/op_expect.py with numpy and PyTorch, never from
the tracer's output.
"""
import json
import math
import os
import re
import subprocess
import sys
import tempfile

import yaml

OPS = "tests/ops"
FORMAT = "doc/lesson-format.md"
TOLERANCE = 1e-12
RESERVED = {"y", "loss", "upstream"}  # names the built lesson gives its own stages
FILE_KEYS = {"op", "numpy", "torch", "cases", "errors"}
CASE_KEYS = {"given", "step", "tolerance", "value", "grad"}
ERROR_KEYS = {"given", "step", "error"}


class Problem(Exception):
    pass


# ---------------------------------------------------------------- the data files

def read_data(name):
    path = os.path.join(OPS, name + ".yaml")
    with open(path, encoding="utf-8") as f:
        data = yaml.safe_load(f)
    if not isinstance(data, dict):
        raise Problem(f"{path} is not a mapping")
    unknown = set(data) - FILE_KEYS
    if unknown:
        raise Problem(f"{path}: unknown keys {sorted(unknown)} (it may hold {sorted(FILE_KEYS)})")
    if data.get("op") != name:
        raise Problem(f"{path}: op: is {data.get('op')!r}, not the file's name {name!r}")
    if not data.get("cases"):
        raise Problem(f"{path}: no cases")
    for kind, keys in (("cases", CASE_KEYS), ("errors", ERROR_KEYS)):
        for i, case in enumerate(data.get(kind) or [], 1):
            if not isinstance(case, dict) or not isinstance(case.get("step"), str):
                raise Problem(f"{path}: {kind} {i} needs a step: (an expression)")
            unknown = set(case) - keys
            if unknown:
                raise Problem(f"{path}: {kind} {i}: unknown keys {sorted(unknown)} (it may hold {sorted(keys)})")
            clash = RESERVED & set(case.get("given") or {})
            if clash:
                raise Problem(f"{path}: {kind} {i}: the givens {sorted(clash)} are names the test gives its stages")
    return data


NON_FINITE = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}  # as the JSON trace writes them


def number(v):
    """A number as the lesson writes it (YAML's .inf, -.inf and .nan)."""
    if isinstance(v, bool):
        raise Problem(f"a truth value {v!r} among the numbers: write 1 or 0")
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return ".nan"
        if math.isinf(v):
            return ".inf" if v > 0 else "-.inf"
        return repr(v)
    raise Problem(f"not a number: {v!r}")


def flow(v):
    """A value as a YAML flow list the tracer reads: [[1.0, 2.0], [3.0, inf]]."""
    if isinstance(v, list):
        return "[" + ", ".join(flow(x) for x in v) + "]"
    return number(v)


def shape_of(v):
    shape = []
    while isinstance(v, list):
        shape.append(len(v))
        v = v[0] if v else None
    return shape


def flat(v):
    if isinstance(v, list):
        return [x for item in v for x in flat(item)]
    return [v]


def upstream(shape):
    """1, 2, 3, ... in reading order, in this shape: every element's gradient weighed apart."""
    count = [1]

    def build(dims):
        if not dims:
            count[0] += 1
            return float(count[0] - 1)
        return [build(dims[1:]) for _ in range(dims[0])]
    return build(shape)


def lesson(title, given, step, wrt=(), shape=None):
    """The text of the lesson a case is traced as."""
    lines = [f"title: {json.dumps(title)}", "given:"]
    for name, value in (given or {}).items():
        lines.append(f"  {name}: {flow(value) if not isinstance(value, dict) else json.dumps(value)}")
    if wrt:
        lines.append(f"  upstream: {flow(upstream(shape))}")
    if len(lines) == 2:
        lines.pop()
    lines += ["steps:", f"  - y: {json.dumps(step)}"]
    if wrt:
        lines.append("  - loss: sum(y * upstream)")
        lines += [f"  - d_{x}: grad(loss, {x})" for x in wrt]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- comparing

def close(got, want, tolerance):
    got = NON_FINITE.get(got, got)
    if not isinstance(got, (int, float)) or not isinstance(want, (int, float)):
        return False
    if math.isnan(want) or math.isinf(want):
        return got == want or (math.isnan(want) and math.isnan(got))
    return abs(got - want) <= tolerance * max(1.0, abs(want))


def compare(what, got, want, tolerance):
    if shape_of(got) != shape_of(want):
        return [f"{what}: shape {shape_of(got)} in the trace, {shape_of(want)} in the file"]
    pairs = list(zip(flat(got), flat(want)))
    far = [(i, g, w) for i, (g, w) in enumerate(pairs) if not close(g, w, tolerance)]
    if not far:
        return []
    worst = max((abs(NON_FINITE.get(g, g) - w) for _, g, w in far if isinstance(NON_FINITE.get(g, g), (int, float))
                 and isinstance(w, (int, float))), default=math.inf)
    lines = [f"{what}: {len(far)} of {len(pairs)} values differ beyond {tolerance:g} (relative); "
             f"the largest difference {worst:.3g}"]
    lines += [f"  at flat index {i}: tracer {g!r}, file {w!r}" for i, g, w in far[:5]]
    return lines


def trace(tracer, text, args=()):
    with tempfile.TemporaryDirectory(prefix="op_files_") as folder:
        path = os.path.join(folder, "case.yaml")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        p = subprocess.run([tracer, *args, path], capture_output=True, env=dict(os.environ, NO_COLOR="1"),
                           timeout=120)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def check_case(tracer, name, i, case):
    what = f"case {i} ({case['step']})"
    wrt = list(case.get("grad") or {})
    if "value" not in case:
        return [f"{what} has no value: work it out with tests/op_expect.py"]
    text = lesson(f"{name}, case {i}", case.get("given"), case["step"], wrt, shape_of(case["value"]))
    status, out, err = trace(tracer, text, ["--format", "json", "--explain", "y"])
    if status != 0:
        return [f"{what}: the tracer exited with status {status}:"] + err.splitlines()[:20]
    stages = {s["name"]: s for s in json.loads(out)["stages"]}
    problems = []
    if stages["y"]["op"] != name:
        problems.append(f"{what} runs {stages['y']['op']!r}, not {name!r}")
    tolerance = float(case.get("tolerance", TOLERANCE))
    problems += compare(f"{what} value", stages["y"]["values"], case["value"], tolerance)
    for x in wrt:
        problems += compare(f"{what} gradient for {x}", stages["d_" + x]["values"], case["grad"][x], tolerance)
    problems += check_work(f"{what} --explain y", stages["y"]["work"], flat(case["value"])[-1])
    rank = len(shape_of(case["value"]))
    if i == 1 and rank:
        # the first element alone, as `explain: [0, 0]` asks
        first = "y[" + ", ".join(["0"] * rank) + "]"
        status, out, err = trace(tracer, text, ["--format", "json", "--explain", first])
        if status != 0:
            return problems + [f"{what}: --explain {first} exited with status {status}:"] + err.splitlines()[:20]
        y = next(s for s in json.loads(out)["stages"] if s["name"] == "y")
        problems += check_work(f"{what} --explain {first}", y["work"], flat(case["value"])[0])
    return problems


def check_work(what, work, want):
    """The work shown ends in the value of the element explained last, as printed (to the
    lesson's 4 decimals)."""
    if not work:
        return [f"{what} shows no work"]
    last = work[-1].rsplit(" = ", 1)
    if len(last) != 2:
        return [f"{what}: the work's last line has no ' = ': {work[-1]}"]
    shown = re.split(r"[ :]", last[1], maxsplit=1)[0].replace(",", "")
    try:
        got = float(shown)
    except ValueError:
        return [f"{what}: the work's last line ends in {shown!r}, not a number: {work[-1]}"]
    if not (got == want or (math.isnan(got) and math.isnan(want)) or abs(got - want) <= 0.51e-4 * max(1.0, abs(want))):
        return [f"{what}: the work ends in {shown}, but the last element is {want!r}: {work[-1]}"]
    return []


def check_error(tracer, name, i, case):
    what = f"error {i} ({case['step']})"
    words = case.get("error")
    words = [words] if isinstance(words, str) else words
    if not words or not all(isinstance(w, str) and w for w in words):
        return [f"{what} has no error: words its message must hold"]
    status, out, err = trace(tracer, lesson(f"{name}, error {i}", case.get("given"), case["step"]))
    problems = []
    if status != 1:
        problems.append(f"{what}: exit status {status}, expected 1 (refused)")
    if out:
        problems.append(f"{what}: standard output is not empty")
    missing = [w for w in ["error: "] + words if w not in err]
    if missing:
        problems.append(f"{what}: the message lacks {missing}:")
        problems += ["  " + line for line in err.splitlines()[:12]]
    return problems


def check_file(tracer, name):
    try:
        data = read_data(name)
    except (Problem, yaml.YAMLError) as exc:
        return [str(exc)]
    problems = []
    for i, case in enumerate(data["cases"], 1):
        try:
            problems += check_case(tracer, name, i, case)
        except Problem as exc:
            problems.append(f"case {i}: {exc}")
    for i, case in enumerate(data.get("errors") or [], 1):
        try:
            problems += check_error(tracer, name, i, case)
        except Problem as exc:
            problems.append(f"error {i}: {exc}")
    return problems


# ---------------------------------------------------------------- the op table's side

def entries(program):
    """(name, syntax, text, has a derivative) of every entry of the op table."""
    out = subprocess.run([program], check=True, capture_output=True, text=True).stdout
    rows = [line.split(" ") for line in out.splitlines()]
    if not rows or any(len(r) != 4 for r in rows):
        raise SystemExit(f"{program} printed something other than entries:\n{out[:500]}")
    return [(n, syntax, text, grad == "grad") for n, syntax, text, grad in rows]


def code_spans(markdown):
    return re.findall(r"`([^`]+)`", markdown)


def functions_of(script):
    """The names of a cross-check's FUNCTIONS = {...}, read from its text (it needs numpy or torch
    to import)."""
    with open(script, encoding="utf-8") as f:
        text = f.read()
    start = text.index("\nFUNCTIONS = {")
    return set(re.findall(r'^\s+"(\w+)":', text[start:text.index("\n}\n", start)], re.M))


def check_table(program, names):
    with open(FORMAT, encoding="utf-8") as f:
        doc = f.read()
    functions = set(re.findall(r"^\| `(\w+)\(", doc, re.M))
    # the expressions' list: the bullets that say how operators are written
    spans = code_spans(doc[doc.index("## Expressions"):doc.index("Every operation inside an expression")])
    problems = []
    listed = entries(program)
    for name, syntax, text, grad in listed:
        if name not in names:
            problems.append(f"the op table's {name!r} has no data file {OPS}/{name}.yaml")
        # an operator's symbol, as the list writes it (`+ - * /`, `x.T`); brackets for indexing and lists
        symbol = "[" if syntax in ("indexing", "list") else text
        if syntax == "function":
            if name not in functions:
                problems.append(f"{FORMAT} has no row for {name!r} in its table of functions")
        else:
            if not any(symbol in span for span in spans):
                problems.append(f"{FORMAT}'s list of expressions does not write the operator {name!r} ({symbol})")
    # each function written again without the tracer: numpy for its values (tests/crosscheck.py),
    # PyTorch for its gradient (tests/torchcheck.py); an elementwise one in its data file
    versions = {}
    for key, script in (("numpy", "tests/crosscheck.py"), ("torch", "tests/torchcheck.py")):
        versions[key] = functions_of(script)
        for name in names:
            try:
                if key in read_data(name):
                    versions[key].add(name)
            except (Problem, yaml.YAMLError):
                pass  # its own test says why
    for name, syntax, text, grad in listed:
        if syntax == "function" and name not in versions["numpy"]:
            problems.append(f"{name!r} has no numpy version: numpy: in {OPS}/{name}.yaml, or FUNCTIONS of tests/crosscheck.py")
        if syntax == "function" and grad and name not in versions["torch"]:
            problems.append(f"{name!r} has a derivative but no PyTorch version: torch: in {OPS}/{name}.yaml, "
                            "or FUNCTIONS of tests/torchcheck.py")
    known = {name for name, *_ in listed}
    problems += [f"{OPS}/{n}.yaml names no entry of the op table" for n in sorted(set(names) - known)]
    # an operation with a derivative has a gradient in its file, one without says so by having none
    for name, syntax, text, grad in listed:
        if name in names and grad:
            try:
                data = read_data(name)
            except (Problem, yaml.YAMLError):
                continue  # its own test says why
            if not any(case.get("grad") for case in data["cases"]):
                problems.append(f"{OPS}/{name}.yaml: {name!r} has a derivative, but no case has a grad:")
    return problems


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    tracer, program, only = argv[1], argv[2], argv[3:]
    names = sorted(f[:-5] for f in os.listdir(OPS) if f.endswith(".yaml"))
    run = only or names
    unknown = [n for n in run if n not in names]
    if unknown:
        sys.exit(f"no data file in {OPS} for: {', '.join(unknown)}")
    print(f"1..{len(run) + (not only)}", flush=True)
    failed = 0
    tests = ([("every entry of the op table has its data file, documentation and cross-check versions",
               lambda: check_table(program, names))] if not only else [])
    tests += [(name, lambda name=name: check_file(tracer, name)) for name in run]
    for i, (title, test) in enumerate(tests, 1):
        problems = test()
        if problems:
            failed += 1
            print(f"not ok {i} - {title}")
            for line in problems:
                print("# " + line)
        else:
            print(f"ok {i} - {title}")
        sys.stdout.flush()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
