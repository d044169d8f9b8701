// Tests of lesson: a full lesson read into its parts, and every broken lesson with the exact
// place, message and hint it must report.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lesson.h"

// Numbers are read from their text by strtod, so they compare exactly.
static void expect_number(double got, double want) {
    if (got != want)
        fail_msg("%.17g != %.17g", got, want);
}

static Lesson *load(const char *text, Diag *diag) {
    diag_init(diag);
    return lesson_create("t.yaml", text, strlen(text), diag);
}

// The lesson fails with status 1 at line:col with this message (and hint, unless NULL).
static void expect_error(const char *text, size_t line, size_t col, const char *message,
                         const char *hint) {
    Diag diag;
    Lesson *lesson = load(text, &diag);
    if (lesson)
        print_error("expected '%s' but the lesson loaded\n", message);
    assert_null(lesson);
    assert_int_equal(diag.status, STATUS_LESSON_ERROR);
    assert_string_equal(diag.message, message);
    assert_string_equal(diag.path, "t.yaml");
    assert_int_equal(diag.line, line);
    assert_int_equal(diag.col, col);
    if (hint)
        assert_string_equal(diag.hint, hint);
}

// The lesson loads with exactly one warning, at `at`, and the labels it names are dropped.
static void expect_warning(const char *text, const char *at, const char *message) {
    Diag diag;
    Lesson *lesson = load(text, &diag);
    assert_non_null(lesson);
    assert_int_equal(diag.status, STATUS_OK);
    assert_int_equal(diag.n_warnings, 1);
    assert_string_equal(diag.warnings[0].at, at);
    assert_string_equal(diag.warnings[0].text, message);
    assert_null(lesson->givens[0].rows);
    assert_null(lesson->givens[0].cols);
    lesson_destroy(lesson);
}

// A lesson with one given X and the given or steps text appended.
#define WITH_GIVEN(g) "title: t\ngiven:\n  " g "\nsteps:\n  - a: X\n"
#define WITH_STEPS(s) "title: t\ngiven:\n  X: [1, 2]\nsteps:\n" s

static const char FULL[] =
    "title: The cat sat\n"                                          // 1
    "source: Attention Is All You Need\n"                           // 2
    "intro: |\n"                                                    // 3
    "  Three tokens attend.\n"                                      // 4
    "digits: 3\n"                                                   // 5
    "labels:\n"                                                     // 6
    "  tokens: [The, cat, sat]\n"                                   // 7
    "  dims: [d0, d1]\n"                                            // 8
    "given:\n"                                                      // 9
    "  X:\n"                                                        // 10
    "    values: [[1, 0], [0, 1], [1, 1]]\n"                        // 11
    "    about: token vectors\n"                                    // 12
    "    rows: tokens\n"                                            // 13
    "    cols: [d0, d1]\n"                                          // 14
    "    document: [[1.0, 0], [0, 1], [1, 1]]\n"                    // 15
    "  s: -2.5e-1\n"                                                // 16
    "  v: [.inf, -.inf, +3, .5]\n"                                  // 17
    "  E: {shape: [50257, 768]}\n"                                  // 18
    "  W: {shape: [2, 2], init: identity}\n"                        // 19
    "  R: {shape: [3], init: random, distribution: uniform, scale: 0.02, "
    "seed: 18446744073709551615}\n"                                 // 20
    "  O: {shape: [3, 2], init: ones, rows: tokens, cols: dims}\n"  // 21
    "steps:\n"                                                      // 22
    "  - scores: X @ X.T\n"                                         // 23
    "    say: every token against every token\n"                    // 24
    "    rows: tokens\n"                                            // 25
    "    cols: [The, cat, sat]\n"                                   // 26
    "    explain: [0, -1]\n"                                        // 27
    "  - 'w': 'softmax(scores)'\n"                                  // 28
    "  - q: \"softmax(scores, axis=-1)\"\n"                         // 29
    "    explain: row 2\n"                                          // 30
    "  - e: \"X\\t+ X\"\n"                                          // 31
    "  - f: >\n"                                                    // 32
    "      X +\n"                                                   // 33
    "      X\n"                                                     // 34
    "    explain: all\n"                                            // 35
    "  - g: 'X + ''s'''\n"                                          // 36
    "    document: [[0.20, 1e-3], [1.5e2, 12.345e1]]\n"             // 37
    "  - h: x\xC2\xB7y + 1\n";                                      // 38

