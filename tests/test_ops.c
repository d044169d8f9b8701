// Tests of the op table on its own: this program links the operations and the modules below
// them only (ops_dep: tracer/ops and the folders below it), never the checker or the runner, and calls
// shape rules, computations, notes and explanations directly. Every expected value is worked
// out by hand in the comment beside it.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cmocka_double.h"

#include <math.h>
#include <string.h>

#include "ops.h"

static const Labels no_labels[TENSOR_MAX_RANK];

// One call of an op's shape rule on these shapes (and parameters already in c).
static bool infer(const char *name, OpCheck *c, OpProblem *p, Arena *arena, const Shape *a, const Shape *b) {
    const OpDef *op = ops_find_function(name);
    if (!op)
        op = ops_operator(OP_INFIX, name[0]);
    assert_non_null(op);
    c->op = op;
    c->shapes[0] = a;
    c->shapes[1] = b;
    c->n_inputs = b ? 2 : 1;
    c->labels[0] = c->labels[1] = c->labels[2] = no_labels;
    c->arena = arena;
    c->problem = p;
    return op->infer(c);
}

static void expect_shape(const Shape *s, size_t rank, size_t d0, size_t d1, size_t d2) {
    assert_int_equal(s->rank, rank);
    size_t want[3] = {d0, d1, d2};
    for (size_t i = 0; i < rank && i < 3; i++)
        assert_int_equal(s->dim[i], want[i]);
}

static void expect_problem(const OpProblem *p, OpTargetKind kind, size_t index, const char *message) {
    assert_true(p->failed);
    assert_false(p->out_of_memory);
    assert_int_equal(p->at.kind, kind);
    assert_int_equal(p->at.index, index);
    assert_string_equal(p->message, message);
}

static Tensor *tensor_of(Shape shape, const double *values) {
    Tensor *t = tensor_create(&shape);
    assert_non_null(t);
    memcpy(t->data, values, t->size * sizeof(double));
    return t;
}

// ---------------------------------------------------------------- the table

static void test_lookup(void **state) {
    (void)state;
    assert_string_equal(ops_find_function("softmax")->name, "softmax");
    assert_string_equal(ops_find_function("rmsnorm")->name, "rmsnorm");
    assert_null(ops_find_function("matmul"));  // an operator, not a function a lesson calls
    assert_null(ops_find_function("sofmax"));
    assert_string_equal(ops_operator(OP_INFIX, '@')->name, "matmul");
    assert_string_equal(ops_operator(OP_INFIX, '-')->name, "subtract");
    assert_string_equal(ops_operator(OP_PREFIX, '-')->name, "negate");
    assert_string_equal(ops_operator(OP_INFIX, '^')->symbol, "**");
    assert_string_equal(ops_operator(OP_POSTFIX, 'T')->name, "transpose");
    assert_string_equal(ops_operator(OP_INDEXING, '[')->name, "index");
    assert_string_equal(ops_operator(OP_INFIX, '%')->name, "remainder");
    assert_string_equal(ops_operator(OP_INFIX, OP_TOKEN_FLOOR_DIV)->symbol, "//");
    assert_string_equal(ops_operator(OP_INFIX, OP_TOKEN_AND)->name, "logical_and");
    assert_string_equal(ops_operator(OP_PREFIX, OP_TOKEN_NOT)->name, "logical_not");
    assert_null(ops_operator(OP_INFIX, '$'));
    assert_string_equal(ops_word("and", 3)->name, "logical_and");
    assert_string_equal(ops_word("or", 2)->name, "logical_or");
    assert_string_equal(ops_word("nothing", 3)->name, "logical_not");  // the first 3 bytes
    assert_null(ops_word("nothing", 7));
    assert_null(ops_word("And", 3));
    assert_null(ops_word("T", 1));  // the transpose is written .T, after a dot
    assert_null(ops_word("softmax", 7));  // a function's name is a name
    assert_null(ops_operator(OP_FUNCTION, 0));
}

// Every function has what the checker, the runner and the README rely on, and can be found
// by its own name.
static void test_every_entry_complete(void **state) {
    (void)state;
    size_t n = ops_function_count();
    const char *names[256];
    assert_true(n > 0 && n <= 256);
    assert_int_equal(ops_function_names(names, 256), n);
    assert_int_equal(ops_function_names(names, 3), 3);  // never more than asked for
    ops_function_names(names, n);
    for (size_t i = 0; i < n; i++) {
        const OpDef *op = ops_find_function(names[i]);
        assert_non_null(op);
        assert_ptr_equal(op->name, names[i]);
        assert_int_equal(op->syntax, OP_FUNCTION);
        assert_non_null(op->about);
        assert_non_null(op->params[0].name);
        if (!op->infer || !op->compute || !op->explain)
            fail_msg("'%s' lacks a shape rule, a computation or an explanation", op->name);
        for (size_t j = 0; j < i; j++)
            if (strcmp(names[j], names[i]) == 0)
                fail_msg("'%s' is in the table twice", names[i]);
    }
}

