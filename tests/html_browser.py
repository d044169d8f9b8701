#!/usr/bin/env python3
"""The web page of every lesson, as headless Chromium builds it.

Usage: html_browser.py TRACER LESSON.yaml... (run from the project root)

For each lesson the tracer writes --format html and --format json (two lessons at a time, while
the browser checks the pages already made); Chromium loads the page and the DOM it built must
hold every stage of the JSON trace, in order, with its values: each cell's tooltip the exact
value, each cell's text that value to the lesson's digits, the document's printed values and
verdicts, the notes, the shown work folded in a closed <details>, and a contents entry for every
step. On every course page j/k move stage by stage and, in a 420-pixel window, only the tables
scroll sideways, not the page, and heads side by side wrap onto new rows. A lesson whose title
and labels are HTML must show as text (tests/html/escape.yaml). A screenshot of the cat-sat
lesson must not be blank and must hold the heatmap's colours.

One Chromium serves the whole test, driven through the DevTools protocol on a pipe
(--remote-debugging-pipe): each page is opened in one tab, its DOM read with
Runtime.evaluate, the keys pressed in the same page at a 420x900 viewport, and the screenshot
taken with Page.captureScreenshot at 1000x1600. A command that gets no answer in 60 seconds, a
Chromium that cannot start or dies fails the test with the page it was at.

Exit 77 (skipped) with a message when Chromium is not installed.
"""
import base64
import collections
import concurrent.futures
import fcntl
import json
import math
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class Node:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent, self.children = tag, dict(attrs), parent, []

    def text(self):
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def classes(self):
        return self.attrs.get("class", "").split()

    def walk(self):
        """Every element below, in document order (with a stack: nested generators would cost
        one call per level for every element)."""
        stack = [c for c in reversed(self.children) if isinstance(c, Node)]
        while stack:
            n = stack.pop()
            yield n
            stack.extend(c for c in reversed(n.children) if isinstance(c, Node))

    def find_all(self, tag=None, cls=None):
        return [n for n in self.walk() if (tag is None or n.tag == tag) and (cls is None or cls in n.classes())]

    def ancestors(self):
        n = self.parent
        while n is not None:
            yield n
            n = n.parent