static void test_full_lesson(void **state) {
    Diag diag;
    Lesson *lesson = load(FULL, &diag);
    if (!lesson)
        diag_print(&diag, stderr, false);
    assert_non_null(lesson);
    assert_string_equal(lesson->path, "t.yaml");
    assert_string_equal(lesson->title, "The cat sat");
    assert_string_equal(lesson->source, "Attention Is All You Need");
    assert_string_equal(lesson->intro, "Three tokens attend.\n");
    assert_null(lesson->outro);
    assert_int_equal(lesson->digits, 3);

    assert_int_equal(lesson->n_labels, 2);
    assert_string_equal(lesson->labels[0].name, "tokens");
    assert_int_equal(lesson->labels[0].n, 3);
    assert_string_equal(lesson->labels[0].items[2], "sat");

    assert_int_equal(lesson->n_givens, 7);
    const LessonGiven *x = &lesson->givens[0];
    assert_string_equal(x->name, "X");
    assert_int_equal(x->key->line, 10);
    assert_int_equal(x->init, GIVEN_VALUES);
    assert_int_equal(x->shape.rank, 2);
    assert_int_equal(x->shape.dim[0], 3);
    assert_int_equal(x->shape.dim[1], 2);
    expect_number(x->values[4], 1.0);
    expect_number(x->values[5], 1.0);
    assert_int_equal(x->value_nodes[3]->line, 11);
    assert_int_equal(x->value_nodes[3]->col, 26);
    assert_string_equal(x->about, "token vectors");
    assert_ptr_equal(x->rows, &lesson->labels[0]);
    assert_int_equal(x->rows_node->line, 13);
    assert_null(x->cols->name);
    assert_string_equal(x->cols->items[1], "d1");
    assert_non_null(x->document);
    assert_int_equal(x->document->shape.rank, 2);
    assert_int_equal(x->document->decimals[0], 1);
    assert_int_equal(x->document->decimals[1], 0);
    assert_int_equal(x->document->nodes[0]->col, 17);

    const LessonGiven *s = &lesson->givens[1];
    assert_int_equal(s->shape.rank, 0);
    expect_number(s->values[0], -0.25);
    assert_null(s->document);

    const LessonGiven *v = &lesson->givens[2];
    assert_int_equal(v->shape.dim[0], 4);
    assert_true(isinf(v->values[0]) && v->values[0] > 0);
    assert_true(isinf(v->values[1]) && v->values[1] < 0);
    expect_number(v->values[2], 3);
    expect_number(v->values[3], 0.5);

    const LessonGiven *e = &lesson->givens[3];
    assert_int_equal(e->init, GIVEN_SHAPE_ONLY);
    assert_int_equal(e->shape.dim[0], 50257);
    assert_null(e->values);
    assert_int_equal(lesson->givens[4].init, GIVEN_IDENTITY);
    const LessonGiven *r = &lesson->givens[5];
    assert_int_equal(r->init, GIVEN_RANDOM);
    assert_int_equal(r->distribution, KERNEL_UNIFORM);
    expect_number(r->scale, 0.02);
    assert_true(r->seed == UINT64_MAX);
    const LessonGiven *o = &lesson->givens[6];
    assert_int_equal(o->init, GIVEN_ONES);
    assert_string_equal(o->cols->name, "dims");

    assert_int_equal(lesson->n_steps, 7);
    const LessonStep *scores = &lesson->steps[0];
    assert_string_equal(scores->name, "scores");
    assert_string_equal(scores->expr, "X @ X.T");
    assert_string_equal(scores->say, "every token against every token");
    assert_string_equal(scores->rows->name, "tokens");
    assert_int_equal(scores->cols->n, 3);
    assert_int_equal(scores->explain.kind, EXPLAIN_ELEMENT);
    assert_int_equal(scores->explain.n_index, 2);
    assert_int_equal(scores->explain.index[0], 0);
    assert_int_equal(scores->explain.index[1], -1);
    assert_true(scores->expr_exact);
    assert_int_equal(scores->expr_line, 23);
    assert_int_equal(scores->expr_col, 13);
    assert_int_equal(lesson->steps[1].explain.kind, EXPLAIN_NONE);
    assert_null(lesson->steps[1].say);

    size_t line, col;
    lesson_expr_position(scores, 4, &line, &col);  // the second X
    assert_int_equal(line, 23);
    assert_int_equal(col, 17);

    // Quoted without escapes: exact, one column past the quote.
    const LessonStep *w = &lesson->steps[1];
    assert_string_equal(w->name, "w");
    assert_true(w->expr_exact);
    assert_int_equal(w->expr_col, 11);
    const LessonStep *q = &lesson->steps[2];
    assert_true(q->expr_exact);
    lesson_expr_position(q, 8, &line, &col);  // "scores"
    assert_int_equal(line, 29);
    assert_int_equal(col, 17);
    assert_int_equal(q->explain.kind, EXPLAIN_ROW);
    assert_int_equal(q->explain.index[0], 2);

    // An escape, a folded block and a '' escape: errors point at the start of the node.
    const LessonStep *esc = &lesson->steps[3];
    assert_string_equal(esc->expr, "X\t+ X");
    assert_false(esc->expr_exact);
    lesson_expr_position(esc, 3, &line, &col);
    assert_int_equal(line, 31);
    assert_int_equal(col, 8);
    const LessonStep *f = &lesson->steps[4];
    assert_string_equal(f->expr, "X + X\n");
    assert_false(f->expr_exact);
    assert_int_equal(f->explain.kind, EXPLAIN_ALL);
    const LessonStep *g = &lesson->steps[5];
    assert_string_equal(g->expr, "X + 's'");
    assert_false(g->expr_exact);
    assert_int_equal(g->expr_col, 8);

    // Printed decimals: digits after the point less the exponent; 1.5e2 ends in the tens
    // place, -1.
    const DocValues *doc = g->document;
    assert_non_null(doc);
    assert_int_equal(doc->shape.dim[0], 2);
    assert_int_equal(doc->decimals[0], 2);
    assert_int_equal(doc->decimals[1], 3);
    assert_int_equal(doc->decimals[2], -1);
    assert_int_equal(doc->decimals[3], 2);
    expect_number(doc->values[3], 123.45);
    assert_int_equal(doc->nodes[1]->line, 37);
    assert_int_equal(doc->nodes[1]->col, 23);

    // Columns count characters: the middle dot is two bytes, one column.
    const LessonStep *h = &lesson->steps[6];
    assert_true(h->expr_exact);
    lesson_expr_position(h, 3, &line, &col);  // 'y'
    assert_int_equal(col, 10);
    lesson_destroy(lesson);
    lesson_destroy(NULL);
}

static void test_defaults(void **state) {
    Diag diag;
    Lesson *lesson = load("title: t\ngiven:\n  R: {shape: [2], init: random}\nsteps:\n  - a: R\n",
                          &diag);
    assert_non_null(lesson);
    assert_int_equal(lesson->digits, -1);
    assert_null(lesson->source);
    assert_int_equal(lesson->n_labels, 0);
    assert_int_equal(lesson->givens[0].distribution, KERNEL_NORMAL);
    expect_number(lesson->givens[0].scale, 1);
    assert_true(lesson->givens[0].seed == 0);
    assert_null(lesson->givens[0].rows);
    assert_null(lesson->steps[0].document);
    lesson_destroy(lesson);
}

static void test_empty_lesson(void **state) {
    const char *message = "the lesson is empty; a lesson needs at least title: and steps:";
    expect_error("", 1, 1, message, "start with `title: ...`, then `steps:` and a list of steps");
    expect_error("# just a comment\n\n", 1, 1, message, NULL);
    expect_error("---\n", 1, 1, message, NULL);
}

static void test_top_level(void **state) {
    expect_error("- title: x\n", 1, 1,
                 "a lesson must be a mapping with keys like title: and steps:, but this is a list",
                 "start the file with `title: ...` at the left margin, then `steps:`");
    expect_error("just words\n", 1, 1,
                 "a lesson must be a mapping with keys like title: and steps:, but this is a "
                 "number or word",
                 NULL);
    expect_error("title: t\nstpes:\n  - a: 1\n", 2, 1,
                 "unknown key 'stpes' at the top of the lesson", "did you mean 'steps'?");
    expect_error("title: t\nbanana: 1\nsteps: [a: 1]\n", 2, 1,
                 "unknown key 'banana' at the top of the lesson",
                 "the top-level keys are title, source, intro, outro, digits, labels, given, "
                 "blocks, steps, claims, download and train");
}

