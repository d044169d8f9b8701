#!/usr/bin/env python3
"""The tracer's cases as data: walk a folder, run every case in it, report each through TAP.

Usage (from the project root):
    tests/cases.py KIND TRACER [FOLDER] [NAME...] [--regenerate] [--jobs N]

A case is a few files named alike in its folder; adding a case is adding its files, and no
list anywhere names it. NAME... runs only those cases; --regenerate writes what each case
printed as its expected output (read the diff like a code change). The kinds:

  golden   lessons/NAME.yaml traced with --check against golden/NAME.txt; a lesson with no
           golden file must be one that downloads its files (a top-level `download:` key)
  lint     lessons/NAME.yaml with --lint: no stale number, no warning (status 0)
  errors   FOLDER/NAME.stderr: the exact standard error of the tracer run on FOLDER/NAME.yaml,
           or with the arguments of FOLDER/NAME.args (one per line; NAME=VALUE lines before
           the first set the environment; @DIR@ is the folder, @WEIGHTS@ $TRACER_WEIGHTS);
           FOLDER/NAME.status the exit status (1 when absent); FOLDER/NAME.stdin its input.
           Standard output must stay empty unless the status is 0: a broken lesson never
           prints half a trace. In the reference build (TRACER_BUILD=reference),
           FOLDER/reference/NAME.stderr (and .status) replace them where there is one.
  output   FOLDER/NAME.args (one per line, NAME=VALUE lines first as above): the exact
           standard output in FOLDER/NAME.txt, the status in FOLDER/NAME.status (0 when
           absent), the input FOLDER/NAME.in; NO_COLOR, COLORTERM and COLUMNS are cleared
  lintcase FOLDER/NAME.yaml with --lint: FOLDER/NAME.txt, FOLDER/NAME.stderr and
           FOLDER/NAME.status (1 when absent)
  traced   FOLDER/NAME.txt: the trace of FOLDER/NAME.yaml, compared with --check
  strict   FOLDER/NAME.yaml: every claim holds (--strict) and it lints clean (--lint)
  html     golden/html/NAME.html: the web page of lessons/NAME.yaml

Every case runs in a process of its own, several at once (--jobs, or $TRACER_TEST_JOBS, or
the number of processors); a lesson that takes another's trained weights (trained:) runs after
the others, so that the training it needs is cached once. A case that runs past
$TRACER_CASE_TIMEOUT seconds (300) is stopped and fails by name. The exit status is 0 only when every case passed.
"""
import argparse
import concurrent.futures
import difflib
import os
import re
import subprocess
import sys
import tempfile

ENV_LINE = re.compile(r"[A-Z][A-Za-z0-9_]*=")


def read_args(path, substitute=None):
    """The arguments of an .args file, one per line, and the NAME=VALUE lines before them."""
    env, args = {}, []
    # The bytes as they are: an argument may hold invalid UTF-8 on purpose, and
    # surrogateescape gives the same bytes back to the process.
    with open(path, encoding="utf-8", errors="surrogateescape", newline="") as f:
        text = f.read()
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for line in lines:
        if not args and ENV_LINE.match(line):
            name, value = line.split("=", 1)
            env[name] = value
        else:
            args.append(substitute(line) if substitute else line)
    return env, args


def diff(want_path, got, label):
    try:
        with open(want_path, "rb") as f:
            want = f.read()
    except FileNotFoundError:
        return [f"{want_path} is missing"]
    if want == got:
        return []
    lines = list(difflib.unified_diff(want.decode("utf-8", "replace").splitlines(),
                                      got.decode("utf-8", "replace").splitlines(),
                                      want_path, label, lineterm="", n=2))
    return [f"{label} differs from {want_path}:"] + lines[:60]


def status_in(path, default):
    try:
        with open(path, encoding="utf-8") as f:
            return int(f.read().strip())
    except FileNotFoundError:
        return default


DOWNLOADS = "SKIP its files are downloaded by the learner; the gpt2 suite runs it on a small model"


def downloads(lesson):
    """Whether a lesson reads files the learner downloads (a top-level download: key)."""
    with open(lesson, encoding="utf-8", errors="replace") as f:
        return any(line.startswith("download:") for line in f)


