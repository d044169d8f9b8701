// Tests of "show your work" (explain.c, reached through the op table and the runner): every
// operation of the table explains an element of its result, and the work ends in that
// element's own value as the trace prints it, so an expansion is the real computation and not
// a story told beside it. The forms the document writes by hand (a dot product, a row of
// weights times value rows, softmax, LayerNorm, sinusoidal positions, RoPE, the loss) are
// checked line by line against numbers worked out by hand and with numpy 1.24 (float64).
// Then every error an explain request can meet, from the command line (status 2) and from a
// lesson's explain: key (located, status 1).
#include <stdio.h>
#include <stdlib.h>

#include "format.h"
#include "ops.h"
#include "trace_fixture.h"

// ---------------------------------------------------------------- helpers

// One request as --explain writes it: "out[0, 1]" (an element), "out[0]" (a row of a
// matrix), "out" (every element). Negative indices count from the end.
static ExplainSpec parse_request(const char *request, char *name, size_t cap) {
    ExplainSpec spec = {.kind = EXPLAIN_ALL};
    const char *bracket = strchr(request, '[');
    const char *row = strstr(request, " row ");  // "output_0 row 0", as explain: row 0
    size_t len = row ? (size_t)(row - request) : bracket ? (size_t)(bracket - request) : strlen(request);
    assert_true(len < cap);
    memcpy(name, request, len);
    name[len] = '\0';
    if (row) {
        spec.kind = EXPLAIN_ROW;
        spec.index[spec.n_index++] = strtol(row + 5, NULL, 10);
        return spec;
    }
    if (!bracket)
        return spec;
    spec.kind = EXPLAIN_ELEMENT;
    for (const char *p = bracket + 1; *p && *p != ']';) {
        char *end;
        spec.index[spec.n_index++] = strtol(p, &end, 10);
        p = end + strspn(end, ", ");
    }
    return spec;
}

// What plan_resolve_explain makes of a request, written over a target full of other bytes:
// its kind, its indices (negative ones counted from the end) and nothing past them, so that a
// runner copying every index of an element (explain_target) copies zeros past its rank.
static ExplainTarget resolved(Fixture *f, const char *request) {
    char name[64], message[512], hint[512];
    ExplainSpec spec = parse_request(request, name, sizeof(name));
    size_t node;
    if (!plan_find_stage(f->plan, name, &node))
        fail_msg("no stage called '%s'", name);
    ExplainTarget target;
    memset(&target, 0xAB, sizeof(target));
    if (!plan_resolve_explain(f->plan, node, &spec, &target, message, sizeof(message), hint, sizeof(hint)))
        fail_msg("%s: %s", request, message);
    assert_int_equal(target.node, node);
    return target;
}

// Trace yaml with one extra explain request; the stage it names, with its work.
static const TraceStage *explain(Fixture *f, const char *yaml, const char *request) {
    fixture_plan(f, "t.yaml", yaml);
    ExplainTarget target = resolved(f, request);
    fixture_trace(f, &target, 1);
    for (size_t i = 0; i < f->trace->n_stages; i++)
        if (f->trace->stages[i].node == target.node)
            return &f->trace->stages[i];
    fail_msg("the stage of '%s' is not in the trace", request);
    return NULL;
}

static void print_work(const TraceStage *s) {
    print_message("work of %s (%zu lines):\n", s->name, s->n_work);
    for (size_t i = 0; i < s->n_work; i++)
        print_message("  %s\n", s->work[i]);
}

// The work is exactly these lines.
static void expect_work(const TraceStage *s, const char *const *lines, size_t n) {
    for (size_t i = 0; i < n && i < s->n_work; i++)
        if (strcmp(s->work[i], lines[i]) != 0) {
            print_work(s);
            fail_msg("line %zu of the work\n  got  '%s'\n  want '%s'", i + 1, s->work[i], lines[i]);
        }
    if (s->n_work != n) {
        print_work(s);
        fail_msg("%zu lines of work, expected %zu", s->n_work, n);
    }
}

#define EXPECT_WORK(stage, ...)                                                           \
    expect_work((stage), (const char *const[]){__VA_ARGS__},                              \
                sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *))

// The value of element `flat` as the trace prints it: whole counts as counts, the rest in the
// lesson's digits.
static void printed_value(const Fixture *f, const TraceStage *s, size_t flat, char *buf, size_t cap) {
    double v = s->value->data[flat];
    if (s->value->is_count)
        format_whole(v, f->trace->digits, buf, cap);
    else
        format_number(v, f->trace->digits, buf, cap);
}

// The last line of the work ends its arithmetic in element `flat`'s own value: the number
// after the last " = " (up to a space, ':' or the end) is the value as the trace prints it.
static void expect_ends_in_value(const Fixture *f, const TraceStage *s, size_t flat, const char *what) {
    if (s->n_work == 0)
        fail_msg("%s: no work at all", what);
    const char *last = s->work[s->n_work - 1], *eq = NULL;
    for (const char *p = strstr(last, " = "); p; p = strstr(p + 1, " = "))
        eq = p;
    if (!eq) {
        print_work(s);
        fail_msg("%s: the last line has no ' = '", what);
    }
    char got[64];
    const char *start = eq + 3;
    size_t len = strcspn(start, " :");
    snprintf(got, sizeof(got), "%.*s", (int)len, start);
    char want[64];
    printed_value(f, s, flat, want, sizeof(want));
    if (strcmp(got, want) != 0) {
        print_work(s);
        fail_msg("%s: the work ends in '%s', but the element's value is %s", what, got, want);
    }
}

// ---------------------------------------------------------------- every op in the table

// Small, uneven numbers (negative, fractional, zero) so a wrong operand or a wrong order
// shows in the result.
#define GIVENS                                                                                \
    "title: every op\n"                                                                       \
    "given:\n"                                                                                \
    "  a: [[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]\n"                                           \
    "  b: [[2.0, 4.0, 0.5], [1.0, -2.0, 3.0]]\n"                                              \
    "  v: [0.1, 0.2, 0.3]\n"                                                                  \
    "  g: [1.0, 2.0, 0.5]\n"                                                                  \
    "  be: [0.0, 1.0, -1.0]\n"                                                                \
    "  ids: [1, 0]\n"                                                                         \
    "  picks: [4, 0]\n"                                                                       \
    "  logits: [[2.0, 1.0, 0.1], [0.5, 2.5, -1.0]]\n"                                         \
    "  targets: [0, 1]\n"                                                                     \
    "  x4: [[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]\n"                                    \
    "  heads: [[[1.0, 2.0], [5.0, 6.0]], [[3.0, 4.0], [7.0, 8.0]]]\n"                         \
    "  pos: [0, 3]\n"                                                                         \
    "steps:\n"