// Blocks refused where they are written (the loader's own errors; tests/errors has more).
static void test_blocks_refused(void **state) {
    (void)state;
    expect_error("title: t\ngiven:\n  X: [[1.0, 2.0]]\n  W: [[1.0], [2.0]]\nblocks: [1]\nsteps:\n  - a: X\n",
                 5, 9, "blocks: must be a mapping of blocks by name, but this is a list",
                 "write each block as `name:` with inputs:, results: and steps: under it");
    expect_error("title: t\ngiven:\n  X: [[1.0, 2.0]]\n  W: [[1.0], [2.0]]\nblocks:\n  9x: {steps: [a: X]}\nsteps:\n  - a: X\n",
                 6, 3, "'9x' is not a valid name for a block",
                 "a name starts with a letter or _ and has only letters, digits and _");
    expect_error("title: t\ngiven:\n  X: [[1.0, 2.0]]\n  W: [[1.0], [2.0]]\nblocks:\n  b: 1\nsteps:\n  - a: X\n",
                 6, 6, "block 'b' must be a mapping with inputs:, results: and steps:, but this is a number or word",
                 "a block has inputs:, results: and steps:");
    expect_error("title: t\ngiven:\n  X: [[1.0, 2.0]]\n  W: [[1.0], [2.0]]\nblocks:\n  b: {step: [a: X]}\nsteps:\n  - a: X\n",
                 6, 7, "unknown key 'step' in block 'b'",
                 "did you mean 'steps'?");
    expect_error("title: t\ngiven:\n  X: [[1.0, 2.0]]\n  W: [[1.0], [2.0]]\nblocks:\n  b: {inputs: [x]}\nsteps:\n  - a: X\n",
                 6, 3, "block 'b' needs steps:, a list of at least one step",
                 "write the block's steps as a lesson's: `- name: expression`");
    expect_error("title: t\ngiven:\n  X: [[1.0, 2.0]]\n  W: [[1.0], [2.0]]\nblocks:\n  b: {inputs: x, steps: [a: x]}\nsteps:\n  - a: X\n",
                 6, 15, "inputs: of block 'b' must be a list of names, but this is a number or word",
                 "write the names as a list, like [x, W]");
    expect_error("title: t\ngiven:\n  X: [[1.0, 2.0]]\n  W: [[1.0], [2.0]]\nblocks:\n  b: {inputs: [1a], steps: [a: X]}\nsteps:\n  - a: X\n",
                 6, 16, "inputs: of block 'b' holds '1a', which is not a name",
                 "a name starts with a letter or _ and has only letters, digits and _");
    expect_error("title: t\ngiven:\n  X: [[1.0, 2.0]]\n  W: [[1.0], [2.0]]\nblocks:\n  b: {inputs: [x, x], steps: [a: x]}\nsteps:\n  - a: X\n",
                 6, 19, "'x' is twice in inputs: of block 'b'",
                 "each name is defined once; give this one another name");
    expect_error("title: t\ngiven:\n  X: [[1.0, 2.0]]\n  W: [[1.0], [2.0]]\nblocks:\n  b: {inputs: [x], steps: [x: x]}\nsteps:\n  - a: X\n",
                 6, 28, "the step 'x' of block 'b' has the name of one of its inputs",
                 "a step of a block names a new value; give it another name");
    expect_error("title: t\ngiven:\n  X: [[1.0, 2.0]]\n  W: [[1.0], [2.0]]\nblocks:\n  b:\n    inputs: [x]\n    results: [y]\n    steps:\n      - y: x * 2\nsteps:\n  - use: b\n    as: 1a\n    inputs: {x: X}\n",
                 13, 9, "as: must be a name, but this is '1a'",
                 "as: is a name, like layer: the steps are then named layer1.q, layer2.q, ...");
    expect_error("title: t\ngiven:\n  X: [[1.0, 2.0]]\n  W: [[1.0], [2.0]]\nblocks:\n  b:\n    inputs: [x]\n    results: [y]\n    steps:\n      - y: x * 2\nsteps:\n  - use: b\n    inputs: [X]\n",
                 13, 13, "inputs: of an application of block 'b' must be a mapping, but this is a list",
                 "write it as a mapping, like {x: X}");
    expect_error("title: t\ngiven:\n  X: [[1.0, 2.0]]\n  W: [[1.0], [2.0]]\nblocks:\n  b:\n    inputs: [x]\n    results: [y]\n    steps:\n      - y: x * 2\nsteps:\n  - use: b\n    inputs: {x: [X]}\n",
                 13, 17, "the input 'x' must be bound to a name, but this is a list",
                 "bind an input to the name of a given or of an earlier step");
    expect_error("title: t\ngiven:\n  X: [[1.0, 2.0]]\n  W: [[1.0], [2.0]]\nblocks:\n  b:\n    inputs: [x]\n    results: [y]\n    steps:\n      - y: x * 2\nsteps:\n  - use: b\n    inputs: {x: X}\n    carry: {z: y}\n",
                 14, 13, "block 'b' has no input 'z'",
                 "the input of block 'b' is x");
    expect_error("title: t\ngiven:\n  X: [[1.0, 2.0]]\n  W: [[1.0], [2.0]]\nblocks:\n  b:\n    inputs: [x]\n    results: [y]\n    steps:\n      - y: x * 2\nsteps:\n  - use: b\n    inputs: {x: X}\n    results: [y]\n",
                 14, 14, "results: of an application of block 'b' must be a mapping, but this is a list",
                 "write it as a mapping, like {x: X}");
    expect_error("title: t\ngiven:\n  X: [[1.0, 2.0]]\n  W: [[1.0], [2.0]]\nblocks:\n  b:\n    inputs: [x]\n    results: [y]\n    steps:\n      - y: x * 2\nsteps:\n  - use: b\n    inputs: {x: X}\n    results: {out: z}\n",
                 14, 20, "block 'b' has no result 'z'",
                 "the result of block 'b' is y");
    expect_error("title: t\ngiven:\n  X: [[1.0, 2.0]]\n  W: [[1.0], [2.0]]\nblocks:\n  b:\n    inputs: [x]\n    results: [y]\n    steps:\n      - y: x * 2\nsteps:\n  - use: b\n    times: nope\n    inputs: {x: X}\n",
                 13, 12, "times: names 'nope', but no given has that name",
                 "times: is a whole number, like 2, or the name of a given number, like n_layer");
    expect_error("title: t\ngiven:\n  X: [[1.0, 2.0]]\n  W: [[1.0], [2.0]]\nblocks:\n  b:\n    inputs: [x]\n    results: [y]\n    steps:\n      - y: x * 2\nsteps:\n  - use: b\n    times: X\n    inputs: {x: X}\n",
                 13, 12, "times: names 'X', which is not a single number",
                 "times: is a whole number, like 2, or the name of a given number, like n_layer");
    expect_error("title: t\ngiven:\n  X: [[1.0, 2.0]]\n  W: [[1.0], [2.0]]\nblocks:\n  b:\n    inputs: [x]\n    results: [y]\n    steps:\n      - y: x * 2\nsteps:\n  - use: b\n    inputs: {x: X}\n    results: {1o: y}\n",
                 14, 15, "'1o' is not a valid name",
                 "a name starts with a letter or _ and has only letters, digits and _, like W_Q or scores2");
    expect_error("title: t\ngiven:\n  X: [[1.0, 2.0]]\n  W: [[1.0], [2.0]]\nblocks:\n  b: {steps: [1a: X]}\nsteps:\n  - use: b\n",
                 6, 15, "'1a' is not a valid name",
                 "a name starts with a letter or _ and has only letters, digits and _, like W_Q or scores2");
    expect_error("title: t\ngiven:\n  X: [[1.0, 2.0]]\n  W: [[1.0], [2.0]]\nblocks:\n  b:\n    inputs: [x]\n    results: [y]\n    steps:\n      - y: x * 2\n  c:\n    steps:\n      - use: b\n        inputs: {x: X}\n        results: {1o: y}\nsteps:\n  - use: c\n",
                 15, 19, "'1o' is not a valid name",
                 "a name starts with a letter or _ and has only letters, digits and _, like W_Q or scores2");
    expect_error("title: t\ngiven:\n  X: [[1.0, 2.0]]\n  W: [[1.0], [2.0]]\nblocks:\n  one: {steps: [a: X]}\n  many:\n    steps:\n      - use: one\n        times: 1000\nsteps:\n  - use: many\n    times: 101\n",
                 12, 10, "the blocks' applications make more than 100000 steps",
                 "apply blocks fewer times, or split the lesson");
    expect_error("title: t\ngiven:\n  X: [[1.0, 2.0]]\n  W: [[1.0], [2.0]]\nsteps:\n  - use: b\n    as: c\n",
                 6, 10, "there is no block named 'b'",
                 "use: names a block defined under blocks:");
    expect_error("title: t\ngiven:\n  X: [[1.0, 2.0]]\n  W: [[1.0], [2.0]]\nblocks:\n  b:\n    inputs: [x]\n    results: [y]\n    steps:\n      - y: x * 2\nsteps:\n  - use: [b]\n",
                 12, 10, "there is no block named a list",
                 "use: names a block defined under blocks:");
}