class Tree(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", [], None)
        self.at = self.root

    def handle_starttag(self, tag, attrs):
        node = Node(tag, attrs, self.at)
        self.at.children.append(node)
        if tag not in VOID:
            self.at = node

    def handle_endtag(self, tag):
        n = self.at
        while n is not self.root and n.tag != tag:
            n = n.parent
        if n is not self.root:
            self.at = n.parent

    def handle_data(self, data):
        self.at.children.append(data)


def parse(html):
    t = Tree()
    t.feed(html)
    return t.root


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


# ---------------------------------------------------------------- one Chromium, on a pipe

COMMAND_TIMEOUT = 60  # seconds: a command unanswered by then fails the test, naming the page


class BrowserError(Exception):
    """Chromium did not start, died, refused a command or did not answer it in time."""


class ScriptError(Exception):
    """A script evaluated in the page threw."""


class Browser:
    """One headless Chromium, driven through the DevTools protocol on a pipe.

    With --remote-debugging-pipe Chromium reads commands on its fd 3 and writes answers and
    events on its fd 4, each a JSON text ended by a NUL byte. A thread reads fd 4 and files
    each answer by its id and each event in arrival order; `send` waits for its own answer.
    Every page is opened in one tab, attached in flat mode (its commands name its session).
    """

    def __init__(self, chromium, tmp):
        self.name = os.path.basename(chromium)
        args = [chromium, "--headless", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
                "--disable-extensions", "--disable-quic", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--remote-debugging-pipe",
                "--user-data-dir=" + os.path.join(tmp, "profile")]
        if os.geteuid() == 0:
            args.append("--no-sandbox")  # Chromium refuses to run as root with its sandbox
        commands_in, self.commands = os.pipe()
        self.answers, answers_out = os.pipe()
        # Chromium's two ends must be its fds 3 and 4. subprocess's pass_fds keeps an fd under
        # its own number and closes all others, so the child moves them there itself, with
        # close_fds=False: they are first copied above 4, so that neither dup2 overwrites the
        # other, and close-on-exec, as every fd of this test is, so that only fds 3 and 4 (and
        # those this test was started with) pass to Chromium.
        ends = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 5) for fd in (commands_in, answers_out)]
        os.close(commands_in)
        os.close(answers_out)

        def on_fds_3_and_4():
            os.dup2(ends[0], 3)
            os.dup2(ends[1], 4)

        self.lock = threading.Condition()
        self.replies, self.events, self.ended, self.last_id, self.session = {}, [], False, 0, None
        self.broken = ""  # what was wrong with a message from Chromium that is not JSON
        try:
            with open(os.path.join(tmp, "chromium.log"), "wb") as log:
                # Started before any other thread of this test: preexec_fn is safe only then.
                self.process = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                                close_fds=False, preexec_fn=on_fds_3_and_4)
        except OSError as e:
            os.close(self.commands)
            os.close(self.answers)
            raise BrowserError(f"{chromium} did not start: {e}") from None
        finally:
            for fd in ends:
                os.close(fd)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        parts = []  # of the message under way
        while not self.broken:
            try:
                chunk = os.read(self.answers, 1 << 20)
            except OSError:
                chunk = b""
            if not chunk:
                break
            while not self.broken:
                end = chunk.find(b"\0")
                if end < 0:
                    parts.append(chunk)
                    break
                parts.append(chunk[:end])
                self._file(b"".join(parts))
                parts, chunk = [], chunk[end + 1:]
        with self.lock:
            self.ended = True
            self.lock.notify_all()

    def _file(self, text):
        """An answer under its id, an event at the end of the list."""
        try:
            message = json.loads(text)
        except ValueError:
            self.broken = f": it wrote {text[:80]!r}, not a JSON message"
            return
        with self.lock:
            if "id" in message:
                self.replies[message["id"]] = message
            else:
                self.events.append(message)
            self.lock.notify_all()

    def _wait(self, found, what, timeout):
        """The first non-None found() under the lock, or BrowserError when Chromium ends or
        `timeout` seconds pass."""
        deadline = time.monotonic() + timeout
        with self.lock:
            while True:
                result = found()
                if result is not None:
                    return result
                if self.ended:
                    raise BrowserError(self.broken and f"{what}: the pipe from Chromium broke{self.broken}"
                                       or f"{what}: Chromium closed its pipe{self._status()}")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise BrowserError(f"{what}: no answer from Chromium in {timeout} seconds")
                self.lock.wait(left)

    def _status(self):
        """How Chromium ended, if it has (given a moment to)."""
        try:
            status = self.process.wait(1)
        except subprocess.TimeoutExpired:
            return ""
        return f", killed by signal {-status}" if status < 0 else f", exit status {status}"

    def send(self, method, params=None, session=None, timeout=COMMAND_TIMEOUT):
        self.last_id += 1
        ident = self.last_id
        message = {"id": ident, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        data = json.dumps(message).encode() + b"\0"
        try:
            while data:
                data = data[os.write(self.commands, data):]
        except OSError as e:
            raise BrowserError(f"{method}: Chromium does not read its pipe ({e.strerror}){self._status()}") from None
        reply = self._wait(lambda: self.replies.pop(ident, None), method, timeout)
        if "error" in reply:
            raise BrowserError(f"{method}: Chromium answered {reply['error'].get('message')!r}")
        return reply.get("result", {})

    def page(self, method, params=None):
        return self.send(method, params, self.session)

    def open_tab(self):
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self.page("Page.enable")

    def load(self, path):
        """Open a file in the tab and wait for its load event (its own script has run)."""
        with self.lock:
            self.events.clear()
        opened = self.page("Page.navigate", {"url": "file://" + os.path.abspath(path)})
        if opened.get("errorText"):
            raise BrowserError(f"Page.navigate: {opened['errorText']}")

        def loaded():
            for k, event in enumerate(self.events):
                if event.get("method") == "Page.loadEventFired" and event.get("sessionId") == self.session:
                    return self.events.pop(k)
            return None

        self._wait(loaded, "Page.loadEventFired", COMMAND_TIMEOUT)

    def evaluate(self, expression):
        """The value of a JavaScript expression in the page (ScriptError if it throws)."""
        answer = self.page("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in answer:
            details = answer["exceptionDetails"]
            raise ScriptError(details.get("exception", {}).get("description") or details.get("text"))
        return answer["result"].get("value")

    def viewport(self, width, height):
        self.page("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})

    def close(self):
        """Ask Chromium to quit, and kill it if it has not within five seconds."""
        try:
            self.send("Browser.close", timeout=5)
        except BrowserError:
            pass
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.reader.join(5)
        os.close(self.commands)
        os.close(self.answers)


def log_tail(path, lines=10):
    """The last lines Chromium wrote to its log (stdout and stderr), but its complaints that
    there is no D-Bus here, which it makes all along."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return [line for line in f.read().splitlines() if ":ERROR:dbus/" not in line][-lines:]
    except OSError:
        return []


failures = []


def fail(where, message):
    failures.append(f"{where}: {message}")


# The indices shown along an axis, as the text trace shows a large tensor: everything up to
# `limit`, else the first and last `edge` (None marks the gap). Rows: 40, else 10 and 10;
# columns: 64, else 32 and 32; matrices of a rank-3 or rank-4 tensor: 16, else 3 and 3.
def shown(n, limit, edge):
    if n <= limit:
        return list(range(n))
    return list(range(edge)) + [None] + list(range(n - edge, n))


def number(v):
    return v if isinstance(v, float) or isinstance(v, int) else float(v)  # "inf", "-inf", "nan"


def shown_values(values, shape, softmax_vector):
    """The flat values the page shows, in document order, for a tensor of this shape."""
    if len(shape) == 0:
        return [values]
    if len(shape) == 1:
        idx = shown(shape[0], 40, 10) if softmax_vector else shown(shape[0], 64, 32)
        return [values[i] for i in idx if i is not None]
    # Rank 2 and up: one matrix per leading index, the first and last 3 of more than 16.
    flat_slices = []

    def collect(v, depth):
        if depth == len(shape) - 2:
            flat_slices.append(v)
        else:
            for x in v:
                collect(x, depth + 1)

    collect(values, 0)
    out = []
    slices = flat_slices
    if len(shape) > 2:
        slices = [flat_slices[i] for i in shown(len(flat_slices), 16, 3) if i is not None]
    for m in slices:
        for r in shown(shape[-2], 40, 10):
            if r is None:
                continue
            for c in shown(shape[-1], 64, 32):
                if c is not None:
                    out.append(m[r][c])
    return out


def same(a, b):
    a, b = number(a), number(b)
    if a != a or b != b:
        return a != a and b != b
    return a == b


def check_cells(where, cells, expected, digits, decimals_flat=None, count=False, ids_of=None):
    """Each cell's tooltip is its exact value and its text that value to `digits` places; an id
    of tokens (ids_of) shows its token instead."""
    if len(cells) != len(expected):
        fail(where, f"{len(cells)} cells on the page, {len(expected)} values in the JSON trace")
        return
    bad = 0
    for k, (cell, want) in enumerate(zip(cells, expected)):
        title = cell.attrs.get("title")
        if title is None or not same(float(title), want):
            fail(where, f"value {k}: tooltip {title!r}, the JSON trace has {want!r}")
            bad += 1
        text = cell.text().strip().replace(",", "")
        w = number(want)
        places = digits if decimals_flat is None else decimals_flat[k]
        if ids_of is not None and w == w and w == int(w) and 0 <= w < len(ids_of):
            ok = cell.text() in (ids_of[int(w)], str(int(w)))  # a table's token, a single id's number
        elif w != w or w in (float("inf"), float("-inf")):
            ok = text == ("nan" if w != w else "inf" if w > 0 else "-inf")
        elif count and "e" not in text:
            ok = text == str(int(w))  # a count prints whole ("124,439,808") until it is too long
        else:
            # Fixed ("0.3345") or scientific ("1.0000e-05"): `places` decimals either way, and
            # within half a unit of the last one.
            mantissa, _, exponent = text.partition("e")
            decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
            unit = 10.0 ** (int(exponent or 0) - decimals)
            ok = decimals == places and abs(float(text) - w) <= 0.5 * unit * (1 + 1e-9)
        if not ok:
            fail(where, f"value {k}: cell text {text!r} is not {want!r} to {places} places")
            bad += 1
        if bad > 4:
            fail(where, "(more differences not shown)")
            return


def over_last_axis(expr, rank):
    """Whether a softmax stage's expression takes the last axis (no axis=, or axis= naming it)."""
    m = re.search(r"axis\s*=\s*(-?\d+)", expr)
    if not m:
        return True
    axis = int(m.group(1))
    return axis % rank == rank - 1 if rank else True


def one_grad_call(expr):
    """Whether expr is a single grad(...) call, as `grad(loss, E)` and not `grad(a, b) * 2`."""
    if not expr.startswith("grad("):
        return False
    depth = 0
    for k, ch in enumerate(expr):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth == 0 and ch == ")":
            return k == len(expr) - 1
    return False


def stage_cells(container):
    """The value cells in page order: table cells, or the one <data> of a scalar."""
    return [n for n in container.walk() if n.tag in ("td", "data") and "title" in n.attrs]


# Pressed in the loaded page, after its own script: j three times and k once, then the page's
# width in a narrow window; Runtime.evaluate answers with what it found.
PROBE = """(function(){
var seq=[];
function key(k){document.dispatchEvent(new KeyboardEvent('keydown',{key:k,bubbles:true,cancelable:true}));
seq.push(document.activeElement&&document.activeElement.id||'');}
key('j');key('j');key('j');key('k');
var hidden=0;
document.querySelectorAll('.slices').forEach(function(g){var right=g.getBoundingClientRect().right;
var left=g.getBoundingClientRect().left;
g.querySelectorAll('figure').forEach(function(f){var b=f.getBoundingClientRect();
if(b.left>left+1&&b.right>right+1)hidden++;});});
return {keys:seq,scrollWidth:document.documentElement.scrollWidth,
clientWidth:document.documentElement.clientWidth,hiddenSlices:hidden};
})()"""


def check_keys_and_width(name, browser):
    """j/k move stage by stage, and in a phone-wide window the page does not scroll sideways."""
    browser.viewport(420, 900)
    try:
        probe = browser.evaluate(PROBE)
    except ScriptError as e:
        probe = None
        fail(name, f"the key probe did not run: {e}")
    browser.page("Emulation.clearDeviceMetricsOverride")
    if not isinstance(probe, dict):
        if probe is not None:
            fail(name, "the key probe did not run")
        return
    if probe["keys"] != ["stage-0", "stage-1", "stage-2", "stage-1"]:
        fail(name, f"j, j, j, k went to {probe['keys']}, not stage-0, stage-1, stage-2, stage-1")
    # The width checks below hold in any window as wide as the page's widest table: the window
    # must really be the narrow one.
    if probe["clientWidth"] != 420:
        fail(name, f"the narrow window is {probe['clientWidth']} pixels wide, not 420")
    if probe["scrollWidth"] > probe["clientWidth"]:
        fail(name, f"in a 420-pixel window the page is {probe['scrollWidth']} pixels wide: it scrolls sideways")
    # Heads side by side wrap onto new rows: none but the first of a row runs past its edge.
    if probe["hiddenSlices"]:
        fail(name, f"in a 420-pixel window {probe['hiddenSlices']} heads or slices run past the edge of "
                   "their row, behind a scroll bar, instead of wrapping")


# At a projector's 1280 pixels: the widest table of probabilities (an attention map) and whether
# any scrolls sideways inside its box, and the header labels of each such table.
WIDE_PROBE = """(function(){
var maps=[];
document.querySelectorAll('table.probabilities').forEach(function(t){
var box=t.closest('.scroll');var heads=[];
t.querySelectorAll('thead th').forEach(function(h){heads.push(h.textContent);});
maps.push({cols:t.querySelectorAll('tbody tr:first-child td').length,
cut:box?box.scrollWidth>box.clientWidth+1:false,heads:heads});});
return {clientWidth:document.documentElement.clientWidth,maps:maps};
})()"""


def check_projector_width(name, browser, trace):
    """At 1280 pixels every attention map of up to 16 columns shows them all, without a scroll
    bar, its columns headed as the JSON trace labels them."""
    browser.viewport(1280, 800)
    try:
        probe = browser.evaluate(WIDE_PROBE)
    except ScriptError as e:
        fail(name, f"the width probe did not run: {e}")
        return
    finally:
        browser.page("Emulation.clearDeviceMetricsOverride")
    if probe["clientWidth"] != 1280:
        fail(name, f"the projector's window is {probe['clientWidth']} pixels wide, not 1280")
        return
    for m in probe["maps"]:
        if m["cols"] <= 16 and m["cut"]:
            fail(name, f"at 1280 pixels a map of {m['cols']} columns scrolls sideways: some columns are hidden")
    # The tokens: every map's headers among the column labels the JSON trace gives its stages
    # (positions where it gives none).
    labels = {tuple(st["cols"]) for st in trace["stages"] if st.get("cols")}
    for m in probe["maps"]:
        heads = tuple(h for h in m["heads"] if h.strip())
        positions = tuple(str(i) for i in range(len(heads)))
        if m["cols"] <= 16 and heads and heads != positions and not any(heads == c for c in labels):
            fail(name, f"a map's columns are headed {list(heads)}, no stage's labels in the JSON trace")


def make_page(tracer, lesson, tmp, with_trace=True):
    """The tracer's web page of a lesson, written in tmp, and its JSON trace (run in a thread)."""
    page = os.path.join(tmp, os.path.splitext(os.path.basename(lesson))[0] + ".html")
    with open(page, "wb") as f:
        subprocess.run([tracer, "--format", "html", lesson], stdout=f, check=True)
    if not with_trace:
        return page, None
    trace = json.loads(subprocess.run([tracer, "--format", "json", lesson], stdout=subprocess.PIPE,
                                      check=True).stdout)
    return page, trace


DOM = "document.documentElement.outerHTML"


def check_lesson(name, page, trace, browser):
    browser.load(page)
    root = parse(browser.evaluate(DOM))
    h1 = root.find_all("h1")
    if len(h1) != 1 or h1[0].text() != trace["title"]:
        fail(name, f"the heading is {[h.text() for h in h1]!r}, not the title {trace['title']!r}")
    # One script, ours; nothing loaded from anywhere.
    scripts = root.find_all("script")
    if len(scripts) != 1 or "src" in scripts[0].attrs:
        fail(name, f"{len(scripts)} scripts on the page, expected only the inline one")
    for n in root.walk():
        if "src" in n.attrs or (n.tag == "link" and "href" in n.attrs):
            fail(name, f"<{n.tag}> loads {n.attrs.get('src') or n.attrs.get('href')}")
    sections = {n.attrs.get("id"): n for n in root.find_all("section", "stage")}
    if len(sections) != len(trace["stages"]):
        fail(name, f"{len(sections)} stage sections, {len(trace['stages'])} stages in the JSON trace")
    digits = trace["digits"]
    toc = root.find_all("nav", "contents")
    toc_links = [a.attrs.get("href") for a in toc[0].find_all("a")] if toc else []
    for i, st in enumerate(trace["stages"]):
        where = f"{name}: stage {st['name']}"
        sec = sections.get(f"stage-{i}")
        if sec is None:
            fail(where, f"no section stage-{i}")
            continue
        if sec.attrs.get("data-name") != st["name"]:
            fail(where, f"section stage-{i} is {sec.attrs.get('data-name')!r}")
        heading = sec.find_all("h3")[0].text()
        want = ("Given " + st["name"]) if st["kind"] == "given" else f"Step {st['number']} {st['name']} = {st['expr']}"
        if not heading.startswith(want):
            fail(where, f"heading {heading!r} does not start with {want!r}")
        if st["kind"] == "step" and f"#stage-{i}" not in toc_links:
            fail(where, "missing from the contents")
        if st["kind"] == "intermediate":
            folds = [d for d in sec.children if isinstance(d, Node) and d.tag == "details"]
            if len(folds) != 1 or "open" in folds[0].attrs:
                fail(where, "an intermediate stage is not in a closed <details>")
        # A step that only names a grad() (a copy of the backward pass's last stage, just
        # above it) shows no copy; every other stage shows its operation.
        names_gradient = st["kind"] == "step" and st["op"] == "copy" and one_grad_call(st["expr"])
        if names_gradient and st["op_line"] in sec.text():
            fail(where, f"a step that names a gradient shows {st['op_line']!r}")
        elif not names_gradient and st["op_line"] and st["op_line"] not in sec.text():
            fail(where, f"no operation line {st['op_line']!r}")
        for note in st["notes"]:
            if note not in [li.text().replace("note: ", "", 1) for li in sec.find_all("li")]:
                fail(where, f"no note {note!r}")
        if st["work"]:
            works = sec.find_all("details", "work")
            if len(works) != 1 or "open" in works[0].attrs:
                fail(where, "the shown work is not in one closed <details>")
            elif works[0].find_all("pre")[0].text().splitlines() != st["work"]:
                fail(where, "the shown work differs from the JSON trace's")
        result = sec.find_all("div", "result")
        shape = st["shape"]
        softmax_vector = st["op"] == "softmax" and len(shape) == 1
        if st["values"] is None:
            if not result or not result[0].find_all("p", "shape-only"):
                fail(where, "a shape-only tensor without its note")
        else:
            check_cells(where, stage_cells(result[0]), shown_values(st["values"], shape, softmax_vector), digits,
                        count=st["count"], ids_of=st.get("ids_of"))
            cells = stage_cells(result[0])
            if st["op"] == "softmax" and not over_last_axis(st["expr"], len(shape)):
                # softmax(x, axis=0) makes columns, not rows, distributions: no bars.
                if any(cell.find_all("span", "bar") for cell in cells):
                    fail(where, "a softmax over an axis other than the last has bars")
            elif st["op"] == "softmax":
                # A probability's bar is as long as the probability: 0.3261 -> 32.6%.
                for cell, v in zip(cells, shown_values(st["values"], shape, softmax_vector)):
                    bars = cell.find_all("span", "bar")
                    want = f"width:{float(number(v)) * 100:.1f}%" if number(v) == number(v) else "width:0.0%"
                    if len(bars) != 1 or bars[0].attrs.get("style") != want:
                        fail(where, f"probability {v!r} has bars {[b.attrs.get('style') for b in bars]}, not {want}")
                        break
            if len(shape) >= 3 and 0 not in shape:
                # One small table per head (or leading index), side by side.
                heads = 1
                for d in shape[:-2]:
                    heads *= d
                figures = result[0].find_all("figure", "slice")
                if len(figures) != min(heads, 6 if heads > 16 else heads):
                    fail(where, f"{len(figures)} head tables for {heads} heads")
            # Every cell carries a heatmap background, but those of a bar chart; a mask's cells
            # (every value 0 or -inf) are allowed or blocked instead.
            charts = [t for t in result[0].find_all("table") if "column" in t.classes()]
            flat = [number(v) for v in shown_values(st["values"], shape, softmax_vector)]
            is_mask = all(v == 0 or v == -math.inf for v in flat) and 0 in flat and -math.inf in flat
            if is_mask:
                for td, v in zip(cells, flat):
                    want = "allowed" if v == 0 else "blocked"
                    if td.classes() != [want]:
                        fail(where, f"mask value {v} is drawn as {td.classes()}, not {want}")
                        break
            elif st.get("show") == "table" or st.get("ids_of"):
                # show: table keeps only the numbers, and ids are tokens, not amounts: no colour
                # behind any of them.
                if any("background:" in td.attrs.get("style", "") for td in cells):
                    fail(where, "a value coloured although it is a table (show: table) or ids of tokens")
            elif shape and not charts and any("background:" not in td.attrs.get("style", "") for td in cells):
                fail(where, "a value without its heatmap colour")
        doc = st["document"]
        docs = sec.find_all("div", "document")
        if doc is None:
            if docs:
                fail(where, "document values shown where the lesson gives none")
            continue
        if len(docs) != 1:
            fail(where, "the document's values are missing")
            continue
        klass = doc["verdict"].replace("_", "-")
        if klass not in docs[0].classes():
            fail(where, f"document verdict {doc['verdict']} not marked (classes {docs[0].classes()})")
        verdict_words = [p.text() for p in docs[0].find_all("p", "verdict")]
        first = verdict_words[0] if verdict_words else ""
        if doc["verdict"] == "set_aside":
            if not first.startswith("document: not compared"):
                fail(where, f"a document set aside says {first!r}")
            continue
        if first.startswith("document: the same numbers"):
            if doc["verdict"] != "agrees" or stage_cells(docs[0]):
                fail(where, "'the same numbers' for numbers that are not the same, or with a table")
            continue
        printed = stage_cells(docs[0])
        expected = shown_values(doc["values"], shape, softmax_vector)
        # The printed numbers keep the decimals the document printed them with: compare the
        # values only (the cell text is checked against its own decimals by the golden files).
        if len(printed) != len(expected) or not all(same(float(c.attrs["title"]), v)
                                                    for c, v in zip(printed, expected)):
            fail(where, "the document's printed values differ from the JSON trace's")
        want = {"edited": "you changed", "follows_edit": "document: follows your edit"}.get(
            doc["verdict"], "document: agrees" if doc["agrees"] else "document: disagrees")
        if not first.startswith(want):
            fail(where, f"first verdict {first!r} does not start with {want!r}")
    summary = trace["document_summary"]
    if summary["printed"]:
        s = root.find_all("section", "summary")
        want = f"The document printed {summary['printed']} of these stages; {summary['agree']} agree"
        if not s or want not in s[0].text():
            fail(name, f"the document check summary does not say {want!r}")


# ---------------------------------------------------------------- the screenshot

def add_bytes(a, b):
    """a + b byte by byte, each sum modulo 256, as PNG's Up filter adds the line above: as two
    big integers, adding the low seven bits of each byte (which cannot carry into the next) and
    setting each top bit to the exclusive or of the two top bits and that sum's carry."""
    size = len(a)
    low = int.from_bytes(b"\x7f" * size, "big")
    x, y = int.from_bytes(a, "big"), int.from_bytes(b, "big")
    return (((x & low) + (y & low)) ^ ((x ^ y) & ~low)).to_bytes(size, "big")


def png_colours(data):
    """(width, height, {(r, g, b): pixels of that colour}) of an 8-bit RGB or RGBA PNG."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, width = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or colour not in (2, 6) or interlace:
                raise ValueError(f"PNG depth {depth}, colour type {colour}, interlace {interlace}")
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    pixels, prev, at = bytearray(), bytes(stride), 0
    for _ in range(height):
        kind, line = raw[at], raw[at + 1:at + 1 + stride]
        at += 1 + stride
        if kind == 2:
            line = add_bytes(line, prev)  # Up, the only filter of a screenshot taken for speed
        elif kind != 0:
            line = bytearray(line)
            for i in range(stride):
                a = line[i - channels] if i >= channels else 0
                b = prev[i]
                c = prev[i - channels] if i >= channels else 0
                if kind == 1:
                    line[i] = (line[i] + a) & 255
                elif kind == 3:
                    line[i] = (line[i] + (a + b) // 2) & 255
                elif kind == 4:
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        pixels += line
        prev = line
    counts = collections.Counter(bytes(pixels[i:i + 3]) for i in range(0, len(pixels), channels))
    return width, height, {tuple(rgb): n for rgb, n in counts.items()}


def check_screenshot(page, browser):
    browser.viewport(1000, 1600)
    browser.load(page)
    shot = browser.page("Page.captureScreenshot", {"format": "png", "optimizeForSpeed": True}).get("data")
    browser.page("Emulation.clearDeviceMetricsOverride")
    if not shot:
        fail("screenshot", "Chromium took no screenshot")
        return
    width, height, counts = png_colours(base64.b64decode(shot))
    if (width, height) != (1000, 1600):
        fail("screenshot", f"{width}x{height} pixels, not 1000x1600")
    white = counts.get((255, 255, 255), 0)
    if white > 0.97 * width * height or len(counts) < 20:
        fail("screenshot", f"blank: {len(counts)} colours, {white} of {width * height} pixels white")
    # ColorBrewer's Blues at the values of X in the cat-sat lesson, worked out from its stops
    # (247,251,255) (198,219,239) (107,174,214) (33,113,181) (8,48,107) at 0, 1/4, ..., 1:
    # X[cat, d3] = 0.8 lies a fifth of the way from (33,113,181) to (8,48,107): (28,100,166);
    # X[cat, d1] = 0.5 is the middle stop (107,174,214).
    for colour, value in (((28, 100, 166), 0.8), ((107, 174, 214), 0.5)):
        if counts.get(colour, 0) < 200:
            fail("screenshot", f"the heatmap colour {colour} of {value} covers {counts.get(colour, 0)} pixels, "
                               "not a cell's worth")


def check_escape(page, browser):
    browser.load(page)
    root = parse(browser.evaluate(DOM))
    h1 = root.find_all("h1")
    if [h.text() for h in h1] != ["<script>alert(1)</script>"]:
        fail("escape", f"the title shows as {[h.text() for h in h1]!r}")
    if len(root.find_all("script")) != 1:
        fail("escape", f"{len(root.find_all('script'))} scripts: the lesson's text became a script")
    for tag in ("b", "img", "iframe"):
        if root.find_all(tag):
            fail("escape", f"a <{tag}> element from the lesson's text")
    headers = [th.text() for th in root.find_all("th")]
    if "<b>cat</b>" not in headers or "\"quoted\" & 'single'" not in headers:
        fail("escape", f"the labels show as {headers!r}")
    if "</details><img src=x onerror=alert(2)>" not in root.text():
        fail("escape", "the narration did not show as text")


def check_all(tracer, lessons, browser, tmp):
    """Every check, in lesson order, with the pages made two at a time beside the browser's
    work. A BrowserError ends the test, naming the page it was at."""
    pool = concurrent.futures.ThreadPoolExecutor(2)
    where = "the start of Chromium"
    try:
        made = [pool.submit(make_page, tracer, lesson, tmp) for lesson in lessons]
        escape = pool.submit(make_page, tracer, "tests/html/escape.yaml", tmp, with_trace=False)
        browser.open_tab()  # while the first pages are made
        pages = {}
        for lesson, job in zip(lessons, made):
            where = lesson
            try:
                page, trace = job.result()
            except subprocess.CalledProcessError as e:
                fail(lesson, f"the tracer exited with status {e.returncode}")
                continue
            pages[os.path.basename(lesson)] = page
            check_lesson(os.path.splitext(os.path.basename(lesson))[0], page, trace, browser)
            if lesson.startswith("lessons/"):
                check_keys_and_width(os.path.basename(lesson), browser)
                check_projector_width(os.path.basename(lesson), browser, trace)
            print(f"checked {lesson} in {browser.name}")
        where = "tests/html/escape.yaml"
        check_escape(escape.result()[0], browser)
        if "02_the_cat_sat.yaml" in pages:
            where = "the screenshot of lessons/02_the_cat_sat.yaml"
            check_screenshot(pages["02_the_cat_sat.yaml"], browser)
    except (BrowserError, ScriptError) as e:
        raise BrowserError(f"{where}: {e}") from None
    finally:
        pool.shutdown(cancel_futures=True)


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    tracer, lessons = sys.argv[1], sys.argv[2:]
    chromium = find_chromium()
    if not chromium:
        print("SKIPPED: Chromium is not installed (apt-get install chromium); the web pages were not "
              "checked in a browser")
        return 77
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as tmp:
        try:
            browser = Browser(chromium, tmp)
            try:
                check_all(tracer, lessons, browser, tmp)
            finally:
                browser.close()
        except BrowserError as e:
            # First, so that it is never among the failures left out below.
            failures.insert(0, str(e))
            tail = log_tail(os.path.join(tmp, "chromium.log"))
            if tail:
                print("Chromium's last lines:\n  " + "\n  ".join(tail))
    if failures:
        for f in failures[:40]:
            print("FAIL", f)
        print(f"{len(failures)} failures")
        return 1
    print(f"ok: {len(lessons)} lessons, the escaping lesson and the screenshot")
    return 0


if __name__ == "__main__":
    sys.exit(main())
