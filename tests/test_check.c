// Tests of the checker (check.c with the op table's shape rules): the stages a lesson turns
// into, with their names, numbers, shapes and labels, and every error a lesson can meet before
// it runs, with its exact line, column, width, message and hint.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "lesson.h"
#include "check.h"

// ---------------------------------------------------------------- helpers

// What one test made; destroyed after it, pass or fail.
typedef struct Fixture {
    Lesson *lesson;
    Plan *plan;
    Diag diag;
} Fixture;

static int setup(void **state) {
    static Fixture f;
    memset(&f, 0, sizeof(f));
    *state = &f;
    return 0;
}

static int teardown(void **state) {
    Fixture *f = *state;
    plan_destroy(f->plan);
    lesson_destroy(f->lesson);
    f->plan = NULL;
    f->lesson = NULL;
    return 0;
}

static void load(Fixture *f, const char *yaml) {
    diag_init(&f->diag);
    f->lesson = lesson_create("t.yaml", yaml, strlen(yaml), &f->diag);
    if (!f->lesson)
        fail_msg("the lesson did not load: %zu:%zu: %s", f->diag.line, f->diag.col, f->diag.message);
}

static const Plan *check_ok(void **state, const char *yaml) {
    Fixture *f = *state;
    load(f, yaml);
    f->plan = check_lesson(f->lesson, &f->diag);
    if (!f->plan)
        fail_msg("the lesson was refused: %zu:%zu: %s (hint: %s)", f->diag.line, f->diag.col,
                 f->diag.message, f->diag.hint);
    assert_int_equal(f->diag.status, STATUS_OK);
    return f->plan;
}

// The lesson loads, and the checker refuses it with exactly this error ("" for no hint).
static void expect_error(void **state, const char *yaml, size_t line, size_t col, size_t width,
                         const char *message, const char *hint) {
    Fixture *f = *state;
    load(f, yaml);
    f->plan = check_lesson(f->lesson, &f->diag);
    if (f->plan)
        fail_msg("the lesson was accepted, but should fail with: %s", message);
    const Diag *d = &f->diag;
    assert_int_equal(d->status, STATUS_LESSON_ERROR);
    if (strcmp(d->message, message) != 0)
        fail_msg("message\n  '%s'\nexpected\n  '%s'", d->message, message);
    if (d->line != line || d->col != col || d->width != width)
        fail_msg("'%s' at %zu:%zu width %zu, expected %zu:%zu width %zu", message, d->line, d->col,
                 d->width, line, col, width);
    if (strcmp(d->hint, hint) != 0)
        fail_msg("hint\n  '%s'\nexpected\n  '%s'", d->hint, hint);
    assert_string_equal(d->path, "t.yaml");
}

static const PlanNode *stage(const Plan *plan, const char *name) {
    const PlanNode *n = plan_find_stage(plan, name, NULL);
    if (!n)
        fail_msg("no stage '%s'", name);
    return n;
}

static void expect_shape(const PlanNode *n, const char *want) {
    char got[64];
    shape_format(&n->shape, got, sizeof(got));
    if (strcmp(got, want) != 0)
        fail_msg("'%s' has shape %s, expected %s", n->name, got, want);
}

// The labels of one axis, joined with spaces; "-" when the axis is unlabelled.
static void expect_labels(const PlanNode *n, size_t axis, const char *want) {
    char got[256] = "-";
    const Labels *l = &n->labels[axis];
    if (l->items) {
        size_t used = 0;
        got[0] = '\0';
        for (size_t i = 0; i < l->n; i++)
            used += (size_t)snprintf(got + used, sizeof(got) - used, "%s%s", i ? " " : "", l->items[i]);
    }
    if (strcmp(got, want) != 0)
        fail_msg("axis %zu of '%s' is labelled '%s', expected '%s'", axis, n->name, got, want);
}

// Every stage in order, as "name number kind" lines, to compare a whole plan at once.
static void expect_stages(const Plan *plan, const char *want) {
    char got[2048] = "";
    size_t used = 0;
    static const char *const kinds[] = {"given", "step", "intermediate"};
    for (size_t i = 0; i < plan->n_nodes; i++) {
        const PlanNode *n = &plan->nodes[i];
        if (!n->is_stage)
            continue;
        used += (size_t)snprintf(got + used, sizeof(got) - used, "%s %s %s\n", n->name,
                                 n->number[0] ? n->number : "-", kinds[n->stage_kind]);
    }
    if (strcmp(got, want) != 0)
        fail_msg("stages:\n%s\nexpected:\n%s", got, want);
}

// Givens on lines 3 to 9, and one step `y: <expr>` on line 11 whose expression starts at
// column 8.
#define GIVENS                                                        \
    "title: t\n"                                                      \
    "given:\n"                                                        \
    "  X: [[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]]\n"            \
    "  W_Q: [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]\n" \
    "  K: [[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]]\n"            \
    "  v: [1, 2, 3]\n"                                                \
    "  ids: [0, 2]\n"                                                 \
    "  M: [[1, 2, 3], [4, 5, 6]]\n"                                   \
    "  s: 2\n"                                                        \
    "steps:\n"
#define STEP(expr) GIVENS "  - y: " expr "\n"
#define STEP_LINE 11
#define COL(k) (8 + (k))  // column of byte k of the step's expression

static void expect_step_error(void **state, const char *yaml, size_t offset, size_t width, const char *message,
                              const char *hint) {
    expect_error(state, yaml, STEP_LINE, COL(offset), width, message, hint);
}

// ---------------------------------------------------------------- the stages of a lesson