// A block applied inside a block applied twice: each step named after both applications, the
// inner results: named in the outer block (c1.z), the last one's also in the lesson (out),
// and the second application reading the first's result through that name.
static void test_blocks_nested(void **state) {
    (void)state;
    Diag diag;
    Lesson *lesson = load("title: t\ngiven:\n  X: [[1.0, 2.0]]\nblocks:\n"
                          "  b:\n    inputs: [x]\n    results: [y]\n    steps:\n      - y: x * 2\n"
                          "  c:\n    inputs: [x]\n    results: [z]\n    steps:\n"
                          "      - use: b\n        inputs: {x: x}\n        results: {z: y}\n"
                          "steps:\n  - use: c\n    times: 2\n    inputs: {x: X}\n    carry: {x: z}\n"
                          "    results: {out: z}\n  - total: sum(out)\n",
                          &diag);
    assert_non_null(lesson);
    assert_int_equal(lesson->n_steps, 3);
    const LessonStep *first = &lesson->steps[0], *second = &lesson->steps[1];
    assert_string_equal(first->name, "c1.b.y");
    assert_string_equal(second->name, "c2.b.y");
    assert_string_equal(lesson->steps[2].name, "total");
    assert_null(lesson->steps[2].scope);
    assert_int_equal(first->n_aliases, 1);
    assert_string_equal(first->aliases[0], "c1.z");
    assert_int_equal(second->n_aliases, 2);
    assert_string_equal(second->aliases[0], "c2.z");
    assert_string_equal(second->aliases[1], "out");
    // In c2.b, x is c2's x, which is c1's z.
    assert_string_equal(first->scope->from[0], "x");
    assert_string_equal(first->scope->to[0], "X");
    assert_string_equal(second->scope->from[0], "x");
    assert_string_equal(second->scope->to[0], "c1.z");
    lesson_destroy(lesson);
}

static void test_missing_sections(void **state) {
    expect_error("steps:\n  - a: 1\n", 1, 1, "the lesson has no title:",
                 "every lesson needs title: and steps:");
    expect_error("title: t\ngiven: {X: 1}\n", 1, 1, "the lesson has no steps:", NULL);
    expect_error("intro: hi\n", 1, 1, "the lesson has no title: and no steps:", NULL);
    expect_error("title: t\nsteps:\n", 2, 1, "steps: is empty; a lesson needs at least one step",
                 "write each step on its own line as `- name: expression`");
    expect_error("title: t\nsteps: []\n", 2, 8,
                 "steps: is empty; a lesson needs at least one step", NULL);
    expect_error("title: t\nsteps: {a: 1}\n", 2, 8,
                 "steps: must be a list of steps, but this is a mapping", NULL);
}

