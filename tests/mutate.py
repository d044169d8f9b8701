#!/usr/bin/env python3
"""Mutation testing of the tracer: would the tests notice a small wrong change to tracer/?

    tests/mutate.py [--sample N] [--seed S] [--timeout T] [--line L] [--list] FILE|FOLDER...

FILE is a source of the tracer (quiz.c, tracer/judge/quiz.c), FOLDER a folder of them
(tracer/base). Every place in a source where one small change may still compile is a mutant:

  * a relational operator one step off or turned round: < <=, > >=, == !=
  * + and - swapped, * and / swapped (binary operators only)
  * && and || swapped
  * a whole-number constant one more or one less (0 becomes 1), true and false swapped
  * the value a return statement returns made 0 (false, NULL), unless it is a constant
  * a statement on a line of its own (a call or an assignment) deleted, left as ';'

A mutant that does not compile is counted apart, neither killed nor survived.

The script keeps a copy of the working tree (committed or not) with its own unoptimised
coverage build, in build/mutants (--workdir), and brings it up to date at each run, writing only
the files that changed, so ninja rebuilds only what they touch. In that build it runs each test
of every suite but the browser's alone, once, and asks gcov which lines of tracer/ it executed;
the map of tests to lines is kept in the copy's build folder. It is made
again when a source of tracer/ changes; when only the rest of the tree does, only new tests and
the unit programs run again (--fresh-map runs them all). A test that fails unmutated judges no
mutant (it is named).

Then for --sample mutants of each file (chosen with --seed, so a run can be repeated) it writes
the change into the copy, builds only the programs the tests need, and runs only the tests that
execute the mutated line (for a line gcov counts nothing on, such as a table's initialiser, those
that execute any line of its file, or of its folder for a file of tables alone) until one fails: the mutant is killed. A mutant no test kills
survives; one on a line no test executes survives without being built. The mutated file is
written back on every way out, Ctrl-C included; the working tree is never written.

The tests run fail-fast: first those that name the mutated module (test_quiz for quiz.c), then
the rest, quickest first. A test that runs ten times as long as it did unmutated (and at least
60 s), or hangs, counts as failing: the mutant made the program loop. Such kills are listed at
the end to be read, as a busy machine can slow a test that much too. A mutant whose tests take
more than --timeout seconds together is stopped and counted apart, as out of time.

Not mutated: preprocessor lines, comments, strings, array sizes in declarations, and the
conditions of ASSERT and static_assert, which state what no input reaches (a weakened one
cannot be noticed). Mutants known to change nothing anyone can observe are listed in
EQUIVALENT below, each with the reason; they are counted, not run.

The last result is in doc/internals.md, "Mutation testing".
"""

