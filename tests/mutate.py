#!/usr/bin/env python3
"""Mutation testing of the tracer: would the tests notice a small wrong change to tracer/?

    tests/mutate.py [--sample N] [--seed S] [--jobs J] [--line L] [--list] FILE...

FILE is a source of the tracer (quiz.c, tracer/judge/quiz.c). Every place in it where one small
change still compiles is a mutant:

  * a relational operator one step off or turned round: < <=, > >=, == !=
  * + and - swapped, * and / swapped (binary operators only)
  * && and || swapped
  * a whole-number constant one more or one less (0 becomes 1)
  * a statement on a line of its own (a call or an assignment) deleted, left as ';'

The script copies the working tree (committed or not) into a temporary folder, sets up a
build there, checks that the suites pass unmutated, then for --sample mutants of each file
(chosen with --seed, so a run can be repeated) writes the change into the copy, rebuilds and
runs the unit, golden, crosscheck, errors and html suites (not the browser, install or watch
tests) until one test fails: the mutant is killed. A mutant no test kills survives. Nothing outside
the temporary folder is written, so Ctrl-C leaves the tree as it was; the folder is removed on
the way out.

The tests run fail-fast: first those that name the mutated module (test_quiz for quiz.c), then
the rest, quickest first (as timed on the unmutated copy). A test that runs five times as long
as it did unmutated, or hangs, counts as failing: the mutant made the program loop.

Not mutated: preprocessor lines, comments, strings, array sizes in declarations, and the
conditions of ASSERT and static_assert, which state what no input reaches (a weakened one
cannot be noticed). Mutants known to change nothing anyone can observe are listed in
EQUIVALENT below, each with the reason; they are counted, not run.

The last result is in doc/internals.md, "Mutation testing".
"""

import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SUITES = ("unit", "golden", "crosscheck", "errors", "html")
# Left out: it builds every page in a browser (50 s) to check what the html golden files
# already check byte for byte, and it is skipped where no browser is installed.
LEFT_OUT = ("html pages in a browser",)

# Mutants that change nothing observable, found by reading the code after a run: the file,
# the source line (stripped of its indentation; followed by "\n" and the next line where the
# line alone is written the same elsewhere in the file), which occurrence of the original text on that
# line (0 for the first), the original and the replacement, and why no test can notice.
EQUIVALENT = [
    # The second " = " of a work line is looked for from just past the first. Every op's work
    # line has an operand or a number right after its first " = " (tracer/ops), never a space
    # or an '=', so starting the search a character earlier or later finds the same one.
    ("quiz.c", 'const char *second = first ? strstr(first + 3, " = ") : NULL;', 0, "3", "2",
     "the work's formula never starts with '= ', so no second ' = ' starts at first + 2"),
    ("quiz.c", 'const char *second = first ? strstr(first + 3, " = ") : NULL;', 0, "3", "4",
     "the work's formula never starts with a space, so no second ' = ' starts at first + 3"),
    ("quiz.c", "q->work = arena_array(quiz->arena, n_work ? n_work : 1, sizeof(char *));", 0, "1", "0",
     "arena_alloc gives an aligned slot for 0 bytes as for 8, and no work is stored when there is none"),
    ("format.c", "smallest = a < smallest ? a : smallest;", 0, "<", "<=",
     "on a tie a and smallest are the same double (both |x|, neither 0), so either is taken"),
    ("format.c", "largest = a > largest ? a : largest;", 0, ">", ">=",
     "on a tie a and largest are the same double (both |x|, neither 0), so either is taken"),
    # A backward pass counts and files the uses of each node on its way: node 0 comes first in
    # the plan, so it has no arguments (an operation's are earlier nodes) and passes nothing.
    ("backward.c", "for (size_t u = 0; u <= y; u++) {", 0, "0", "1",
     "node 0 has no arguments, so starting at node 1 counts and files the same uses"),
    # The running sum that turns counts of uses into offsets: count[0] is never incremented
    # (a use of node v is counted at v + 1), so adding it to count[1] adds 0.
    ("backward.c", "for (size_t v = 0; v < n; v++)\ncount[v + 1] += count[v];", 0, "0", "1",
     "count[0] stays 0, so the running sum may start at v = 1"),
]


