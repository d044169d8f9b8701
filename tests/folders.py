#!/usr/bin/env python3
"""The build keeps tracer/'s folders in layers: a file sees only the headers of its own folder
and of the folders below it, so including a higher folder's header fails to compile.

Usage: folders.py BUILD_DIR SOURCE_ROOT

Reads the compiler commands meson wrote (BUILD_DIR/compile_commands.json) and, with the
include paths of each folder's own sources, preprocesses a probe file that includes one
header:
- every header of the folder itself must be found, with all it includes (so no header of a
  folder reaches above it, even one that no source of the folder includes yet);
- one header of each folder below must be found;
- one header of each folder above must not: the compiler stops at the probe's include.
The folders and their order are tests/layers.py's FOLDERS, which its nm check shares.
"""
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

from layers import FOLDERS

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
    probes = 0
    with tempfile.TemporaryDirectory() as tmp:
        probe = os.path.join(tmp, "probe.c")
        for rank, folder in enumerate(FOLDERS):
            if folder not in commands:
                failures.append(f"no source of tracer/{folder} in {build}/compile_commands.json")
                continue
            directory, command = commands[folder]
            wanted = [(h, True) for h in headers[folder]]
            for other in FOLDERS[:rank]:
                wanted.append((headers[other][0], True))
            for other in FOLDERS[rank + 1:]:
                wanted.append((headers[other][0], False))
            for header, found in wanted:
                with open(probe, "w", encoding="utf-8") as fh:
                    fh.write(f'#include "{header}"\n')
                preprocess = ["-fdiagnostics-color=never", "-E", "-o", os.devnull, probe]
                run = subprocess.run(command + preprocess, cwd=directory, capture_output=True,
                                     text=True)
                probes += 1
                # the probe's own include not found (not one inside a header it did find)
                missing = run.returncode != 0 and re.search(
                    r"probe\.c:1:\d+: fatal error: '?" + re.escape(header), run.stderr)
                if found and run.returncode != 0:
                    failures.append(f"tracer/{folder} cannot include {header}:\n"
                                    + run.stderr.strip())
                elif not found and not missing:
                    failures.append(f"tracer/{folder} can include {header}, a header of a "
                                    "higher folder")
    for f in failures:
        print(f)
    if failures:
        return 1
    print(f"{len(commands)} folders, {probes} headers included: each folder sees its own and "
          "those below it, never one above")
    return 0


if __name__ == "__main__":
    sys.exit(main())