// lessons/02_the_cat_sat.yaml without its narration.
static const char CAT_SAT[] =
    "title: The cat sat\n"
    "labels:\n"
    "  tokens: [The, cat, sat]\n"
    "  dims: [d0, d1, d2, d3]\n"
    "given:\n"
    "  X:\n"
    "    rows: tokens\n"
    "    cols: dims\n"
    "    values:\n"
    "      - [0.1, 0.2, 0.3, 0.4]\n"
    "      - [0.5, 0.6, 0.7, 0.8]\n"
    "      - [0.2, 0.1, 0.4, 0.3]\n"
    "  W_Q: [[0.1, 0.2, 0.0, 0.1], [0.3, 0.1, 0.2, 0.0], [0.0, 0.3, 0.1, 0.2], [0.2, 0.0, 0.3, 0.1]]\n"
    "  W_K: [[0.2, 0.1, 0.3, 0.0], [0.0, 0.2, 0.1, 0.3], [0.1, 0.0, 0.2, 0.1], [0.3, 0.1, 0.0, 0.2]]\n"
    "  W_V: [[0.1, 0.0, 0.2, 0.1], [0.2, 0.3, 0.1, 0.0], [0.0, 0.1, 0.3, 0.2], [0.3, 0.2, 0.0, 0.1]]\n"
    "  d_k: 4\n"
    "steps:\n"
    "  - Q: X @ W_Q\n"
    "  - K: X @ W_K\n"
    "  - V: X @ W_V\n"
    "  - scores: Q @ K.T\n"
    "  - scaled: scores / sqrt(d_k)\n"
    "  - weights: softmax(scaled)\n"
    "  - output: weights @ V\n";

static void test_cat_sat_stages(void **state) {
    const Plan *plan = check_ok(state, CAT_SAT);
    expect_stages(plan,
                  "X - given\nW_Q - given\nW_K - given\nW_V - given\nd_k - given\n"
                  "Q 1 step\nK 2 step\nV 3 step\n"
                  "scores.1 4a intermediate\nscores 4 step\n"
                  "scaled.1 5a intermediate\nscaled 5 step\n"
                  "weights 6 step\noutput 7 step\n");
}

static void test_cat_sat_shapes(void **state) {
    const Plan *plan = check_ok(state, CAT_SAT);
    expect_shape(stage(plan, "X"), "[3, 4]");
    expect_shape(stage(plan, "d_k"), "[]");
    expect_shape(stage(plan, "Q"), "[3, 4]");
    expect_shape(stage(plan, "scores.1"), "[4, 3]");
    expect_shape(stage(plan, "scores"), "[3, 3]");
    expect_shape(stage(plan, "scaled.1"), "[]");
    expect_shape(stage(plan, "scaled"), "[3, 3]");
    expect_shape(stage(plan, "weights"), "[3, 3]");
    expect_shape(stage(plan, "output"), "[3, 4]");
}

static void test_cat_sat_op_lines_and_texts(void **state) {
    const Plan *plan = check_ok(state, CAT_SAT);
    const PlanNode *q = stage(plan, "Q");
    assert_string_equal(q->op->name, "matmul");
    assert_string_equal(q->op_line, "[3, 4] @ [4, 4] -> [3, 4]");
    assert_string_equal(q->expr_text, "X @ W_Q");
    const PlanNode *kt = stage(plan, "scores.1");
    assert_string_equal(kt->op->name, "transpose");
    assert_string_equal(kt->op_line, "[3, 4].T -> [4, 3]");
    assert_string_equal(kt->expr_text, "K.T");
    assert_string_equal(stage(plan, "scaled.1")->op_line, "sqrt([]) -> []");
    assert_string_equal(stage(plan, "scaled.1")->expr_text, "sqrt(d_k)");
    assert_string_equal(stage(plan, "scaled")->op_line, "[3, 3] / [] -> [3, 3]");
    assert_string_equal(stage(plan, "weights")->op_line, "softmax([3, 3]) -> [3, 3]");
    // Givens have no expression.
    assert_null(stage(plan, "X")->expr_text);
    assert_true(stage(plan, "X")->has_values);
}

// Rows follow the left operand of @, columns the right one; a transpose swaps them.
static void test_cat_sat_labels(void **state) {
    const Plan *plan = check_ok(state, CAT_SAT);
    expect_labels(stage(plan, "X"), 0, "The cat sat");
    expect_labels(stage(plan, "X"), 1, "d0 d1 d2 d3");
    expect_labels(stage(plan, "Q"), 0, "The cat sat");
    expect_labels(stage(plan, "Q"), 1, "-");
    expect_labels(stage(plan, "scores.1"), 0, "-");
    expect_labels(stage(plan, "scores.1"), 1, "The cat sat");
    expect_labels(stage(plan, "scores"), 0, "The cat sat");
    expect_labels(stage(plan, "scores"), 1, "The cat sat");
    expect_labels(stage(plan, "weights"), 1, "The cat sat");
    expect_labels(stage(plan, "output"), 0, "The cat sat");
    expect_labels(stage(plan, "output"), 1, "-");
}

// Each operation inside a step is an intermediate stage, lettered in evaluation order;
// numbers written in the expression are not stages.
static void test_intermediates_are_numbered_in_order(void **state) {
    const Plan *plan = check_ok(state, STEP("softmax(X @ K.T / sqrt(s) * 2)"));
    expect_stages(plan,
                  "X - given\nW_Q - given\nK - given\nv - given\nids - given\nM - given\ns - given\n"
                  "y.1 1a intermediate\ny.2 1b intermediate\ny.3 1c intermediate\n"
                  "y.4 1d intermediate\ny.5 1e intermediate\ny 1 step\n");
    assert_string_equal(stage(plan, "y.1")->expr_text, "K.T");
    assert_string_equal(stage(plan, "y.2")->expr_text, "X @ K.T");
    assert_string_equal(stage(plan, "y.3")->expr_text, "sqrt(s)");
    assert_string_equal(stage(plan, "y.4")->expr_text, "X @ K.T / sqrt(s)");
    assert_string_equal(stage(plan, "y.5")->expr_text, "X @ K.T / sqrt(s) * 2");
    assert_string_equal(stage(plan, "y")->expr_text, "softmax(X @ K.T / sqrt(s) * 2)");
    expect_shape(stage(plan, "y.2"), "[3, 3]");
}

// Parentheses belong to the text of the operation they group.
static void test_intermediate_text_keeps_parentheses(void **state) {
    const Plan *plan = check_ok(state, STEP("(X + 1) * (X - 1)"));
    assert_string_equal(stage(plan, "y.1")->expr_text, "(X + 1)");
    assert_string_equal(stage(plan, "y.2")->expr_text, "(X - 1)");
    assert_string_equal(stage(plan, "y")->number, "1");
}

