#!/usr/bin/env python3
"""No module of the tracer calls up: each uses only the modules below it in LAYERS.

Usage: layers.py NM LIBTRACER.a

Reads the symbol table of every object file in the library with nm: a module (an object
file, file.c.o) depends on another when it uses (U) a symbol the other defines. Each such
use must go down the list below, so the modules form no cycle and a newcomer can read them
from the bottom up: the kernel knows nothing of lessons, the ops nothing of the checker.
"""
import subprocess
import sys

# Lowest first. The families of operations (op_*) sit between op (their shared helpers) and
# ops (the table that finds them).
LAYERS = [
    "util", "format", "tensor", "diag", "backend", "kernel", "kernel_grad",
    "yamldoc", "lesson", "expr", "trace",
    "op",
    "op_elementwise", "op_matmul", "op_reduce", "op_norm", "op_softmax", "op_index", "op_heads",
    "op_positions", "op_loss",
    "ops", "ieee", "plan", "backward", "check", "lint", "eval", "gradcheck", "run", "doccheck", "claim",
    "quiz", "narrate",
    "heatmap", "corners", "verdict", "textwrap", "render_text", "render_json", "render_html", "save", "diff",
    "compare",
    "pipeline",
    # The command line's helpers: the installed course, and waiting for a save.
    "course", "watch",
]


def main():
    nm, library = sys.argv[1], sys.argv[2]
    out = subprocess.run([nm, library], check=True, capture_output=True, text=True).stdout
    defines, uses = {}, {}
    module = None
    for line in out.splitlines():
        if line.endswith(".o:"):
            module = line[:-1].rsplit("/", 1)[-1]
            module = module[: -len(".c.o")] if module.endswith(".c.o") else module[: -len(".o")]
            defines.setdefault(module, set())
            uses.setdefault(module, set())
            continue
        parts = line.split()
        if module is None or len(parts) < 2:
            continue
        kind, name = parts[-2], parts[-1]
        if kind == "U":
            uses[module].add(name)
        elif kind in "TDRBCVW":
            defines[module].add(name)
    owner = {name: m for m, names in defines.items() for name in names}
    failures = []
    unknown = sorted(m for m in defines if m not in LAYERS)
    if unknown:
        failures.append("modules missing from LAYERS in tests/layers.py (place them by what they use): "
                        + ", ".join(unknown))
    rank = {m: i for i, m in enumerate(LAYERS)}
    edges = 0
    for m in sorted(uses):
        for name in sorted(uses[m]):
            other = owner.get(name)
            if other is None or other == m or m not in rank or other not in rank:
                continue
            edges += 1
            if rank[other] > rank[m]:
                failures.append(f"{m} uses {name} from {other}, which is above it")
    if not defines:
        failures.append(f"nm found no object files in {library}")
    for f in failures:
        print(f)
    if failures:
        return 1
    print(f"{len(defines)} modules, {edges} uses between them, every one downwards")
    return 0


if __name__ == "__main__":
    sys.exit(main())