// The properties the rest of the tracer asks about are fields of the entries.
static void test_properties(void **state) {
    (void)state;
    const OpDef *add = ops_operator(OP_INFIX, '+'), *pow_ = ops_operator(OP_INFIX, '^');
    const OpDef *div = ops_operator(OP_INFIX, '/'), *mm = ops_operator(OP_INFIX, '@');
    assert_double_equal(add->fold(add, 2, 3), 5, 0);
    assert_double_equal(pow_->fold(pow_, 2, 10), 1024, 0);
    assert_true(isinf(div->fold(div, 1, 0)));
    assert_null(mm->fold);  // a product of matrices is no number's operation
    assert_non_null(mm->cost);
    assert_null(add->cost);
    assert_true(ops_find_function("numel")->from_shapes_only);
    assert_false(ops_find_function("sum")->from_shapes_only);
    assert_int_equal(ops_find_function("argmax")->integers, INTEGERS_ALWAYS);
    assert_int_equal(div->integers, INTEGERS_NEVER);
    assert_int_equal(add->integers, INTEGERS_IF_INPUTS);
    assert_int_equal(ops_operator(OP_POSTFIX, 'T')->integers, INTEGERS_IF_FIRST);
    // A row form: the whole row's work at once (a softmax shares its sum across the row).
    assert_true(ops_find_function("softmax")->row_form);
    assert_true(ops_find_function("layernorm")->row_form);
    assert_true(ops_find_function("rmsnorm")->row_form);
    assert_true(mm->row_form);
    assert_false(ops_find_function("batchnorm")->row_form);
    assert_false(add->row_form);
    assert_string_equal(ops_operator(OP_INFIX, '*')->work_symbol, " × ");
}

// [3, 4] @ [4, 5] costs 3 * 5 results of 4 multiply-adds = 60; an elementwise sum none.
static void test_multiply_adds(void **state) {
    (void)state;
    Shape a = {2, {3, 4}}, b = {2, {4, 5}}, out = {2, {3, 5}};
    const Shape *in[2] = {&a, &b};
    size_t work = 99;
    assert_true(op_multiply_adds(ops_operator(OP_INFIX, '@'), in, &out, &work));
    assert_int_equal(work, 60);
    assert_true(op_multiply_adds(ops_operator(OP_INFIX, '+'), in, &out, &work));
    assert_int_equal(work, 0);
    // 2^32 x 2^32 results of 2^32 each: 2^96 does not fit.
    Shape big_a = {2, {(size_t)1 << 32, (size_t)1 << 32}}, big_out = {2, {(size_t)1 << 32, (size_t)1 << 32}};
    const Shape *big[2] = {&big_a, &big_a};
    assert_false(op_multiply_adds(ops_operator(OP_INFIX, '@'), big, &big_out, &work));
}

// ---------------------------------------------------------------- shape rules

static void test_matmul_shapes(void **state) {
    (void)state;
    Arena *arena = arena_create();
    OpCheck c = {0};
    OpProblem p = {0};
    Shape a = {2, {3, 4}}, b = {2, {4, 5}};
    const char *const rows[] = {"The", "cat", "sat"};
    Labels la[TENSOR_MAX_RANK] = {{rows, 3}};
    c.labels[0] = la;
    assert_true(infer("@", &c, &p, arena, &a, &b));
    expect_shape(&c.shape, 2, 3, 5, 0);
    // infer() reset the labels to none; again with the rows labelled: the result keeps them.
    OpCheck c2 = {0};
    c2.op = ops_operator(OP_INFIX, '@');
    c2.shapes[0] = &a;
    c2.shapes[1] = &b;
    c2.n_inputs = 2;
    c2.labels[0] = la;
    c2.labels[1] = no_labels;
    c2.problem = &p;
    assert_true(c2.op->infer(&c2));
    assert_ptr_equal(c2.out_labels[0].items, rows);
    // [3, 4] @ [3, 4]: the inner dimensions 4 and 3 differ, under the '@' (the whole call).
    OpCheck c3 = {0};
    assert_false(infer("@", &c3, &p, arena, &a, &a));
    expect_problem(&p, OP_TARGET_CALL, 0, "cannot multiply [3, 4] @ [3, 4]: the inner dimensions 4 and 3 differ");
    assert_non_null(strstr(p.hint, "did you mean to transpose the right one (.T)?"));
    // A scalar on the right: the problem is that input.
    OpCheck c4 = {0};
    OpProblem p4 = {0};
    Shape scalar = {0};
    assert_false(infer("@", &c4, &p4, arena, &a, &scalar));
    expect_problem(&p4, OP_TARGET_INPUT, 1, "'@' needs vectors or matrices, but this is a scalar");
    assert_string_equal(p4.hint, "to scale by a number, write x * s");
    arena_destroy(arena);
}