// A step that only names a value, or is a number, still shows as a stage of its own.
static void test_step_that_names_or_is_a_constant(void **state) {
    const Plan *plan = check_ok(state, GIVENS "  - a: X\n  - b: 3\n  - c: '[[1, 2], [3, 4]]'\n  - d: a\n");
    const PlanNode *a = stage(plan, "a");
    assert_string_equal(a->op->name, "copy");
    assert_string_equal(a->number, "1");
    expect_shape(a, "[3, 4]");
    const PlanNode *b = stage(plan, "b");
    assert_int_equal(b->kind, PLAN_CONSTANT);
    assert_int_equal(b->stage_kind, STAGE_STEP);
    expect_shape(b, "[]");
    assert_true(b->values[0] == 3.0);
    const PlanNode *c = stage(plan, "c");
    expect_shape(c, "[2, 2]");
    assert_true(c->values[3] == 4.0);
    assert_string_equal(stage(plan, "d")->number, "4");
    assert_string_equal(stage(plan, "d")->op->name, "copy");
}

static void test_indexing_shapes_and_labels(void **state) {
    const Plan *plan = check_ok(state,
                                "title: t\nlabels:\n  tokens: [The, cat, sat]\ngiven:\n"
                                "  E: {values: [[1, 2], [3, 4], [5, 6]], rows: tokens, cols: [a, b]}\n"
                                "  ids: [2, 0]\n"
                                "steps:\n"
                                "  - row: E[1]\n"
                                "  - window: E[0:2, :]\n"
                                "  - picked: E[[2, 0]]\n"
                                "  - gathered: E[ids]\n"
                                "  - col: E[:, -1]\n"
                                "  - element: E[2, 1]\n");
    expect_shape(stage(plan, "row"), "[2]");
    expect_labels(stage(plan, "row"), 0, "a b");
    expect_shape(stage(plan, "window"), "[2, 2]");
    expect_labels(stage(plan, "window"), 0, "The cat");
    expect_shape(stage(plan, "picked"), "[2, 2]");
    expect_labels(stage(plan, "picked"), 0, "sat The");
    // The values of a tensor index are known only while running: its rows are unlabelled.
    expect_shape(stage(plan, "gathered"), "[2, 2]");
    expect_labels(stage(plan, "gathered"), 0, "-");
    expect_shape(stage(plan, "col"), "[3]");
    expect_labels(stage(plan, "col"), 0, "The cat sat");
    expect_shape(stage(plan, "element"), "[]");
}

static void test_reductions_and_builders(void **state) {
    const Plan *plan = check_ok(state, GIVENS
                                "  - a: mean(X, axis=-1)\n"
                                "  - b: sum(X, axis=0, keepdims=True)\n"
                                "  - c: max(X)\n"
                                "  - d: causal_mask(3)\n"
                                "  - e: split_heads(X, 2)\n"
                                "  - f: merge_heads(e)\n"
                                "  - g: concat(X, K, axis=0)\n"
                                "  - h: sinusoidal(3, 4)\n"
                                "  - i: layernorm(X, 1, 0)\n"
                                "  - j: cross_entropy(X, ids[0] + v * 0)\n");
    expect_shape(stage(plan, "a"), "[3]");
    expect_shape(stage(plan, "b"), "[1, 4]");
    expect_shape(stage(plan, "c"), "[]");
    expect_shape(stage(plan, "d"), "[3, 3]");
    expect_shape(stage(plan, "e"), "[2, 3, 2]");
    expect_shape(stage(plan, "f"), "[3, 4]");
    expect_shape(stage(plan, "g"), "[6, 4]");
    expect_shape(stage(plan, "h"), "[3, 4]");
    expect_shape(stage(plan, "i"), "[3, 4]");
    expect_shape(stage(plan, "j"), "[3]");
    assert_string_equal(stage(plan, "a")->op_line, "mean([3, 4], axis=-1) -> [3]");
}

// Step labels name the axes of the result.
static void test_step_labels(void **state) {
    const Plan *plan = check_ok(state, GIVENS "  - y: X @ K.T\n    rows: [a, b, c]\n    cols: [p, q, r]\n");
    expect_labels(stage(plan, "y"), 0, "a b c");
    expect_labels(stage(plan, "y"), 1, "p q r");
}

// The intermediate stage whose expression is text.
static const PlanNode *intermediate(const Plan *plan, const char *text) {
    for (size_t i = 0; i < plan->n_nodes; i++) {
        const PlanNode *n = &plan->nodes[i];
        if (n->is_stage && n->stage_kind == STAGE_INTERMEDIATE && n->expr_text && !strcmp(n->expr_text, text))
            return n;
    }
    fail_msg("no intermediate stage '%s'", text);
    return NULL;
}

// An intermediate stage inside an expression takes the labels of the axes it keeps in an
// elementwise operation that reads it: the mask's rows and columns are the tokens of S (not
// 0, 1, 2), through a * and a +; a column of size 1 broadcast over S's columns keeps none;
// what a product or a reshape reads keeps nothing from it (W's rows are not X's tokens).
static void test_intermediates_take_the_labels_of_their_readers(void **state) {
    const Plan *plan = check_ok(state,
                                "title: Labels passed down\n"
                                "labels:\n"
                                "  tokens: [The, cat, sat]\n"
                                "  dims: [d0, d1, d2]\n"
                                "given:\n"
                                "  S:\n"
                                "    rows: tokens\n"
                                "    cols: tokens\n"
                                "    values: [[1, 2, 3], [4, 5, 6], [7, 8, 9]]\n"
                                "  X:\n"
                                "    rows: tokens\n"
                                "    cols: dims\n"
                                "    values: [[1, 0, 0], [0, 1, 0], [0, 0, 1]]\n"
                                "  W: [[1, 2, 3], [3, 4, 5], [5, 6, 7]]\n"
                                "steps:\n"
                                "  - w: softmax(S + causal_mask(3) * 2)\n"
                                "  - c: S + reshape(arange(3), [3, 1])\n"
                                "  - y: X @ W.T\n");
    const PlanNode *mask = intermediate(plan, "causal_mask(3)");
    expect_labels(mask, 0, "The cat sat");
    expect_labels(mask, 1, "The cat sat");
    expect_labels(intermediate(plan, "causal_mask(3) * 2"), 1, "The cat sat");
    const PlanNode *column = intermediate(plan, "reshape(arange(3), [3, 1])");
    expect_labels(column, 0, "The cat sat");
    expect_labels(column, 1, "-");
    expect_labels(intermediate(plan, "arange(3)"), 0, "-");
    expect_labels(intermediate(plan, "W.T"), 0, "-");
    expect_labels(intermediate(plan, "W.T"), 1, "-");
}