// One call of each operation; `op` is the table's name for it, which the stage must carry.
typedef struct OpCase {
    const char *op;
    const char *expr;
} OpCase;

static const OpCase op_cases[] = {
    {"add", "a + b"},
    {"subtract", "a - v"},
    {"multiply", "a * v"},
    {"divide", "a / 4"},
    {"power", "b ** 2"},
    {"equal", "a == v"},
    {"not_equal", "a != b"},
    {"less", "a < b"},
    {"less_equal", "a <= 0.5"},
    {"greater", "b > a"},
    {"greater_equal", "a >= v"},
    {"allclose", "allclose(a, b)"},
    {"all", "all(a > 0, axis=1)"},
    {"any", "any(a > 1, axis=0)"},
    {"matmul", "a @ b.T"},
    {"negate", "-a"},
    {"transpose", "a.T"},
    {"transpose", "transpose(heads, [2, 0, -2])"},
    {"index", "a[ids]"},
    {"softmax", "softmax(a)"},
    {"log_softmax", "log_softmax(a, axis=0)"},
    {"cumsum", "cumsum(a, axis=1)"},
    {"repeat_interleave", "repeat_interleave(a, 2, axis=0)"},
    {"sort", "sort(a)"},
    {"argsort", "argsort(b)"},
    {"topk", "topk(a, 2)"},
    {"argtopk", "argtopk(b, 1)"},
    {"eigvals", "eigvals(heads)"},
    {"svdvals", "svdvals(a)"},
    {"ones", "ones([2, 3])"},
    {"zeros", "zeros(4)"},
    {"full", "full([2, 2], -inf)"},
    {"eye", "eye(3)"},
    {"tril", "tril(a)"},
    {"triu", "triu(a, k=-1)"},
    {"layernorm", "layernorm(a, g, be)"},
    {"rmsnorm", "rmsnorm(a, g)"},
    {"batchnorm", "batchnorm(a, g, be)"},
    {"sum", "sum(a, axis=1)"},
    {"mean", "mean(a, axis=0)"},
    {"var", "var(a, axis=1)"},
    {"norm", "norm(a, axis=1)"},
    {"top_p", "top_p(abs(a), 0.7)"},
    {"sample", "sample(abs(b), 0.5)"},
    {"uniform", "uniform([2, 2], seed=3)"},
    {"list", "\"[a[0], b[1] * 2]\""},  // quoted: YAML would read a bare list
    {"max", "max(a, axis=0, keepdims=True)"},
    {"min", "min(a)"},
    {"argmax", "argmax(a, axis=1)"},
    {"exp", "exp(a)"},
    {"log", "log(abs(b))"},
    {"sqrt", "sqrt(abs(a))"},
    {"abs", "abs(a)"},
    {"relu", "relu(a)"},
    {"gelu", "gelu(a)"},
    {"tanh", "tanh(a)"},
    {"sin", "sin(a)"},
    {"cos", "cos(a)"},
    {"silu", "silu(a)"},
    {"concat", "concat(a, b, axis=1)"},
    {"copy", "copy(a)"},
    {"sigmoid", "sigmoid(a)"},
    {"floor", "floor(a)"},
    {"ceil", "ceil(b * 0.3)"},
    {"round", "round(a * 2)"},
    {"maximum", "maximum(a, v)"},
    {"minimum", "minimum(b, a)"},
    {"where", "where(a > 0, b, v)"},
    {"clip", "clip(b, v, 2.5)"},
    {"numel", "numel(a)"},
    {"size", "size(a, -1)"},
    {"split_heads", "split_heads(x4, 2)"},
    {"merge_heads", "merge_heads(heads)"},
    {"reshape", "reshape(a, [3, -1])"},
    {"causal_mask", "causal_mask(3)"},
    {"relative_positions", "relative_positions(3)"},
    {"arange", "arange(4)"},
    {"alibi_slopes", "alibi_slopes(4)"},
    {"sinusoidal", "sinusoidal(3, 4)"},
    {"rope", "rope(x4, pos)"},
    {"take", "take(b, picks)"},
    {"take_along_axis", "take_along_axis(a, [[2, 0], [-1, 1]], axis=1)"},
    {"cross_entropy", "cross_entropy(logits, targets)"},
};

static bool has_case(const char *op) {
    for (size_t i = 0; i < ARRAY_LEN(op_cases); i++)
        if (strcmp(op_cases[i].op, op) == 0)
            return true;
    return false;
}

// A new function in the table needs a case here (and an explain function).
static void test_every_op_has_a_case(void **state) {
    (void)state;
    const char *names[128];
    size_t n = ops_function_names(names, ARRAY_LEN(names));
    assert_true(n > 0 && n < ARRAY_LEN(names));
    for (size_t i = 0; i < n; i++) {
        const OpDef *op = ops_find_function(names[i]);
        assert_non_null(op);
        if (!has_case(names[i]))
            fail_msg("the op table has '%s', but no case in op_cases explains it", names[i]);
        if (!op->explain)
            fail_msg("'%s' has no explain function", names[i]);
    }
    const OpDef *operators[] = {
        ops_operator(OP_INFIX, '+'),  ops_operator(OP_INFIX, '-'),   ops_operator(OP_INFIX, '*'),
        ops_operator(OP_INFIX, '/'),  ops_operator(OP_INFIX, '^'),   ops_operator(OP_INFIX, '@'),
        ops_operator(OP_PREFIX, '-'), ops_operator(OP_POSTFIX, 'T'), ops_operator(OP_INDEXING, '['),
        ops_operator(OP_INFIX, OP_TOKEN_EQ), ops_operator(OP_INFIX, OP_TOKEN_NE), ops_operator(OP_INFIX, '<'),
        ops_operator(OP_INFIX, OP_TOKEN_LE), ops_operator(OP_INFIX, '>'), ops_operator(OP_INFIX, OP_TOKEN_GE),
        ops_operator(OP_LIST, '['),
    };
    for (size_t i = 0; i < ARRAY_LEN(operators); i++) {
        assert_non_null(operators[i]);
        assert_non_null(operators[i]->explain);
        if (!has_case(operators[i]->name))
            fail_msg("the operator '%s' has no case in op_cases", operators[i]->name);
    }
}