import argparse
import hashlib
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
TRACER = "tracer/tracer"
SUITES = ("unit", "golden", "crosscheck", "errors", "html", "docs", "install", "watch", "schema", "tokenizer", "gpt2")
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
    # non_finite returns the length of "nan", "inf" or "-inf" when it writes one, else -1.
    ("format.c", "if (non_finite(v, buf, cap) >= 0)", 0, "0", "1",
     "non_finite returns -1 or a length of 3 or 4, never 0"),
    # The reader of JSON stops at its first problem: every caller of fail() returns false at
    # once, up to json_parse, so no second problem is ever written over the first.
    ("json.c", "r->failed = true;", 0, "true", "false",
     "fail() is never called after a failure, so the flag guards nothing a run reaches"),
    ("json.c", "r->failed = true;", 0, "r->failed = true;", ";",
     "fail() is never called after a failure, so the flag guards nothing a run reaches"),
    # arena_printf's second vsnprintf writes text it has measured as n characters: told of room
    # for n + 2, it still writes n and the NUL, into the n + 1 bytes made for them.
    ("util.c", "vsnprintf(s, (size_t)n + 1, fmt, ap);", 0, "1", "2",
     "vsnprintf writes the n characters measured and a NUL, whatever room past that it is told of"),
    # A growable string asking for a byte more room than its text and NUL need, or growing when
    # it has exactly the room, holds the same text: only its capacity differs, which no caller
    # reads (a sink is flushed by the length of the text, never by the room).
    ("util.c", "if (sb->failed || !util_add_size(sb->len, extra, &need) || !util_add_size(need, 1, &need)) {", 0,
     "1", "2", "one byte more capacity than needed changes no text written"),
    ("util.c", "if (need <= sb->cap)", 0, "<=", "<",
     "growing when the room is exactly enough changes the capacity, not the text"),
    # The size of a .npy's values is named only when it differs from what the file holds, so
    # the hint "cut short" is chosen between two sizes that are never equal.
    ("weightfile.c", 'bytes, f->len - t->begin, bytes > f->len - t->begin ? " (is it cut short?)" : "");', 2,
     ">", ">=", "the message is written only when the two sizes differ, so > and >= agree"),
    # An empty tensor's values are never read; util_calloc gives a block for a count of 0 too.
    ("tensor.c", "t->data = util_calloc(size ? size : 1, sizeof(double));", 0, "1", "0",
     "util_calloc(0, ...) gives a block as util_calloc(1, ...) does, and no value of an empty tensor is read"),
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
    # A step that fails with no lesson error of its own (and reads no failed name: it compiled)
    # is taken by check_lesson_within for memory running out, which it reports alone, so
    # returning false without first saying "out of memory" prints the same message.
    ("check.c", "return diag_no_memory(c->diag);\nk++;", 0, "diag_no_memory(c->diag)", "0",
     "a step failing without a lesson error is reported as out of memory by its caller"),
    ("check.c", "return diag_no_memory(c->diag);\nif (!apply_step_labels(c, t, s) || !check_show(c, t, s))", 0,
     "diag_no_memory(c->diag)", "0",
     "a step failing without a lesson error is reported as out of memory by its caller"),
    # The hash table of names has at least 16 slots and twice a lesson's names plus two; with
    # twice the names less two (a lesson has at least one step, so at least one name) it still
    # has more slots than names, so every probe ends at an empty slot and finds the same names.
    ("check.c", "for (c.cap_slots = 16; c.cap_slots < 2 * (n_names + 1); c.cap_slots *= 2)", 0, "+", "-",
     "the table keeps an empty slot for every lesson, and no output depends on where a name sits"),
    # {1} sets only the first member of an OpCheck, its operation, and check_add_op writes that
    # (chk->op = op) before anything reads it.
    ("check.c", "OpCheck chk = {0};", 0, "0", "1",
     "the only member {1} sets, op, is written by check_add_op before it is read"),
    # A claim's `after` is read only by judge/claim.c, which prints the claim under the last
    # stage whose node is at most `after`: stepping down past nodes that are not stages leaves
    # that stage the same, so stopping the walk at node 1 instead of node 0 changes nothing.
    ("check.c", "while (after > 0 && !c->plan->nodes[after].is_stage)", 0, "0", "1",
     "the claim prints under the last stage at or before `after`, the same whichever non-stage node it stops at"),
    # The plan's first block of nodes has room for 256; with room for 255 it grows one node
    # sooner and doubles from there. Nodes are reached by index (a pointer taken before a node is
    # added is taken again after), and the memory limit counts nodes, not room.
    ("check_state.c", "size_t cap = p->cap ? p->cap * 2 : 256, bytes;", 0, "256", "255",
     "only when the table of nodes grows changes, and nothing reads its room"),
    # The stages' hash table has at least twice as many slots as nodes, plus two: probing every
    # second slot instead of every slot visits half of them, which still outnumber the stages,
    # so a probe still ends at an empty slot, and filing and finding probe alike.
    ("plan.c", "at = (at + 1) & mask;", 0, "1", "2",
     "every second slot still outnumbers the stages, and stages are filed and found by the same probe"),
    # The marks of the nodes a gradient reads are indexed by node, below n_nodes: a zeroed mark
    # more past them is never read.
    ("plan.c", "bool *dirty = util_calloc(plan->n_nodes + 1, sizeof(bool));", 0, "1", "2",
     "a mark more past every node's is never read"),
    # tracer/ops, run, lesson, cli. Every shape rule is called with an OpCheck the checker
    # made as {0}, so labels a rule does not set are already none.
    ("op_list.c", "c->out_labels[0] = (Labels){0};", 0, "0", "1",
     "out_labels[1] is set on the next line, and out_labels[0] is already {0} in every OpCheck"),
    # A batch axis k of A @ B (both of 2 axes or more) is looked for in B only when A's does not
    # give it. At k == B's rank, k < the result's rank means A has axis k, and B none, so the
    # result's size there is A's: A's test always holds first.
    ("op_matmul.c", "else if (k < b->rank && b->dim[b->rank - 1 - k] == c->shape.dim[out_axis])", 0, "<", "<=",
     "at k == b->rank the axis is A's alone, so the first test (A's) already took it"),
    # tracer/judge. count_false counts the false values among a tensor's values, so more than
    # one false value needs more than one value.
    ("claim.c", "if (value->size > 1 && truth_of(&plan->nodes[pc->node]) == TRUTH_COMPARES && n_false > 1)", 1,
     ">", ">=", "n_false > 1 already needs a size of 2 or more, so a size of 1 fails the test either way"),
    # Each text's placeholders are read by index below narration->n_placeholders only (j counts
    # the parts that hold an expression, which are the placeholders).
    ("narrate.c", "t->placeholders = arena_array(n->arena, t->narration->n_placeholders + 1, sizeof(Placeholder));", 0,
     "1", "2", "a placeholder more past the ones every loop reads is never read"),
    # A seeded quiz picks element u * size with u = (2v - 1 + 1) / 2 and v = k * 2^-53 below 1,
    # so u is at most 1 - 2^-53, and u * size rounds below size for every size below 2^53:
    # the guard against picking element `size` never holds.
    ("quiz.c", "flat = size - 1;", 0, "1", "2",
     "u is at most 1 - 2^-53, so flat is always below size and the line is never reached"),
    # tracer/render. wrap_line gives fit_prefix at least TEXTWRAP_MIN_COLUMNS (20) columns, and
    # one character takes at most two (a colour escape none), so the first never passes them.
    ("textwrap.c", "if (w + cw > cols && i > 0)", 1, ">", ">=",
     "the first character (at most 2 columns of at least 20) never passes cols, so i > 0 need not be tested"),
    # tracer/run, fast, kernel.
    # A gradient stage's value is put in the trace's tensors for its check and taken out again:
    # on success run_plan stores the same tensor there next; on failure the trace is destroyed
    # up to n_tensors, which does not count node i yet, so the stale pointer is never read.
    ("run.c", "run->trace->tensors[i] = NULL;", 0, "run->trace->tensors[i] = NULL;", ";",
     "run_plan stores the same value at i, or destroys the trace up to n_tensors = i"),
    # `where` names the first element left out, and is read only by the notes that leave one out.
    ("gradcheck.c", "if (left_out > 0)", 0, ">", ">=",
     "`where` is written for element 0 too, but read only when an element was left out"),
    # ScheduleRun is allocated zeroed: room for two changes nothing written or read.
    ("fast.c", "ScheduleRun *s = util_calloc(1, sizeof(ScheduleRun));", 0, "1", "2",
     "a second zeroed ScheduleRun past the first is never read"),
    # The fast weight reader gives the reference's bits (test_widen holds it to that); without it
    # every weight is read by the reference, only slower.
    ("fast.c", "widen_install();", 0, "widen_install();", ";",
     "without the fast reader the reference reads the same values and finds the same NaNs, only slower"),
    # A fast reader that declines a run (returns false) leaves it to the reference, which widens
    # the same values or finds the same first NaN (the three `return true;` of widen.c).
    ("widen.c", "return true;\n}", 0, "true", "false",
     "a run the fast reader declines is read by the reference, with the same values and the same first NaN"),
    # Every caller gives fast_transpose_steps a rank of 2 or more: in_place.c views only inputs of
    # rank 2 or more, and test_gemm passes split heads.
    ("fast_ops.c", "if (r >= 2) {", 0, "2", "1", "no caller passes a rank below 2"),
    # The op table's entries looked up again on every call: the same entries, only slower.
    ("fast_ops.c", "found = true;", 0, "true", "false",
     "looking the same entries up again on every call finds the same entries"),
    # freeing_init files node 0 last in its bucket, at the bucket's first slot; frees is zeroed,
    # so a walk that stops before node 0 leaves 0, node 0, in that slot all the same.
    ("freeing.c", "for (size_t k = n; k-- > 0;)\nif (!keep[k])", 0, "0", "1",
     "the slot node 0 would be filed in is zeroed, and 0 is node 0"),
    # freeing_init's one caller, fast_start, calls fast_finish (and so freeing_finish) when it fails.
    ("freeing.c", "freeing_finish(f);", 0, "freeing_finish(f);", ";",
     "the one caller, fast_start, finishes the Freeing itself when freeing_init fails"),
    # pending has room for n_nodes + 1 and is set only below n_nodes: the one more is NULL.
    ("in_place.c", "for (size_t k = 0; ip->pending && k < plan->n_nodes; k++)", 0, "<", "<=",
     "pending[n_nodes] is allocated and always NULL, and tensor_destroy(NULL) does nothing"),
    # The rows of a block: the rows left, or GEMM_MC; when exactly GEMM_MC are left, both.
    ("gemm.c", "size_t mc = rows - ic < GEMM_MC ? rows - ic : GEMM_MC;", 0, "<", "<=",
     "when rows - ic == GEMM_MC both branches give GEMM_MC"),
    # A reshape's -1 (the only negative size that gets this far) is the unknown axis, whose size
    # is written over it before the shape is returned.
    ("kernel_layout.c", "s.dim[i] = dims[i] < 0 ? 0 : (size_t)dims[i];", 1, "0", "1",
     "the -1's axis is set to the size worked out (s.dim[unknown]) before the shape is returned"),
    # The two ways of a product's gradient give the same bits (grad_product_fast says why, and
    # test_grad_product holds it to it); which one runs changes only the time.
    ("kernel_grad.c", "bool fast = backend_installed() != NULL && n * k * m >= KERNEL_GRAD_PRODUCT_MIN_WORK;", 0,
     "!=", "==", "the loop and the installed product give a gradient the same bits, so only the time changes"),
    # expect_values is an ASSERT (kernel_private.h): no run gives a kernel a tensor without values.
    ("kernel_axis.c", "expect_values(din);\nexpect_values(dout);", 0, "expect_values(din);", ";",
     "an ASSERT that no input reaches: the run gives every kernel tensors with values"),
    ("kernel_triangle.c", "expect_values(din);", 0, "expect_values(din);", ";",
     "an ASSERT that no input reaches: the run gives every kernel tensors with values"),
    ("kernel_layout.c", "expect_values(parts[0]);", 0, "expect_values(parts[0]);", ";",
     "an ASSERT that no input reaches: the run gives every kernel tensors with values"),
    # The merge sort of kernel_sort.c: its bounds are clamped to the row, so one step past them
    # merges nothing. A pass whose one block is the whole row (width == n) copies the row onto
    # itself; a block starting at the row's end (lo == n) is empty; a left block that ends
    # exactly at the row's end, or a right one, ends at n either way.
    ("kernel_sort.c", "for (size_t width = 1; width < n; width *= 2) {", 0, "<", "<=",
     "a pass with width == n merges the whole row with nothing: the same row"),
    ("kernel_sort.c", "for (size_t lo = 0; lo < n; lo += 2 * width) {", 0, "<", "<=",
     "a block at lo == n is empty: mid and hi are n, and nothing is copied"),
    ("kernel_sort.c", "size_t mid = n - lo > width ? lo + width : n, hi = n - mid > width ? mid + width : n;", 0,
     ">", ">=", "when n - lo == width, lo + width is n: the same end"),
    ("kernel_sort.c", "size_t mid = n - lo > width ? lo + width : n, hi = n - mid > width ? mid + width : n;", 1,
     ">", ">=", "when n - mid == width, mid + width is n: the same end"),
    # Room for the row and the merge's copy of it: 2n entries are used, more are never read, and
    # an empty row (n == 0) uses none, so its block of 1, 0 or 2 entries is never read either.
    ("kernel_sort.c", "Ranked *ranked = util_calloc(2 * (n ? n : 1), sizeof(Ranked));", 0, "2", "3",
     "a third row of room is never read"),
    ("kernel_sort.c", "Ranked *ranked = util_calloc(2 * (n ? n : 1), sizeof(Ranked));", 0, "1", "0",
     "an empty row reads no entry, and util_calloc gives a block for a count of 0 too"),
    ("kernel_sort.c", "Ranked *ranked = util_calloc(2 * (n ? n : 1), sizeof(Ranked));", 0, "1", "2",
     "an empty row reads no entry of its block"),
    # expect_values is an ASSERT (kernel_private.h), as in the kernels above.
    ("kernel_sort.c", "expect_values(out);", 0, "expect_values(out);", ";",
     "an ASSERT that no input reaches: the run gives every kernel tensors with values"),
    ("kernel_sort.c", "expect_values(x);\nASSERT(k <= last_dim(&x->shape) && out->size == row_count(x) * k);", 0,
     "expect_values(x);", ";", "an ASSERT that no input reaches: the run gives every kernel tensors with values"),
    ("kernel_sort.c", "expect_values(din);", 0, "expect_values(din);", ";",
     "an ASSERT that no input reaches: the run gives every kernel tensors with values"),
    ("kernel_sort.c", "expect_values(dout);", 0, "expect_values(dout);", ";",
     "an ASSERT that no input reaches: the run gives every kernel tensors with values"),
    ("kernel_sort.c", "expect_values(x);\nASSERT(shape_equal(&din->shape, &x->shape) && dout->size == row_count(x) * k);", 0,
     "expect_values(x);", ";", "an ASSERT that no input reaches: the run gives every kernel tensors with values"),
    # --step's page to start on: pager_show starts on page 1 whenever *at is not a page
    # (1 to n), and writes *at before it returns to be called again.
    ("cmd_step.c", "size_t at = 1;", 0, "1", "0",
     "pager_show takes an *at of 0, outside 1..n, as page 1"),
    # pipeline_run_file_pages begins with *pages = (Pages){0}, before anything reads them.
    ("cmd_step.c", "Pages pages = {0};", 0, "0", "1",
     "pipeline_run_file_pages sets *pages to {0} before any field is read"),
    # The machine's memory when TRACER_MEMORY is unset: on Linux, sysconf gives the number of
    # physical pages and the page size, both positive, so its fallback of 0 is never taken.
    ("main.c", "opts->memory = cli_memory_within(pages > 0 && page > 0 ? (double)pages * (double)page : 0, limits,", 2, "0", "1",
     "sysconf(_SC_PHYS_PAGES) and sysconf(_SC_PAGE_SIZE) are positive on Linux"),
    # --step's number being typed: typed holds at most 15 characters and its NUL, so typed and
    # one key more need the 17 bytes of sizeof(typed) + 1; a byte more is never written.
    ("pager.c", "char more[sizeof(typed) + 1];", 0, "1", "2",
     "typed and one key fit in sizeof(typed) + 1 bytes, so a byte of room more is never used"),
    # diag_error takes a width of 0 as 1 (d->width = width ? width : 1): the same caret.
    ("watch.c", 'return diag_error(diag, STATUS_USAGE_ERROR, NULL, 0, 0, 0, "stopped watching \'%s\': it is now %s", w->path,',
     2, "0", "1", "diag_error stores a width of 0 as 1"),
    # A zeroed block of two where one is used: the second is never read, and calloc's count
    # is not one of the allocations util_fail_allocation counts (that is one call either way).
    ("given_file.c", "return util_calloc(1, sizeof(GivenFiles));", 0, "1", "2",
     "room for a second GivenFiles is never read or written"),
    ("given_text.c", "return util_calloc(1, sizeof(GivenTokenizers));", 0, "1", "2",
     "room for a second GivenTokenizers is never read or written"),
    # A text given's ids: its slot of the givens is zeroed (arena memory), so value_nodes is
    # already NULL, unless a given that failed to load left its own there; and nothing reads
    # value_nodes (the checker, --lint) of a lesson that failed to load.
    ("lesson_given.c", "g->value_nodes = NULL;", 0, "g->value_nodes = NULL;", ";",
     "value_nodes is NULL already, or left by a failed given in a lesson that never runs"),
    # sizeof does not evaluate its operand: letters[1] is a UnicodeRange as letters[0] is.
    ("unicode_classes.c", "return in_ranges(letters, sizeof letters / sizeof letters[0], cp);", 0, "0", "1",
     "sizeof letters[1] is the size of one range, as sizeof letters[0] is"),
    ("unicode_classes.c", "return in_ranges(numbers, sizeof numbers / sizeof numbers[0], cp);", 0, "0", "1",
     "sizeof numbers[1] is the size of one range, as sizeof numbers[0] is"),
    # yamldoc_node_width's every caller passes it on to diag_error, which stores a width of 0
    # as 1 (d->width = width ? width : 1).
    ("yamldoc.c", "if (!node || node->end_line != node->line || node->end_col <= node->col)", 0, "<=", "<",
     "a width of 0 goes only to diag_error, which takes it as 1"),
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
        elif kind == "ident" and word in ("true", "false"):
            found.append((off, word, "false" if word == "true" else "true"))
        elif kind == "ident" and word == "return":
            # The value returned made 0 (false, NULL), unless it is a constant already.
            depth, j = 0, i + 1
            while j < len(toks) and not (toks[j][1] == ";" and depth == 0):
                depth += toks[j][1] in "([{"
                depth -= toks[j][1] in ")]}"
                j += 1
            if j > i + 2 or (j == i + 2 and toks[i + 1][0] == "ident" and toks[i + 1][1] not in ("true", "false", "NULL")):
                last = toks[j - 1]
                found.append((toks[i + 1][2], text[toks[i + 1][2]:last[2] + len(last[1])], "0"))
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
    """A copy of the tree with its own coverage build, kept between runs (by default in
    build/mutants), so a run rebuilds only what changed since the last."""

    def __init__(self, folder):
        self.dir = Path(folder).resolve()
        self.src = self.dir / "src"
        self.build = self.src / "build"  # where some tests look for the tracer: build/tracer/tracer
        self.running = []
        self.restore = None  # (path, text) of a mutated file, written back on the way out

    def sync_tree(self):
        """Copy the working tree (committed or not) into the copy, writing only the files that
        differ so that ninja rebuilds only what changed; returns digests of the sources of
        tracer/ and of the whole tree."""
        files = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                               check=True, capture_output=True).stdout.decode().split("\0")
        digest, sources = hashlib.sha256(), hashlib.sha256()
        for name in sorted(filter(None, files)):
            source, target = ROOT / name, self.src / name
            if source.is_symlink():  # a lesson may be a dangling link on purpose
                link = os.readlink(source)
                digest.update(f"{name} -> {link}\0".encode())
                if not target.is_symlink() or os.readlink(target) != link:
                    target.parent.mkdir(parents=True, exist_ok=True)
                    if target.exists() or target.is_symlink():
                        target.unlink()
                    os.symlink(link, target)
            elif source.is_file():
                data = source.read_bytes()
                digest.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
                if name.startswith("tracer/"):
                    sources.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
                if target.is_symlink() or not target.is_file() or target.read_bytes() != data:
                    target.parent.mkdir(parents=True, exist_ok=True)
                    if target.is_symlink():
                        target.unlink()
                    shutil.copy(source, target)  # a new mtime, so ninja sees the change
        return sources.hexdigest(), digest.hexdigest()

    def setup(self):
        if (self.build / "build.ninja").is_file():
            return
        # Unoptimised, so that each line gcov counts is a line of the source.
        run = subprocess.run(["meson", "setup", str(self.build), str(self.src), "-Db_coverage=true",
                              "-Dbuildtype=debug"], capture_output=True, text=True)
        if run.returncode != 0:
            sys.exit("meson setup failed in the copy:\n" + run.stdout + run.stderr)
        # The tokenizer's test compares with the npm encoder that .ci/run installs in build/npm.
        npm = ROOT / "build" / "npm"
        if npm.is_dir() and not (self.build / "npm").exists():
            os.symlink(npm, self.build / "npm")

    def compile(self, targets=()):
        """Build the targets given (all when none); False when the build fails."""
        run = subprocess.run(["ninja", "-C", str(self.build), *targets], capture_output=True, text=True)
        return run.returncode == 0

    def tests(self, suites):
        info = subprocess.run(["meson", "introspect", "--tests", str(self.build)], check=True, capture_output=True,
                              text=True).stdout
        wanted = {"tracer:" + s for s in suites}
        found = {}  # a name meson lists twice (a case named twice in a list) is one test
        for t in json.loads(info):
            if wanted & set(t["suite"]) and t["name"] not in LEFT_OUT:
                found.setdefault(t["name"], t)
        return list(found.values())

    def outputs(self):
        """Every file a build target writes, relative to the build folder (what ninja can build)."""
        info = subprocess.run(["meson", "introspect", "--targets", str(self.build)], check=True, capture_output=True,
                              text=True).stdout
        return {os.path.relpath(f, self.build) for t in json.loads(info) for f in t["filename"]}

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
        if self.restore:
            path, text = self.restore
            path.write_text(text)
            self.restore = None