// ---------------------------------------------------------------- counts and shape-only tensors

static const char SHAPES[] =
    "title: GPT-2 sizes\n"
    "given:\n"
    "  wte: {shape: [50257, 768]}\n"
    "  x: {shape: [1024, 768]}\n"
    "  layers: 12\n"
    "steps:\n"
    "  - logits: x @ wte.T\n"
    "  - n_wte: numel(wte)\n"
    "  - n_logits: numel(logits)\n"
    "  - total: n_wte * layers + numel(x)\n"
    "  - half: n_wte / 2\n"
    "  - scaled: n_wte * 0.5\n"
    "  - summed: sum(concat([1, 2], [3]))\n";

// A shape-only given has no values; operations on it keep only a shape, however large, and
// need no memory for values.
static void test_shape_only_propagates(void **state) {
    const Plan *plan = check_ok(state, SHAPES);
    assert_false(stage(plan, "wte")->has_values);
    const PlanNode *logits = stage(plan, "logits");
    expect_shape(logits, "[1024, 50257]");
    assert_false(logits->has_values);
    assert_false(stage(plan, "logits.1")->has_values);
    assert_true(stage(plan, "layers")->has_values);
}

// numel counts elements exactly, even of shape-only tensors; sums and whole multiples of
// counts, and of whole-number constants, are counts; anything else is an ordinary number.
static void test_counts(void **state) {
    const Plan *plan = check_ok(state, SHAPES);
    const PlanNode *n = stage(plan, "n_wte");
    assert_true(n->is_count);
    assert_true(n->has_values);
    expect_shape(n, "[]");
    assert_true(stage(plan, "n_logits")->is_count);
    assert_true(stage(plan, "total")->is_count);
    assert_true(stage(plan, "total.1")->is_count);
    assert_false(stage(plan, "half")->is_count);
    assert_false(stage(plan, "scaled")->is_count);
    // Whole-number constants add up to a whole number, printed without decimals.
    assert_true(stage(plan, "summed")->is_count);
    // A scalar given written as a whole number (layers: 12) is a count too.
    assert_true(stage(plan, "layers")->is_count);
}

// ---------------------------------------------------------------- names

static void test_unknown_name_suggests_the_closest(void **state) {
    expect_step_error(state, STEP("X @ W_q"), 4, 3, "unknown name 'W_q'", "did you mean 'W_Q'?");
}

static void test_unknown_name_without_a_close_one(void **state) {
    expect_step_error(state, STEP("X @ attention_weights"), 4, 17, "unknown name 'attention_weights'",
                      "names come from given: and from earlier steps");
}

static void test_unknown_function_suggests_the_closest(void **state) {
    expect_step_error(state, STEP("sofmax(X)"), 0, 6, "unknown function 'sofmax'", "did you mean 'softmax'?");
}

// With no close name, the hint lists every function (the list grows with the op table).
static void test_unknown_function_without_a_close_one(void **state) {
    Fixture *f = *state;
    load(f, STEP("attention(X)"));
    f->plan = check_lesson(f->lesson, &f->diag);
    assert_null(f->plan);
    assert_string_equal(f->diag.message, "unknown function 'attention'");
    assert_int_equal(f->diag.col, COL(0));
    assert_int_equal(f->diag.width, 9);
    const char *hint = f->diag.hint;
    assert_true(strncmp(hint, "the functions are softmax, log_softmax, layernorm, ", 51) == 0);
    assert_non_null(strstr(hint, ", split_heads, "));
    assert_non_null(strstr(hint, ", cross_entropy"));
    // grad comes last, and once: the list stops after every name has been given one time
    size_t len = strlen(hint);
    assert_true(len > 6 && strcmp(hint + len - 6, ", grad") == 0);
    assert_null(strstr(hint, "grad,"));
    assert_null(strstr(strstr(hint, " softmax,") + 1, " softmax,"));
}

static void test_function_used_without_call(void **state) {
    expect_step_error(state, STEP("X + softmax"), 4, 7,
                      "'softmax' is a function: call it with its arguments, as in softmax(x)", "");
}

static void test_value_called_like_a_function(void **state) {
    expect_step_error(state, STEP("X(K)"), 0, 1, "'X' is a value, not a function: it cannot be called",
                      "is an operator missing before '('? a product is written X * (...) or X @ (...)");
}

static void test_later_step_used_early(void **state) {
    expect_error(state, GIVENS "  - a: b + 1\n  - b: X\n", STEP_LINE, COL(0), 1,
                 "'b' is not defined yet: it is the result of a later step (line 12)",
                 "steps run in order; move this step below the one that defines 'b'");
}

static void test_step_using_itself(void **state) {
    expect_step_error(state, STEP("y + 1"), 0, 1, "the step 'y' uses its own result",
                      "a step can only use givens and earlier steps");
}

// The error points into the right step, on its own line.
static void test_error_in_a_later_step(void **state) {
    expect_error(state, GIVENS "  - a: X\n  - b: a @ W_q\n", STEP_LINE + 1, COL(4), 3, "unknown name 'W_q'",
                 "did you mean 'W_Q'?");
}

// ---------------------------------------------------------------- places in the file

// A quoted expression starts one column later; a syntax error lands on its byte.
static void test_syntax_error_in_quoted_expression(void **state) {
    expect_error(state, GIVENS "  - y: \"[1, 2] +\"\n", STEP_LINE, 9 + 8, 1,
                 "expected a value (a name, a number, '(' or '['), found the end of the expression",
                 "the expression stops where a value should follow");
}

static void test_syntax_error_with_hint(void **state) {
    expect_step_error(state, STEP("mean(X, axis=1"), 14, 1, "expected ',' or ')', found the end of the expression",
                      "the '(' after 'mean' is never closed");
}

// A block scalar does not stand byte for byte in the file: errors point at its start.
static void test_error_in_block_expression_points_at_its_start(void **state) {
    expect_error(state, GIVENS "  - y: >\n      X @\n      W_q\n", STEP_LINE, 8, 1, "unknown name 'W_q'",
                 "did you mean 'W_Q'?");
}