// For every op: each element of the result, explained alone, ends in its own value.
static void test_every_op_every_element(void **state) {
    Fixture *f = *state;
    for (size_t c = 0; c < ARRAY_LEN(op_cases); c++) {
        char yaml[2048];
        snprintf(yaml, sizeof(yaml), GIVENS "  - out: %s\n", op_cases[c].expr);
        // Once to learn the shape, then one trace per element.
        const TraceStage *s = explain(f, yaml, "out");
        if (!s->op || strcmp(s->op, op_cases[c].op) != 0)
            fail_msg("'%s' runs op '%s', expected '%s'", op_cases[c].expr, s->op ? s->op : "(none)",
                     op_cases[c].op);
        Shape shape = s->value->shape;
        size_t size = s->value->size;
        for (size_t k = 0; k < size; k++) {
            size_t idx[TENSOR_MAX_RANK];
            shape_unflatten(&shape, k, idx);
            char request[64] = "out";
            if (shape.rank) {
                strcat(request, "[");
                for (size_t i = 0; i < shape.rank; i++)
                    snprintf(request + strlen(request), sizeof(request) - strlen(request), "%s%zu",
                             i ? ", " : "", idx[i]);
                strcat(request, "]");
            }
            s = explain(f, yaml, request);
            char what[128];
            snprintf(what, sizeof(what), "%s, %s", op_cases[c].expr, request);
            expect_ends_in_value(f, s, k, what);
        }
    }
}

// Every element at once (explain: all) on every op: rows go through the op's row form, or
// element by element when it has none, and the work ends in the last element's value.
static void test_every_op_all(void **state) {
    Fixture *f = *state;
    for (size_t c = 0; c < ARRAY_LEN(op_cases); c++) {
        char yaml[2048];
        snprintf(yaml, sizeof(yaml), GIVENS "  - out: %s\n", op_cases[c].expr);
        const TraceStage *s = explain(f, yaml, "out");
        if (s->n_work == 0)
            fail_msg("'%s': explain all wrote no work", op_cases[c].expr);
        char what[128];
        snprintf(what, sizeof(what), "%s, all", op_cases[c].expr);
        if (strcmp(op_cases[c].op, "matmul") != 0)  // a matrix product's rows end in a list
            expect_ends_in_value(f, s, s->value->size - 1, what);
    }
}

// ---------------------------------------------------------------- the document's forms

// The softmax example's numbers: Q_0 against three keys.
#define SOFTMAX_LESSON(digits)                                                               \
    "title: softmax\n"                                                                       \
    "digits: " digits "\n"                                                                   \
    "given:\n"                                                                               \
    "  Q_0: [1.0, 0.0, 0.5, 0.0]\n"                                                          \
    "  K: [[0.5, 0.2, 0.3, 0.1], [0.8, 0.1, 0.4, 0.2], [0.1, 0.6, 0.2, 0.3]]\n"              \
    "  V: [[0.1, 0.2, 0.3, 0.4], [0.5, 0.6, 0.7, 0.8], [0.2, 0.1, 0.4, 0.3]]\n"              \
    "  W: [[0.2, 0.5, 0.3], [0.6, 0.1, 0.3]]\n"                                              \
    "  d_k: 4\n"                                                                             \
    "steps:\n"                                                                               \
    "  - scores: Q_0 @ K.T\n"                                                                \
    "  - scaled: scores / sqrt(d_k)\n"                                                       \
    "  - weights: softmax(scaled)\n"                                                         \
    "  - output_0: weights @ V\n"                                                            \
    "  - blend: W @ V\n"

// score(0,1) = (1.0x0.8) + (0.0x0.1) + (0.5x0.4) + (0.0x0.2) = 1.00, as the document writes it.
static void test_matmul_dot_product(void **state) {
    const TraceStage *s = explain(*state, SOFTMAX_LESSON("2"), "scores[1]");
    EXPECT_WORK(s, "scores[1] = Q_0 · K.T[:, 1] = (1.00×0.80) + (0.00×0.10) + (0.50×0.40) + (0.00×0.20) = 1.00");
}

static void test_matmul_element_of_matrices(void **state) {
    // blend[1, 2] = 0.6x0.3 + 0.1x0.7 + 0.3x0.4 = 0.18 + 0.07 + 0.12 = 0.37
    const TraceStage *s = explain(*state, SOFTMAX_LESSON("2"), "blend[1, 2]");
    EXPECT_WORK(s, "blend[1, 2] = W[1, :] · V[:, 2] = (0.60×0.30) + (0.10×0.70) + (0.30×0.40) = 0.37");
}

// A row of weights @ V is a weighted sum of V's rows, as the document writes output_0:
// numpy: weights = [0.33447474 0.39844176 0.2670835], output_0 = [0.28608506 0.33266836
// 0.48608506 0.53266836].
static void test_matmul_row_as_weighted_sum(void **state) {
    // Asked as a row, a vector result reads as a weighted sum of rows (the document's output_0);
    // asked as "all", as one dot product per element (its score(0, j)).
    const TraceStage *s = explain(*state, SOFTMAX_LESSON("2"), "output_0");
    EXPECT_WORK(s, "output_0[0] = weights · V[:, 0] = (0.33×0.10) + (0.40×0.50) + (0.27×0.20) = 0.29",
                "output_0[1] = weights · V[:, 1] = (0.33×0.20) + (0.40×0.60) + (0.27×0.10) = 0.33",
                "output_0[2] = weights · V[:, 2] = (0.33×0.30) + (0.40×0.70) + (0.27×0.40) = 0.49",
                "output_0[3] = weights · V[:, 3] = (0.33×0.40) + (0.40×0.80) + (0.27×0.30) = 0.53");
    s = explain(*state, SOFTMAX_LESSON("2"), "output_0 row 0");
    EXPECT_WORK(s,
                "output_0 = 0.33×[0.10, 0.20, 0.30, 0.40] + 0.40×[0.50, 0.60, 0.70, 0.80] + "
                "0.27×[0.20, 0.10, 0.40, 0.30]",
                "output_0 = [0.29, 0.33, 0.49, 0.53]");
    // A row of a matrix product: W[1] @ V = 0.6 V_0 + 0.1 V_1 + 0.3 V_2 = [0.17, 0.21, 0.37, 0.41].
    s = explain(*state, SOFTMAX_LESSON("2"), "blend[1]");
    EXPECT_WORK(s,
                "blend[1] = 0.60×[0.10, 0.20, 0.30, 0.40] + 0.10×[0.50, 0.60, 0.70, 0.80] + "
                "0.30×[0.20, 0.10, 0.40, 0.30]",
                "blend[1] = [0.17, 0.21, 0.37, 0.41]");
}

