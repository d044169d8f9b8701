#!/usr/bin/env python3
"""Work out the expected numbers of the operations' data files, with numpy and PyTorch.

Usage (from the project root, with Debian's /usr/bin/python3, which has numpy and torch):
    tests/op_expect.py tests/ops/NAME.yaml [...]

For each case of each file it builds the lesson tests/op_files.py traces (the case's givens,
`y` its step, and with a gradient `loss = sum(y * upstream)`), and evaluates it without the
tracer: `value` is y worked out with numpy by tests/crosscheck.py's functions, and `grad` (for
the givens the case names under grad:, a list of names or the mapping written before) is
d loss / d given from PyTorch's autograd in float64 through tests/torchcheck.py's functions.
The file is written again in its fixed layout: its opening comment, then op, numpy, torch,
cases and errors; every value a row to a line. Read the diff as a code change.
"""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import crosscheck as xc  # noqa: E402 - settles the interpreter (numpy, yaml) first
import torchcheck as tc  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
import yaml  # noqa: E402

import op_files  # noqa: E402


def plain(a):
    """An array as nested lists of floats (inf and nan kept as floats)."""
    a = np.asarray(a, dtype=np.float64)
    return a.tolist()


def evaluate(case, title):
    step = case["step"]
    wrt = list(case.get("grad") or [])
    with tempfile.TemporaryDirectory(prefix="op_expect_") as folder:
        path = os.path.join(folder, "case.yaml")
        with open(path, "w", encoding="utf-8") as f:
            f.write(op_files.lesson(title, case.get("given"), step))
        _, givens, _ = xc.load_lesson(path)
    env = {name: xc.build_given(name, node) for name, node in givens}
    value = xc.evaluate(step, env)
    if isinstance(value, xc.S):
        raise SystemExit(f"{title}: {step} is shape-only")
    case["value"] = plain(value)
    if not wrt:
        return
    tenv = {name: tc.given(name, node, name not in wrt) for name, node in givens}
    y = tc.evaluate(step, tenv)
    weights = torch.tensor(op_files.upstream(list(y.shape)), dtype=torch.float64)
    loss = (y.as_subclass(torch.Tensor) * weights).sum()
    grads = torch.autograd.grad(loss, [tenv[x] for x in wrt], allow_unused=True)
    case["grad"] = {x: plain(torch.zeros_like(tenv[x]) if g is None else g.detach()) for x, g in zip(wrt, grads)}


# ---------------------------------------------------------------- the file's layout

def scalar(v):
    if isinstance(v, str):
        plain = yaml.safe_dump(v, width=1000).strip().removesuffix("...").strip()
        return plain if plain == v else json.dumps(v, ensure_ascii=False)
    if isinstance(v, float):
        if v != v:
            return ".nan"
        if v in (float("inf"), float("-inf")):
            return ".inf" if v > 0 else "-.inf"
        # YAML 1.1 (PyYAML) reads 1e+300 as text: a float needs its point, 1.0e+300
        text = repr(v)
        return text.replace("e", ".0e") if "e" in text and "." not in text else text
    return str(v)


def flow(v):
    if isinstance(v, list):
        return "[" + ", ".join(flow(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {flow(x)}" for k, x in v.items()) + "}"
    return scalar(v)


def block(key, v, indent):
    """key: v, a value of two axes or more a row (or a matrix) to a line."""
    pad = " " * indent
    if isinstance(v, list) and v and isinstance(v[0], list):
        return [f"{pad}{key}:"] + [f"{pad}  - {flow(row)}" for row in v]
    return [f"{pad}{key}: {flow(v)}"]


def write(path, data, header):
    lines = list(header) + [f"op: {data['op']}"]
    for key in ("numpy", "torch"):
        if key in data:
            lines.append(f"{key}: {scalar(data[key])}")
    for kind in ("cases", "errors"):
        if not data.get(kind):
            continue
        lines.append(f"{kind}:")
        for case in data[kind]:
            part = []
            for key in ("given", "step", "tolerance", "value", "grad", "error"):
                if key not in case or case[key] in (None, {}):
                    continue
                if key in ("given", "grad"):
                    part.append(f"    {key}:")
                    for name, v in case[key].items():
                        part += block(name, v, 6)
                else:
                    part += block(key, case[key], 4)
            lines += ["  - " + part[0][4:]] + part[1:]
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    torch.set_default_dtype(torch.float64)
    for path in argv[1:]:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        header = []
        for line in text.splitlines():
            if not line.startswith("#"):
                break
            header.append(line)
        data = yaml.safe_load(text)
        for i, case in enumerate(data["cases"], 1):
            evaluate(case, f"{path}, case {i}")
        write(path, data, header)
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