// Columns count characters: a multi-byte letter earlier on the line moves the caret by one.
static void test_columns_count_characters(void **state) {
    expect_error(state, GIVENS "  - {say: \xC3\xA9, y: X + W_q}\n", STEP_LINE, 21, 3, "unknown name 'W_q'",
                 "did you mean 'W_Q'?");
}

// ---------------------------------------------------------------- shapes

static void test_matmul_inner_mismatch_suggests_transpose(void **state) {
    expect_step_error(state, STEP("X @ K"), 2, 1, "cannot multiply [3, 4] @ [3, 4]: the inner dimensions 4 and 3 differ",
                      "the inner dimensions must agree: the left operand is [3, 4] and the right is [3, 4]; "
                      "did you mean to transpose the right one (.T)?");
}

static void test_matmul_inner_mismatch(void **state) {
    expect_step_error(state, STEP("X @ M"), 2, 1, "cannot multiply [3, 4] @ [2, 3]: the inner dimensions 4 and 2 differ",
                      "in A @ B the last axis of A must match the second-to-last axis of B");
}

static void test_matmul_of_a_scalar(void **state) {
    expect_step_error(state, STEP("X @ s"), 4, 1, "'@' needs vectors or matrices, but this is a scalar",
                      "to scale by a number, write x * s");
}

static void test_broadcasting_mismatch(void **state) {
    expect_step_error(state, STEP("X + M"), 2, 1, "cannot combine [3, 4] and [2, 3] elementwise with '+'",
                      "elementwise operations need equal shapes, or axes of size 1 (or missing) that stretch, "
                      "matched from the right");
}

static void test_elementwise_product_of_matrices_mentions_matmul(void **state) {
    expect_step_error(state, STEP("M * X"), 2, 1, "cannot combine [2, 3] and [3, 4] elementwise with '*'",
                      "elementwise operations need equal shapes, or axes of size 1 (or missing) that stretch, "
                      "matched from the right; for a matrix product write A @ B");
}

static void test_list_rows_of_unequal_length(void **state) {
    expect_error(state, GIVENS "  - y: \"[[1, 2], [3]]\"\n", STEP_LINE, 9 + 9, 3,
                 "this list has 1 item where 2 were expected: rows must have equal lengths", "");
}

// ---------------------------------------------------------------- calls

static void test_too_many_arguments(void **state) {
    expect_step_error(state, STEP("relu(X, K)"), 8, 1, "relu takes 1 argument, but 2 were given",
                      "write relu(x)");
}

static void test_unknown_keyword(void **state) {
    expect_step_error(state, STEP("mean(X, axs=1)"), 8, 3, "mean has no parameter 'axs'",
                      "write mean(x, axis=None, keepdims=False)");
}

static void test_argument_given_twice(void **state) {
    expect_step_error(state, STEP("mean(X, 0, axis=1)"), 11, 4, "the argument 'axis' is given twice", "");
}

static void test_missing_required_argument(void **state) {
    expect_step_error(state, STEP("layernorm(X)"), 0, 9, "layernorm needs the argument 'gamma'",
                      "write layernorm(x, gamma, beta, eps=1e-05)");
}

static void test_axis_not_known_before_running(void **state) {
    expect_step_error(state, STEP("mean(X, axis=v)"), 13, 1, "'axis' must be a number known before the lesson runs",
                      "write a number such as -1 or the name of a number under given:, or leave "
                      "axis out (or write None) for every axis");
}

static void test_axis_out_of_range(void **state) {
    expect_step_error(state, STEP("mean(X, axis=-3)"), 13, 2, "axis -3 does not exist: this tensor has 2 axes",
                      "axes are 0..1, or -1 for the last");
}

static void test_axis_of_a_scalar(void **state) {
    expect_step_error(state, STEP("sum(s, axis=0)"), 12, 1, "a scalar has no axis 0",
                      "leave out axis=: a scalar has no axes to choose from");
}

static void test_count_must_be_whole(void **state) {
    expect_step_error(state, STEP("causal_mask(2.5)"), 12, 3, "'n' must be a whole number from 1 to 268,435,456, not 2.5",
                      "");
}

static void test_flag_must_be_true_or_false(void **state) {
    expect_step_error(state, STEP("sum(X, keepdims=2)"), 16, 1, "'keepdims' must be True or False", "");
}

static void test_softmax_of_a_scalar(void **state) {
    expect_step_error(state, STEP("softmax(s)"), 8, 1,
                      "softmax needs at least one axis: the softmax of a single number is 1", "");
}

// ---------------------------------------------------------------- indexing

static void test_index_out_of_range(void **state) {
    expect_step_error(state, STEP("X[3]"), 2, 1, "index 3 is out of range for axis 0, which has 3 entries",
                      "valid indices are 0 to 2 (or -3 to -1 from the end)");
}

static void test_negative_index_out_of_range(void **state) {
    expect_step_error(state, STEP("X[:, -5]"), 5, 2, "index -5 is out of range for axis 1, which has 4 entries",
                      "valid indices are 0 to 3 (or -4 to -1 from the end)");
}

static void test_slice_stop_out_of_range(void **state) {
    expect_step_error(state, STEP("X[0:4]"), 4, 1, "slice bound 4 is out of range for axis 0, which has 3 entries",
                      "a slice bound is 0 to 3 (or -3 to -1 from the end)");
    // The size itself is a valid bound, and so is a start there (an empty slice).
    teardown(state);
    const Plan *plan = check_ok(state, GIVENS "  - a: X[0:3]\n  - b: X[3:]\n  - c: X[-3:-1]\n");
    expect_shape(stage(plan, "a"), "[3, 4]");
    expect_shape(stage(plan, "b"), "[0, 4]");
    expect_shape(stage(plan, "c"), "[2, 4]");
}

static void test_index_not_whole(void **state) {
    expect_step_error(state, STEP("X[0.5]"), 2, 3, "an index must be a whole number, not 0.5", "");
}

static void test_too_many_indices(void **state) {
    expect_step_error(state, STEP("X[0, 0, 0]"), 0, 10, "3 indices for a tensor of shape [3, 4], which has 2 axes",
                      "give at most one index per axis (None, which adds an axis, does not count)");
}