static void test_broadcast_shapes(void **state) {
    (void)state;
    OpCheck c = {0};
    OpProblem p = {0};
    Shape a = {2, {2, 3}}, b = {1, {3}}, t = {2, {3, 2}};
    assert_true(infer("*", &c, &p, NULL, &a, &b));
    expect_shape(&c.shape, 2, 2, 3, 0);
    OpCheck c2 = {0};
    assert_false(infer("*", &c2, &p, NULL, &a, &t));
    expect_problem(&p, OP_TARGET_CALL, 0, "cannot combine [2, 3] and [3, 2] elementwise with '*'");
    // Two matrices multiplied elementwise by mistake: the hint names @.
    assert_non_null(strstr(p.hint, "; for a matrix product write A @ B"));
}

// sum over axis 5 of a [2, 3]: parameter 1 (axis) is wrong; axis -1 with keepdims gives [2, 1].
static void test_reduce_axis(void **state) {
    (void)state;
    Shape x = {2, {2, 3}}, scalar = {0};
    OpCheck c = {.constants = {0, 5}, .present = {false, true}};
    OpProblem p = {0};
    assert_false(infer("sum", &c, &p, NULL, &x, NULL));
    expect_problem(&p, OP_TARGET_PARAM, 1, "axis 5 does not exist: this tensor has 2 axes");
    assert_string_equal(p.hint, "axes are 0..1, or -1 for the last");
    OpCheck c2 = {.constants = {0, -1, 1}, .present = {false, true, true}};
    OpProblem p2 = {0};
    assert_true(infer("sum", &c2, &p2, NULL, &x, NULL));
    expect_shape(&c2.shape, 2, 2, 1, 0);
    assert_int_equal(c2.attrs.axis, 1);
    assert_true(c2.attrs.keepdims);
    OpCheck c3 = {.constants = {0, 0}, .present = {false, true}};
    OpProblem p3 = {0};
    assert_false(infer("mean", &c3, &p3, NULL, &scalar, NULL));
    expect_problem(&p3, OP_TARGET_PARAM, 1, "a scalar has no axis 0");
}

// zeros([1, 1, 2, 3]) has as many axes as a tensor can: every size is read, and no more.
static void test_fill_shape(void **state) {
    (void)state;
    OpCheck c = {.attrs = {.dims = {1, 1, 2, 3}, .n_dims = 4}};
    OpProblem p = {0};
    const OpDef *zeros = ops_find_function("zeros");
    c.op = zeros;
    c.problem = &p;
    assert_true(zeros->infer(&c));
    assert_int_equal(c.shape.rank, 4);
    size_t want[4] = {1, 1, 2, 3};
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(c.shape.dim[i], want[i]);
    assert_double_equal(c.attrs.number, 0, 0);
}

static void test_norm_checks(void **state) {
    (void)state;
    Shape x = {2, {2, 3}}, four = {1, {4}}, three = {1, {3}}, scalar = {0};
    // layernorm(x, gamma [4], beta [3]): gamma is input 1.
    OpCheck c = {.constants = {0, 0, 0, 1e-5}};
    OpProblem p = {0};
    c.shapes[2] = &three;
    assert_false(infer("layernorm", &c, &p, NULL, &x, &four));
    expect_problem(&p, OP_TARGET_INPUT, 1, "gamma must be a number or have shape [3] (one per feature), but it is [4]");
    // eps is parameter 3 of layernorm and parameter 2 of rmsnorm.
    OpCheck c2 = {.constants = {0, 0, 0, -1}};
    OpProblem p2 = {0};
    c2.shapes[2] = &three;
    c2.n_inputs = 3;
    assert_false(infer("layernorm", &c2, &p2, NULL, &x, &three));
    expect_problem(&p2, OP_TARGET_PARAM, 3, "eps must be zero or positive");
    OpCheck c3 = {.constants = {0, 0, -1}};
    OpProblem p3 = {0};
    assert_false(infer("rmsnorm", &c3, &p3, NULL, &x, &scalar));
    expect_problem(&p3, OP_TARGET_PARAM, 2, "eps must be zero or positive");
    OpCheck c4 = {.constants = {0, 0, 1e-6}};
    OpProblem p4 = {0};
    assert_true(infer("rmsnorm", &c4, &p4, NULL, &x, &three));
    expect_shape(&c4.shape, 2, 2, 3, 0);
    assert_double_equal(c4.attrs.number, 1e-6, 0);
    OpCheck c5 = {.constants = {0, 0, 1e-6}};
    OpProblem p5 = {0};
    assert_false(infer("rmsnorm", &c5, &p5, NULL, &scalar, &scalar));
    expect_problem(&p5, OP_TARGET_INPUT, 0, "rmsnorm needs a tensor with at least 1 axis, but this one is []");
}