// Heads: the operands' batch index is named, so head 1's row is q[1, 0, :], not q[0, :].
static void test_matmul_batched_names_the_head(void **state) {
    const char *yaml = "title: heads\n"
                       "given:\n"
                       "  x: [[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]\n"
                       "  w: [[1.0, 0.0], [0.0, 2.0]]\n"
                       "  u: [1.0, 10.0]\n"
                       "steps:\n"
                       "  - q: split_heads(x, 2)\n"
                       "  - s: q @ q.T\n"
                       "  - qw: q @ w\n"
                       "  - qu: q @ u\n"
                       "  - uq: u @ q\n";
    // Head 1 is [[3, 4], [7, 8]]: s[1, 0, 1] = 3x7 + 4x8 = 53.
    const TraceStage *s = explain(*state, yaml, "s[1, 0, 1]");
    EXPECT_WORK(s, "s[1, 0, 1] = q[1, 0, :] · q.T[1, :, 1] = (3.0000×7.0000) + (4.0000×8.0000) = 53.0000");
    // A matrix shared by every head has no batch index.
    s = explain(*state, yaml, "qw[1, 1, 1]");
    EXPECT_WORK(s, "qw[1, 1, 1] = q[1, 1, :] · w[:, 1] = (7.0000×0.0000) + (8.0000×2.0000) = 16.0000");
    // Heads against a vector, on either side: 3 + 40 = 43; 1x4 + 10x8 = 84.
    s = explain(*state, yaml, "qu[1, 0]");
    EXPECT_WORK(s, "qu[1, 0] = q[1, 0, :] · u = (3.0000×1.0000) + (4.0000×10.0000) = 43.0000");
    s = explain(*state, yaml, "uq[1, 1]");
    EXPECT_WORK(s, "uq[1, 1] = u · q[1, :, 1] = (1.0000×4.0000) + (10.0000×8.0000) = 84.0000");
}

// Scaling, and an intermediate named by its stage: scaled.1 = sqrt(d_k).
static void test_scaling(void **state) {
    const TraceStage *s = explain(*state, SOFTMAX_LESSON("2"), "scaled[1]");
    EXPECT_WORK(s, "scaled[1] = scores[1] / sqrt(d_k) = 1.00 / 2.00 = 0.50");
    s = explain(*state, SOFTMAX_LESSON("2"), "scaled.1");
    EXPECT_WORK(s, "scaled.1 = sqrt(d_k) = sqrt(4) = 2.00");
}

// exp(0.325) = 1.384 ... sum = 4.138; 1.384 / 4.138 = 0.334 (numpy: exps 1.38403065
// 1.64872127 1.10517092, sum 4.13792283, weights 0.33447474 0.39844176 0.2670835).
static void test_softmax_row(void **state) {
    const TraceStage *s = explain(*state, SOFTMAX_LESSON("3"), "weights");
    EXPECT_WORK(s, "exp(0.325) = 1.384", "exp(0.500) = 1.649", "exp(0.100) = 1.105",
                "(the tracer subtracts the row max 0.500 before exp(): the weights are the same, and large "
                "scores cannot overflow)",
                "sum = 4.138   (over all 3 entries of the row)", "weights[0] = 1.384 / 4.138 = 0.334",
                "weights[1] = 1.649 / 4.138 = 0.398", "weights[2] = 1.105 / 4.138 = 0.267");
}

static void test_softmax_element(void **state) {
    const TraceStage *s = explain(*state, SOFTMAX_LESSON("3"), "weights[1]");
    EXPECT_WORK(s, "exp(0.325) = 1.384", "exp(0.500) = 1.649", "exp(0.100) = 1.105",
                "(the tracer subtracts the row max 0.500 before exp(): the weights are the same, and large "
                "scores cannot overflow)",
                "sum = 4.138   (over all 3 entries of the row)", "weights[1] = 1.649 / 4.138 = 0.398");
}

// Scores far from 0 are shown with the row max taken out, as the kernel computes them:
// exp(x) itself would overflow (large) or print every exp as 0 (very negative).
static void test_softmax_far_from_zero(void **state) {
    const char *yaml = "title: far\n"
                       "given:\n"
                       "  x: [[1000.0, 999.0], [-1000.0, -1001.0]]\n"
                       "steps:\n"
                       "  - w: softmax(x)\n";
    // numpy: softmax([0, -1]) = [0.73105858, 0.26894142]; exp(-1) = 0.36787944.
    const TraceStage *s = explain(*state, yaml, "w[0]");
    EXPECT_WORK(s, "exp(1000.0000 - 1000.0000) = 1.0000", "exp(999.0000 - 1000.0000) = 0.3679",
                "sum = 1.3679   (over all 2 entries of the row)", "w[0, 0] = 1.0000 / 1.3679 = 0.7311",
                "w[0, 1] = 0.3679 / 1.3679 = 0.2689");
    s = explain(*state, yaml, "w[1, 1]");
    EXPECT_WORK(s, "exp(-1000.0000 - (-1000.0000)) = 1.0000", "exp(-1001.0000 - (-1000.0000)) = 0.3679",
                "sum = 1.3679   (over all 2 entries of the row)", "w[1, 1] = 0.3679 / 1.3679 = 0.2689");
}

// mean = (2 + 4 + 6 + 8) / 4 = 5, variance = [(2 - 5)² + ...] / 4 = 5, then each value
// normalised with its epsilon and scaled and shifted. numpy: x_norm = [-1.34163944
// -0.44721315 0.44721315 1.34163944], out = [-1.34163944 0.1055737 -0.77639343 1.84163944].
static void test_layernorm_row(void **state) {
    const char *yaml = "title: layernorm\n"
                       "given:\n"
                       "  x: [2.0, 4.0, 6.0, 8.0]\n"
                       "  gamma: [1.0, 2.0, 0.5, 1.0]\n"
                       "  beta: [0.0, 1.0, -1.0, 0.5]\n"
                       "steps:\n"
                       "  - ln: layernorm(x, gamma, beta)\n";
    const TraceStage *s = explain(*state, yaml, "ln");
    EXPECT_WORK(s, "mean = (2.0000 + 4.0000 + 6.0000 + 8.0000) / 4 = 5.0000",
                "variance = [(2.0000 - 5.0000)² + (4.0000 - 5.0000)² + (6.0000 - 5.0000)² + (8.0000 - 5.0000)²] / 4 "
                "= 5.0000",
                "x_norm = (2.0000 - 5.0000) / sqrt(5.0000 + 1e-05) = -1.3416;  ln[0] = 1.0000 × -1.3416 + 0.0000 = "
                "-1.3416",
                "x_norm = (4.0000 - 5.0000) / sqrt(5.0000 + 1e-05) = -0.4472;  ln[1] = 2.0000 × -0.4472 + 1.0000 = "
                "0.1056",
                "x_norm = (6.0000 - 5.0000) / sqrt(5.0000 + 1e-05) = 0.4472;  ln[2] = 0.5000 × 0.4472 + -1.0000 = "
                "-0.7764",
                "x_norm = (8.0000 - 5.0000) / sqrt(5.0000 + 1e-05) = 1.3416;  ln[3] = 1.0000 × 1.3416 + 0.5000 = "
                "1.8416");
    // One element: the same mean and variance, then that element alone.
    s = explain(*state, yaml, "ln[2]");
    assert_int_equal(s->n_work, 3);
    assert_string_equal(s->work[2], "x_norm = (6.0000 - 5.0000) / sqrt(5.0000 + 1e-05) = 0.4472;  ln[2] = 0.5000 × "
                                    "0.4472 + -1.0000 = -0.7764");
}

