#!/usr/bin/env python3
"""No stale number in a lesson's narration.

    stale_narration.py TRACER LESSON.yaml [LESSON.yaml ...]

A student edits a given and runs the lesson again: every number the narration states about the
computation must follow. Narration quotes the trace through placeholders ({scores[1]},
{shape(X)}); a number written as fixed text goes stale. For each lesson this:

  * runs the lesson as it is (JSON), and reads the narration as written in the YAML (intro,
    outro, each step's say and each given's about), placeholders taken out: what is left is
    fixed text;
  * perturbs each given with values in turn (every value times 1.1) and, where the lesson allows
    it, changes a shape (one more row for every given labelled by a label list, and one more
    word in that list); a perturbed lesson that no longer runs (a given used as an index, say)
    is skipped and counted;
  * flags every number in the fixed text that equals a stage value of the original run at the
    number's own precision ("1.00" equals 0.9996; "40%" equals 0.3984) when that value changes,
    at that precision, in a perturbed run. Whole numbers are compared only with exact whole
    values, and a single digit only where the text gives it as a value ("sqrt(d_k) = 2"): "row
    0", "two heads" and "sum to 1" are not about whatever value happens to be 0, 2 or 1.
    Words in double quotes quote the document ("even batch=1") or name a token: not read;
  * requires every rendered narration of every run to be free of placeholders (no '{').

Exit status: 0 no stale number, 1 stale numbers (each printed with its lesson, text and the
stage it equals) or a lesson that does not run, 77 (skipped, loudly) when PyYAML is missing.
"""

import json
import math
import os
import re
import subprocess
import sys
import tempfile

try:
    import yaml
except ImportError:
    print("SKIPPED: the stale-narration test needs PyYAML (apt-get install python3-yaml)")
    sys.exit(77)

# Narration that quotes the document's own printed numbers, which no edit of a given changes:
# (lesson file, narration, paragraph) -> why.
DOCUMENT_QUOTES = {
    ("02_the_cat_sat.yaml", "intro", 1): "works by hand through the document's printed Q, K, scores and weights",
}

NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(%?)(?![\w])")


def fixed_text(template):
    """The narration with its placeholders taken out ({{ and }} are literal braces)."""
    out, i = [], 0
    while i < len(template):
        c = template[i]
        if c in "{}" and template[i:i + 2] in ("{{", "}}"):
            out.append(c)
            i += 2
        elif c == "{":
            end = template.find("}", i)
            out.append(" ")
            i = len(template) if end < 0 else end + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def narrations(lesson):
    """(where, template) for every piece of narration of a lesson."""
    for key in ("intro", "outro"):
        if isinstance(lesson.get(key), str):
            yield key, lesson[key]
    for name, given in (lesson.get("given") or {}).items():
        if isinstance(given, dict) and isinstance(given.get("about"), str):
            yield "given %s about" % name, given["about"]
    for step in lesson.get("steps") or []:
        if isinstance(step, dict) and isinstance(step.get("say"), str):
            name = next((k for k in step if k not in ("say", "rows", "cols", "document", "explain")), "?")
            yield "step %s say" % name, step["say"]


def literal_numbers(text):
    """(text, value, decimals) of each number in fixed text that states a value; a percentage
    as a fraction. A single digit states a value only after '='. Quotations are skipped."""
    text = re.sub(r'"[^"]*"', '""', text)
    for m in NUMBER.finditer(text):
        whole, frac, percent = m.group(1), m.group(2) or "", m.group(3)
        value = float(whole.replace(",", "") + frac)
        decimals = len(frac) - 1 if frac else 0
        if percent:
            value /= 100
            decimals += 2
        elif not frac and value < 10 and not text[:m.start()].rstrip().endswith("="):
            continue
        yield m.group(0), value, decimals


def flat(values):
    if values is None:
        return []
    if not isinstance(values, list):
        values = [values]
    out = []
    for v in values:
        if isinstance(v, list):
            out.extend(flat(v))
        else:
            out.append(float(v) if not isinstance(v, str) else float(v.replace("inf", "inf")))
    return out


def run(tracer, path):
    """The JSON trace of a lesson, or None when it does not run."""
    p = subprocess.run([tracer, "--format", "json", path], capture_output=True, text=True)
    if p.returncode != 0:
        return None, p.stderr.strip()
    return json.loads(p.stdout), ""


def stage_values(trace):
    return {s["name"]: flat(s["values"]) for s in trace["stages"]}


def rendered(trace):
    yield "intro", trace.get("intro")
    yield "outro", trace.get("outro")
    for s in trace["stages"]:
        yield s["name"], s.get("say")
        yield s["name"], s.get("about")