# ---------------------------------------------------------------- reading C

TOKEN = re.compile(
    r"""(?P<space>\s+)
      | (?P<comment>//[^\n]*|/\*.*?\*/)
      | (?P<string>"(?:\\.|[^"\\\n])*")
      | (?P<char>'(?:\\.|[^'\\\n])*')
      | (?P<number>\.?[0-9](?:[eEpP][+-]|[0-9A-Za-z_.])*)
      | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
      | (?P<punct>\.\.\.|<<=|>>=|->|\+\+|--|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&|^]=|\#\#|[^\s])
    """,
    re.S | re.X,
)

TYPE_WORDS = {
    "void", "char", "short", "int", "long", "float", "double", "signed", "unsigned", "bool",
    "const", "volatile", "static", "extern", "struct", "enum", "union", "restrict", "inline",
}
KEYWORDS = TYPE_WORDS | {
    "return", "case", "sizeof", "if", "else", "while", "for", "do", "switch", "goto", "break",
    "continue", "default", "typedef",
}


def tokens(text):
    """The tokens of a C source as (kind, text, offset); preprocessor lines are left out."""
    out = []
    pos = 0
    line_start = True
    while pos < len(text):
        if line_start:
            m = re.match(r"[ \t]*#(?:[^\n\\]|\\.)*", text[pos:], re.S)
            if m:
                pos += m.end()
                continue
        m = TOKEN.match(text, pos)
        kind = m.lastgroup
        if kind == "space":
            line_start = "\n" in m.group()
        elif kind != "comment":
            out.append((kind, m.group(), pos))
            line_start = False
        pos = m.end()
    return out


def is_type_name(tok):
    kind, word, _ = tok
    if kind != "ident":
        return False
    # CamelCase names are the tracer's types (StrBuf, Tensor); size_t and its kin end in _t.
    return word in TYPE_WORDS or word.endswith("_t") or (word[0].isupper() and any(c.islower() for c in word))


def operand_end(tok):
    """Whether a token can end an operand, so that an operator after it is binary."""
    kind, word, _ = tok
    if kind in ("number", "string", "char"):
        return True
    if kind == "ident":
        return word not in KEYWORDS and not is_type_name(tok)
    return word in (")", "]")


def guarded_spans(toks):
    """Token index ranges inside ASSERT(...) and static_assert(...)."""
    spans = []
    for i, (kind, word, _) in enumerate(toks):
        if kind == "ident" and word in ("ASSERT", "static_assert", "_Static_assert") and i + 1 < len(toks) \
                and toks[i + 1][1] == "(":
            depth = 0
            for j in range(i + 1, len(toks)):
                depth += toks[j][1] == "("
                depth -= toks[j][1] == ")"
                if depth == 0:
                    spans.append((i, j))
                    break
    return spans


def declares(toks, i):
    """Whether the name at token i is declared there: the statement it stands in starts with a
    type and i is not inside parentheses (char num[64], exact[64]; not f(a, x[1]))."""
    depth = 0
    for j in range(i - 1, -1, -1):
        word = toks[j][1]
        if word in (")", "]"):
            depth += 1
        elif word in ("(", "["):
            if depth == 0:
                return False
            depth -= 1
        elif word in (";", "{", "}") and depth == 0:
            return is_type_name(toks[j + 1])
    return is_type_name(toks[0])


SWAPS = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "==",
         "+": "-", "-": "+", "*": "/", "/": "*", "&&": "||", "||": "&&"}
STATEMENT = re.compile(r"^(\s*)([A-Za-z_][\w.\->\[\] ]*(?:\(.*\)|\s*(?:[-+*/|&]?=|\+\+|--).*));\s*$")