// mean(x^2) = (1 + 4 + 9 + 0.25) / 4 = 3.5625, then each value divided by sqrt(3.5625 + 1e-5)
// and scaled by gamma. numpy: x_norm = [0.5298122 -1.0596244 1.5894366 0.2649061],
// out = [0.5298122 -2.1192488 0.7947183 0.2649061].
static void test_rmsnorm_row(void **state) {
    const char *yaml = "title: rmsnorm\n"
                       "given:\n"
                       "  x: [1.0, -2.0, 3.0, 0.5]\n"
                       "  gamma: [1.0, 2.0, 0.5, 1.0]\n"
                       "steps:\n"
                       "  - rn: rmsnorm(x, gamma)\n";
    const TraceStage *s = explain(*state, yaml, "rn");
    EXPECT_WORK(s, "mean(x²) = (1.0000² + -2.0000² + 3.0000² + 0.5000²) / 4 = 3.5625",
                "x_norm = 1.0000 / sqrt(3.5625 + 1e-05) = 0.5298;  rn[0] = 1.0000 × 0.5298 = 0.5298",
                "x_norm = -2.0000 / sqrt(3.5625 + 1e-05) = -1.0596;  rn[1] = 2.0000 × -1.0596 = -2.1192",
                "x_norm = 3.0000 / sqrt(3.5625 + 1e-05) = 1.5894;  rn[2] = 0.5000 × 1.5894 = 0.7947",
                "x_norm = 0.5000 / sqrt(3.5625 + 1e-05) = 0.2649;  rn[3] = 1.0000 × 0.2649 = 0.2649");
    s = explain(*state, yaml, "rn[1]");
    assert_int_equal(s->n_work, 2);
    assert_string_equal(s->work[1], "x_norm = -2.0000 / sqrt(3.5625 + 1e-05) = -1.0596;  rn[1] = 2.0000 × -1.0596 = "
                                    "-2.1192");
}

// silu(x) = x * sigmoid(x); numpy: 0.5 / (1 + exp(-0.5)) = 0.31122967, -2 / (1 + exp(2)) = -0.23840584.
static void test_silu(void **state) {
    const char *yaml = "title: silu\n"
                       "given:\n"
                       "  x: [0.5, -2.0]\n"
                       "steps:\n"
                       "  - y: silu(x)\n";
    const TraceStage *s = explain(*state, yaml, "y");
    EXPECT_WORK(s, "y[0] = silu(x[0]) = silu(0.5000) = 0.3112", "y[1] = silu(x[1]) = silu(-2.0000) = -0.2384");
}

// PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(the same). numpy:
// 10000^(2/6) = 21.5443469, 3 / 21.5443469 = 0.13924767, cos(0.13924767) = 0.99032070;
// sin(2) = 0.90929743.
static void test_sinusoidal(void **state) {
    const char *yaml = "title: pe\n"
                       "steps:\n"
                       "  - pe: sinusoidal(4, 6)\n";
    const TraceStage *s = explain(*state, yaml, "pe[3, 3]");
    EXPECT_WORK(s, "pe[3, 3] = cos(3 / 10000^(2/6)) = cos(3 / 21.5443) = cos(0.1392) = 0.9903");
    s = explain(*state, yaml, "pe[2, 0]");
    EXPECT_WORK(s, "pe[2, 0] = sin(2 / 10000^(0/6)) = sin(2 / 1.0000) = sin(2.0000) = 0.9093");
}

// Pair i of a row at position p turns by p x 10000^(-2i/d). Row [5, 6, 7, 8] at position 3,
// pair 1: theta = 0.01, angle = 0.03; numpy: 7 cos(0.03) - 8 sin(0.03) = 6.75688623,
// 8 cos(0.03) + 7 sin(0.03) = 8.20636877.
static void test_rope(void **state) {
    const char *yaml = "title: rope\n"
                       "given:\n"
                       "  x: [[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]\n"
                       "  pos: [0, 3]\n"
                       "steps:\n"
                       "  - r: rope(x, pos)\n";
    const TraceStage *s = explain(*state, yaml, "r[1, 3]");
    EXPECT_WORK(s, "pair 1 (columns 2 and 3): theta = 10000^(-2×1/4) = 0.0100, angle = 3 × 0.0100 = 0.0300",
                "r[1, 3] = 8.0000×cos(0.0300) + 7.0000×sin(0.0300) = 8.2064");
    s = explain(*state, yaml, "r[1, 2]");
    EXPECT_WORK(s, "pair 1 (columns 2 and 3): theta = 10000^(-2×1/4) = 0.0100, angle = 3 × 0.0100 = 0.0300",
                "r[1, 2] = 7.0000×cos(0.0300) - 8.0000×sin(0.0300) = 6.7569");
    // Position 0 does not turn anything.
    s = explain(*state, yaml, "r[0, 0]");
    EXPECT_WORK(s, "pair 0 (columns 0 and 1): theta = 10000^(-2×0/4) = 1.0000, angle = 0 × 1.0000 = 0.0000",
                "r[0, 0] = 1.0000×cos(0.0000) - 2.0000×sin(0.0000) = 1.0000");
}

// loss = log(sum(exp(logits))) - logit[target]. numpy, row [0.5, 2.5, -1.0], target 1:
// sum of exp(logit - 2.5) = 1.16553267, log-sum-exp = 2.65317821, loss = 0.15317821.
static void test_cross_entropy(void **state) {
    const char *yaml = "title: loss\n"
                       "given:\n"
                       "  logits: [[2.0, 1.0, 0.1], [0.5, 2.5, -1.0]]\n"
                       "  targets: [0, 1]\n"
                       "steps:\n"
                       "  - loss: cross_entropy(logits, targets)\n";
    const TraceStage *s = explain(*state, yaml, "loss[1]");
    EXPECT_WORK(s, "log(sum of exp(logits)) = 2.5000 + log(1.1655) = 2.6532   (the row max taken out first)",
                "loss[1] = 2.6532 - logit[1] = 2.6532 - 2.5000 = 0.1532");
    // Row [2.0, 1.0, 0.1], target 0: 1.51744806, 2.41703002, 0.41703002.
    s = explain(*state, yaml, "loss[0]");
    EXPECT_WORK(s, "log(sum of exp(logits)) = 2.0000 + log(1.5174) = 2.4170   (the row max taken out first)",
                "loss[0] = 2.4170 - logit[0] = 2.4170 - 2.0000 = 0.4170");
}