class Runner:
    def __init__(self, tracer, regenerate):
        self.tracer = tracer
        self.regenerate = regenerate
        self.timeout = float(os.environ.get("TRACER_CASE_TIMEOUT", "300"))

    def run(self, args, env_set=None, env_unset=(), stdin_path=None):
        env = dict(os.environ)
        for name in env_unset:
            env.pop(name, None)
        env.update(env_set or {})
        # Input comes through a pipe, as from `cat FILE |`: the tracer must not be able to
        # read it twice or find its size.
        data = None
        if stdin_path:
            with open(stdin_path, "rb") as f:
                data = f.read()
        try:
            p = subprocess.run([self.tracer, *args], input=data, stdin=None if stdin_path else subprocess.DEVNULL,
                               capture_output=True, env=env, timeout=self.timeout)
        except subprocess.TimeoutExpired:
            return None, b"", b""
        return p.returncode, p.stdout, p.stderr

    def expect(self, problems, status, want_status, what=""):
        if status is None:
            problems.append(f"still running after {self.timeout:.0f} s: stopped")
            return False
        if status != want_status:
            problems.append(f"exit status {status}, expected {want_status}{what}")
        return True

    def write(self, path, data):
        with open(path, "wb") as f:
            f.write(data)

    # ---------------------------------------------------------------- the kinds

    def golden(self, folder, name):
        lesson, golden = f"lessons/{name}.yaml", f"golden/{name}.txt"
        if not os.path.exists(golden):
            if downloads(lesson):
                return DOWNLOADS
            return [f"{lesson} has no golden file {golden}: write it with --update-golden and check it by hand"]
        if self.regenerate:
            status, out, err = self.run(["--update-golden", lesson])
            return [err.decode("utf-8", "replace")] if status != 0 else []
        status, out, err = self.run(["--check", lesson])
        problems = []
        if self.expect(problems, status, 0) and status != 0:
            problems += (out + err).decode("utf-8", "replace").splitlines()[:60]
        return problems

    def lint(self, folder, name):
        if downloads(f"lessons/{name}.yaml"):
            return DOWNLOADS
        status, out, err = self.run(["--lint", f"lessons/{name}.yaml"], {"NO_COLOR": "1"})
        problems = []
        if self.expect(problems, status, 0) and status != 0:
            problems += (out + err).decode("utf-8", "replace").splitlines()[:60]
        return problems

    def errors(self, folder, name):
        base = os.path.join(folder, name)
        expected = base
        if os.environ.get("TRACER_BUILD") == "reference" and os.path.exists(os.path.join(folder, "reference", name + ".stderr")):
            expected = os.path.join(folder, "reference", name)
        want_status = status_in(expected + ".status", 1)
        env = {"NO_COLOR": "1"}
        if os.path.exists(base + ".args"):
            weights = os.environ.get("TRACER_WEIGHTS", "")
            case_env, args = read_args(base + ".args", lambda a: a.replace("@DIR@", folder).replace("@WEIGHTS@", weights))
            env.update(case_env)
        else:
            args = [base + ".yaml"]
        stdin = base + ".stdin" if os.path.exists(base + ".stdin") else None
        status, out, err = self.run(args, env, stdin_path=stdin)
        if self.regenerate:
            self.write(expected + ".stderr", err)
            return []
        problems = []
        self.expect(problems, status, want_status)
        if out and want_status != 0:
            problems.append("stdout is not empty:")
            problems += out[:2000].decode("utf-8", "replace").splitlines()
        problems += diff(expected + ".stderr", err, "stderr")
        return problems

    def output(self, folder, name):
        base = os.path.join(folder, name)
        env, args = read_args(base + ".args")
        stdin = base + ".in" if os.path.exists(base + ".in") else None
        status, out, err = self.run(args, env, ("NO_COLOR", "COLORTERM", "COLUMNS"), stdin)
        if self.regenerate:
            self.write(base + ".txt", out)
            return []
        problems = []
        if self.expect(problems, status, status_in(base + ".status", 0), "; stderr:") and problems:
            problems += err[:2000].decode("utf-8", "replace").splitlines()
        problems += diff(base + ".txt", out, "stdout")
        return problems

    def lintcase(self, folder, name):
        base = os.path.join(folder, name)
        status, out, err = self.run(["--lint", base + ".yaml"], {"NO_COLOR": "1"})
        if self.regenerate:
            self.write(base + ".txt", out)
            self.write(base + ".stderr", err)
            return []
        problems = []
        self.expect(problems, status, status_in(base + ".status", 1))
        return problems + diff(base + ".txt", out, "stdout") + diff(base + ".stderr", err, "stderr")

    def traced(self, folder, name):
        base = os.path.join(folder, name)
        if self.regenerate:
            status, out, err = self.run(["--update-golden", "--golden", base + ".txt", base + ".yaml"])
            return [err.decode("utf-8", "replace")] if status != 0 else []
        status, out, err = self.run(["--check", "--golden", base + ".txt", base + ".yaml"])
        problems = []
        if self.expect(problems, status, 0) and status != 0:
            problems += (out + err).decode("utf-8", "replace").splitlines()[:60]
        return problems

    def strict(self, folder, name):
        lesson = os.path.join(folder, name + ".yaml")
        problems = []
        for option in ("--strict", "--lint"):
            status, out, err = self.run([option, lesson], {"NO_COLOR": "1"})
            if self.expect(problems, status, 0, f" with {option}") and status != 0:
                problems += err.decode("utf-8", "replace").splitlines()[:30]
        return problems

    def html(self, folder, name):
        status, out, err = self.run(["--format", "html", f"lessons/{name}.yaml"])
        if self.regenerate:
            self.write(f"golden/html/{name}.html", out)
            return []
        problems = []
        self.expect(problems, status, 0)
        return problems + diff(f"golden/html/{name}.html", out, "the page")


