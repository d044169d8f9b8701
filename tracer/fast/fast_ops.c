// fast_ops: the fast layer's table of operations, found by their entries in the op table.
#include "fast_ops.h"

#include <string.h>

#include "ops.h"

void fast_transpose_steps(const Shape *a, const size_t *a_step, size_t *step) {
    size_t r = a->rank;
    memcpy(step, a_step, r * sizeof(size_t));
    if (r >= 2) {
        step[r - 2] = a_step[r - 1];
        step[r - 1] = a_step[r - 2];
    }
}

// Axes (..., n, d) become (..., heads, n, d / heads): head h starts h * d / heads columns in.
void fast_split_heads_steps(const Shape *x, const size_t *x_step, size_t heads, size_t *step) {
    size_t r = x->rank;
    ASSERT(r >= 2 && r < TENSOR_MAX_RANK && heads > 0 && x->dim[r - 1] % heads == 0);
    memcpy(step, x_step, (r - 2) * sizeof(size_t));
    step[r - 2] = x->dim[r - 1] / heads * x_step[r - 1];
    step[r - 1] = x_step[r - 2];
    step[r] = x_step[r - 1];
}

// x (..., heads, n, d_head) lies in the result (..., n, heads * d_head): head h of row i
// starts h * d_head values into that row. (No heads at all: there is nothing to place.)
void fast_merge_heads_input_steps(const Shape *x, size_t *step) {
    size_t r = x->rank;
    ASSERT(r >= 3);
    size_t heads = x->dim[r - 3], n = x->dim[r - 2], d_head = x->dim[r - 1];
    step[r - 3] = d_head;
    step[r - 2] = heads * d_head;
    step[r - 1] = 1;
    size_t s = n * heads * d_head;
    for (size_t i = r - 3; i-- > 0;) {
        step[i] = s;
        s *= x->dim[i];
    }
}

static void view_transpose(const Shape *in, const size_t *in_step, const OpAttrs *attrs, size_t *step) {
    (void)attrs;
    fast_transpose_steps(in, in_step, step);
}

static void view_split_heads(const Shape *in, const size_t *in_step, const OpAttrs *attrs, size_t *step) {
    fast_split_heads_steps(in, in_step, attrs->count, step);
}

// The operations the layer knows something of, each found as a lesson writes it: a function
// by its name, an operator by its syntax and token.
typedef struct FastRow {
    const char *function;  // NULL: an operator
    OpSyntax syntax;
    char token;
    FastOp fast;
} FastRow;

static const FastRow rows[] = {
    {.syntax = OP_POSTFIX, .token = 'T', .fast = {.view = view_transpose}},
    {.function = "split_heads", .fast = {.view = view_split_heads}},
    {.function = "merge_heads", .fast = {.input_steps = fast_merge_heads_input_steps}},
    {.syntax = OP_INFIX, .token = '@', .fast = {.reads_views = true}},
};

const FastOp *fast_op(const OpDef *op) {
    static const FastOp nothing;
    // the entries, looked up once: a run asks for every node
    static const OpDef *entries[ARRAY_LEN(rows)];
    static bool found;
    if (!found) {
        for (size_t k = 0; k < ARRAY_LEN(rows); k++) {
            entries[k] = rows[k].function ? ops_find_function(rows[k].function)
                                          : ops_operator(rows[k].syntax, rows[k].token);
            ASSERT(entries[k]);  // a row for an operation the op table no longer has
        }
        found = true;
    }
    for (size_t k = 0; op && k < ARRAY_LEN(rows); k++)
        if (entries[k] == op)
            return &rows[k].fast;
    return &nothing;
}