def mutants_of(path, text):
    """Every mutant of one file: dicts with the offset, the original and replacement text."""
    toks = tokens(text)
    guarded = guarded_spans(toks)
    found = []
    for i, (kind, word, off) in enumerate(toks):
        if any(a <= i <= b for a, b in guarded):
            continue
        prev = toks[i - 1] if i else ("punct", ";", 0)
        if kind == "punct" and word in SWAPS:
            if word in "+-*/" and not operand_end(prev):
                continue  # unary minus, a pointer's star
            found.append((off, word, SWAPS[word]))
        elif kind == "number" and re.fullmatch(r"[0-9]+[uUlLzZ]*", word) and not word.startswith("0x"):
            digits = re.match(r"[0-9]+", word).group()
            suffix = word[len(digits):]
            # An array's size in a declaration (char buf[64]) only sets room.
            if prev[1] == "[" and i + 1 < len(toks) and toks[i + 1][1] == "]" and declares(toks, i - 2):
                continue
            n = int(digits)
            if digits.startswith("0") and len(digits) > 1:
                continue  # octal
            found.append((off, word, str(n + 1) + suffix))
            if n > 0:
                found.append((off, word, str(n - 1) + suffix))
    # Statements on a line of their own: a call or an assignment, complete on that line.
    inside = {off for a, b in guarded for _, _, off in toks[a:b + 1]}
    code_lines = {text.count("\n", 0, off) for kind, _, off in toks if kind != "comment"}
    offset = 0
    for number, line in enumerate(text.split("\n")):
        m = STATEMENT.match(line)
        if m and number in code_lines and line.count("(") == line.count(")") and \
                not re.match(r"\s*(return|break|continue|goto|case|default|typedef)\b", line) and \
                not re.match(r"\s*(const\s+)?[A-Za-z_]\w*[\s*]+[A-Za-z_]\w*\s*(=|\[|;)", line) and \
                not any(offset <= o < offset + len(line) for o in inside) and '"' not in line.split("(")[0]:
            stmt = line[len(m.group(1)):]
            found.append((offset + len(m.group(1)), stmt, ";"))
        offset += len(line) + 1
    result = []
    for off, old, new in sorted(found):
        line_no = text.count("\n", 0, off) + 1
        line_start = text.rfind("\n", 0, off) + 1
        line_end = text.find("\n", off)
        line = text[line_start:line_end if line_end >= 0 else len(text)]
        col = off - line_start
        occurrence = line[:col].count(old) if old != line[col:].rstrip() else 0
        next_end = text.find("\n", line_end + 1) if line_end >= 0 else -1
        following = text[line_end + 1:next_end if next_end >= 0 else len(text)] if line_end >= 0 else ""
        result.append({"file": path.name, "line": line_no, "col": col + 1, "offset": off, "old": old, "new": new,
                       "source": line.strip(), "next": following.strip(), "occurrence": occurrence})
    return result


def equivalent_reason(m):
    for file, line, occurrence, old, new, reason in EQUIVALENT:
        # "line\nnext line" where the line alone is written the same elsewhere in the file
        source = m["source"] + "\n" + m["next"] if "\n" in line else m["source"]
        if (file, line, occurrence, old, new) == (m["file"], source, m["occurrence"], m["old"], m["new"]):
            return reason
    return None


def mutated(text, m):
    return text[:m["offset"]] + m["new"] + text[m["offset"] + len(m["old"]):]


def describe(m):
    old = m["old"] if len(m["old"]) < 40 else m["old"][:37] + "..."
    return f'{m["file"]}:{m["line"]}:{m["col"]} {old} -> {m["new"]}'


# ---------------------------------------------------------------- building and testing