// reshape of [3] (labelled a, b, c) into [1, 3]: the last axis keeps its size, so its labels;
// the new first axis has none. The labels are read only as far as the shorter shape goes: the
// entry before x's labels (other labels, as another tensor's could be) is never taken.
static void test_reshape_labels(void **state) {
    (void)state;
    static const char *const abc[] = {"a", "b", "c"}, *const other[] = {"other"};
    Labels labels[TENSOR_MAX_RANK + 1] = {{other, 1}, {abc, 3}};
    Shape x = {1, {3}};
    OpProblem p = {0};
    OpCheck c = {.op = ops_find_function("reshape"), .n_inputs = 1, .shapes = {&x}, .labels = {labels + 1},
                 .attrs = {.dims = {1, 3}, .n_dims = 2}, .problem = &p};
    assert_true(c.op->infer(&c));
    expect_shape(&c.shape, 2, 1, 3, 0);
    assert_null(c.out_labels[0].items);
    assert_int_equal(c.out_labels[0].n, 0);
    assert_ptr_equal(c.out_labels[1].items, abc);
    assert_int_equal(c.out_labels[1].n, 3);
}

// [3, 6] into 4 heads: 6 columns do not split evenly; into 2: [2, 3, 3], heads labelled.
static void test_split_heads(void **state) {
    (void)state;
    Arena *arena = arena_create();
    Shape x = {2, {3, 6}};
    OpCheck c = {.constants = {0, 4}};
    OpProblem p = {0};
    assert_false(infer("split_heads", &c, &p, arena, &x, NULL));
    expect_problem(&p, OP_TARGET_PARAM, 1, "6 columns cannot be split evenly into 4 heads");
    OpCheck c2 = {.constants = {0, 2}};
    OpProblem p2 = {0};
    assert_true(infer("split_heads", &c2, &p2, arena, &x, NULL));
    expect_shape(&c2.shape, 3, 2, 3, 3);
    assert_int_equal(c2.out_labels[0].n, 2);
    assert_string_equal(c2.out_labels[0].items[1], "head 1");
    arena_destroy(arena);
}

// ---------------------------------------------------------------- computations

// E [3, 2] indexed by ids: rows 1 and -1 (the last) are rows 1 and 2; a 3 is past the end.
static void test_index_rows(void **state) {
    (void)state;
    Arena *arena = arena_create();
    Tensor *e = tensor_of((Shape){2, {3, 2}}, (double[]){1, 2, 3, 4, 5, 6});
    Tensor *ids = tensor_of((Shape){1, {2}}, (double[]){1, -1});
    Tensor *out = tensor_create(&(Shape){2, {2, 2}});
    OpAttrs attrs = {.index_input = 0, .n_index = 1};
    const Tensor *in[2] = {e, ids};
    const char *names[2] = {"E", "ids"};
    OpProblem p = {0};
    OpRun r = {.op = ops_operator(OP_INDEXING, '['), .out = out, .in = in, .in_names = names, .n_in = 2,
               .attrs = &attrs, .arena = arena, .problem = &p};
    assert_true(r.op->compute(&r));
    double want[] = {3, 4, 5, 6};
    for (size_t i = 0; i < 4; i++)
        assert_double_equal(out->data[i], want[i], 0);
    ids->data[1] = 3;
    assert_false(r.op->compute(&r));
    expect_problem(&p, OP_TARGET_INPUT, 1, "ids[1] is 3, past the end of E, which has rows 0 to 2");
    assert_string_equal(p.hint, "every index must be from 0 to 2 (or -3 to -1, counting from the end); a table has "
                                "no row beyond its last");
    // Out of memory for the list of rows: reported as such, with no message.
    ids->data[1] = 0;
    Arena *empty = arena_create();
    OpProblem p2 = {0};
    r.arena = empty;
    r.problem = &p2;
    util_fail_allocation(1);
    assert_false(r.op->compute(&r));
    util_fail_allocation(0);
    assert_true(p2.failed && p2.out_of_memory);
    arena_destroy(empty);
    tensor_destroy(e);
    tensor_destroy(ids);
    tensor_destroy(out);
    arena_destroy(arena);
}