static void test_wrong_kinds(void **state) {
    expect_error("title: [a, b]\nsteps: [a: 1]\n", 1, 8,
                 "title: must be text, but this is a list",
                 "put the text after the key, in quotes if it holds ': '");
    expect_error("title:\nsteps: [a: 1]\n", 1, 7, "title: is empty",
                 "write the lesson's title after 'title:'");
    expect_error("title: t\noutro: {a: 1}\nsteps: [a: 1]\n", 2, 8,
                 "outro: must be text, but this is a mapping", NULL);
    expect_error("title: t\ndigits: 13\nsteps: [a: 1]\n", 2, 9,
                 "digits: must be a whole number from 0 to 12, but this is '13'", NULL);
    expect_error("title: t\ndigits: 2.5\nsteps: [a: 1]\n", 2, 9,
                 "digits: must be a whole number from 0 to 12, but this is '2.5'", NULL);
    expect_error("title: t\ndigits: '4'\nsteps: [a: 1]\n", 2, 9,
                 "digits: must be a whole number from 0 to 12, but this is '4'",
                 "remove the quotes to make it a number");
    expect_error("title: t\ndigits: [4]\nsteps: [a: 1]\n", 2, 9,
                 "digits: must be a whole number from 0 to 12, but this is a list", NULL);
    expect_error("title: t\ngiven: [1, 2]\nsteps: [a: 1]\n", 2, 8,
                 "given: must be a mapping of names to values, but this is a list",
                 "write one given a line, like `X: [[1, 0], [0, 1]]`");
}

static void test_labels(void **state) {
    expect_error("title: t\nlabels: [The, cat]\nsteps: [a: 1]\n", 2, 9,
                 "labels: must be a mapping of names to lists of words, but this is a list",
                 "write one list a line, like `tokens: [The, cat, sat]`");
    expect_error("title: t\nlabels:\n  tokens: The cat sat\nsteps: [a: 1]\n", 3, 11,
                 "the labels 'tokens' must be a list of words, but this is a number or word",
                 "write the words as a list: [The, cat, sat]");
    expect_error("title: t\nlabels:\n  tokens: [The, [cat]]\nsteps: [a: 1]\n", 3, 17,
                 "a label must be a word, but this is a list", NULL);
    expect_error("title: t\nlabels:\n  tokens: []\nsteps: [a: 1]\n", 3, 11,
                 "the labels 'tokens' is an empty list", NULL);
}

static void test_ragged_and_empty_lists(void **state) {
    expect_error(WITH_GIVEN("X: [[1, 2, 3], [4, 5, 6], [7, 8]]"), 3, 29,
                 "ragged rows: this row has 2 values, but the first row has 3",
                 "every row of a tensor must have the same length");
    expect_error(WITH_GIVEN("X: [[[1], [2]], [[3]]]"), 3, 19,
                 "ragged rows: this row has 1 row, but the first row has 2", NULL);
    expect_error(WITH_GIVEN("X: [[1, 2], 3]"), 3, 15,
                 "ragged rows: expected a row of 2 values here, like the first row, but this is "
                 "a single value",
                 NULL);
    expect_error(WITH_GIVEN("X: [1, [2]]"), 3, 10,
                 "ragged rows: expected a number here, like the first row, but this is a list",
                 NULL);
    expect_error(WITH_GIVEN("X: [[1], []]"), 3, 12,
                 "ragged rows: this row has 0 values, but the first row has 1", NULL);
    expect_error(WITH_GIVEN("X: []"), 3, 6,
                 "an empty list has no values; every axis of a tensor needs at least one",
                 "write at least one number in every list");
    expect_error(WITH_GIVEN("X: [[[[[1]]]]]"), 3, 10,
                 "a tensor has at most 4 axes, but this list nests 5 deep", NULL);
    expect_error(WITH_GIVEN("X: [[1, 2], [3, abc]]"), 3, 19, "'abc' is not a number",
                 "numbers look like 3, -0.5, 1e-5 or .inf");
    expect_error(WITH_GIVEN("X: [1, {a: 2}]"), 3, 10,
                 "expected a number here, but this is a mapping", NULL);
    expect_error(WITH_GIVEN("X:"), 3, 3, "given 'X' has no value",
                 "write a number, a list like [1, 2], or a mapping with values: or shape:");
}

static void test_numbers_refused(void **state) {
    expect_error(WITH_GIVEN("X: [1, .nan]"), 3, 10,
                 "not a number is not allowed in a lesson; compute it (0/0) if you want to show "
                 "it",
                 NULL);
    expect_error(WITH_GIVEN("X: 0x10"), 3, 6,
                 "'0x10' is written in hexadecimal; a lesson's numbers are decimal", "write 16");
    expect_error(WITH_GIVEN("X: -0b101"), 3, 6,
                 "'-0b101' is written in binary; a lesson's numbers are decimal", "write -5");
    expect_error(WITH_GIVEN("X: 0o17"), 3, 6,
                 "'0o17' is written in octal; a lesson's numbers are decimal", "write 15");
    expect_error(WITH_GIVEN("X: 017"), 3, 6, "'017' starts with 0, which YAML reads as octal",
                 "write it without the leading zero");
    expect_error(WITH_GIVEN("X: [true]"), 3, 7, "'true' is a yes/no value, not a number",
                 "write 1 or 0");
    expect_error(WITH_GIVEN("X: yes"), 3, 6, "'yes' is a yes/no value, not a number", NULL);
    expect_error(WITH_GIVEN("X: '0.5'"), 3, 6, "'0.5' is in quotes, so it is text, not a number",
                 "remove the quotes to make it a number");
    expect_error(WITH_GIVEN("X: [\"1e-3\"]"), 3, 7,
                 "'1e-3' is in quotes, so it is text, not a number", NULL);
    expect_error(WITH_GIVEN("X: 1e400"), 3, 6,
                 "'1e400' is too large for a double (the largest is about 1.8e308)",
                 "write .inf if you mean infinity");
    expect_error(WITH_GIVEN("X: -inf"), 3, 6, "'-inf' is not a number in YAML",
                 "write .inf (YAML's infinity) or -.inf");
    expect_error(WITH_GIVEN("X: 1.2.3"), 3, 6, "'1.2.3' is not a number", NULL);
    expect_error(WITH_GIVEN("X: 1_000"), 3, 6, "'1_000' is not a number", NULL);
    expect_error(WITH_GIVEN("X: |\n    1"), 3, 6,
                 "expected a number here, but this is a block of text", NULL);
}

static void test_numbers_accepted(void **state) {
    Diag diag;
    Lesson *lesson = load(WITH_GIVEN("X: [0, -0.5, +2, 1e-5, 2.5E+2, .25, 5., .Inf, -.INF, 1e-400]"),
                          &diag);
    assert_non_null(lesson);
    const double *v = lesson->givens[0].values;
    expect_number(v[0], 0);
    expect_number(v[1], -0.5);
    expect_number(v[2], 2);
    expect_number(v[3], 1e-5);
    expect_number(v[4], 250);
    expect_number(v[5], 0.25);
    expect_number(v[6], 5);
    assert_true(isinf(v[7]) && v[7] > 0);
    assert_true(isinf(v[8]) && v[8] < 0);
    expect_number(v[9], 0);  // underflows to zero, as numpy reads it
    lesson_destroy(lesson);
}