static void test_empty_slice(void **state) {
    expect_step_error(state, STEP("X[2:1]"), 2, 3, "this slice is empty: it stops (1) before it starts (2)", "");
}

static void test_slice_bound_not_known_before_running(void **state) {
    expect_step_error(state, STEP("X[0:v]"), 4, 1, "a slice bound must be a whole number known before running", "");
}

static void test_two_lists_in_one_index(void **state) {
    expect_step_error(state, STEP("X[[0, 1], [0, 1]]"), 10, 6, "only one list of indices is allowed in one indexing",
                      "numpy would pair the lists up (X[[0, 1], [2, 3]] is X[0, 2] and X[1, 3]); to pick rows and "
                      "then columns, index twice: X[[0, 1]][:, [2, 3]]");
}

static void test_two_tensor_indices(void **state) {
    expect_step_error(state, STEP("X[ids, ids]"), 7, 3, "only one index in an indexing can be a tensor",
                      "index with one tensor at a time, in two steps: X[ids][:, cols]");
}

// Positions of shape [2, 3] put their two axes where the gathered axis stands, as numpy's.
static void test_index_tensor_of_rank_two(void **state) {
    const Plan *plan = check_ok(state, GIVENS "  - a: X[M]\n  - b: X[:, M]\n  - c: X[0, M]\n"
                                              "  - d: X[None, :, M]\n  - e: X[M, 1:3]\n");
    expect_shape(stage(plan, "a"), "[2, 3, 4]");
    expect_shape(stage(plan, "b"), "[3, 2, 3]");
    expect_shape(stage(plan, "c"), "[2, 3]");
    expect_shape(stage(plan, "d"), "[1, 3, 2, 3]");
    expect_shape(stage(plan, "e"), "[2, 3, 2]");
}

static void test_index_tensor_past_the_axes(void **state) {
    expect_step_error(state, STEP("X[None, None, M]"), 14, 1,
                      "indexing with positions of shape [2, 3] would give 5 axes; a tensor has at most 4",
                      "index with fewer axes of positions, or take some axes away first with a whole-number index");
}

// ---------------------------------------------------------------- op shape rules

static void test_concat_mismatch(void **state) {
    expect_step_error(state, STEP("concat(X, M)"), 10, 1, "cannot concat [3, 4] with [2, 3] along axis 0",
                      "every axis except axis 0 must have the same size");
}

static void test_split_heads_not_divisible(void **state) {
    expect_step_error(state, STEP("split_heads(X, 3)"), 15, 1, "4 columns cannot be split evenly into 3 heads",
                      "d_model must be a multiple of the number of heads");
}

static void test_rope_odd_columns(void **state) {
    expect_step_error(state, STEP("rope(M, arange(2))"), 5, 1,
                      "rope needs an even number of columns (pairs are rotated), but this is [2, 3]", "");
}

static void test_rope_positions(void **state) {
    expect_step_error(state, STEP("rope(X, ids)"), 8, 3, "rope needs one position per row: 3 positions for [3, 4], but got [2]",
                      "");
}

static void test_cross_entropy_target_shape(void **state) {
    expect_step_error(state, STEP("cross_entropy(X, ids)"), 17, 3, "targets of shape [2] do not fit logits of shape [3, 4]",
                      "give one target per row of logits: logits [n, vocab] take targets [n], and one row [vocab] "
                      "takes a single number");
}

static void test_layernorm_gamma_shape(void **state) {
    expect_step_error(state, STEP("layernorm(X, v, 0)"), 13, 1,
                      "gamma must be a number or have shape [4] (one per feature), but it is [3]", "");
}

static void test_merge_heads_needs_three_axes(void **state) {
    expect_step_error(state, STEP("merge_heads(X)"), 12, 1, "merge_heads needs a tensor with at least 3 axes, but this one is [3, 4]",
                      "");
}

// ---------------------------------------------------------------- sizes

// 17000 x 1 @ 1 x 17000 would hold 289,000,000 values, over TENSOR_MAX_VALUES (2^28 = 268,435,456).
static void test_result_too_large(void **state) {
    expect_error(state,
                 "title: t\ngiven:\n  a: {shape: [17000, 1], init: zeros}\n  b: {shape: [1, 17000], init: zeros}\n"
                 "steps:\n  - c: a @ b\n",
                 6, 8, 5, "this result, of shape [17000, 17000], would hold 289,000,000 values (2,312,000,000 bytes)",
                 "the tracer keeps at most 268,435,456 values (2 GiB) in one tensor; give the inputs a `shape:` "
                 "without values to reason about sizes alone");
}

// Each tensor fits, but together they pass the lesson's limit of 2^30 = 1,073,741,824 values:
// five of 200,000,000 (and four constants) fit, the sixth does not.
static void test_lesson_too_large_in_total(void **state) {
    expect_error(state,
                 "title: t\ngiven:\n  a: {shape: [20000, 10000], init: zeros}\n"
                 "steps:\n  - b: a + 1\n  - c: b + 1\n  - d: c + 1\n  - e: d + 1\n  - f: e + 1\n",
                 9, 8, 5, "the lesson's tensors together would exceed 1,073,741,824 values (8 GiB)",
                 "use smaller shapes, or shape-only givens (a `shape:` without values)");
}

// ---------------------------------------------------------------- step labels

// A list of the wrong length is a warning, and the axis is shown by position.
static void test_column_labels_that_do_not_fit(void **state) {
    Fixture *f = *state;
    const Plan *plan = check_ok(state, GIVENS "  - y: X.T\n    cols: [a, b, c, d]\n");
    assert_int_equal(f->diag.n_warnings, 1);
    char at[64];
    snprintf(at, sizeof(at), "t.yaml:%d:11", STEP_LINE + 1);
    assert_string_equal(f->diag.warnings[0].at, at);
    assert_string_equal(f->diag.warnings[0].text, "4 column labels for an axis of size 3 (the result of 'y' has shape "
                                                  "[4, 3]): its columns are shown by position");
    const PlanNode *y = plan_find_stage(plan, "y", NULL);
    assert_non_null(y);
    assert_null(y->labels[1].items);
}