def targets_of(tests, outputs):
    """What a test needs built: the programs of its command that the build writes, and the
    tracer for every test that is not one of the unit programs (the scripts run the tracer)."""
    needed = {TRACER}
    for t in tests:
        for item in t["cmd"]:
            if os.path.isabs(item):
                needed |= {o for o in outputs if item.endswith("/" + o)}
    return sorted(needed)


# ---------------------------------------------------------------- which tests reach which line

def gcov_lines(build, src):
    """The lines of tracer/ that gcov saw, from every .gcda in the build: {path: {line: count}}."""
    seen = {}
    by_folder = {}
    for gcda in build.rglob("*.gcda"):
        by_folder.setdefault(gcda.parent, []).append(gcda.name)
    for folder, names in by_folder.items():
        run = subprocess.run(["gcov", "--json-format", "--stdout", "--object-directory", str(folder), *names],
                             cwd=folder, capture_output=True, text=True)
        for doc in run.stdout.splitlines():
            if not doc.startswith("{"):
                continue
            for f in json.loads(doc).get("files", []):
                path = os.path.relpath(os.path.normpath(os.path.join(build, f["file"])), src)
                if not path.startswith("tracer/") or not path.endswith(".c"):
                    continue
                lines = seen.setdefault(path, {})
                for ln in f["lines"]:
                    lines[ln["line_number"]] = lines.get(ln["line_number"], 0) + ln["count"]
    return seen