static void test_given_mapping(void **state) {
    expect_error(WITH_GIVEN("X: {valus: [1]}"), 3, 7, "unknown key 'valus' in given 'X'",
                 "did you mean 'values'?");
    expect_error(WITH_GIVEN("X: {values: [1], shape: [1]}"), 3, 20,
                 "given 'X' has both values: and shape:; write one of them", NULL);
    expect_error(WITH_GIVEN("X: {about: hi}"), 3, 3, "given 'X' has neither values: nor shape:",
                 "write values: [...] or shape: [...]");
    expect_error(WITH_GIVEN("X: {values: {a: 1}}"), 3, 15,
                 "values: must be a number or a list of numbers, but this is a mapping", NULL);
    expect_error(WITH_GIVEN("X: {values: [1], init: ones}"), 3, 20,
                 "init: goes with shape:, not with values:", "use shape: instead of values:");
    expect_error(WITH_GIVEN("X: {shape: [3], init: rand}"), 3, 25, "unknown init: 'rand'",
                 "did you mean 'random'?");
    expect_error(WITH_GIVEN("X: {shape: [3], scale: 2}"), 3, 19,
                 "scale: only applies to init: random", "add init: random, or remove this line");
    expect_error(WITH_GIVEN("X: {shape: [3], init: random, distribution: gauss}"), 3, 47,
                 "unknown distribution: 'gauss'", "distribution: is uniform or normal");
    expect_error(WITH_GIVEN("X: {shape: [3], init: random, scale: .inf}"), 3, 40,
                 "scale: must be a finite number of at least 0, but this is '.inf'", NULL);
    expect_error(WITH_GIVEN("X: {shape: [3], init: random, seed: -1}"), 3, 39,
                 "seed: must be a whole number from 0 to 18446744073709551615, but this is '-1'",
                 NULL);
    expect_error(WITH_GIVEN("X: {shape: [3], init: random, seed: 18446744073709551616}"), 3, 39,
                 "seed: must be a whole number from 0 to 18446744073709551615, but this is "
                 "'18446744073709551616'",
                 NULL);
    expect_error(WITH_GIVEN("X: {shape: [3, 4], init: identity}"), 3, 28,
                 "init: identity needs the last two sizes equal, but the shape is [3, 4]",
                 "an identity matrix is square, like shape: [4, 4]");
    expect_error(WITH_GIVEN("X: {shape: [4], init: identity}"), 3, 25,
                 "init: identity needs the last two sizes equal, but the shape is [4]", NULL);
}

static void test_shapes(void **state) {
    expect_error(WITH_GIVEN("X: {shape: [3, 0]}"), 3, 18,
                 "each size in a shape is a whole number of at least 1, but this is '0'", NULL);
    expect_error(WITH_GIVEN("X: {shape: [3, -1]}"), 3, 18,
                 "each size in a shape is a whole number of at least 1, but this is '-1'", NULL);
    expect_error(WITH_GIVEN("X: {shape: [2.5]}"), 3, 15,
                 "each size in a shape is a whole number of at least 1, but this is '2.5'", NULL);
    expect_error(WITH_GIVEN("X: {shape: 3}"), 3, 14,
                 "shape: must be a list of sizes, like [3, 4], but this is a number or word",
                 "write shape: [3] for 3 values, shape: [3, 4] for a 3 x 4 matrix");
    expect_error(WITH_GIVEN("X: {shape: [1, 1, 1, 1, 1]}"), 3, 14,
                 "a tensor has at most 4 axes, but this shape has 5", NULL);
    expect_error(WITH_GIVEN("X: {shape: [100000, 100000], init: zeros}"), 3, 14,
                 "shape [100000, 100000] needs 10,000,000,000 values (74.5 GiB); a tensor holds "
                 "at most 268,435,456 values (2 GiB)",
                 "leave out init: to make it shape-only (a shape without values), or make it "
                 "smaller");
    expect_error(WITH_GIVEN("X: {shape: [4294967296, 4294967296]}"), 3, 14,
                 "shape [4294967296, 4294967296] has more values than a 64-bit count can hold",
                 NULL);
    // Shape-only may be far larger than memory: it has no values.
    Diag diag;
    Lesson *lesson = load(WITH_GIVEN("X: {shape: [100000, 100000], about: big}"), &diag);
    assert_non_null(lesson);
    assert_int_equal(lesson->givens[0].init, GIVEN_SHAPE_ONLY);
    assert_int_equal(lesson->givens[0].shape.rank, 2);
    lesson_destroy(lesson);
    // A scalar shape: [] holds one value.
    lesson = load(WITH_GIVEN("X: {shape: [], init: ones}"), &diag);
    assert_non_null(lesson);
    assert_int_equal(lesson->givens[0].shape.rank, 0);
    lesson_destroy(lesson);
}

static void test_given_labels(void **state) {
#define LABELS "title: t\nlabels:\n  tokens: [The, cat, sat]\ngiven:\n  "
    expect_error(LABELS "X: {values: [1, 2], rows: tokens}\nsteps: [a: X]\n", 5, 29,
                 "rows: labels the second-to-last axis, but 'X' has shape [2]",
                 "label a list's only axis with cols:");
    expect_warning(LABELS "X: {values: [[1, 2]], cols: tokens}\nsteps: [a: X]\n", "t.yaml:5:31",
                   "cols: gives 3 labels, but 'X' has 2 columns (shape [1, 2]): its columns are shown by position");
    expect_warning(LABELS "X: {values: [[1], [2]], rows: [a, b, c]}\nsteps: [a: X]\n", "t.yaml:5:33",
                   "rows: gives 3 labels, but 'X' has 2 rows (shape [2, 1]): its rows are shown by position");
    expect_error(LABELS "X: {values: 1, cols: [a]}\nsteps: [a: X]\n", 5, 24,
                 "cols: labels the last axis, but 'X' is a single number", NULL);
    expect_error(LABELS "X: {values: [[1, 2]], cols: tokns}\nsteps: [a: X]\n", 5, 31,
                 "there is no label list named 'tokns' under labels:", "did you mean 'tokens'?");
    expect_error(LABELS "X: {values: [[1, 2]], cols: {a: b}}\nsteps: [a: X]\n", 5, 31,
                 "cols: must name a label list or list the words, but this is a mapping", NULL);
    // A rank-1 given's cols: label its only axis.
    Diag diag;
    Lesson *lesson = load(LABELS "X: {values: [1, 2, 3], cols: tokens}\nsteps: [a: X]\n", &diag);
    assert_non_null(lesson);
    assert_string_equal(lesson->givens[0].cols->items[0], "The");
    lesson_destroy(lesson);
#undef LABELS
}