// take(table [4], idx) needs whole numbers from 0 to 3: 0.5 is refused, as entry 0 of idx.
static void test_take_whole_indices(void **state) {
    (void)state;
    Tensor *table = tensor_of((Shape){1, {4}}, (double[]){10, 20, 30, 40});
    Tensor *idx = tensor_of((Shape){1, {2}}, (double[]){0.5, 1});
    Tensor *out = tensor_create(&(Shape){1, {2}});
    const Tensor *in[2] = {table, idx};
    const char *names[2] = {"table", "idx"};
    OpProblem p = {0};
    OpRun r = {.op = ops_find_function("take"), .out = out, .in = in, .in_names = names, .n_in = 2, .problem = &p};
    assert_false(r.op->compute(&r));
    expect_problem(&p, OP_TARGET_INPUT, 1, "index 0.5 (entry 0 of idx) must be a whole number from 0 to 3");
    idx->data[0] = 3;
    OpProblem p2 = {0};
    r.problem = &p2;
    assert_true(r.op->compute(&r));
    assert_double_equal(out->data[0], 40, 0);
    assert_double_equal(out->data[1], 20, 0);
    tensor_destroy(table);
    tensor_destroy(idx);
    tensor_destroy(out);
}

// take of a single index from an empty table is refused before running, as of several; a
// list of three [1, 2, 2] tensors stacks into [3, 1, 2, 2], as many axes as a tensor has, with
// an unlabelled first axis and the items' labels on the others.
static void test_take_and_list_limits(void **state) {
    (void)state;
    Shape empty = {1, {0}}, one = {1, {1}}, cube = {3, {1, 2, 2}};
    OpCheck c = {0};
    OpProblem p = {0};
    assert_false(infer("take", &c, &p, NULL, &empty, &one));
    expect_problem(&p, OP_TARGET_INPUT, 0, "take from an empty table: [0] has no entries to pick");
    OpProblem p2 = {0};
    static const char *const pq[] = {"p", "q"};
    const Labels cube_labels[TENSOR_MAX_RANK] = {{0}, {0}, {pq, 2}};
    OpCheck l = {.op = ops_operator(OP_LIST, '['), .n_inputs = 3, .shapes = {&cube, &cube, &cube},
                 .labels = {cube_labels, cube_labels, cube_labels}, .problem = &p2};
    assert_non_null(l.op);
    assert_true(l.op->infer(&l));
    assert_int_equal(l.shape.rank, 4);
    size_t want[4] = {3, 1, 2, 2};
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(l.shape.dim[i], want[i]);
    // the new first axis counts items and has no labels (the JSON trace writes null for them);
    // the items' axes follow it with their labels: the last is labelled p, q
    assert_null(l.out_labels[0].items);
    assert_int_equal(l.out_labels[0].n, 0);
    assert_null(l.out_labels[2].items);
    assert_ptr_equal(l.out_labels[3].items, pq);
    assert_int_equal(l.out_labels[3].n, 2);
}

// The first problem wins; a hint may follow it.
static void test_problem_first_wins(void **state) {
    (void)state;
    OpProblem p = {0};
    assert_false(op_error(&p, OP_INPUT(2), "first %d", 1));
    op_hint(&p, "a hint");
    assert_false(op_error(&p, OP_CALL, "second"));
    expect_problem(&p, OP_TARGET_INPUT, 2, "first 1");
    assert_string_equal(p.hint, "a hint");
    assert_false(op_out_of_memory(&p));
    assert_false(p.out_of_memory);  // the earlier problem stands
}

// ---------------------------------------------------------------- notes

static void run_notes(const char *name, OpNotes *n, Arena *arena, const Tensor *out, const Tensor *const *in) {
    static OpAttrs attrs;
    attrs.axis = out->shape.rank ? (int)out->shape.rank - 1 : 0;  // a softmax along the last axis
    *n = (OpNotes){.out = out, .in = in, .n_in = 2, .digits = 4, .arena = arena, .attrs = &attrs};
    ops_find_function(name)->notes(n);
}