// The smaller families, one line each, checked by hand.
static void test_other_forms(void **state) {
    Fixture *f = *state;
    static const struct {
        const char *expr, *request, *line;
    } cases[] = {
        {"a * v", "out[1, 2]", "out[1, 2] = a[1, 2] × v[2] = -0.7500 × 0.3000 = -0.2250"},
        {"-a", "out[0, 1]", "out[0, 1] = -a[0, 1] = -(-1.0000) = 1.0000"},
        {"-a", "out[0, 2]", "out[0, 2] = -a[0, 2] = -2.0000 = -2.0000"},
        {"a.T", "out[2, 1]", "out[2, 1] = a[1, 2] (rows and columns swap) = -0.7500"},
        {"a[ids]", "out[0, 1]", "out[0, 1] = a[1, 1] = 0.2500"},  // ids[0] = 1
        {"a[:, ids]", "out[1, 0]", "out[1, 0] = a[1, 1] = 0.2500"},
        {"a[1, ids]", "out[1]", "out[1] = a[1, 0] = 1.5000"},
        {"a[-1, 0:2]", "out[1]", "out[1] = a[1, 1] = 0.2500"},
        {"exp(a)", "out[0, 1]", "out[0, 1] = exp(a[0, 1]) = exp(-1.0000) = 0.3679"},
        {"sum(a, axis=1)", "out[1]", "out[1] = 1.5000 + 0.2500 + -0.7500 = 1.0000"},
        {"mean(a, axis=0)", "out[2]", "out[2] = (2.0000 + -0.7500) / 2 = 0.6250"},
        {"min(a)", "out", "out = min(0.5000, -1.0000, 2.0000, 1.5000, 0.2500, -0.7500) = -1.0000"},
        {"argmax(a, axis=1)", "out[0]", "out[0] = argmax(0.5000, -1.0000, 2.0000) = 2 (a position, counting from 0)"},
        {"numel(a)", "out", "out = 2 × 3 = 6"},
        {"concat(a, b, axis=1)", "out[1, 4]", "out[1, 4] = b[1, 1] (part 2 of 2) = -2.0000"},
        {"split_heads(x4, 2)", "out[1, 1, 0]", "out[1, 1, 0] = x4[1, 2] (head 1 takes columns 2 to 3) = 7.0000"},
        {"merge_heads(heads)", "out[1, 3]", "out[1, 3] = heads[1, 1, 1] (column 3 is column 1 of head 1) = 8.0000"},
        // a [2, 3] as [3, 2]: out[1, 1] is number 3 in reading order, a[1, 0]
        {"reshape(a, [3, -1])", "out[1, 1]", "out[1, 1] = a[1, 0] (number 3 in reading order, from 0) = 1.5000"},
        // None adds an axis and reads none: out [1, 2, 2], out[0, 1, 0] = a[1, ids[0]]
        {"a[None, :, ids]", "out[0, 1, 0]", "out[0, 1, 0] = a[1, 1] = 0.2500"},
        // numpy's rule: None stands between the 1 and ids, so the gathered axis goes first:
        // out [2, 1], out[1, 0] = a[1, ids[1]] = a[1, 0]
        {"a[1, None, ids]", "out[1, 0]", "out[1, 0] = a[1, 0] = 1.5000"},
        {"v[:, None]", "out[2, 0]", "out[2, 0] = v[2] = 0.3000"},
        {"causal_mask(3)", "out[0, 2]", "out[0, 2] = -inf: key 2 comes after query 0, so it must stay hidden"},
        {"causal_mask(3)", "out[2, 1]", "out[2, 1] = 0.0000: key 1 is before query 2, so it may be seen"},
        {"relative_positions(3)", "out[0, 2]", "out[0, 2] = i - j = 0 - 2 = -2"},
        {"arange(4)", "out[3]", "out[3] = position 3 = 3"},
        {"alibi_slopes(4)", "out[1]", "out[1] = 2^(-8 × 2 / 4) = 2^(-4.0000) = 0.0625"},
        {"take(b, picks)", "out[0]", "out[0] = b[picks[0]] = b[1, 1] = -2.0000"},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        char yaml[2048];
        snprintf(yaml, sizeof(yaml), GIVENS "  - out: %s\n", cases[i].expr);
        const TraceStage *s = explain(f, yaml, cases[i].request);
        if (s->n_work != 1 || strcmp(s->work[0], cases[i].line) != 0) {
            print_work(s);
            fail_msg("%s, %s: expected\n  '%s'", cases[i].expr, cases[i].request, cases[i].line);
        }
    }
}

// ---------------------------------------------------------------- requests resolved

static void expect_indices(const ExplainTarget *t, size_t n, const size_t *want) {
    assert_int_equal(t->n_index, n);
    for (size_t i = 0; i < TENSOR_MAX_RANK; i++)
        if (t->index[i] != (i < n ? want[i] : 0))
            fail_msg("index %zu is %zu, expected %zu", i, t->index[i], i < n ? want[i] : 0);
}

static void test_requests_resolved(void **state) {
    Fixture *f = *state;
    fixture_plan(f, "t.yaml",
                 "title: t\ngiven:\n  x: [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]\n  v: [1.0, 2.0, 3.0]\n"
                 "steps:\n  - y: x * 2\n  - u: v + 1\n");
    ExplainTarget t = resolved(f, "y");
    assert_int_equal(t.kind, EXPLAIN_ALL);
    expect_indices(&t, 0, NULL);
    t = resolved(f, "u row 0");  // a vector's one row: the vector, with no index
    assert_int_equal(t.kind, EXPLAIN_ROW);
    expect_indices(&t, 0, NULL);
    t = resolved(f, "y row 1");
    assert_int_equal(t.kind, EXPLAIN_ROW);
    expect_indices(&t, 1, (const size_t[]){1});
    t = resolved(f, "y[-1, 2]");
    assert_int_equal(t.kind, EXPLAIN_ELEMENT);
    expect_indices(&t, 2, (const size_t[]){1, 2});
    t = resolved(f, "u[-3]");
    assert_int_equal(t.kind, EXPLAIN_ELEMENT);
    expect_indices(&t, 1, (const size_t[]){0});
}

// ---------------------------------------------------------------- through the pipeline