class Workspace:
    """A copy of the tree with its own build, in a temporary folder."""

    def __init__(self, keep):
        self.dir = Path(tempfile.mkdtemp(prefix="tracer-mutants-"))
        self.src = self.dir / "src"
        self.build = self.src / "build"  # where some tests look for the tracer: build/tracer/tracer
        self.keep = keep
        self.running = []

    def copy_tree(self):
        files = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                               check=True, capture_output=True).stdout.decode().split("\0")
        for name in filter(None, files):
            source, target = ROOT / name, self.src / name
            if source.is_symlink() or source.is_file():
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, target, follow_symlinks=False)  # a lesson may be a dangling link on purpose

    def setup(self):
        run = subprocess.run(["meson", "setup", str(self.build), str(self.src)], capture_output=True, text=True)
        if run.returncode != 0:
            sys.exit("meson setup failed in the copy:\n" + run.stdout + run.stderr)

    def compile(self):
        return subprocess.run(["ninja", "-C", str(self.build)], capture_output=True, text=True).returncode == 0

    def tests(self, suites):
        info = subprocess.run(["meson", "introspect", "--tests", str(self.build)], check=True, capture_output=True,
                              text=True).stdout
        wanted = {"tracer:" + s for s in suites}
        return [t for t in json.loads(info) if wanted & set(t["suite"]) and t["name"] not in LEFT_OUT]

    def start(self, test):
        env = dict(os.environ, **test["env"])
        proc = subprocess.Popen(test["cmd"], cwd=test["workdir"] or str(self.build), env=env,
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)
        self.running.append(proc)
        return proc

    def stop(self, proc):
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
        if proc in self.running:
            self.running.remove(proc)

    def close(self):
        for proc in list(self.running):
            self.stop(proc)
        if self.keep:
            print(f"the copy is kept in {self.dir}")
        else:
            shutil.rmtree(self.dir, ignore_errors=True)


def run_tests(ws, tests, jobs, limits, every=False):
    """Run tests (in order, up to jobs at a time) until one fails, or with every all of them.
    Returns the failures, each (name, how), and the time each test took."""
    queue = list(tests)
    active = []  # (proc, test, started)
    took = {}
    failed = []
    while (queue or active) and (every or not failed):
        while queue and len(active) < jobs:
            test = queue.pop(0)
            active.append((ws.start(test), test, time.monotonic()))
        time.sleep(0.02)
        for item in list(active):
            proc, test, started = item
            elapsed = time.monotonic() - started
            status = proc.poll()
            if status is None and elapsed > limits.get(test["name"], test["timeout"]):
                ws.stop(proc)
                active.remove(item)
                failed.append((test["name"], "ran out of time"))
            elif status is not None:
                ws.stop(proc)
                active.remove(item)
                took[test["name"]] = elapsed
                if status not in (0, 77):
                    failed.append((test["name"], f"exit status {status}"))
    for proc, _, _ in active:
        ws.stop(proc)
    return failed, took


def order_for(module, tests, took):
    """The tests that name the module first, then the quickest."""
    def names_module(t):
        return module in t["name"].split() or any(Path(c).name == "test_" + module for c in t["cmd"])
    return sorted(tests, key=lambda t: (not names_module(t), took.get(t["name"], 0)))


