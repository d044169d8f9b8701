#!/usr/bin/env python3
"""Run every example of the documentation, and compare the output it shows.

Usage: examples.py [--not-run N] TRACER MARKDOWN...   run the examples of each file
       examples.py --self-test TRACER                   check that this checker catches broken examples

With --not-run N, exactly N blocks must be marked not-run: one more is a change to state
(doc/internals.md lists them), not one to slip in.

Each Markdown file runs in a folder of its own, holding copies of lessons/ and golden/, a link
to tests/, and build/tracer/tracer; `tracer` is on PATH and TRACER_COURSE is the checkout, so
`tracer 02` works. NO_COLOR=1 and COLUMNS=80, as in a pipe. The blocks of one file run in
order in the same folder, so a lesson written by one block is traced by the next.

A fenced block's first word is its language; the words after it say what to do:

    ```sh example            a shell script (sh -e), which must exit 0; or, when lines start
                             with "$ ", a transcript: each "$ command" is run and what it
                             prints (stdout and stderr) must be the lines under it, where a
                             line "..." stands for any number of lines
    ```sh example exit=1     the last command (or the script) must exit with this status
    ```sh not-run            not run (installs packages, or takes minutes): kept few
    ```yaml example          a whole lesson, traced (exit 0); file=NAME also saves it as NAME
                             for the blocks after it, exit=N expects that status
    ```python example        a script run by /usr/bin/python3 in the folder (exit 0)
    ```sh example fast       what the tracer with its fast layer prints (it frees values the
                             trace does not print, and says so): left out when TRACER_BUILD
                             is reference (-Dfast=false), which keeps every value

Every sh, shell, bash, console, yaml or python block must say `example` or `not-run` (yaml
only `example`), so none is left unchecked by mistake; json and text blocks are not run.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

RUN_LANGS = {"sh", "shell", "bash", "console", "yaml", "python"}
TIMEOUT = 120


class Block:
    def __init__(self, path, line, lang, words, attrs, text):
        self.path, self.line, self.lang, self.words, self.attrs, self.text = path, line, lang, words, attrs, text

    def where(self):
        return f"{self.path}:{self.line}"


def blocks(path):
    """The fenced blocks of a Markdown file: (line of the fence, info words, text)."""
    found, lines = [], open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        m = re.match(r"^(\s*)(```+|~~~+)(.*)$", lines[i])
        if not m:
            i += 1
            continue
        indent, fence, info = len(m.group(1)), m.group(2), m.group(3).split()
        body, j = [], i + 1
        while j < len(lines) and not re.match(r"^\s*" + re.escape(fence) + r"\s*$", lines[j]):
            body.append(lines[j][indent:] if lines[j][:indent].strip() == "" else lines[j])
            j += 1
        lang = info[0] if info else ""
        words = [w for w in info[1:] if "=" not in w]
        attrs = dict(w.split("=", 1) for w in info[1:] if "=" in w)
        found.append(Block(path, i + 1, lang, words, attrs, "\n".join(body) + "\n"))
        i = j + 1
    return found


def matches(expected, actual):
    """Lines equal (trailing spaces aside), where an expected line "..." takes any lines."""
    exp = [line.rstrip() for line in expected]
    act = [line.rstrip() for line in actual]

    def at(i, j):
        if i == len(exp):
            return j == len(act)
        if exp[i] == "...":
            return any(at(i + 1, k) for k in range(j, len(act) + 1))
        return j < len(act) and exp[i] == act[j] and at(i + 1, j + 1)

    return at(0, 0)


def transcript(text):
    """The commands of a transcript and the lines each must print."""
    commands, lines = [], text.rstrip("\n").split("\n")
    i = 0
    while i < len(lines):
        if not lines[i].startswith("$ "):
            return None if not commands else commands  # output before any command: not a transcript
        command = lines[i][2:]
        while command.endswith("\\") and i + 1 < len(lines):
            i += 1
            command += "\n" + lines[i]
        i += 1
        output = []
        while i < len(lines) and not lines[i].startswith("$ "):
            output.append(lines[i])
            i += 1
        commands.append((command, output))
    return commands


class Runner:
    def __init__(self, tracer, root):
        self.tracer, self.root = os.path.abspath(tracer), root
        self.failures, self.ran, self.not_run = [], 0, []

    def fail(self, block, message):
        self.failures.append(f"{block.where()}: {message}")

    def folder(self, tmp):
        work = os.path.join(tmp, "work")
        os.makedirs(os.path.join(work, "build", "tracer"))
        os.makedirs(os.path.join(tmp, "bin"))
        for name in ("lessons", "golden"):
            if os.path.isdir(os.path.join(self.root, name)):
                shutil.copytree(os.path.join(self.root, name), os.path.join(work, name))
        if os.path.isdir(os.path.join(self.root, "tests")):
            os.symlink(os.path.join(self.root, "tests"), os.path.join(work, "tests"))
        os.symlink(self.tracer, os.path.join(work, "build", "tracer", "tracer"))
        os.symlink(self.tracer, os.path.join(tmp, "bin", "tracer"))
        env = {k: v for k, v in os.environ.items() if k not in ("COLORTERM", "LINES", "TRACER_MEMORY")}
        env.update(PATH=os.path.join(tmp, "bin") + os.pathsep + env.get("PATH", "/usr/bin:/bin"),
                   TRACER_COURSE=self.root, NO_COLOR="1", COLUMNS="80", HOME=tmp, LC_ALL="C.UTF-8")
        return work, env

    def run(self, argv, work, env, stdin=None):
        try:
            p = subprocess.run(argv, cwd=work, env=env, input=stdin, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            return None, f"took more than {TIMEOUT} s"
        return p.returncode, p.stdout.decode("utf-8", "replace")

    def check_status(self, block, what, status, output, last=True):
        want = int(block.attrs.get("exit", "0")) if last else 0
        if status is None:
            self.fail(block, f"{what}: {output}")
        elif status != want:
            self.fail(block, f"{what} exited {status}, not {want}; it printed:\n" + indent(output))
        else:
            return True
        return False

    def block(self, block, work, env):
        if block.lang not in RUN_LANGS:
            return
        if "not-run" in block.words and block.lang != "yaml":
            self.not_run.append(block)
            return
        if "example" not in block.words:
            self.fail(block, f"a {block.lang} block that is neither `example` nor `not-run`: "
                      "mark it, so that it is run (or say why it is not)")
            return
        if "fast" in block.words and os.environ.get("TRACER_BUILD") == "reference":
            return
        self.ran += 1
        if block.lang == "yaml":
            name = block.attrs.get("file", f"example_{block.line}.yaml")
            with open(os.path.join(work, name), "w", encoding="utf-8") as f:
                f.write(block.text)
            status, output = self.run(["tracer", "--strict", name], work, env)
            self.check_status(block, f"tracer --strict {name}", status, output)
        elif block.lang == "python":
            status, output = self.run(["/usr/bin/python3", "-"], work, env, block.text.encode())
            self.check_status(block, "the script", status, output)
        else:
            commands = transcript(block.text)
            if commands is None:
                status, output = self.run(["sh", "-e", "-c", block.text], work, env)
                self.check_status(block, "the script", status, output)
                return
            for k, (command, expected) in enumerate(commands):
                status, output = self.run(["sh", "-c", command], work, env)
                if not self.check_status(block, f"$ {command}", status, output, k == len(commands) - 1):
                    return
                actual = output.rstrip("\n").split("\n") if output else []
                if not matches(expected, actual):
                    self.fail(block, f"$ {command}\nprints:\n{indent(output)}\nwhere the text shows:\n"
                              + indent("\n".join(expected)))
                    return

    def markdown(self, path):
        with tempfile.TemporaryDirectory() as tmp:
            work, env = self.folder(tmp)
            for block in blocks(path):
                self.block(block, work, env)


def indent(text):
    return "\n".join("    " + line for line in text.rstrip("\n").split("\n"))


def self_test(tracer):
    """Broken examples must fail, good ones pass: a checker that passes anything checks nothing."""
    lesson = "title: Two\nsteps:\n  - a: 1 + 1\n"
    cases = {
        "a transcript that matches": (True, "```sh example\n$ echo one; echo two; echo three\none\n...\nthree\n```\n"),
        "a lesson, then traced": (True, f"```yaml example file=two.yaml\n{lesson}```\n"
                                  "```sh example\n$ tracer two.yaml | grep 'a = '\nStep 1  a = 1 + 1\n```\n"),
        "an error with its status": (True, "```sh example exit=2\n$ tracer --digits 99 x.yaml >/dev/null 2>&1\n```\n"),
        "text that is not run": (True, "```text\nanything\n```\n```sh not-run\nfalse\n```\n"),
        "output that differs": (False, "```sh example\n$ echo one\ntwo\n```\n"),
        "a line left out": (False, "```sh example\n$ printf 'a\\nb\\nc\\n'\na\nc\n```\n"),
        "a command that fails": (False, "```sh example\ntrue\nfalse\n```\n"),
        "a status other than the one shown": (False, "```sh example exit=1\n$ true\n```\n"),
        "a status before the last command": (False, "```sh example exit=1\n$ false\n$ false\n```\n"),
        "a lesson with an error": (False, "```yaml example\ntitle: x\nsteps:\n  - a: sofmax(1)\n```\n"),
        "a lesson whose claim fails": (False, "```yaml example\ntitle: x\nsteps:\n  - a: 1\n    claim: a > 2\n```\n"),
        "an unmarked shell block": (False, "```sh\necho hi\n```\n"),
        "an unmarked lesson": (False, f"```yaml\n{lesson}```\n"),
        "a python script that fails": (False, "```python example\nraise SystemExit(3)\n```\n"),
    }
    bad = 0
    root = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        for name, (passes, text) in cases.items():
            path = os.path.join(tmp, "case.md")
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            runner = Runner(tracer, root)
            runner.markdown(path)
            if (not runner.failures) != passes:
                bad += 1
                print(f"FAIL: {name}: expected it to {'pass' if passes else 'fail'}; failures: {runner.failures}")
    if not matches(["a", "...", "c"], ["a", "c"]) or matches(["a", "..."], ["b"]):
        bad += 1
        print("FAIL: '...' does not match as described")
    print("ok: the checker passes good examples and fails each broken one" if not bad else f"{bad} self-test(s) failed")
    return 1 if bad else 0


def main(argv):
    if len(argv) >= 2 and argv[0] == "--self-test":
        return self_test(argv[1])
    expected_not_run = None
    if len(argv) >= 2 and argv[0] == "--not-run":
        expected_not_run, argv = int(argv[1]), argv[2:]
    if len(argv) < 2:
        print(__doc__)
        return 2
    runner = Runner(argv[0], os.getcwd())
    for path in argv[1:]:
        runner.markdown(path)
    for block in runner.not_run:
        print(f"not run: {block.where()}: {block.text.strip().splitlines()[0]}")
    if expected_not_run is not None and len(runner.not_run) != expected_not_run:
        runner.failures.append(f"{len(runner.not_run)} blocks are marked not-run, where {expected_not_run} are "
                               "expected: run the new one, or state it in doc/internals.md and in tests/docs/meson.build")
    for failure in runner.failures:
        print("FAIL: " + failure)
    print(f"{runner.ran} examples run, {len(runner.not_run)} not run, {len(runner.failures)} failed")
    return 1 if runner.failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