// A lesson's own explain: key and the command line's requests both show, in the text under
// "work:" and in JSON as the stage's "work" list.
static void test_lesson_and_command_line(void **state) {
    Fixture *f = *state;
    const char *yaml = "title: t\n"
                       "digits: 2\n"
                       "given:\n"
                       "  a: [[0.5, -1.0], [1.5, 0.25]]\n"
                       "steps:\n"
                       "  - y: a * 2\n"
                       "    explain: [0, 1]\n";
    const char *requests[] = {"y[1, -1]"};  // negative indices count from the end
    assert_int_equal(fixture_run(f, yaml, OUTPUT_TEXT, requests, 1), STATUS_OK);
    fixture_expect_output(f, "    work:\n"
                        "      y[0, 1] = a[0, 1] × 2 = -1.00 × 2 = -2.00\n"
                        "      y[1, 1] = a[1, 1] × 2 = 0.25 × 2 = 0.50\n");
    assert_int_equal(fixture_run(f, yaml, OUTPUT_JSON, requests, 1), STATUS_OK);
    fixture_expect_output(f, "\"work\": [\"y[0, 1] = a[0, 1] × 2 = -1.00 × 2 = -2.00\", "
                        "\"y[1, 1] = a[1, 1] × 2 = 0.25 × 2 = 0.50\"]");
    // Stages nobody asked about carry an empty list.
    fixture_expect_output(f, "\"work\": []");
}

// A command-line request that cannot be met: status 2, the message, the hint, no place in
// the file, and nothing written.
static void expect_usage_error(void **state, const char *yaml, const char *request, const char *message,
                               const char *hint) {
    Fixture *f = *state;
    const char *requests[] = {request};
    assert_int_equal(fixture_run(f, yaml, OUTPUT_TEXT, requests, 1), STATUS_USAGE_ERROR);
    assert_int_equal(f->diag.status, STATUS_USAGE_ERROR);
    if (strcmp(f->diag.message, message) != 0)
        fail_msg("message\n  '%s'\nexpected\n  '%s'", f->diag.message, message);
    if (strcmp(f->diag.hint, hint) != 0)
        fail_msg("hint\n  '%s'\nexpected\n  '%s'", f->diag.hint, hint);
    assert_int_equal(f->diag.line, 0);
    assert_int_equal(f->out.len, 0);
}

#define ERRORS_LESSON                                                                        \
    "title: t\n"                                                                             \
    "given:\n"                                                                               \
    "  K: [[0.5, 0.2], [0.8, 0.1], [0.1, 0.6]]\n"                                            \
    "  big: {shape: [11, 10], init: ones}\n"                                                 \
    "steps:\n"                                                                               \
    "  - scores: K @ K.T\n"                                                                  \
    "  - doubled: big * 2\n"                                                                 \
    "  - total: sum(K)\n"

static void test_command_line_errors(void **state) {
    expect_usage_error(state, ERRORS_LESSON, "scors[0, 1]", "--explain 'scors[0, 1]': the lesson has no stage called 'scors'",
                       "did you mean 'scores'?");
    expect_usage_error(state, ERRORS_LESSON, "zzzzzz", "--explain 'zzzzzz': the lesson has no stage called 'zzzzzz'",
                       "stages are the givens, the steps, and intermediates such as weights.1");
    expect_usage_error(state, ERRORS_LESSON, "scores[3, 0]",
                       "--explain 'scores[3, 0]': index 3 is out of range for axis 0 of 'scores' (shape [3, 3])",
                       "valid indices are 0 to 2");
    expect_usage_error(state, ERRORS_LESSON, "scores[0, -4]",
                       "--explain 'scores[0, -4]': index -4 is out of range for axis 1 of 'scores' (shape [3, 3])",
                       "valid indices are 0 to 2");
    expect_usage_error(state, ERRORS_LESSON, "K[0, 0]",
                       "--explain 'K[0, 0]': 'K' is given: its values come from the lesson, not from a computation",
                       "explain a step that uses it");
    expect_usage_error(state, ERRORS_LESSON, "doubled",
                       "--explain 'doubled': 'doubled' has 110 values, too many to explain all of them (at most 100)",
                       "explain one element, as doubled[0,1], or one row, as 'doubled row 0'");
    expect_usage_error(state, ERRORS_LESSON, "scores[0, 1, 2]",
                       "--explain 'scores[0, 1, 2]': 3 indices do not fit 'scores', which has shape [3, 3]",
                       "give 2 indices for one element or 1 for one row");
    // a single number has no indices: not "give 0 indices for one element or 0 for one row"
    expect_usage_error(state, ERRORS_LESSON, "total[0]",
                       "--explain 'total[0]': 'total' is a single number (shape []): it has no rows or elements to pick",
                       "leave out the indices: its one value is the whole of it");
    expect_usage_error(state, ERRORS_LESSON, "total row 0",
                       "--explain 'total row 0': 'total' is a single number (shape []): it has no rows or elements to pick",
                       "leave out the indices: its one value is the whole of it");
    expect_usage_error(state, ERRORS_LESSON, "scores[0, 1", "--explain 'scores[0, 1': expected ',' or a final ']'",
                       "");
    expect_usage_error(state, ERRORS_LESSON, "scores[x]",
                       "--explain 'scores[x]': indices are whole numbers, as in scores[0, 1]", "");
    expect_usage_error(state, ERRORS_LESSON, "[0]", "--explain '[0]': name a stage, as in scores[0,1]", "");
    expect_usage_error(state, ERRORS_LESSON, "scores row x", "--explain 'scores row x': write a row as scores row 0",
                       "");
    expect_usage_error(state, ERRORS_LESSON, "scores row 1 2",
                       "--explain 'scores row 1 2': write a row as scores row 0", "");
    expect_usage_error(state, ERRORS_LESSON, "scores[0, 0, 0, 0, 0]",
                       "--explain 'scores[0, 0, 0, 0, 0]': indices are whole numbers, as in scores[0, 1]", "");
    // A bracket before " row " keeps the element form; one after it is part of the row number.
    expect_usage_error(state, ERRORS_LESSON, "scores[0] row 1",
                       "--explain 'scores[0] row 1': expected ',' or a final ']'", "");
    expect_usage_error(state, ERRORS_LESSON, "scores row 1[0]",
                       "--explain 'scores row 1[0]': write a row as scores row 0", "");
    expect_usage_error(state, ERRORS_LESSON, "scores row 99999999999999999999",
                       "--explain 'scores row 99999999999999999999': write a row as scores row 0", "");
    expect_usage_error(state, ERRORS_LESSON, "scores[99999999999999999999]",
                       "--explain 'scores[99999999999999999999]': indices are whole numbers, as in scores[0, 1]", "");
    expect_usage_error(state, ERRORS_LESSON, "scores[0]x", "--explain 'scores[0]x': expected ',' or a final ']'", "");
    // K.T is not a stage of its own name: it is the intermediate scores.1.
    expect_usage_error(state, ERRORS_LESSON, "K.T", "--explain 'K.T': the lesson has no stage called 'K.T'",
                       "'K.T' is computed as the intermediate stage 'scores.1': explain 'scores.1'");
    expect_usage_error(state, ERRORS_LESSON, "K",
                       "--explain 'K': 'K' is given: its values come from the lesson, not from a computation",
                       "explain a step that uses it");
    char long_name[300];
    memset(long_name, 'a', sizeof(long_name) - 1);
    long_name[sizeof(long_name) - 1] = '\0';
    char long_message[400];
    snprintf(long_message, sizeof(long_message), "--explain '%s': name a stage, as in scores[0,1]", long_name);
    expect_usage_error(state, ERRORS_LESSON, long_name, long_message, "");
    expect_usage_error(state, ERRORS_LESSON, "scores row 7",
                       "--explain 'scores row 7': index 7 is out of range for axis 0 of 'scores' (shape [3, 3])",
                       "valid indices are 0 to 2");
    // One bad request among good ones still stops the run before any output.
    Fixture *f = *state;
    const char *requests[] = {"scores[0, 0]", "scores[9, 9]"};
    assert_int_equal(fixture_run(f, ERRORS_LESSON, OUTPUT_JSON, requests, 2), STATUS_USAGE_ERROR);
    assert_int_equal(f->out.len, 0);
    // A row, and every element of a stage with at most 100 values, are fine.
    const char *fine[] = {"scores[2]", "scores", "scores.1[1, 2]", "scores [0 , 1]", "scores  row 1"};
    assert_int_equal(fixture_run(f, ERRORS_LESSON, OUTPUT_TEXT, fine, 5), STATUS_OK);
}

