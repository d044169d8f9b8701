#!/usr/bin/env python3
"""Lessons against lessons/lesson.schema.json, as an editor checks them while they are typed.

Usage: schema_check.py SCHEMA --loader LOADER_C... --valid LESSON... --valid-dir DIR...
                        --invalid LESSON... --header LESSON...
                        [--trace-schema TRACE_SCHEMA --tracer TRACER --traces LESSON...]

--valid lessons must validate; --invalid lessons (broken in their structure, which the tracer
refuses) must be rejected by the schema too; --header lessons must open with the
`# yaml-language-server: $schema=PATH` comment, PATH leading from the lesson to SCHEMA; and
the keys and words the loader knows (TOP_KEYS, GIVEN_KEYS, STEP_RESERVED, INIT_NAMES,
DISTRIBUTION_NAMES and SHOW_NAMES, each in one of the loader's sources tracer/lesson/lesson*.c)
must be the schema's, so one added to the loader cannot be forgotten here.

With --traces, the JSON trace (`tracer --format json`) of each lesson must validate against
TRACE_SCHEMA (doc/trace.schema.json), whose words of show: must be the loader's (SHOW_NAMES,
numbers written as table); each stage's "show" must be what its step or given asks (read from
the lesson's YAML
here, not from the tracer), and its "picture" what the schema says the text trace draws in
colour, worked out from the stage's own op, shape and values; and a trace with a word the
schema does not know must be rejected, so the schema is not one that takes anything.

YAML is read as editors read it (yaml-language-server follows YAML 1.2's core schema): 1e-5
is a number, yes and on are words, keys are text. PyYAML alone reads YAML 1.1, so the
resolvers below are the 1.2 ones. Needs python3-jsonschema (4.0 or later, for draft 2020-12)
and python3-yaml; exits 77 (skipped, loudly) without them.
"""
import json
import os
import re
import sys


def reexec_or_skip(missing):
    # Debian's packages belong to /usr/bin/python3, which may not be the first on PATH.
    if sys.executable != "/usr/bin/python3" and os.path.exists("/usr/bin/python3"):
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    print(f"SKIPPED: {missing} is missing (apt-get install python3-jsonschema python3-yaml): "
          "the lessons were not checked against the schema")
    sys.exit(77)


try:
    import yaml
    import jsonschema
    from jsonschema import Draft202012Validator
except ImportError as e:
    reexec_or_skip(e.name or "jsonschema")


class Yaml12Loader(yaml.SafeLoader):
    """YAML 1.2 core schema: what yaml-language-server and the tracer's libyaml-based loader read."""