static void test_row_labels_on_a_vector(void **state) {
    expect_error(state, GIVENS "  - y: mean(X, axis=0)\n    rows: [a, b, c, d]\n", STEP_LINE + 1, 11, 1,
                 "rows labels do not fit: the result of 'y' has shape [4]",
                 "rows label the second-to-last axis; a vector has only cols");
}

static void test_column_labels_on_a_scalar(void **state) {
    expect_error(state, GIVENS "  - y: sum(X)\n    cols: [a]\n", STEP_LINE + 1, 11, 1,
                 "cols labels do not fit: the result of 'y' has shape []", "a scalar has no axis to label");
}

// ---------------------------------------------------------------- out of memory

// Failing any allocation of the checker is reported as running out of memory, never as a
// lesson error and never as a crash.
static void test_out_of_memory(void **state) {
    Fixture *f = *state;
    load(f, CAT_SAT);
    util_fail_allocation(0);
    Diag diag;
    diag_init(&diag);
    Plan *plan = check_lesson(f->lesson, &diag);
    assert_non_null(plan);
    plan_destroy(plan);
    size_t total = util_fail_allocation(0);
    assert_true(total > 0);
    for (size_t k = 1; k <= total; k++) {
        diag_init(&diag);
        util_fail_allocation(k);
        plan = check_lesson(f->lesson, &diag);
        util_fail_allocation(0);
        if (plan) {
            plan_destroy(plan);
            continue;  // the failed allocation was optional
        }
        if (diag.status != STATUS_USAGE_ERROR)
            fail_msg("allocation %zu failing gave '%s'", k, diag.message);
    }
}

// Numbers known before running may be written as arithmetic on numbers, names of scalar
// givens and steps, and the constants pi, inf, True: -(c - 1) is axis -1, 4 - 2 * 1 is 2
// heads, c - 1 with the step c: 2 is axis 1, and x + inf and x * pi are constants.
static void test_numbers_known_before_running(void **state) {
    const Plan *plan = check_ok(state, "title: t\n"
                                       "given:\n"
                                       "  X: [[1, 2, 3, 4], [5, 6, 7, 8]]\n"
                                       "steps:\n"
                                       "  - c: 2\n"
                                       "  - a: sum(X, axis=-(c - 1))\n"
                                       "  - h: split_heads(X, 4 - 2 * 1)\n"
                                       "  - b: sum(X, axis=c - 1, keepdims=True)\n"
                                       "  - d: X + inf - pi * True\n");
    expect_shape(stage(plan, "a"), "[2]");
    expect_shape(stage(plan, "h"), "[2, 2, 2]");
    expect_shape(stage(plan, "b"), "[2, 1]");
    assert_int_equal(stage(plan, "a")->attrs.axis, 1);
    assert_int_equal(stage(plan, "h")->attrs.count, 2);
    assert_string_equal(stage(plan, "b")->op_line, "sum([2, 4], axis=1, keepdims=True) -> [2, 1]");
}

// Past 26 intermediates in one step, they are numbered 1.27, 1.28, ... instead of letters.
static void test_many_intermediates_numbered(void **state) {
    char yaml[1024] = "title: t\ngiven:\n  x: 1\nsteps:\n  - y: x";
    for (int i = 0; i < 28; i++)
        strcat(yaml, " + x");
    strcat(yaml, "\n");
    const Plan *plan = check_ok(state, yaml);
    assert_string_equal(stage(plan, "y.26")->number, "1z");
    assert_string_equal(stage(plan, "y.27")->number, "1.27");
    assert_string_equal(stage(plan, "y")->number, "1");
}

// ---------------------------------------------------------------- backward passes

// Two grads of one loss share one backward pass, even when a later one is the first operand
// of its step (grad(loss, b) * 2): the pass laid out for W gathers b too, so the seed
// d loss / d loss appears once, and b's gradient is a stage of that pass.
static void test_grads_of_one_loss_share_a_pass(void **state) {
    const Plan *plan = check_ok(state, "title: t\n"
                                       "given:\n"
                                       "  W: [[1.0, 2.0], [3.0, 4.0]]\n"
                                       "  b: [0.5, -0.5]\n"
                                       "  x: [1.0, 1.0]\n"
                                       "steps:\n"
                                       "  - h: W @ x + b\n"
                                       "  - loss: sum(h * h)\n"
                                       "  - dW: grad(loss, W)\n"
                                       "  - db: grad(loss, b) * 2\n");
    size_t loss, seeds = 0;
    assert_non_null(plan_find_stage(plan, "loss", &loss));
    for (size_t i = 0; i < plan->n_nodes; i++)
        seeds += plan->nodes[i].kind == PLAN_GRAD && plan->nodes[i].grad_wrt == loss;
    assert_int_equal(seeds, 1);
    assert_non_null(plan_find_stage(plan, "dloss/db", NULL));
}

// ---------------------------------------------------------------- the check's memory

// The lesson checked within bytes of plan: NULL with the error, located as expected.
static void expect_past_memory(void **state, const char *yaml, size_t bytes, size_t line, size_t col, size_t width) {
    Fixture *f = *state;
    load(f, yaml);
    PlanMemory memory = {.bytes = bytes, .limit = "1 byte, a test's", .raise = "; or raise it"};
    f->plan = check_lesson_within(f->lesson, &memory, &f->diag);
    assert_null(f->plan);
    assert_int_equal(f->diag.status, STATUS_LESSON_ERROR);
    assert_string_equal(f->diag.message,
                        "checking the lesson this far needs more memory than its check may use: 1 byte, a test's");
    assert_string_equal(f->diag.hint, "each given and step, and each stage of a backward pass, takes about a kilobyte "
                                      "to check: use fewer steps, or take grad of fewer numbers (one loss); or raise it");
    assert_int_equal(f->diag.line, line);
    assert_int_equal(f->diag.col, col);
    assert_int_equal(f->diag.width, width);
    lesson_destroy(f->lesson);
    f->lesson = NULL;
}