def matches(value, number, decimals):
    if not math.isfinite(value):
        return False
    if decimals == 0:
        return value == number
    return abs(value - number) <= 0.5 * 10.0 ** -decimals * (1 + 1e-9)


def same_at(a, b, decimals):
    if decimals == 0:
        return a == b
    return round(a, decimals) == round(b, decimals)


def scaled(values):
    """Every number 10% larger; a whole number written without a point (a count, a size, an
    index) to the next whole number at or above that, so it stays whole."""
    if isinstance(values, list):
        return [scaled(v) for v in values]
    if isinstance(values, bool) or not isinstance(values, (int, float)):
        return values
    if isinstance(values, int):
        return math.ceil(values * 1.1)
    return values * 1.1


class NoAliases(yaml.SafeDumper):
    """Lessons refuse anchors and aliases: write shared lists out again."""

    def ignore_aliases(self, data):
        return True


def perturbations(lesson):
    """(what, edited lesson) for each single-given +10% edit and each shape change."""
    givens = lesson.get("given") or {}
    for name, given in givens.items():
        edited = json.loads(json.dumps(lesson))
        g = edited["given"][name]
        if isinstance(g, dict):
            if "values" not in g:
                continue
            g["values"] = scaled(g["values"])
        else:
            edited["given"][name] = scaled(g)
        yield "%s + 10%%" % name, edited
    labels = lesson.get("labels") or {}
    for list_name in labels:
        edited = json.loads(json.dumps(lesson))
        grown = False
        for name, g in edited["given"].items():
            if isinstance(g, dict) and g.get("rows") == list_name and isinstance(g.get("values"), list) \
                    and g["values"] and isinstance(g["values"][-1], list):
                g["values"].append([v * 0.9 if isinstance(v, (int, float)) else v for v in g["values"][-1]])
                grown = True
        if grown:
            edited["labels"][list_name] = list(labels[list_name]) + ["new"]
            yield "one more row of %s" % list_name, edited


def check_lesson(tracer, path, tmp):
    problems, skipped, runs = [], [], 0
    with open(path, encoding="utf-8") as f:
        lesson = yaml.safe_load(f)
    base, err = run(tracer, path)
    if base is None:
        return ["%s does not run: %s" % (path, err)], skipped, runs
    base_values = stage_values(base)
    literals = []
    for where, template in narrations(lesson):
        paragraphs = template.split("\n\n")
        text = fixed_text("\n\n".join(p for i, p in enumerate(paragraphs)
                                      if (os.path.basename(path), where, i) not in DOCUMENT_QUOTES))
        for t, v, d in literal_numbers(text):
            literals.append((where, t, v, d))
    for what, edited in perturbations(lesson):
        edited_path = os.path.join(tmp, os.path.basename(path))
        with open(edited_path, "w", encoding="utf-8") as f:
            yaml.dump(edited, f, Dumper=NoAliases, allow_unicode=True, sort_keys=False)
        trace, err = run(tracer, edited_path)
        if trace is None:
            error = next((line for line in err.splitlines() if "error:" in line), "no message")
            skipped.append("%s: %s (%s)" % (path, what, error))
            continue
        runs += 1
        for where, text in rendered(trace):
            if text and "{" in text:
                problems.append("%s, %s: %s leaves a placeholder in the narration: %r" % (path, what, where, text))
        values = stage_values(trace)
        for where, text, number, decimals in literals:
            for stage, old in base_values.items():
                new = values.get(stage, [])
                for k, v in enumerate(old):
                    if not matches(v, number, decimals):
                        continue
                    if k < len(new) and len(new) == len(old) and same_at(v, new[k], decimals):
                        continue
                    problems.append("%s: %s states %s as fixed text; it equals %s[%d] = %r, which a student's "
                                    "edit (%s) changes" % (path, where, text, stage, k, v, what))
                    break
                else:
                    continue
                break
    return problems, skipped, runs


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    tracer, paths = sys.argv[1], sys.argv[2:]
    problems, skipped, runs = [], [], 0
    with tempfile.TemporaryDirectory() as tmp:
        for path in paths:
            p, s, r = check_lesson(tracer, path, tmp)
            problems += sorted(set(p), key=p.index)
            skipped += s
            runs += r
    for s in skipped:
        print("not perturbed (the edited lesson does not run): " + s)
    for p in problems:
        print("STALE: " + p)
    print("%d lessons, %d perturbed runs, %d perturbations skipped, %d stale numbers"
          % (len(paths), runs, len(skipped), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