Yaml12Loader.yaml_implicit_resolvers = {}
_RESOLVERS = [
    ("tag:yaml.org,2002:null", r"^(?:~|null|Null|NULL|)$", list("~nN") + [""]),
    ("tag:yaml.org,2002:bool", r"^(?:true|True|TRUE|false|False|FALSE)$", list("tTfF")),
    ("tag:yaml.org,2002:int", r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", list("-+0123456789")),
    ("tag:yaml.org,2002:float",
     r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
     list("-+.0123456789")),
]
for tag, pattern, first in _RESOLVERS:
    Yaml12Loader.add_implicit_resolver(tag, re.compile(pattern), first)


def _int(loader, node):
    text = loader.construct_scalar(node)
    if text.startswith("0o"):
        return int(text[2:], 8)
    if text.startswith("0x"):
        return int(text[2:], 16)
    return int(text, 10)


def _float(loader, node):
    text = loader.construct_scalar(node).lower()
    if text.lstrip("+-") == ".inf":
        return float("-inf") if text.startswith("-") else float("inf")
    if text == ".nan":
        return float("nan")
    return float(text)


def _mapping(loader, node):
    # Keys are text, as in JSON: `1:` is the key "1".
    loader.flatten_mapping(node)
    result = {}
    for key_node, value_node in node.value:
        key = key_node.value if isinstance(key_node, yaml.ScalarNode) else loader.construct_object(key_node)
        result[str(key)] = loader.construct_object(value_node, deep=True)
    return result


Yaml12Loader.add_constructor("tag:yaml.org,2002:int", _int)
Yaml12Loader.add_constructor("tag:yaml.org,2002:float", _float)
Yaml12Loader.add_constructor("tag:yaml.org,2002:map", _mapping)

HEADER = re.compile(r"^# yaml-language-server: \$schema=(\S+)$")


def main(argv):
    schema_path = argv[1]
    groups = {"--loader": [], "--valid": [], "--valid-dir": [], "--invalid": [], "--header": [],
              "--trace-schema": [], "--tracer": [], "--traces": []}
    current = None
    for arg in argv[2:]:
        if arg in groups:
            current = groups[arg]
        else:
            current.append(arg)
    # --valid-dir DIR: every lesson in the folder, so a test lesson added there is checked too.
    for folder in groups.pop("--valid-dir"):
        groups["--valid"] += sorted(os.path.join(folder, name) for name in os.listdir(folder)
                                    if name.endswith(".yaml"))
    with open(schema_path, encoding="utf-8") as f:
        schema = json.load(f)
    Draft202012Validator.check_schema(schema)
    validator = Draft202012Validator(schema)

    failures = 0

    def load(path):
        with open(path, "rb") as f:
            return yaml.load(f.read().decode("utf-8-sig"), Loader=Yaml12Loader)

    for path in groups["--valid"]:
        errors = sorted(validator.iter_errors(load(path)), key=lambda e: list(e.absolute_path))
        for e in errors[:3]:
            where = "/".join(str(p) for p in e.absolute_path) or "(top)"
            print(f"{path}: the schema rejects a valid lesson at {where}: {e.message}")
        failures += bool(errors)
    for path in groups["--invalid"]:
        try:
            doc = load(path)
        except yaml.YAMLError as e:
            print(f"{path}: not YAML at all, so it tests nothing about the schema: {e}")
            failures += 1
            continue
        errors = list(validator.iter_errors(doc))
        if not errors:
            print(f"{path}: the tracer refuses this lesson, but the schema accepts it")
            failures += 1
    for path in groups["--header"]:
        with open(path, encoding="utf-8") as f:
            first = f.readline().rstrip("\n")
        m = HEADER.match(first)
        if not m:
            print(f"{path}: the first line is not '# yaml-language-server: $schema=...'")
            failures += 1
        elif not (os.path.exists(os.path.join(os.path.dirname(path), m.group(1))) and
                  os.path.samefile(os.path.join(os.path.dirname(path), m.group(1)), schema_path)):
            print(f"{path}: $schema={m.group(1)} does not lead to {schema_path}")
            failures += 1
    failures += check_keys(groups["--loader"], schema)
    traces = groups.pop("--traces")
    if traces:
        failures += check_traces(groups.pop("--trace-schema")[0], groups.pop("--tracer")[0], traces, load,
                                 groups["--loader"])
    checked = sum(len(g) for g in groups.values()) + len(traces)
    if failures:
        print(f"{failures} of {checked} checks failed")
        return 1
    print(f"ok: {len(groups['--valid'])} lessons validate, {len(groups['--invalid'])} broken ones are "
          f"rejected, {len(groups['--header'])} name the schema, the loader's keys are the schema's, "
          f"{len(traces)} JSON traces validate against the trace schema (jsonschema {jsonschema_version()})")
    return 0


def loader_keys(paths, array):
    """The strings of `static const char *const ARRAY[] = {...};` in the loader's sources."""
    for path in paths:
        with open(path, encoding="utf-8") as f:
            source = f.read()
        m = re.search(r"\b" + array + r"\[\]\s*=\s*\{(.*?)\};", source, re.S)
        if m:
            return set(re.findall(r'"([^"]*)"', m.group(1)))
    return None


def check_keys(paths, schema):
    defs = schema["$defs"]
    places = [
        ("TOP_KEYS", "the top of a lesson", set(schema["properties"])),
        ("GIVEN_KEYS", "a given written as a mapping", set(defs["givenMapping"]["properties"])),
        ("STEP_RESERVED", "a step", set(defs["step"]["properties"])),
        ("INIT_NAMES", "init", set(defs["givenMapping"]["properties"]["init"]["enum"])),
        ("DISTRIBUTION_NAMES", "distribution", set(defs["givenMapping"]["properties"]["distribution"]["enum"])),
        ("SHOW_NAMES", "show", set(defs["show"]["enum"])),
    ]
    failures = 0
    path = "the loader (" + ", ".join(paths) + ")"
    for array, where, in_schema in places:
        in_loader = loader_keys(paths, array)
        if in_loader is None:
            print(f"{path}: no {array} array to compare with the schema")
            failures += 1
        elif in_loader != in_schema:
            for key in sorted(in_loader - in_schema):
                print(f"{where}: {path} accepts '{key}' ({array}), but the schema does not")
            for key in sorted(in_schema - in_loader):
                print(f"{where}: the schema accepts '{key}', but {path} does not ({array})")
            failures += 1
    return int(failures > 0)


def expected_picture(stage):
    """What the trace schema says the text trace draws in colour, from the stage alone."""
    shape, values = stage["shape"], stage["values"]
    if values is None or not shape or 0 in shape:
        return "table"
    if stage["show"] == "picture":
        return "bars" if len(shape) == 1 else "heatmap"
    if stage["show"] in ("table", "heatmap", "bars"):
        return "table" if stage["show"] == "bars" and len(shape) != 1 else stage["show"]
    # A softmax's output is a distribution: its gradient stages are not (they have no op).
    if stage["op"] == "softmax" and stage["kind"] != "gradient":
        return "bars" if len(shape) == 1 else "heatmap"
    return "table"


def check_traces(schema_path, tracer, lessons, load, loaders):
    import subprocess
    with open(schema_path, encoding="utf-8") as f:
        schema = json.load(f)
    Draft202012Validator.check_schema(schema)
    validator = Draft202012Validator(schema)
    failures = 0
    words = set(schema["$defs"]["show"]["enum"])
    if loader_keys(loaders, "SHOW_NAMES") - {"numbers"} != words:
        print(f"{schema_path}: the words of show: {sorted(words)} are not the loader's SHOW_NAMES (numbers "
              "written as table)")
        failures += 1
    shown = 0
    for lesson in lessons:
        run = subprocess.run([tracer, "--format", "json", lesson], capture_output=True, text=True)
        if run.returncode != 0:
            print(f"{lesson}: tracer --format json exited {run.returncode}: {run.stderr[:500]}")
            failures += 1
            continue
        trace = json.loads(run.stdout)
        errors = sorted(validator.iter_errors(trace), key=lambda e: list(e.absolute_path))
        for e in errors[:3]:
            where = "/".join(str(p) for p in e.absolute_path) or "(top)"
            print(f"{lesson}: the trace schema rejects the JSON trace at {where}: {e.message}")
        failures += bool(errors)
        if errors:
            continue
        # show: as the lesson's YAML writes it, step by step.
        asked = {}
        doc = load(lesson)
        for step in doc.get("steps") or []:
            names = [k for k in step if k not in RESERVED]
            if names:
                asked[names[0]] = step.get("show")
        givens = {name: g.get("show") for name, g in (doc.get("given") or {}).items() if isinstance(g, dict)}
        # A given made n times (W{i}: ... times: n) is W1, W2, ...
        numbered = [(re.compile(re.escape(name).replace(re.escape("{i}"), "[0-9]+") + "$"), show)
                    for name, show in givens.items() if "{i}" in name]
        # A block's steps are named after its application (as: pre, or the block's name) and
        # the copy's number: pre1.y is step y of the block applied as pre.
        blocks = {}
        for name, block in (doc.get("blocks") or {}).items():
            blocks[name] = {}
            for step in block.get("steps") or []:
                names = [k for k in step if k not in RESERVED]
                if names:
                    blocks[name][names[0]] = step.get("show")
        applied = {}
        for step in doc.get("steps") or []:
            if "use" in step:
                applied[step.get("as") or step["use"]] = step["use"]

        def lesson_show(st):
            name = st["name"]
            if st["kind"] == "given":
                if name in givens:
                    return givens[name]
                return next((show for pattern, show in numbered if pattern.match(name)), None)
            if st["kind"] != "step":
                return None
            if name in asked:
                return asked[name]
            # (an intervention's step, and the stage it replaces, NAME.original, show as
            # the block's step does)
            if name.endswith(".original"):
                name = name[:-len(".original")]
            m = re.match(r"(.+)\.([^.]+)$", name)
            block = (applied.get(m.group(1)) or applied.get(re.sub(r"[0-9]+$", "", m.group(1)))) if m else None
            return blocks.get(block, {}).get(m.group(2)) if block else None

        for st in trace["stages"]:
            want_show = lesson_show(st)
            want_show = {"numbers": "table"}.get(want_show, want_show)
            if st["show"] != want_show:
                print(f"{lesson}: stage {st['name']} has \"show\": {st['show']!r}; the lesson asks {want_show!r}")
                failures += 1
            shown += st["show"] is not None
            if st["picture"] != expected_picture(st):
                print(f"{lesson}: stage {st['name']} has \"picture\": {st['picture']!r}, "
                      f"not {expected_picture(st)!r}")
                failures += 1
        bogus = json.loads(run.stdout)
        bogus["stages"][0]["picture"] = "pie chart"
        if validator.is_valid(bogus):
            print(f"{schema_path}: a stage drawn as a 'pie chart' passes: the schema takes anything")
            failures += 1
    if lessons and not shown:
        print("no stage of the traces has a show:, so \"show\" was never checked")
        failures += 1
    return failures


RESERVED = {"say", "rows", "cols", "document", "explain", "show", "claim", "quiz"}


def jsonschema_version():
    try:
        from importlib.metadata import version
        return version("jsonschema")
    except Exception:
        return "?"


if __name__ == "__main__":
    sys.exit(main(sys.argv))