static void test_notes(void **state) {
    (void)state;
    Arena *arena = arena_create();
    OpNotes n;
    // softmax rows [0.25, 0.75] and [0.5, 0.5] each sum to 1: the same sum, said once; rows
    // [0.25, 0.7] and [0.5, 0.5] sum to 0.95 and 1, each said.
    Tensor *w = tensor_of((Shape){2, {2, 2}}, (double[]){0.25, 0.75, 0.5, 0.5});
    run_notes("softmax", &n, arena, w, NULL);
    assert_int_equal(n.n_lines, 1);
    assert_string_equal(n.lines[0], "each row is a probability distribution: all 2 row sums are 1.0000");
    w->data[1] = 0.7;
    run_notes("softmax", &n, arena, w, NULL);
    assert_string_equal(n.lines[0], "each row is a probability distribution: row sums 0.9500, 1.0000");
    w->data[1] = 0.75;
    w->data[2] = w->data[3] = NAN;  // a fully masked row
    run_notes("softmax", &n, arena, w, NULL);
    assert_string_equal(n.lines[0], "row sums 1.0000, nan; a nan row had no finite score to weigh (all -inf, or a +inf)");
    // along axis 0 of [[0.25, 0.5], [0.75, 0.5]]: each column sums to 1
    Tensor *cols = tensor_of((Shape){2, {2, 2}}, (double[]){0.25, 0.5, 0.75, 0.5});
    OpAttrs down = {.axis = 0};
    n = (OpNotes){.out = cols, .digits = 4, .arena = arena, .attrs = &down};
    ops_find_function("softmax")->notes(&n);
    assert_string_equal(n.lines[0], "each line along axis 0 is a probability distribution: all 2 sums are 1.0000");
    cols->data[0] = 0.2;  // column 0 sums to 0.95
    n = (OpNotes){.out = cols, .digits = 4, .arena = arena, .attrs = &down};
    ops_find_function("softmax")->notes(&n);
    assert_string_equal(n.lines[0], "each line along axis 0 is a probability distribution: sums 0.9500, 1.0000");
    // Sums that differ are listed for at most 16 rows: [16, 1] and [17, 1] softmaxes whose last
    // row is 0.5 (not a softmax's; a sum of its own) list sixteen sums, and none. Sums that all
    // print alike are said once however many rows there are.
    double ones[17] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    Tensor *rows16 = tensor_of((Shape){2, {16, 1}}, ones), *rows17 = tensor_of((Shape){2, {17, 1}}, ones);
    run_notes("softmax", &n, arena, rows17, NULL);
    assert_string_equal(n.lines[0], "each row is a probability distribution: all 17 row sums are 1.0000");
    rows16->data[15] = rows17->data[16] = 0.5;
    run_notes("softmax", &n, arena, rows16, NULL);
    assert_int_equal(n.n_lines, 1);
    assert_string_equal(n.lines[0], "each row is a probability distribution: row sums 1.0000, 1.0000, 1.0000, 1.0000, "
                                    "1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, "
                                    "1.0000, 0.5000");
    run_notes("softmax", &n, arena, rows17, NULL);
    assert_int_equal(n.n_lines, 0);
    tensor_destroy(rows16);
    tensor_destroy(rows17);
    // rmsnorm with gamma 1: [0.6, -1.2, 1.2, 0.6] has mean square (0.36 + 1.44 + 1.44 + 0.36) / 4 = 0.9.
    Tensor *y = tensor_of((Shape){2, {1, 4}}, (double[]){0.6, -1.2, 1.2, 0.6});
    Tensor *one = tensor_of((Shape){0}, (double[]){1});
    const Tensor *in[2] = {y, one};
    run_notes("rmsnorm", &n, arena, y, in);
    assert_int_equal(n.n_lines, 1);
    assert_string_equal(n.lines[0],
                        "row means of squares 0.9000: 1 for a row whose own mean square is much larger than eps");
    one->data[0] = 2;  // scaled by gamma: nothing to say about the mean squares
    run_notes("rmsnorm", &n, arena, y, in);
    assert_int_equal(n.n_lines, 0);
    // cross_entropy of ln 2: the target had probability e^-ln2 = 0.5.
    Tensor *loss = tensor_of((Shape){0}, (double[]){0.6931471805599453});
    run_notes("cross_entropy", &n, arena, loss, NULL);
    assert_string_equal(n.lines[0], "the model gave the target a probability of 0.5000; a perfect prediction would "
                                    "give loss 0");
    tensor_destroy(w);
    tensor_destroy(cols);
    tensor_destroy(y);
    tensor_destroy(one);
    tensor_destroy(loss);
    arena_destroy(arena);
}

// ---------------------------------------------------------------- explanations

static OpExplain explain_at(const OpDef *op, Arena *arena, const Tensor *out, const Tensor *const *in,
                            const char *const *names, size_t flat, bool row) {
    OpExplain e = {.op = op, .out = out, .in = in, .n_in = 2, .out_name = "y", .in_names = names, .flat = flat,
                   .row = row, .digits = 4, .arena = arena};
    shape_unflatten(&out->shape, flat, e.index);
    op->explain(&e);
    assert_false(e.failed);
    return e;
}

