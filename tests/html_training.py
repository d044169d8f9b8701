#!/usr/bin/env python3
"""The page of a lesson that trains shows each trained given before training, as the text trace
and the JSON trace do: for every given of the JSON's training.trained, the page has a section
"NAME before training" whose cells hold, in their exact values (the tooltips), the values of
training.trained[].before, in order; and the given's own stage further down holds the trained
values, which differ from them.

Usage: html_training.py TRACER LESSON.yaml (a lesson small enough for every value to be shown)."""
import html
import json
import re
import subprocess
import sys


def run(tracer, *args):
    p = subprocess.run([tracer, *args], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"FAIL: the tracer exited {p.returncode}: {p.stderr}")
    return p.stdout


def flat(values):
    return [y for v in values for y in flat(v)] if isinstance(values, list) else [values]


def cells(section):
    """The exact values of a section's table cells, in reading order."""
    return [float(html.unescape(t)) for t in re.findall(r'<td title="([^"]*)"', section)]


def main():
    tracer, lesson = sys.argv[1], sys.argv[2]
    trace = json.loads(run(tracer, "--format", "json", lesson))
    page = run(tracer, "--format", "html", lesson)
    failures, checked = [], 0
    for g in trace["training"]["trained"]:
        name = re.escape(html.escape(g["name"]))
        before = re.search(r'<section class="given before" data-name="%s">(.*?)</section>' % name, page, re.S)
        after = re.search(r'<section class="stage given" id="stage-\d+" data-name="%s"[^>]*>(.*?)</section>' % name,
                          page, re.S)
        if not before or not after:
            failures.append(f"{g['name']}: no section before training{'' if after else ', or no stage of its own'}")
            continue
        want = flat(g["before"])
        got = cells(before.group(1))
        if got != want:
            failures.append(f"{g['name']} before training: the page shows {got[:4]}..., the JSON {want[:4]}...")
        trained = next(flat(s["values"]) for s in trace["stages"] if s["kind"] == "given" and s["name"] == g["name"])
        if cells(after.group(1)) != trained or trained == want:
            failures.append(f"{g['name']}: its stage does not show the trained values, different from the first")
        if "before training" not in before.group(1):
            failures.append(f"{g['name']}: the section does not say 'before training'")
        checked += len(want)
    for f in failures:
        print("FAIL", f)
    if not failures:
        print(f"ok  {len(trace['training']['trained'])} trained givens, {checked} values before training on the page")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
