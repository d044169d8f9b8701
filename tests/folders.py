#!/usr/bin/env python3
"""The build keeps tracer/'s folders in layers: a file sees only the headers of its own folder
and of the folders below it, so including a higher folder's header fails to compile.

Usage: folders.py BUILD_DIR SOURCE_ROOT

Reads the compiler commands meson wrote (BUILD_DIR/compile_commands.json); for each folder,
from the command of one of its own sources:
- its include path names the folder and each folder below it, and no folder above it (so a
  higher folder's header is not found: including it fails to compile);
- one preprocessor run of a probe file that includes every header of the folder and one of
  each folder below must succeed (so no header of a folder reaches above it, even one that no
  source of the folder includes yet).
The folders and their order are tests/layers.py's FOLDERS, which its nm check shares. A folder
built only with an option (OPTIONAL_FOLDERS: the fast layer) is left out of a build without it.
"""
import json
import os
import shlex
import subprocess
import sys
import tempfile

from layers import FOLDERS, OPTIONAL_FOLDERS

# Arguments that name what a command reads or writes, each with the value after it.
WITH_VALUE = {"-o", "-c", "-MQ", "-MF", "-MT"}


def probe_command(entry):
    """The compiler command of a source file, made to preprocess only, its own file left out."""
    args = entry["arguments"] if "arguments" in entry else shlex.split(entry["command"])
    kept, skip = [], False
    for arg in args:
        if skip:
            skip = False
        elif arg in WITH_VALUE:
            skip = True
        elif arg not in ("-MD", "-MMD") and arg != entry["file"]:
            kept.append(arg)
    return kept


def visible_folders(directory, command, tracer):
    """The folders of tracer/ on a command's include path (-Idir or -I dir), by name."""
    seen, args = set(), iter(command)
    for arg in args:
        path = next(args, "") if arg == "-I" else arg[2:] if arg.startswith("-I") else None
        if path is None:
            continue
        full = os.path.abspath(os.path.join(directory, path))
        if os.path.dirname(full) == tracer:
            seen.add(os.path.basename(full))
    return seen


def main():
    build, root = sys.argv[1], sys.argv[2]
    tracer = os.path.abspath(os.path.join(root, "tracer"))
    failures = []
    present = sorted(d for d in os.listdir(tracer) if os.path.isdir(os.path.join(tracer, d)))
    for d in present:
        if d not in FOLDERS:
            failures.append(f"tracer/{d} is not in FOLDERS (tests/layers.py): place it by what it "
                            "uses")
    headers = {f: sorted(h for h in os.listdir(os.path.join(tracer, f)) if h.endswith(".h"))
               for f in FOLDERS if f in present}
    with open(os.path.join(build, "compile_commands.json"), encoding="utf-8") as fh:
        entries = json.load(fh)
    commands = {}
    for entry in entries:
        source = os.path.abspath(os.path.join(entry["directory"], entry["file"]))
        folder = os.path.basename(os.path.dirname(source))
        in_tracer = os.path.dirname(os.path.dirname(source)) == tracer
        if in_tracer and folder not in commands:
            commands[folder] = (entry["directory"], probe_command(entry))
    built = [f for f in FOLDERS if f in commands or f not in OPTIONAL_FOLDERS]
    with tempfile.TemporaryDirectory() as tmp:
        probe = os.path.join(tmp, "probe.c")
        for rank, folder in enumerate(built):
            if folder not in commands:
                failures.append(f"no source of tracer/{folder} in {build}/compile_commands.json")
                continue
            directory, command = commands[folder]
            # The include path names exactly the folder and those below it: a header of a
            # higher folder is not found, so including it fails to compile.
            seen = visible_folders(directory, command, tracer)
            for other in built[rank + 1:]:
                if other in seen:
                    failures.append(f"tracer/{folder} can include the headers of tracer/{other}, "
                                    "a higher folder: its meson.build must not depend on it")
            for other in built[:rank + 1]:
                if other not in seen:
                    failures.append(f"tracer/{folder} cannot include the headers of tracer/{other}")
            # Every header of the folder compiles with what it includes, and one of each folder
            # below: one preprocessor run for the folder.
            wanted = headers[folder] + [headers[other][0] for other in built[:rank]]
            with open(probe, "w", encoding="utf-8") as fh:
                fh.writelines(f'#include "{h}"\n' for h in wanted)
            run = subprocess.run(command + ["-fdiagnostics-color=never", "-E", "-o", os.devnull, probe],
                                 cwd=directory, capture_output=True, text=True)
            if run.returncode != 0:
                failures.append(f"tracer/{folder} cannot include its own headers and those below it:\n"
                                + run.stderr.strip())
    for f in failures:
        print(f)
    if failures:
        return 1
    print(f"{len(commands)} folders: each sees its own headers and those below it, never one above")
    return 0


if __name__ == "__main__":
    sys.exit(main())