static void test_explain(void **state) {
    (void)state;
    Arena *arena = arena_create();
    // y = a * 3 with a = [1, 2]: y[1] = 2 × 3 = 6.
    Tensor *a = tensor_of((Shape){1, {2}}, (double[]){1, 2}), *three = tensor_of((Shape){0}, (double[]){3});
    Tensor *y = tensor_of((Shape){1, {2}}, (double[]){3, 6});
    const Tensor *in[2] = {a, three};
    const char *names[2] = {"a", "3"};
    OpExplain e = explain_at(ops_operator(OP_INFIX, '*'), arena, y, in, names, 1, false);
    assert_int_equal(e.n_lines, 1);
    assert_string_equal(e.lines[0], "y[1] = a[1] × 3 = 2.0000 × 3.0000 = 6.0000");
    // -(-1) keeps its brackets: y = -a with a = [-1, 2].
    a->data[0] = -1;
    y->data[0] = 1;
    e = explain_at(ops_operator(OP_PREFIX, '-'), arena, y, in, names, 0, false);
    assert_string_equal(e.lines[0], "y[0] = -a[0] = -(-1.0000) = 1.0000");
    // A matrix times a vector, one row asked for: no weighted sum of rows to show, so one dot
    // product per element. A = [[1, 2], [3, 4]], v = [1, 1]: y = [3, 7].
    Tensor *m = tensor_of((Shape){2, {2, 2}}, (double[]){1, 2, 3, 4}), *v = tensor_of((Shape){1, {2}}, (double[]){1, 1});
    Tensor *mv = tensor_of((Shape){1, {2}}, (double[]){3, 7});
    const Tensor *mm_in[2] = {m, v};
    const char *mm_names[2] = {"A", "v"};
    e = explain_at(ops_operator(OP_INFIX, '@'), arena, mv, mm_in, mm_names, 0, true);
    assert_int_equal(e.n_lines, 2);
    assert_string_equal(e.lines[0], "y[0] = A[0, :] · v = (1.0000×1.0000) + (2.0000×1.0000) = 3.0000");
    assert_string_equal(e.lines[1], "y[1] = A[1, :] · v = (3.0000×1.0000) + (4.0000×1.0000) = 7.0000");
    // A line that cannot be written (no memory) marks the explanation failed, not half written.
    OpExplain broken = {.op = ops_operator(OP_INFIX, '*'), .out = y, .in = in, .n_in = 2, .out_name = "y",
                        .in_names = names, .digits = 4, .arena = arena};
    util_fail_allocation(1);
    broken.op->explain(&broken);
    util_fail_allocation(0);
    assert_true(broken.failed);
    assert_int_equal(broken.n_lines, 0);
    tensor_destroy(a);
    tensor_destroy(three);
    tensor_destroy(y);
    tensor_destroy(m);
    tensor_destroy(v);
    tensor_destroy(mv);
    arena_destroy(arena);
}

// maximum(a, b) of a = [[0.1, 0.5]] and b = [0.3, 0.2] is [[0.3, 0.5]]: its element [0, 1] is
// written first with each input's element (b broadcast, so b[1]), then with their values.
static void test_explain_call(void **state) {
    (void)state;
    Arena *arena = arena_create();
    Tensor *a = tensor_of((Shape){2, {1, 2}}, (double[]){0.1, 0.5}), *b = tensor_of((Shape){1, {2}}, (double[]){0.3, 0.2});
    Tensor *m = tensor_of((Shape){2, {1, 2}}, (double[]){0.3, 0.5});
    const Tensor *in[2] = {a, b};
    const char *names[2] = {"a", "b"};
    OpExplain e = explain_at(ops_find_function("maximum"), arena, m, in, names, 1, false);
    assert_int_equal(e.n_lines, 1);
    assert_string_equal(e.lines[0], "y[0, 1] = maximum(a[0, 1], b[1]) = maximum(0.5000, 0.2000) = 0.5000");
    tensor_destroy(a);
    tensor_destroy(b);
    tensor_destroy(m);
    arena_destroy(arena);
}

// full([2, 2], 0.5) is 0.5 everywhere: its element [1, 0] is "every entry".
static void test_explain_fill(void **state) {
    (void)state;
    Arena *arena = arena_create();
    Tensor *y = tensor_of((Shape){2, {2, 2}}, (double[]){0.5, 0.5, 0.5, 0.5});
    OpExplain e = explain_at(ops_find_function("full"), arena, y, NULL, NULL, 2, false);
    assert_int_equal(e.n_lines, 1);
    assert_string_equal(e.lines[0], "y[1, 0] = every entry = 0.5000");
    tensor_destroy(y);
    arena_destroy(arena);
}