# What names the cases of each kind, in its folder.
CASES = {
    "golden": ("lessons", ".yaml"),
    "lint": ("lessons", ".yaml"),
    "errors": (None, ".stderr"),
    "output": (None, ".args"),
    "lintcase": (None, ".yaml"),
    "traced": (None, ".txt"),
    "strict": (None, ".yaml"),
    "html": ("golden/html", ".html"),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("kind", choices=sorted(CASES))
    ap.add_argument("tracer")
    ap.add_argument("rest", nargs="*", help="FOLDER (for the kinds that take one), then NAME...")
    ap.add_argument("--regenerate", action="store_true")
    ap.add_argument("--jobs", type=int, default=int(os.environ.get("TRACER_TEST_JOBS", "0")) or os.cpu_count() or 1)
    args = ap.parse_args()
    fixed, suffix = CASES[args.kind]
    rest = list(args.rest)
    folder = fixed if fixed else (rest.pop(0) if rest else ap.error(f"{args.kind} needs a FOLDER"))
    names = sorted(f[: -len(suffix)] for f in os.listdir(folder) if f.endswith(suffix) and not f.startswith("."))
    if rest:
        unknown = [n for n in rest if n not in names]
        if unknown:
            sys.exit(f"no such case in {folder}: {', '.join(unknown)}")
        names = rest
    if not names:
        print(f"1..0 # SKIP no cases in {folder}")
        return 0
    # A lesson in a folder of cases that is neither a case nor read by one would never run.
    stray = []
    if args.kind in ("errors", "output") and not rest:
        named = set(names)
        read = "\n".join(open(os.path.join(folder, n + ".args"), encoding="utf-8", errors="replace").read()
                         for n in sorted(f[:-5] for f in os.listdir(folder) if f.endswith(".args")))
        stray = [f for f in sorted(os.listdir(folder)) if f.endswith((".yaml", ".yml"))
                 and f.rsplit(".", 1)[0] not in named and f not in read]
    runner = Runner(args.tracer, args.regenerate)
    check = getattr(runner, args.kind)
    print(f"1..{len(names) + bool(stray)}", flush=True)
    failed = 0
    # A lesson whose givens take another's trained weights (trained: LESSON) waits until the
    # others have run, so that the training it needs is in the cache once, not trained by
    # several cases at the same time.
    def takes_trained(name):
        path = os.path.join(folder, name + ".yaml")
        return os.path.exists(path) and re.search(r"\btrained:[ \t]*[^\s\[]", open(path, encoding="utf-8",
                                                                                   errors="replace").read())
    later = [n for n in names if takes_trained(n)]
    results = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for wave in ([n for n in names if n not in later], later):
            results.update(zip(wave, pool.map(lambda n: check(folder, n), wave)))
        for i, (name, problems) in enumerate(((n, results[n]) for n in names), 1):
            if isinstance(problems, str):
                print(f"ok {i} - {name} # {problems}", flush=True)
                continue
            if problems:
                failed += 1
                print(f"not ok {i} - {name}")
                for line in problems:
                    print("# " + line)
                sys.stdout.flush()
            else:
                print(f"ok {i} - {name}", flush=True)
    if stray:
        failed += 1
        print(f"not ok {len(names) + 1} - every lesson in {folder} is a case or read by one")
        for f in stray:
            print(f"# {folder}/{f} has no {suffix} file and no case reads it: it never runs")
    if failed:
        print(f"# {failed} of {len(names)} cases of {folder} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