// Narration keeps its node, and a byte of its text maps to its line and column in the file.
static void test_narration_positions(void **state) {
    (void)state;
    Diag diag;
    Lesson *lesson = load("title: t\n"                          // 1
                          "intro: |\n"                          // 2
                          "  First line.\n"                     // 3
                          "    Then {x[0]} here.\n"             // 4
                          "given:\n"                            // 5
                          "  x: {values: [1, 2], about: \"the {x} given\"}\n"  // 6
                          "steps:\n"                            // 7
                          "  - y: x * 2\n"                      // 8
                          "    say: Twice {x[1]}, folded\n"     // 9
                          "  - z: y\n"                          // 10
                          "    say: >\n"                        // 11
                          "      a {y} b\n",                    // 12
                          &diag);
    assert_non_null(lesson);
    size_t line, col;
    // "{x[0]}" is byte 22 of the intro's text ("First line.\n  Then {x[0]}..."): line 4, col 10.
    lesson_text_position(lesson, lesson->intro_node, strchr(lesson->intro, '{') - lesson->intro, &line, &col);
    assert_int_equal(line, 4);
    assert_int_equal(col, 10);
    // In a quoted one-line scalar, past its quote: column 35.
    const LessonGiven *x = &lesson->givens[0];
    lesson_text_position(lesson, x->about_node, strchr(x->about, '{') - x->about, &line, &col);
    assert_int_equal(line, 6);
    assert_int_equal(col, 35);
    // A plain one-line say: column 16.
    const LessonStep *y = &lesson->steps[0];
    lesson_text_position(lesson, y->say_node, strchr(y->say, '{') - y->say, &line, &col);
    assert_int_equal(line, 9);
    assert_int_equal(col, 16);
    // A folded block is not exact: its start.
    const LessonStep *z = &lesson->steps[1];
    lesson_text_position(lesson, z->say_node, strchr(z->say, '{') - z->say, &line, &col);
    assert_int_equal(line, 11);
    assert_int_equal(col, 10);
    lesson_destroy(lesson);
}

// A folded block writes each blank line between paragraphs as one newline; narration keeps the
// paragraphs apart by a blank line, and leaves the lines around a more-indented line, and the
// text of other keys, as YAML gives them.
static void test_folded_narration_keeps_its_paragraphs(void **state) {
    (void)state;
    Diag diag;
    Lesson *lesson = load("title: t\n"
                          "intro: >\n"
                          "  One\n"
                          "  paragraph.\n"
                          "\n"
                          "  Two:\n"
                          "    x = 1\n"
                          "  three.\n"
                          "\n"
                          "\n"
                          "  Four.\n"
                          "source: >\n"
                          "  a\n"
                          "\n"
                          "  b\n"
                          "given:\n"
                          "  x: 1\n"
                          "steps:\n"
                          "  - y: x\n"
                          "    say: >-\n"
                          "      Five\n"
                          "\n"
                          "      six.\n",
                          &diag);
    assert_non_null(lesson);
    assert_string_equal(lesson->intro, "One paragraph.\n\nTwo:\n  x = 1\nthree.\n\nFour.\n");
    assert_string_equal(lesson->source, "a\nb\n");
    assert_string_equal(lesson->steps[0].say, "Five\n\nsix.");
    lesson_destroy(lesson);
}

static void test_step_shapes(void **state) {
    expect_error(WITH_STEPS("  - X @ X\n"), 5, 5,
                 "a step must be `name: expression`, but this is a number or word",
                 "write a step as `- name: expression`, like `- Q: X @ W_Q`");
    expect_error(WITH_STEPS("  - say: hello\n    rows: [a]\n"), 5, 5,
                 "this step has no result name; write `- name: expression`",
                 "a step looks like `- Q: X @ W_Q`");
    expect_error(WITH_STEPS("  - a: X\n    b: X\n"), 6, 5,
                 "this step names two results, 'a' and 'b'; split it into two steps", NULL);
    expect_error(WITH_STEPS("  - 2a: X\n"), 5, 5, "'2a' is not a valid name",
                 "a name starts with a letter or _ and has only letters, digits and _, like W_Q "
                 "or scores2");
    expect_error(WITH_STEPS("  - a-b: X\n"), 5, 5, "'a-b' is not a valid name", NULL);
}

static void test_names_defined_twice(void **state) {
    expect_error(WITH_STEPS("  - X: 2\n"), 5, 5, "the name 'X' is already defined on line 3",
                 "each name is defined once; give this one another name");
    expect_error(WITH_STEPS("  - a: X\n  - b: a\n  - a: b\n"), 7, 5,
                 "the name 'a' is already defined on line 5", NULL);
}

static void test_expressions(void **state) {
    expect_error(WITH_STEPS("  - a: [1, 2]\n"), 5, 8,
                 "the expression for 'a' must be text, like X @ W_Q, but this is a list",
                 "an expression is text; to write a list literal, quote it: \"[1, 2]\"");
    expect_error(WITH_STEPS("  - a: {b: 1}\n"), 5, 8,
                 "the expression for 'a' must be text, like X @ W_Q, but this is a mapping",
                 NULL);
    expect_error(WITH_STEPS("  - a:\n"), 5, 5, "the expression for 'a' is empty",
                 "write what it computes after the ':', like `Q: X @ W_Q`");
    expect_error(WITH_STEPS("  - a: '  '\n"), 5, 8, "the expression for 'a' is empty", NULL);
    expect_error(WITH_STEPS("  - a: X\n    say: [hi]\n"), 6, 10,
                 "say: must be text, but this is a list", NULL);
    expect_error(WITH_STEPS("  - a: X\n    rows: tokens\n"), 6, 11,
                 "there is no label list named 'tokens' under labels:",
                 "define it under labels:, or write the words here: [The, cat, sat]");
    expect_error(WITH_STEPS("  - a: X\n    document: [0.5, x]\n"), 6, 21, "'x' is not a number",
                 NULL);
    expect_error(WITH_STEPS("  - a: X\n    document: {a: 1}\n"), 6, 15,
                 "document: must be a number or a list of numbers, but this is a mapping", NULL);
}