def coverage_map(ws, tests, keys, fresh):
    """Run each test alone in the coverage build and note the lines of tracer/ it executes.
    The map is kept in the copy's build folder. When the sources of tracer/ change it is made
    again; when only the rest of the tree does, only the new tests and the unit programs (whose
    tests may have grown) run again, unless fresh says to run them all."""
    cache = ws.build / "mutants-map.json"
    sources, tree = keys
    found = json.loads(cache.read_text()) if cache.is_file() and not fresh else {}
    if found.get("sources") != sources:
        found = {"sources": sources, "tree": None, "tests": {}, "lines": {}, "files": {}}
    todo = [t for t in tests if t["name"] not in found["tests"] or
            (found["tree"] != tree and "tracer:unit" in t["suite"])]
    if not todo:
        print(f"which tests reach which line: from {cache}")
        return found
    print(f"which tests reach which line: running {len(todo)} tests one at a time in the coverage build")
    start = time.monotonic()
    for k, test in enumerate(todo, 1):
        forget(found, test["name"])
        for gcda in ws.build.rglob("*.gcda"):
            gcda.unlink()
        # Four times meson's limit: a busy machine must not make a test look broken.
        limit = 4 * test["timeout"] if test["timeout"] > 0 else 3600
        failed, took, _ = run_tests(ws, [test], 1, {test["name"]: limit}, every=True)
        found["tests"][test["name"]] = {"seconds": round(took.get(test["name"], test["timeout"]), 2),
                                        "failed": failed[0][1] if failed else None}
        for path, lines in gcov_lines(ws.build, ws.src).items():
            into = found["lines"].setdefault(path, {})
            reached = False
            for line, count in lines.items():
                into.setdefault(str(line), [])
                if count:
                    into[str(line)].append(test["name"])
                    reached = True
            if reached:
                found["files"].setdefault(path, []).append(test["name"])
        if k % 20 == 0 or k == len(todo):
            print(f"  {k}/{len(todo)} tests ({time.monotonic() - start:.0f} s)", flush=True)
    found["tree"] = tree
    cache.write_text(json.dumps(found) + "\n")
    return found