// A plan that cannot fit is refused at the first given (under its name), or with no givens
// at the first step (under its whole expression); no limit, or room enough, checks it.
static void test_check_within_memory(void **state) {
    Fixture *f = *state;
    expect_past_memory(state, CAT_SAT, 1, 6, 3, 1);  // "  X:": the first given
    const char *no_givens = "title: t\nsteps:\n  - a: \"[1.0, 2.0]\"\n  - b: a * 2\n";
    expect_past_memory(state, no_givens, 1, 3, 9, 10);  // [1.0, 2.0] inside its quotes
    load(f, CAT_SAT);
    PlanMemory unlimited = {.bytes = 0}, plenty = {.bytes = SIZE_MAX};
    Plan *plan = check_lesson_within(f->lesson, &unlimited, &f->diag);
    assert_non_null(plan);
    plan_destroy(plan);
    assert_non_null(f->plan = check_lesson_within(f->lesson, &plenty, &f->diag));
}

// The tables of names hold the last name too: with five, a table one short would end where the
// next begins (4 pointers fill a 32-byte slot), and E (FNV-1a 0 mod 16) sits in the first slot
// after the table of nodes. A claim, checked after the last name, still finds E as node 0.
static void test_names_table_holds_the_last_name(void **state) {
    const Plan *plan = check_ok(state, "title: t\n"
                                       "given:\n"
                                       "  E: [1, 2, 3]\n"
                                       "steps:\n"
                                       "  - a: E + 1\n"
                                       "  - b: a * 2\n"
                                       "  - c: b - 1\n"
                                       "  - d: c / 2\n"
                                       "claims:\n"
                                       "  - E is small: all(E < 4)\n");
    assert_int_equal(plan->n_claims, 1);
    const PlanNode *claim = &plan->nodes[plan->claims[0].node];
    // all(E < 4): the comparison reads E, node 0, and a constant
    const PlanNode *less = &plan->nodes[claim->args[0]];
    assert_true(less->args[0] == 0 && strcmp(plan->nodes[0].name, "E") == 0);
}

// The limit is inclusive: a check needing exactly its bytes passes, one byte less is refused.
// CAT_SAT's arena is one block from the start: it needs all its nodes and that block.
static void test_check_within_memory_exactly(void **state) {
    Fixture *f = *state;
    load(f, CAT_SAT);
    PlanMemory unlimited = {.bytes = 0};
    Plan *plan = check_lesson_within(f->lesson, &unlimited, &f->diag);
    assert_non_null(plan);
    size_t needed = plan->n_nodes * sizeof(PlanNode) + arena_bytes(plan->arena);
    plan_destroy(plan);
    PlanMemory less = {.bytes = needed - 1, .limit = "", .raise = ""}, exact = {.bytes = needed};
    diag_init(&f->diag);
    assert_null(check_lesson_within(f->lesson, &less, &f->diag));
    assert_int_equal(f->diag.status, STATUS_LESSON_ERROR);
    diag_init(&f->diag);
    f->plan = check_lesson_within(f->lesson, &exact, &f->diag);
    assert_non_null(f->plan);
}

#define TEST(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void) {
    const struct CMUnitTest tests[] = {
        TEST(test_cat_sat_stages),
        TEST(test_numbers_known_before_running),
        TEST(test_many_intermediates_numbered),
        TEST(test_cat_sat_shapes),
        TEST(test_cat_sat_op_lines_and_texts),
        TEST(test_cat_sat_labels),
        TEST(test_intermediates_are_numbered_in_order),
        TEST(test_intermediate_text_keeps_parentheses),
        TEST(test_step_that_names_or_is_a_constant),
        TEST(test_indexing_shapes_and_labels),
        TEST(test_reductions_and_builders),
        TEST(test_step_labels),
        TEST(test_intermediates_take_the_labels_of_their_readers),
        TEST(test_shape_only_propagates),
        TEST(test_counts),
        TEST(test_unknown_name_suggests_the_closest),
        TEST(test_unknown_name_without_a_close_one),
        TEST(test_unknown_function_suggests_the_closest),
        TEST(test_unknown_function_without_a_close_one),
        TEST(test_names_table_holds_the_last_name),
        TEST(test_check_within_memory_exactly),
        TEST(test_function_used_without_call),
        TEST(test_value_called_like_a_function),
        TEST(test_later_step_used_early),
        TEST(test_step_using_itself),
        TEST(test_error_in_a_later_step),
        TEST(test_syntax_error_in_quoted_expression),
        TEST(test_syntax_error_with_hint),
        TEST(test_error_in_block_expression_points_at_its_start),
        TEST(test_columns_count_characters),
        TEST(test_matmul_inner_mismatch_suggests_transpose),
        TEST(test_matmul_inner_mismatch),
        TEST(test_matmul_of_a_scalar),
        TEST(test_broadcasting_mismatch),
        TEST(test_elementwise_product_of_matrices_mentions_matmul),
        TEST(test_list_rows_of_unequal_length),
        TEST(test_too_many_arguments),
        TEST(test_unknown_keyword),
        TEST(test_argument_given_twice),
        TEST(test_missing_required_argument),
        TEST(test_axis_not_known_before_running),
        TEST(test_axis_out_of_range),
        TEST(test_axis_of_a_scalar),
        TEST(test_count_must_be_whole),
        TEST(test_flag_must_be_true_or_false),
        TEST(test_softmax_of_a_scalar),
        TEST(test_index_out_of_range),
        TEST(test_negative_index_out_of_range),
        TEST(test_slice_stop_out_of_range),
        TEST(test_index_not_whole),
        TEST(test_too_many_indices),
        TEST(test_empty_slice),
        TEST(test_slice_bound_not_known_before_running),
        TEST(test_two_lists_in_one_index),
        TEST(test_two_tensor_indices),
        TEST(test_index_tensor_of_rank_two),
        TEST(test_index_tensor_past_the_axes),
        TEST(test_concat_mismatch),
        TEST(test_split_heads_not_divisible),
        TEST(test_rope_odd_columns),
        TEST(test_rope_positions),
        TEST(test_cross_entropy_target_shape),
        TEST(test_layernorm_gamma_shape),
        TEST(test_merge_heads_needs_three_axes),
        TEST(test_result_too_large),
        TEST(test_lesson_too_large_in_total),
        TEST(test_column_labels_that_do_not_fit),
        TEST(test_row_labels_on_a_vector),
        TEST(test_column_labels_on_a_scalar),
        TEST(test_out_of_memory),
        TEST(test_check_within_memory),
        TEST(test_grads_of_one_loss_share_a_pass),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