static void test_explain(void **state) {
    const char *hint = "explain: takes [i, j] (one element), row i (one row), or all";
    expect_error(WITH_STEPS("  - a: X\n    explain: rows 1\n"), 6, 14,
                 "explain: cannot read 'rows 1'", hint);
    expect_error(WITH_STEPS("  - a: X\n    explain: everything\n"), 6, 14,
                 "explain: cannot read 'everything'", hint);
    expect_error(WITH_STEPS("  - a: X\n    explain: [0.5]\n"), 6, 15,
                 "an index must be a whole number, but this is '0.5'", hint);
    expect_error(WITH_STEPS("  - a: X\n    explain: []\n"), 6, 14,
                 "explain: needs 1 to 4 indices, but this list has 0", hint);
    expect_error(WITH_STEPS("  - a: X\n    explain: {row: 1}\n"), 6, 14,
                 "explain: cannot read a mapping", hint);
    Diag diag;
    Lesson *lesson = load(WITH_STEPS("  - a: X\n    explain: row -1\n"), &diag);
    assert_non_null(lesson);
    assert_int_equal(lesson->steps[0].explain.kind, EXPLAIN_ROW);
    assert_int_equal(lesson->steps[0].explain.index[0], -1);
    assert_int_equal(lesson->steps[0].explain.node->line, 6);
    lesson_destroy(lesson);
}

static void test_yaml_errors_come_through(void **state) {
    expect_error("title: t\nsteps:\n\t- a: 1\n", 3, 1,
                 "found a tab character where YAML expects spaces",
                 "YAML indentation must use spaces, not tabs");
    expect_error("title: t\ntitle: u\nsteps: [a: 1]\n", 2, 1,
                 "the key 'title' appears twice in this mapping; it was first written on line 1",
                 NULL);
}

static char *temp_file(const char *text, size_t len) {
    char *path = strdup("/tmp/test_lesson_XXXXXX");
    assert_non_null(path);
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    for (size_t done = 0; done < len;) {
        ssize_t n = write(fd, text + done, len - done);
        assert_true(n > 0);
        done += (size_t)n;
    }
    close(fd);
    return path;
}

static void test_load_file(void **state) {
    Diag diag;
    char *path = temp_file(FULL, strlen(FULL));
    diag_init(&diag);
    Lesson *lesson = lesson_load_file(path, &diag);
    assert_non_null(lesson);
    assert_string_equal(lesson->path, path);
    assert_int_equal(lesson->n_steps, 7);
    lesson_destroy(lesson);
    unlink(path);
    free(path);

    diag_init(&diag);
    assert_null(lesson_load_file("/nonexistent/x.yaml", &diag));
    assert_int_equal(diag.status, STATUS_USAGE_ERROR);
    assert_string_equal(diag.message,
                        "cannot read lesson '/nonexistent/x.yaml': No such file or directory");
    assert_int_equal(diag.line, 0);

    diag_init(&diag);
    assert_null(lesson_load_file("/tmp", &diag));
    assert_int_equal(diag.status, STATUS_USAGE_ERROR);
    assert_string_equal(diag.message, "cannot read lesson '/tmp': Is a directory");

    size_t len = YAMLDOC_MAX_BYTES + 10;
    char *big = malloc(len);
    assert_non_null(big);
    memset(big, '#', len);
    path = temp_file(big, len);
    free(big);
    diag_init(&diag);
    assert_null(lesson_load_file(path, &diag));
    assert_int_equal(diag.status, STATUS_USAGE_ERROR);
    char expected[256];
    snprintf(expected, sizeof(expected), "cannot read lesson '%s': it is larger than 4 MiB", path);
    assert_string_equal(diag.message, expected);
    unlink(path);
    free(path);
}

// Fail each allocation in turn: every run either loads or reports running out of memory.
// Hundreds of steps make the arenas grow many times, at many different places in the loader.
static void test_out_of_memory(void **state) {
    size_t cap = sizeof(FULL) + 400 * 80;
    char *text = malloc(cap);
    assert_non_null(text);
    size_t len = (size_t)snprintf(text, cap, "%s", FULL);
    for (int i = 0; i < 400; i++)
        len += (size_t)snprintf(text + len, cap - len,
                                "  - s%d: X @ X.T\n    say: step %d\n    explain: [0, 1]\n", i, i);
    Diag diag;
    util_fail_allocation(0);
    Lesson *lesson = load(text, &diag);
    size_t count = util_fail_allocation(0);
    assert_non_null(lesson);
    assert_int_equal(lesson->n_steps, 407);
    lesson_destroy(lesson);
    assert_true(count > 20);
    for (size_t n = 1; n <= count; n++) {
        util_fail_allocation(n);
        lesson = load(text, &diag);
        util_fail_allocation(0);
        if (lesson) {
            lesson_destroy(lesson);
            continue;
        }
        assert_int_equal(diag.status, STATUS_USAGE_ERROR);
        assert_string_equal(diag.message,
                            "out of memory (the tracer could not allocate what this lesson needs)");
    }
    free(text);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full_lesson),
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_empty_lesson),
        cmocka_unit_test(test_top_level),
        cmocka_unit_test(test_blocks_refused),
        cmocka_unit_test(test_blocks_nested),
        cmocka_unit_test(test_missing_sections),
        cmocka_unit_test(test_wrong_kinds),
        cmocka_unit_test(test_labels),
        cmocka_unit_test(test_ragged_and_empty_lists),
        cmocka_unit_test(test_numbers_refused),
        cmocka_unit_test(test_numbers_accepted),
        cmocka_unit_test(test_given_mapping),
        cmocka_unit_test(test_shapes),
        cmocka_unit_test(test_given_labels),
        cmocka_unit_test(test_narration_positions),
        cmocka_unit_test(test_folded_narration_keeps_its_paragraphs),
        cmocka_unit_test(test_step_shapes),
        cmocka_unit_test(test_names_defined_twice),
        cmocka_unit_test(test_expressions),
        cmocka_unit_test(test_explain),
        cmocka_unit_test(test_yaml_errors_come_through),
        cmocka_unit_test(test_load_file),
        cmocka_unit_test(test_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
