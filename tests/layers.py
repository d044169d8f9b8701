#!/usr/bin/env python3
"""No module of the tracer calls up: each uses only the modules below it in LAYERS (or in its own
layer, where a layer is a tuple of modules).

Usage: layers.py NM TRACER_DIR LIBRARY.a...  (tracer/ and the libraries of its folders)

Reads the symbol table of every object file in the libraries with nm: a module (an object
file, file.c.o) depends on another when it uses (U) a symbol the other defines. Each such
use must go down the list below, so the modules form no cycle and a newcomer can read them
from the bottom up: the kernel knows nothing of lessons, the ops nothing of the checker.

Each library is a folder of tracer/ (libbase.a is tracer/base), and LAYERS lists the modules
folder by folder in FOLDERS' order, so the order of the folders (which the build enforces
for headers, tests/folders.py) and the order of the modules agree.

The includes of every file in TRACER_DIR go down the list too, also within a folder: a
header that only declares (a type, say) is a use the symbols cannot show.
"""
import os
import re
import subprocess
import sys

# Lowest first, as in tracer/meson.build.
FOLDERS = ["base", "kernel", "ops", "tokenizer", "lesson", "check", "run", "judge", "render", "fast", "cli"]
# Folders built only with an option: without it they have no library and no source to check.
OPTIONAL_FOLDERS = {"fast"}  # -Dfast=false builds none of it

# Lowest first. The families of operations (op_*) sit between op (their shared helpers) and
# ops (the table that finds them). A tuple is one layer whose modules use each other: the
# loader's files read into lesson.h's types while lesson calls them, and an indexing compiles
# its index with check_compile (check_call), which compiles an indexing with
# check_compile_index. The checker's other files share its state (check_state). The text
# trace's page (render_text) draws each tensor with render_values, which reads the page's
# options (render.h).
LAYERS = [
    "util", "files", "safetext", "format", "tensor", "diag", "json", "weightfile", "sha256", "progress",
    "backend", "kernel", "kernel_layout", "kernel_grad", "kernel_axis", "kernel_triangle", "kernel_sort", "kernel_sample",
    "kernel_linalg",
    "op",
    "op_elementwise", "op_matmul", "op_reduce", "op_norm", "op_softmax", "op_index", "op_heads",
    "op_positions", "op_loss", "op_axis", "op_fill", "op_sort", "op_sample", "op_list", "op_linalg",
    "ops", "ieee",
    "unicode_classes", "utf8", "bpe_files", "tokenizer",
    "yamldoc", "yamldiff", "lesson_outline", "given_file", "given_text",
    ("lesson_loader", "lesson_values", "lesson_given", "lesson_download", "lesson_step", "lesson_block",
     "lesson_train", "lesson"), "expr", "trace",
    "plan", "check_state", "check_names", "backward", ("check_index", "check_call"), "check", "lint",
    "eval", "gradcheck", "schedule", "run", "optimizer", "train_explain", "train_draw", "train_baseline", "train_cache", "train",
    "doccheck", "claim", "quiz", "narrate", "verdict",
    "notation", "heatmap", "corners", "textwrap", "render_train", ("render_values", "render_text"), "render_json", "render_html", "save",
    # The fast layer: each replaces a part of the reference below it with the same bits.
    "pool", "parallel", "gemm", "widen", "fast_ops", "in_place", "freeing", "fast",
    "text_diff", "lesson_diff", "pipeline",
    # The command line's helpers: the installed course, waiting for a save, and the progress line.
    "course", "watch", "stale_narration", "progress_line",
    # The program, outside the libraries: the --quiz conversation, the --step pager, the
    # command line's options, the handlers of its modes, the table of modes, main.
    "ask", "pager", "cli", "cmd", "cmd_list", "cmd_trace", "cmd_watch", "cmd_step", "cmd_quiz", "cmd_diff", "cmd_lint",
    "modes", "main",
]