def forget(found, name):
    """Take a test out of the map, before it runs again."""
    found["tests"].pop(name, None)
    for lines in found["lines"].values():
        for names in lines.values():
            if name in names:
                names.remove(name)
    for names in found["files"].values():
        if name in names:
            names.remove(name)


def reaching(found, m):
    """The names of the tests that execute the mutant's line; for a line gcov counts nothing
    on (a table's initialiser, a declaration), those that execute any line of its file, and for
    a file of tables alone (gcov counts no line of it), any line of its folder."""
    lines = found["lines"].get(m["path"], {})
    if str(m["line"]) in lines:
        return set(lines[str(m["line"])])
    if m["path"] in found["files"]:
        return set(found["files"][m["path"]])
    folder = os.path.dirname(m["path"]) + "/"
    return {name for path, names in found["files"].items() if path.startswith(folder) for name in names}


def run_tests(ws, tests, jobs, limits, every=False, deadline=None):
    """Run tests (in order, up to jobs at a time) until one fails, or with every all of them,
    or until the deadline (a time.monotonic()) passes. Returns the failures, each (name, how),
    the time each test took, and whether every test that was to run has run."""
    queue = list(tests)
    active = []  # (proc, test, started)
    took = {}
    failed = []
    while (queue or active) and (every or not failed):
        if deadline is not None and time.monotonic() > deadline:
            for proc, _, _ in active:
                ws.stop(proc)
            return failed, took, False
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
    return failed, took, True