// A lesson with an explain: key on one of its steps (each argument is that step's key line,
// or ""): the big step's key stands on line 10, the others' on line 8 or 9.
#define EXPLAIN_LESSON(small, flat, doubled)                                                 \
    "title: t\n"                                                                             \
    "given:\n"                                                                               \
    "  big: {shape: [11, 10], init: ones}\n"                                                 \
    "  shapes: {shape: [2, 3]}\n"                                                            \
    "  cube: {shape: [2, 2, 2], init: ones}\n"                                               \
    "steps:\n"                                                                               \
    "  - small: cube * 2\n" small                                                            \
    "  - flat: shapes * 2\n" flat                                                            \
    "  - doubled: big * 2\n" doubled

#define ON_BIG(key) EXPLAIN_LESSON("", "", "    explain: " key "\n")

// A lesson's explain: key that cannot be met: status 1, located at the key's value.
static void expect_lesson_error(void **state, const char *yaml, size_t line, size_t col, size_t width,
                                const char *message, const char *hint) {
    Fixture *f = *state;
    assert_int_equal(fixture_run(f, yaml, OUTPUT_TEXT, NULL, 0), STATUS_LESSON_ERROR);
    const Diag *d = &f->diag;
    if (strcmp(d->message, message) != 0)
        fail_msg("message\n  '%s'\nexpected\n  '%s'", d->message, message);
    if (d->line != line || d->col != col || d->width != width)
        fail_msg("'%s' at %zu:%zu width %zu, expected %zu:%zu width %zu", message, d->line, d->col, d->width, line,
                 col, width);
    if (strcmp(d->hint, hint) != 0)
        fail_msg("hint\n  '%s'\nexpected\n  '%s'", d->hint, hint);
    assert_string_equal(d->path, "t.yaml");
    assert_int_equal(f->out.len, 0);
}

static void test_lesson_errors(void **state) {
    expect_lesson_error(state, ON_BIG("[11, 0]"), 10, 14, 7,
                        "explain: index 11 is out of range for axis 0 of 'doubled' (shape [11, 10])",
                        "valid indices are 0 to 10");
    expect_lesson_error(state, ON_BIG("row -12"), 10, 14, 7,
                        "explain: index -12 is out of range for axis 0 of 'doubled' (shape [11, 10])",
                        "valid indices are 0 to 10");
    expect_lesson_error(state, ON_BIG("all"), 10, 14, 3,
                        "explain: 'doubled' has 110 values, too many to explain all of them (at most 100)",
                        "explain one element, as [0, 1], or one row, as row 0");
    expect_lesson_error(state, ON_BIG("[0, 0, 0]"), 10, 14, 9,
                        "explain: 3 indices do not fit 'doubled', which has shape [11, 10]",
                        "give 2 indices for one element or 1 for one row");
    expect_lesson_error(state, ON_BIG("sideways"), 10, 14, 8, "explain: cannot read 'sideways'",
                        "explain: takes [i, j] (one element), row i (one row), or all");
    expect_lesson_error(state, ON_BIG("[0, x]"), 10, 18, 1, "an index must be a whole number, but this is 'x'",
                        "explain: takes [i, j] (one element), row i (one row), or all");
    expect_lesson_error(state, ON_BIG("[]"), 10, 14, 2, "explain: needs 1 to 4 indices, but this list has 0",
                        "explain: takes [i, j] (one element), row i (one row), or all");
    expect_lesson_error(state, EXPLAIN_LESSON("", "    explain: [0, 0]\n", ""), 9, 14, 6,
                        "explain: 'flat' has only a shape [2, 3], no values to work out", "");
    expect_lesson_error(state, EXPLAIN_LESSON("    explain: row 1\n", "", ""), 8, 14, 5,
                        "explain: 'row' needs a matrix, but 'small' has shape [2, 2, 2]",
                        "give the indices of the row instead, as [0, 1] for a rank-3 tensor");
    // The same keys where they fit run.
    Fixture *f = *state;
    assert_int_equal(fixture_run(f, ON_BIG("row -11"), OUTPUT_TEXT, NULL, 0), STATUS_OK);
    assert_int_equal(fixture_run(f, EXPLAIN_LESSON("    explain: [1, 0]\n", "", ""), OUTPUT_TEXT, NULL, 0), STATUS_OK);
    fixture_expect_output(f, "      small[1, 0, 0] = cube[1, 0, 0] × 2 = 1.0000 × 2 = 2.0000\n"
                        "      small[1, 0, 1] = cube[1, 0, 1] × 2 = 1.0000 × 2 = 2.0000\n");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_every_op_has_a_case, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_every_op_every_element, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_every_op_all, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_matmul_dot_product, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_matmul_element_of_matrices, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_matmul_row_as_weighted_sum, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_matmul_batched_names_the_head, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_scaling, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_softmax_row, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_softmax_element, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_softmax_far_from_zero, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_layernorm_row, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_rmsnorm_row, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_silu, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_sinusoidal, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_rope, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_cross_entropy, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_other_forms, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_requests_resolved, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_lesson_and_command_line, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_command_line_errors, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_lesson_errors, fixture_setup, fixture_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