// concat(a, b, axis=1) of a = [[1.5, 2.5]] and b = [[3.5]] is [[1.5, 2.5, 3.5]]: its element
// [0, 2] is b's first column, in the second of the two parts.
static void test_explain_concat(void **state) {
    (void)state;
    Arena *arena = arena_create();
    Tensor *a = tensor_of((Shape){2, {1, 2}}, (double[]){1.5, 2.5}), *b = tensor_of((Shape){2, {1, 1}}, (double[]){3.5});
    Tensor *y = tensor_of((Shape){2, {1, 3}}, (double[]){1.5, 2.5, 3.5});
    const Tensor *in[2] = {a, b};
    const char *names[2] = {"a", "b"};
    OpAttrs attrs = {.axis = 1};
    OpExplain e = {.op = ops_find_function("concat"), .out = y, .in = in, .n_in = 2, .attrs = &attrs, .out_name = "y",
                   .in_names = names, .flat = 2, .index = {0, 2}, .digits = 4, .arena = arena};
    e.op->explain(&e);
    assert_false(e.failed);
    assert_int_equal(e.n_lines, 1);
    assert_string_equal(e.lines[0], "y[0, 2] = b[0, 0] (part 2 of 2) = 3.5000");
    tensor_destroy(a);
    tensor_destroy(b);
    tensor_destroy(y);
    arena_destroy(arena);
}

// [a, b] of a = [1.5, 2.5] and b = [3.5, 4.5] is [[1.5, 2.5], [3.5, 4.5]]: its element [1, 0]
// is b's element 0, item 1 of the list.
static void test_explain_list(void **state) {
    (void)state;
    Arena *arena = arena_create();
    Tensor *a = tensor_of((Shape){1, {2}}, (double[]){1.5, 2.5}), *b = tensor_of((Shape){1, {2}}, (double[]){3.5, 4.5});
    Tensor *y = tensor_of((Shape){2, {2, 2}}, (double[]){1.5, 2.5, 3.5, 4.5});
    const Tensor *in[2] = {a, b};
    const char *names[2] = {"a", "b"};
    OpExplain e = explain_at(ops_operator(OP_LIST, '['), arena, y, in, names, 2, false);
    assert_int_equal(e.n_lines, 1);
    assert_string_equal(e.lines[0], "y[1, 0] = b[0] (item 1 of 2) = 3.5000");
    tensor_destroy(a);
    tensor_destroy(b);
    tensor_destroy(y);
    arena_destroy(arena);
}

// repeat_interleave(x, 3, axis=0) of x = [[1.5, 2.5], [3.5, 4.5]] is [6, 2]: rows 0-2 copy x's
// row 0 and rows 3-5 its row 1, so y[4, 1] is the second of three copies of slice 1, x[1, 1] = 4.5.
static void test_explain_repeat(void **state) {
    (void)state;
    Arena *arena = arena_create();
    Tensor *x = tensor_of((Shape){2, {2, 2}}, (double[]){1.5, 2.5, 3.5, 4.5});
    Tensor *y = tensor_create(&(Shape){2, {6, 2}});
    for (size_t i = 0; i < 12; i++)
        y->data[i] = x->data[(i / 2) / 3 * 2 + i % 2];
    const Tensor *in[1] = {x};
    const char *names[1] = {"x"};
    OpAttrs attrs = {.axis = 0, .count = 3};
    OpExplain e = {.op = ops_find_function("repeat_interleave"), .out = y, .in = in, .n_in = 1, .attrs = &attrs,
                   .out_name = "y", .in_names = names, .flat = 9, .digits = 4, .arena = arena};
    shape_unflatten(&y->shape, e.flat, e.index);
    e.op->explain(&e);
    assert_false(e.failed);
    assert_int_equal(e.n_lines, 1);
    assert_string_equal(e.lines[0], "y[4, 1] = x[1, 1] (copy 2 of 3 of slice 1) = 4.5000");
    tensor_destroy(x);
    tensor_destroy(y);
    arena_destroy(arena);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lookup),
        cmocka_unit_test(test_every_entry_complete),
        cmocka_unit_test(test_properties),
        cmocka_unit_test(test_multiply_adds),
        cmocka_unit_test(test_matmul_shapes),
        cmocka_unit_test(test_broadcast_shapes),
        cmocka_unit_test(test_reduce_axis),
        cmocka_unit_test(test_fill_shape),
        cmocka_unit_test(test_norm_checks),
        cmocka_unit_test(test_reshape_labels),
        cmocka_unit_test(test_split_heads),
        cmocka_unit_test(test_index_rows),
        cmocka_unit_test(test_take_whole_indices),
        cmocka_unit_test(test_take_and_list_limits),
        cmocka_unit_test(test_problem_first_wins),
        cmocka_unit_test(test_notes),
        cmocka_unit_test(test_explain),
        cmocka_unit_test(test_explain_repeat),
        cmocka_unit_test(test_explain_call),
        cmocka_unit_test(test_explain_concat),
        cmocka_unit_test(test_explain_list),
        cmocka_unit_test(test_explain_fill),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