def order_for(module, tests, took):
    """The tests that name the module first, then the quickest."""
    def names_module(t):
        return module in t["name"].split() or any(Path(c).name == "test_" + module for c in t["cmd"])
    return sorted(tests, key=lambda t: (not names_module(t), took.get(t["name"], 0)))


# ---------------------------------------------------------------- the run

RESULTS = ("killed", "survived", "equivalent", "does not compile", "out of time")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+", help="sources under tracer/ (quiz.c, tracer/judge/quiz.c or a folder, tracer/base)")
    ap.add_argument("--sample", type=int, default=0, help="mutants of each file (default: all)")
    ap.add_argument("--seed", type=int, default=1, help="the sample's seed (default 1)")
    ap.add_argument("--jobs", type=int, default=1, help="tests run at a time (default 1)")
    ap.add_argument("--line", type=int, action="append", help="only mutants on this line (repeatable)")
    ap.add_argument("--list", action="store_true", help="list the mutants and stop")
    ap.add_argument("--timeout", type=float, default=900, help="seconds of tests for one mutant (default 900)")
    ap.add_argument("--workdir", default=str(ROOT / "build" / "mutants"),
                    help="the copy and its coverage build, kept between runs (default build/mutants)")
    ap.add_argument("--fresh-map", action="store_true", help="run every test again for the map of lines")
    ap.add_argument("--json", help="write every mutant's result to this file (after each mutant)")
    ap.add_argument("--suites", default=",".join(SUITES), help=f"the suites run (default {','.join(SUITES)})")
    args = ap.parse_args()

    chosen = []
    for name in args.files:
        if (ROOT / name).is_dir():
            found = sorted((ROOT / name).glob("*.c"))
        elif (ROOT / name).is_file():
            found = [ROOT / name]
        else:
            found = sorted((ROOT / "tracer").glob("**/" + name))
            if len(found) != 1:
                sys.exit(f"no such source under tracer/: {name}" if not found else f"{name} is ambiguous: {found}")
        for path in found:
            chosen += choose(path, args)
    if args.list:
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # | head
        for m in chosen:
            reason = equivalent_reason(m)
            print(describe(m) + (f"  (equivalent: {reason})" if reason else ""))
        return 0

    ws = Workspace(args.workdir)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # even when started in the background
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))
    results = []
    try:
        print(f"bringing the copy in {ws.dir} up to date and building it")
        keys = ws.sync_tree()
        ws.setup()
        if not ws.compile():
            sys.exit("the unmutated copy does not build")
        tests = ws.tests(args.suites.split(","))
        found = coverage_map(ws, tests, keys, args.fresh_map)
        broken = {name for name, t in found["tests"].items() if t["failed"]}
        if broken:
            print("these tests fail unmutated, so no mutant is judged by them:\n" +
                  "".join(f"  {n} ({found['tests'][n]['failed']})\n" for n in sorted(broken)))
        took = {name: t["seconds"] for name, t in found["tests"].items()}
        # Generous, as the machine may be busier than when the map was made: a loop that no
        # longer ends is caught all the same.
        limits = {name: max(60.0, 10 * s) for name, s in took.items()}
        outputs = ws.outputs()
        for k, m in enumerate(chosen, 1):
            judge(ws, m, [t for t in tests if t["name"] in reaching(found, m) - broken], took, limits, outputs, args)
            how = f" by {m['by']}" if m["result"] == "killed" else f" ({m['by']})" if "by" in m else ""
            print(f"[{k}/{len(chosen)}] {describe(m)}: {m['result']}{how}" +
                  (f" ({m['seconds']} s)" if "seconds" in m else ""), flush=True)
            results.append(m)
            if args.json:
                Path(args.json).write_text(json.dumps(results, indent=1) + "\n")
    except KeyboardInterrupt:
        print("\ninterrupted: the results so far")
    finally:
        ws.close()
    report(results)
    return 0