# Headers of no module of their own, by the module they belong to; config.h is generated.
HEADER_MODULES = {"gemm_tile": "gemm", "kernel_private": "kernel", "render": "render_text",
                  "config": None}


def folder_of(path):
    """The folder of tracer/ a library or a member of a thin archive is from: libbase.a -> base."""
    for part in reversed(path.split("/")):
        if part.startswith("lib") and (part.endswith(".a") or part.endswith(".a.p")):
            return part[len("lib"):].split(".a")[0]
    return None


def include_failures(tracer, rank):
    """Every #include "x.h" of tracer/'s files that reaches above its own module."""
    failures, includes = [], 0
    for folder in sorted(os.listdir(tracer)):
        path = os.path.join(tracer, folder)
        if not os.path.isdir(path):
            continue
        for name in sorted(os.listdir(path)):
            stem, ext = os.path.splitext(name)
            if ext not in (".c", ".h"):
                continue
            module = HEADER_MODULES.get(stem, stem)
            with open(os.path.join(path, name), encoding="utf-8") as fh:
                for number, line in enumerate(fh, 1):
                    m = re.match(r'\s*#\s*include\s+"([^"]+)\.h"', line)
                    if not m:
                        continue
                    other = HEADER_MODULES.get(m.group(1), m.group(1))
                    if other is None:
                        continue
                    includes += 1
                    if module not in rank or other not in rank:
                        missing = module if module not in rank else other
                        failures.append(f"tracer/{folder}/{name}:{number}: {missing} is missing "
                                        "from LAYERS in tests/layers.py")
                    elif rank[other] > rank[module]:
                        failures.append(f"tracer/{folder}/{name}:{number} includes {m.group(1)}.h, "
                                        f"of {other}, which is above {module}")
    return failures, includes


def main():
    nm, tracer, libraries = sys.argv[1], sys.argv[2], sys.argv[3:]
    out = subprocess.run([nm] + libraries, check=True, capture_output=True, text=True).stdout
    defines, uses, folders = {}, {}, {}
    module = None
    archive = None
    for line in out.splitlines():
        if line.endswith(".a:"):
            archive = folder_of(line[:-1])
            module = None
            continue
        if line.endswith(".o:"):
            path = line[:-1]
            module = path.rsplit("/", 1)[-1]
            module = module[: -len(".c.o")] if module.endswith(".c.o") else module[: -len(".o")]
            defines.setdefault(module, set())
            uses.setdefault(module, set())
            folders[module] = folder_of(path) or archive
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
    rank = {}
    for i, layer in enumerate(LAYERS):
        for m in layer if isinstance(layer, tuple) else (layer,):
            rank[m] = i
    unknown = sorted(m for m in defines if m not in rank)
    if unknown:
        failures.append("modules missing from LAYERS in tests/layers.py (place them by what they "
                        "use): " + ", ".join(unknown))
    folder_rank = {f: i for i, f in enumerate(FOLDERS)}
    for m in sorted(folders, key=lambda m: rank.get(m, -1)):
        if folders[m] not in folder_rank:
            failures.append(f"{m} is in a library of no folder listed in FOLDERS: {folders[m]}")
    placed = [m for m in sorted(rank, key=rank.get) if m in folders and folders[m] in folder_rank]
    for lower, higher in zip(placed, placed[1:]):
        if folder_rank[folders[lower]] > folder_rank[folders[higher]]:
            failures.append(f"{higher} (tracer/{folders[higher]}) is listed above {lower} "
                            f"(tracer/{folders[lower]}), whose folder is higher")
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
        failures.append("nm found no object files in " + " ".join(libraries))
    include_problems, includes = include_failures(tracer, rank)
    failures += include_problems
    for f in failures:
        print(f)
    if failures:
        return 1
    print(f"{len(defines)} modules in {len(set(folders.values()))} folders, {edges} uses and "
          f"{includes} includes between them, every one downwards or within a layer")
    return 0


if __name__ == "__main__":
    sys.exit(main())