# ---------------------------------------------------------------- the run

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+", help="sources under tracer/ (quiz.c or tracer/judge/quiz.c)")
    ap.add_argument("--sample", type=int, default=0, help="mutants of each file (default: all)")
    ap.add_argument("--seed", type=int, default=1, help="the sample's seed (default 1)")
    ap.add_argument("--jobs", type=int, default=1, help="tests run at a time (default 1)")
    ap.add_argument("--line", type=int, action="append", help="only mutants on this line (repeatable)")
    ap.add_argument("--list", action="store_true", help="list the mutants and stop")
    ap.add_argument("--keep", action="store_true", help="keep the temporary copy")
    ap.add_argument("--json", help="write every mutant's result to this file")
    ap.add_argument("--suites", default=",".join(SUITES), help=f"the suites run (default {','.join(SUITES)})")
    args = ap.parse_args()

    chosen = []
    for name in args.files:
        found = [ROOT / name] if (ROOT / name).is_file() else sorted((ROOT / "tracer").glob("**/" + name))
        if len(found) != 1:
            sys.exit(f"no such source under tracer/: {name}" if not found else f"{name} is ambiguous: {found}")
        path = found[0]
        relative = path.relative_to(ROOT)
        all_of = mutants_of(path, path.read_text())
        for m in all_of:
            m["path"] = str(relative)
        if args.line:
            all_of = [m for m in all_of if m["line"] in args.line]
        pick = all_of
        if args.sample and args.sample < len(all_of):
            pick = sorted(random.Random(f"{args.seed}:{path.name}").sample(all_of, args.sample),
                          key=lambda m: m["offset"])
        print(f"{relative}: {len(all_of)} mutants, {len(pick)} chosen")
        chosen += pick
    if args.list:
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # | head
        for m in chosen:
            reason = equivalent_reason(m)
            print(describe(m) + (f"  (equivalent: {reason})" if reason else ""))
        return 0

    ws = Workspace(args.keep)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # even when started in the background
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))
    results = []
    try:
        print(f"copying the tree to {ws.dir} and building it")
        ws.copy_tree()
        ws.setup()
        if not ws.compile():
            sys.exit("the unmutated copy does not build")
        tests = ws.tests(args.suites.split(","))
        print(f"running the {len(tests)} tests of the suites {args.suites} unmutated")
        start = time.monotonic()
        failed, took = run_tests(ws, tests, args.jobs, {}, every=True)
        if failed:
            sys.exit("the unmutated copy fails, fix that first:\n" + "".join(f"  {n} ({how})\n" for n, how in failed))
        print(f"  all pass in {time.monotonic() - start:.0f} s")
        limits = {t["name"]: max(10.0, 5 * took.get(t["name"], t["timeout"])) for t in tests}
        originals = {}
        for k, m in enumerate(chosen, 1):
            target = ws.src / m["path"]
            original = originals.setdefault(m["path"], target.read_text())
            label = f"[{k}/{len(chosen)}] {describe(m)}"
            reason = equivalent_reason(m)
            if reason:
                m["result"] = "equivalent"
                print(f"{label}: equivalent ({reason})", flush=True)
                results.append(m)
                continue
            target.write_text(mutated(original, m))
            try:
                began = time.monotonic()
                if not ws.compile():
                    m["result"] = "does not compile"
                else:
                    module = Path(m["path"]).stem
                    failed, _ = run_tests(ws, order_for(module, tests, took), args.jobs, limits)
                    m["result"] = "killed" if failed else "survived"
                    if failed:
                        m["by"] = f"{failed[0][0]} ({failed[0][1]})"
                m["seconds"] = round(time.monotonic() - began, 1)
            finally:
                target.write_text(original)
            print(f"{label}: {m['result']}" + (f" by {m['by']}" if "by" in m else "") + f" ({m['seconds']} s)",
                  flush=True)
            results.append(m)
    except KeyboardInterrupt:
        print("\ninterrupted: the results so far")
    finally:
        ws.close()
    report(results)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n")
    return 0


def report(results):
    print(f"\n{'file':<28} mutants  killed  survived  equivalent  not compiled  killed or equivalent")
    by_file = {}
    for m in results:
        by_file.setdefault(m["path"], []).append(m)
    for path, ms in by_file.items():
        count = {r: sum(m["result"] == r for m in ms) for r in ("killed", "survived", "equivalent", "does not compile")}
        viable = len(ms) - count["does not compile"]
        score = 100.0 * (count["killed"] + count["equivalent"]) / viable if viable else 100.0
        print(f"{path:<28} {len(ms):>7} {count['killed']:>7} {count['survived']:>9} {count['equivalent']:>11}"
              f" {count['does not compile']:>13} {score:>20.0f}%")
    survivors = [m for m in results if m["result"] == "survived"]
    if survivors:
        print("\nsurvivors:")
        for m in survivors:
            print(f"  {describe(m)}\n      {m['source']}")


if __name__ == "__main__":
    sys.exit(main())