def choose(path, args):
    """The mutants of one file that this run judges: all, those of --line, or a --sample."""
    relative = path.relative_to(ROOT)
    all_of = mutants_of(path, path.read_text())
    for m in all_of:
        m["path"] = str(relative)
    if args.line:
        all_of = [m for m in all_of if m["line"] in args.line]
    pick = all_of
    if args.sample and args.sample < len(all_of):
        pick = sorted(random.Random(f"{args.seed}:{path.name}").sample(all_of, args.sample), key=lambda m: m["offset"])
    print(f"{relative}: {len(all_of)} mutants, {len(pick)} chosen")
    return pick


def judge(ws, m, tests, took, limits, outputs, args):
    """Apply one mutant in the copy, build what its tests need and run them, fail-fast."""
    reason = equivalent_reason(m)
    if reason:
        m["result"], m["by"] = "equivalent", reason
        return
    if not tests:
        m["result"], m["by"] = "survived", "no test reaches the line"
        return
    target = ws.src / m["path"]
    original = target.read_text()
    ws.restore = (target, original)
    target.write_text(mutated(original, m))
    try:
        began = time.monotonic()
        if not ws.compile(targets_of(tests, outputs)):
            m["result"] = "does not compile"
        else:
            module = Path(m["path"]).stem
            failed, _, finished = run_tests(ws, order_for(module, tests, took), args.jobs, limits,
                                            deadline=began + args.timeout)
            m["result"] = "killed" if failed else "survived" if finished else "out of time"
            if failed:
                m["by"] = f"{failed[0][0]} ({failed[0][1]})"
            else:
                m["by"] = f"{len(tests)} tests reach it"
        m["seconds"] = round(time.monotonic() - began, 1)
    finally:
        target.write_text(original)
        ws.restore = None


def report(results):
    print(f"\n{'file':<32} mutants  killed  survived  equivalent  not compiled  out of time  killed or equivalent")
    by_file = {}
    for m in results:
        by_file.setdefault(m["path"], []).append(m)
    for path, ms in by_file.items():
        count = {r: sum(m["result"] == r for m in ms) for r in RESULTS}
        viable = len(ms) - count["does not compile"]
        score = 100.0 * (count["killed"] + count["equivalent"]) / viable if viable else 100.0
        print(f"{path:<32} {len(ms):>7} {count['killed']:>7} {count['survived']:>9} {count['equivalent']:>11}"
              f" {count['does not compile']:>13} {count['out of time']:>12} {score:>20.0f}%")
    slow = [m for m in results if m["result"] == "killed" and m["by"].endswith("(ran out of time)")]
    if slow:
        print("\nkilled only by a test's time limit (a loop, or a busy machine: read them):")
        for m in slow:
            print(f"  {describe(m)} ({m['by']})\n      {m['source']}")
    survivors = [m for m in results if m["result"] == "survived"]
    if survivors:
        print("\nsurvivors:")
        for m in survivors:
            print(f"  {describe(m)} ({m['by']})\n      {m['source']}")


if __name__ == "__main__":
    sys.exit(main())
