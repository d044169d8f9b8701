// ops: shape rules, computations and notes for every operation, and the table naming them.
#include "ops.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "explain.h"
#include "format.h"

// ---------------------------------------------------------------- shared shape helpers

static void shape_text(const Shape *s, char *buf, size_t cap) {
    shape_format(s, buf, cap);
}

static void copy_labels(Labels *dst, const Labels *src, size_t rank) {
    for (size_t i = 0; i < rank; i++)
        dst[i] = src[i];
}

// Broadcast labels: each output axis takes the labels of the first input whose aligned axis
// has the same size and carries labels.
static void broadcast_labels(OpCheck *c) {
    size_t rank = c->shape.rank;
    for (size_t k = 0; k < rank; k++) {
        size_t out_axis = rank - 1 - k;
        for (size_t i = 0; i < c->n_inputs; i++) {
            const Shape *s = c->shapes[i];
            if (k >= s->rank)
                continue;
            size_t axis = s->rank - 1 - k;
            if (s->dim[axis] == c->shape.dim[out_axis] && c->labels[i][axis].items) {
                c->out_labels[out_axis] = c->labels[i][axis];
                break;
            }
        }
    }
}

// Normalise a possibly negative axis against rank; false when out of range.
static bool resolve_axis(OpCheck *c, int param, double value, size_t rank, size_t *axis) {
    long a = (long)value;
    long r = (long)rank;
    if (a < -r || a >= r) {
        if (rank == 0) {
            op_check_error(c, OP_PARAM(param), "a scalar has no axis %ld", a);
            op_check_hint(c, "leave out axis=: a scalar has no axes to choose from");
        } else {
            op_check_error(c, OP_PARAM(param), "axis %ld does not exist: this tensor has %zu axes", a,
                           rank);
            op_check_hint(c, "axes are 0..%ld, or -1 for the last", r - 1);
        }
        return false;
    }
    *axis = (size_t)(a < 0 ? a + r : a);
    return true;
}

static bool needs_rank(OpCheck *c, int input, size_t min_rank) {
    if (c->shapes[input]->rank >= min_rank)
        return true;
    char s[64];
    shape_text(c->shapes[input], s, sizeof(s));
    return op_check_error(c, input, "%s needs a tensor with at least %zu axes, but this one is %s",
                          c->op->name, min_rank, s);
}

// ---------------------------------------------------------------- elementwise

static bool infer_binary(OpCheck *c) {
    if (!kernel_broadcast_shape(c->shapes[0], c->shapes[1], &c->shape)) {
        char a[64], b[64];
        shape_text(c->shapes[0], a, sizeof(a));
        shape_text(c->shapes[1], b, sizeof(b));
        op_check_error(c, -1, "cannot combine %s and %s elementwise with '%s'", a, b, c->op->symbol);
        op_check_hint(c, "elementwise operations need equal shapes, or axes of size 1 (or missing) "
                         "that stretch, matched from the right%s",
                      c->op->variant == KERNEL_MUL && c->shapes[0]->rank == 2 && c->shapes[1]->rank == 2
                          ? "; for a matrix product write A @ B"
                          : "");
        return false;
    }
    broadcast_labels(c);
    return true;
}

static bool compute_binary(OpRun *r) {
    kernel_binary(r->out, r->in[0], r->in[1], (KernelBinary)r->op->variant);
    return true;
}

static bool infer_same(OpCheck *c) {
    c->shape = *c->shapes[0];
    copy_labels(c->out_labels, c->labels[0], c->shape.rank);
    return true;
}

static bool compute_copy(OpRun *r) {
    memcpy(r->out->data, r->in[0]->data, r->in[0]->size * sizeof(double));
    return true;
}

static bool compute_unary(OpRun *r) {
    kernel_unary(r->out, r->in[0], (KernelUnary)r->op->variant);
    return true;
}

// ---------------------------------------------------------------- matrix product

static bool infer_matmul(OpCheck *c) {
    const Shape *a = c->shapes[0], *b = c->shapes[1];
    char sa[64], sb[64];
    shape_text(a, sa, sizeof(sa));
    shape_text(b, sb, sizeof(sb));
    if (a->rank == 0 || b->rank == 0) {
        op_check_error(c, a->rank == 0 ? 0 : 1, "'@' needs vectors or matrices, but this is a scalar");
        op_check_hint(c, "to scale by a number, write x * s");
        return false;
    }
    if (!kernel_matmul_shape(a, b, &c->shape)) {
        size_t ka = a->dim[a->rank - 1];
        size_t kb = b->rank >= 2 ? b->dim[b->rank - 2] : b->dim[0];
        if (ka != kb) {
            op_check_error(c, -1, "cannot multiply %s @ %s: the inner dimensions %zu and %zu differ", sa,
                           sb, ka, kb);
            if (shape_equal(a, b) && a->rank >= 2)
                op_check_hint(c, "the inner dimensions must agree: the left operand is %s and the right "
                                 "is %s; did you mean to transpose the right one (.T)?",
                              sa, sb);
            else
                op_check_hint(c, "in A @ B the last axis of A must match the %s axis of B",
                              b->rank >= 2 ? "second-to-last" : "only");
        } else {
            op_check_error(c, -1, "cannot multiply %s @ %s: the leading (batch) axes do not match", sa, sb);
            op_check_hint(c, "batch axes must be equal or 1");
        }
        return false;
    }
    // Rows come from A, columns from B, batch axes broadcast.
    size_t rank = c->shape.rank;
    if (a->rank >= 2 && b->rank >= 2) {
        c->out_labels[rank - 2] = c->labels[0][a->rank - 2];
        c->out_labels[rank - 1] = c->labels[1][b->rank - 1];
        for (size_t k = 2; k < rank; k++) {
            size_t out_axis = rank - 1 - k;
            if (k < a->rank && a->dim[a->rank - 1 - k] == c->shape.dim[out_axis])
                c->out_labels[out_axis] = c->labels[0][a->rank - 1 - k];
            else if (k < b->rank && b->dim[b->rank - 1 - k] == c->shape.dim[out_axis])
                c->out_labels[out_axis] = c->labels[1][b->rank - 1 - k];
        }
    } else if (a->rank >= 2 && rank >= 1) {
        c->out_labels[rank - 1] = c->labels[0][a->rank - 2];
    } else if (b->rank >= 2 && rank >= 1) {
        c->out_labels[rank - 1] = c->labels[1][b->rank - 1];
    }
    return true;
}

static bool compute_matmul(OpRun *r) {
    kernel_matmul(r->out, r->in[0], r->in[1]);
    return true;
}

static bool infer_transpose(OpCheck *c) {
    c->shape = *c->shapes[0];
    size_t rank = c->shape.rank;
    copy_labels(c->out_labels, c->labels[0], rank);
    if (rank >= 2) {
        c->shape.dim[rank - 2] = c->shapes[0]->dim[rank - 1];
        c->shape.dim[rank - 1] = c->shapes[0]->dim[rank - 2];
        c->out_labels[rank - 2] = c->labels[0][rank - 1];
        c->out_labels[rank - 1] = c->labels[0][rank - 2];
    }
    return true;
}

static bool compute_transpose(OpRun *r) {
    kernel_transpose(r->out, r->in[0]);
    return true;
}

// ---------------------------------------------------------------- indexing

// The checker has filled attrs.index (constants) before calling; this derives the shape and
// labels, with a tensor index (attrs.index_input) standing for a list of its size.
static bool infer_index(OpCheck *c) {
    const Shape *a = c->shapes[0];
    OpAttrs *at = &c->attrs;
    size_t n_read = 0;  // items that read an axis of the tensor (None reads none)
    for (size_t i = 0; i < at->n_index; i++)
        n_read += at->index[i].kind != KERNEL_INDEX_NEW;
    if (n_read > a->rank) {
        char s[64];
        shape_text(a, s, sizeof(s));
        op_check_error(c, -1, "too many indices: %zu for a tensor of shape %s", n_read, s);
        op_check_hint(c, "give at most one index per axis (%zu here)", a->rank);
        return false;
    }
    KernelAxisIndex index[KERNEL_MAX_INDEX];
    memcpy(index, at->index, sizeof(index));
    size_t placeholder_n = 0;
    if (at->index_input >= 0) {
        const Shape *is = c->shapes[1];
        if (is->rank > 1) {
            char s[64];
            shape_text(is, s, sizeof(s));
            op_check_error(c, 1, "an index tensor must be a list of positions (one axis), but this is %s", s);
            return false;
        }
        placeholder_n = is->rank == 0 ? 1 : is->dim[0];
        index[at->index_input].kind = is->rank == 0 ? KERNEL_INDEX_AT : KERNEL_INDEX_LIST;
        index[at->index_input].start = 0;
        index[at->index_input].list = NULL;
        index[at->index_input].n_list = placeholder_n;
    }
    // A tensor list's values are known only at run time (compute_index checks each one) and may
    // repeat rows, so it can be longer than the axis (E[token_ids] with more tokens than E has
    // rows): ask for the shape with ':' on that axis, then put in the list's length.
    KernelAxisIndex for_shape[KERNEL_MAX_INDEX];
    memcpy(for_shape, index, sizeof(for_shape));
    bool placeholder_list = at->index_input >= 0 && index[at->index_input].kind == KERNEL_INDEX_LIST;
    if (placeholder_list)
        for_shape[at->index_input].kind = KERNEL_INDEX_ALL;
    if (!kernel_index_shape(a, for_shape, at->n_index, &c->shape))
        return op_check_error(c, -1, "this index does not fit the tensor");
    size_t list_axis = kernel_index_list_axis(index, at->n_index);
    size_t unmoved = 0;  // where the gathered axis stands before numpy's rule moves it first
    for (size_t i = 0; i < at->n_index && index[i].kind != KERNEL_INDEX_LIST; i++)
        unmoved += index[i].kind != KERNEL_INDEX_AT;
    if (placeholder_list) {
        c->shape.dim[unmoved] = placeholder_n;
        if (list_axis == 0 && unmoved > 0) {
            memmove(c->shape.dim + 1, c->shape.dim, unmoved * sizeof(size_t));
            c->shape.dim[0] = placeholder_n;
        }
    }
    // Labels: AT drops the axis, RANGE keeps a window, LIST gathers, tensor lists drop labels,
    // a new axis has none.
    size_t out = 0, axis = 0;
    for (size_t i = 0; axis < a->rank || i < at->n_index; i++) {
        KernelAxisIndex ix = i < at->n_index ? index[i] : (KernelAxisIndex){.kind = KERNEL_INDEX_ALL};
        if (ix.kind == KERNEL_INDEX_NEW) {
            c->out_labels[out++] = (Labels){0};
            continue;
        }
        const Labels *l = &c->labels[0][axis++];
        switch (ix.kind) {
        case KERNEL_INDEX_NEW:
        case KERNEL_INDEX_AT:
            break;
        case KERNEL_INDEX_ALL:
            c->out_labels[out++] = *l;
            break;
        case KERNEL_INDEX_RANGE:
            if (l->items)
                c->out_labels[out] = (Labels){l->items + ix.start, ix.stop - ix.start};
            out++;
            break;
        case KERNEL_INDEX_LIST:
            if (l->items && ix.list) {
                const char **items = arena_array(c->arena, ix.n_list, sizeof(char *));
                if (items) {
                    for (size_t k = 0; k < ix.n_list; k++)
                        items[k] = l->items[ix.list[k]];
                    c->out_labels[out] = (Labels){items, ix.n_list};
                }
            }
            out++;
            break;
        }
    }
    // numpy's rule moved the gathered axis first: so do its labels.
    if (list_axis == 0 && unmoved > 0 && unmoved < out) {
        Labels gathered = c->out_labels[unmoved];
        memmove(c->out_labels + 1, c->out_labels, unmoved * sizeof(Labels));
        c->out_labels[0] = gathered;
    }
    return true;
}

static bool compute_index(OpRun *r) {
    KernelAxisIndex index[KERNEL_MAX_INDEX];
    memcpy(index, r->attrs->index, sizeof(index));
    const Tensor *a = r->in[0];
    if (r->attrs->index_input >= 0) {
        int item = r->attrs->index_input;
        size_t axis = 0;  // the tensor's axis the item reads: None items read none
        for (int i = 0; i < item; i++)
            axis += index[i].kind != KERNEL_INDEX_NEW;
        const Tensor *ix = r->in[1];
        size_t dim = a->shape.dim[axis];
        size_t *list = arena_array(r->arena, ix->size ? ix->size : 1, sizeof(size_t));
        if (!list)
            return op_run_error(r, -2, "out of memory");
        for (size_t k = 0; k < ix->size; k++) {
            double v = ix->data[k];
            if (!(v == floor(v)) || v < -(double)dim || v >= (double)dim) {
                // Say it as a learner sees it: positions[4] is 4, but pos_emb has rows 0 to 3.
                char s[64];
                format_short(v, s, sizeof(s));
                const char *what = axis == 0 ? "rows" : axis == 1 && a->shape.rank == 2 ? "columns" : "entries";
                char at[32] = "";
                if (ix->shape.rank == 1)
                    snprintf(at, sizeof(at), "[%zu]", k);
                if (v != floor(v))
                    return op_run_error(r, 1, "%s%s is %s, which is not a whole number: it cannot pick one of %s's %s",
                                        op_run_name(r, 1), at, s, op_run_name(r, 0), what);
                if (dim == 0) {
                    op_run_error(r, 1, "%s%s is %s, but %s has no %s: axis %zu is empty", op_run_name(r, 1), at, s,
                                 op_run_name(r, 0), what, axis);
                    op_run_hint(r, "an empty axis has nothing to pick; index before slicing it empty");
                    return false;
                }
                op_run_error(r, 1, "%s%s is %s, past the end of %s, which has %s 0 to %zu", op_run_name(r, 1), at, s,
                             op_run_name(r, 0), what, dim - 1);
                op_run_hint(r, "every index must be from 0 to %zu (or -%zu to -1, counting from the end); a table "
                               "has no %s beyond its last",
                            dim - 1, dim, axis == 0 ? "row" : axis == 1 && a->shape.rank == 2 ? "column" : "entry");
                return false;
            }
            list[k] = (size_t)(v < 0 ? v + (double)dim : v);
        }
        if (ix->shape.rank == 0) {
            index[item].kind = KERNEL_INDEX_AT;
            index[item].start = list[0];
        } else {
            index[item].kind = KERNEL_INDEX_LIST;
            index[item].list = list;
            index[item].n_list = ix->size;
        }
    }
    kernel_index(r->out, a, index, r->attrs->n_index);
    return true;
}

// "axis 1 of [2, 0]" or "the last axis of [2, 0]": an axis a learner can find.
static void axis_text(const Shape *s, size_t axis, char *buf, size_t cap) {
    char sh[64];
    shape_text(s, sh, sizeof(sh));
    if (axis + 1 == s->rank)
        snprintf(buf, cap, "the last axis of %s", sh);
    else
        snprintf(buf, cap, "axis %zu of %s", axis, sh);
}

// An operation that needs at least one entry along an axis (a maximum, a softmax row, a
// LayerNorm row) met an empty one: refused, as numpy refuses the max of nothing.
// what: the function; nothing: what does not exist without entries ("a maximum").
static bool refuse_empty_axis(OpCheck *c, const char *what, const char *nothing, size_t axis) {
    char ax[96];
    axis_text(c->shapes[0], axis, ax, sizeof(ax));
    op_check_error(c, 0, "%s over an empty axis: %s has no entries", what, ax);
    op_check_hint(c, "no entries have %s (numpy refuses it too); slice at least one entry, as in X[:, 0:1] "
                     "rather than X[:, 0:0]", nothing);
    return false;
}

static bool infer_take(OpCheck *c) {
    size_t table = 1, idx = 1;
    for (size_t i = 0; i < c->shapes[0]->rank; i++)
        table *= c->shapes[0]->dim[i];
    for (size_t i = 0; i < c->shapes[1]->rank; i++)
        idx *= c->shapes[1]->dim[i];
    if (table == 0 && idx > 0) {
        char sh[64];
        shape_text(c->shapes[0], sh, sizeof(sh));
        op_check_error(c, 0, "take from an empty table: %s has no entries to pick", sh);
        op_check_hint(c, "the table must hold at least one value for an index to point at");
        return false;
    }
    c->shape = *c->shapes[1];
    copy_labels(c->out_labels, c->labels[1], c->shape.rank);
    return true;
}

// Every value of idx must be a whole number in [0, limit); false with an error otherwise.
static bool check_whole_indices(OpRun *r, int input, const Tensor *idx, size_t limit, const char *what,
                                const char *hint) {
    for (size_t k = 0; k < idx->size; k++) {
        double v = idx->data[k];
        if (v != floor(v) || v < 0 || v >= (double)limit) {
            char s[64];
            format_short(v, s, sizeof(s));
            char at[160] = "";
            if (idx->shape.rank > 0)
                snprintf(at, sizeof(at), " (entry %zu of %s)", k, op_run_name(r, input));
            if (limit == 0)
                return op_run_error(r, input, "%s %s%s points into nothing: there are no entries to pick", what, s, at);
            op_run_error(r, input, "%s %s%s must be a whole number from 0 to %zu", what, s, at, limit - 1);
            op_run_hint(r, "%s", hint);
            return false;
        }
    }
    return true;
}

static bool compute_take(OpRun *r) {
    if (!check_whole_indices(r, 1, r->in[1], r->in[0]->size, "index",
                             "take counts the table's values in reading order (row by row), from 0"))
        return false;
    kernel_take(r->out, r->in[0], r->in[1]);
    return true;
}

// ---------------------------------------------------------------- rows: softmax, norms

static bool infer_softmax(OpCheck *c) {
    if (c->shapes[0]->rank == 0) {
        op_check_error(c, 0, "softmax needs at least one axis: the softmax of a single number is 1");
        return false;
    }
    if (c->shapes[0]->dim[c->shapes[0]->rank - 1] == 0)
        return refuse_empty_axis(c, "softmax", "a largest value to subtract, or a sum to divide by",
                                 c->shapes[0]->rank - 1);
    return infer_same(c);
}

static bool compute_softmax(OpRun *r) {
    kernel_softmax(r->out, r->in[0]);
    return true;
}

// Sums of each row (last axis) as a note, when there are few enough rows to read.
static void note_row_sums(OpNotes *n) {
    const Tensor *t = n->out;
    size_t d = t->shape.rank ? t->shape.dim[t->shape.rank - 1] : 1;
    size_t rows = d ? t->size / d : 0;
    if (rows == 0 || rows > 16)
        return;
    char line[1024] = "";
    size_t used = 0;
    bool nan_row = false;
    for (size_t r = 0; r < rows && used + 32 < sizeof(line); r++) {
        double s = 0;
        for (size_t j = 0; j < d; j++)
            s += t->data[r * d + j];
        nan_row = nan_row || isnan(s);
        char v[64];
        format_fixed(s, n->digits, v, sizeof(v));
        used += (size_t)snprintf(line + used, sizeof(line) - used, "%s%s", r ? ", " : "", v);
    }
    // A row whose scores are all -inf (fully masked), or hold +inf, has no weights to give.
    if (nan_row)
        op_note(n, "row sums %s; a nan row had no finite score to weigh (all -inf, or a +inf)", line);
    else
        op_note(n, "each row is a probability distribution: row sums %s", line);
}

// Row means and variances after normalising, to show the norm did its job.
static void note_row_moments(OpNotes *n, const Tensor *t) {
    size_t d = t->shape.rank ? t->shape.dim[t->shape.rank - 1] : 1;
    size_t rows = d ? t->size / d : 0;
    if (rows == 0 || rows > 16)
        return;
    char means[512] = "", vars[512] = "";
    size_t um = 0, uv = 0;
    for (size_t r = 0; r < rows && um + 32 < sizeof(means) && uv + 32 < sizeof(vars); r++) {
        double mean = 0, var = 0;
        for (size_t j = 0; j < d; j++)
            mean += t->data[r * d + j];
        mean /= (double)d;
        for (size_t j = 0; j < d; j++)
            var += (t->data[r * d + j] - mean) * (t->data[r * d + j] - mean);
        var /= (double)d;
        char a[64], b[64];
        format_fixed(mean, n->digits, a, sizeof(a));
        format_fixed(var, n->digits, b, sizeof(b));
        um += (size_t)snprintf(means + um, sizeof(means) - um, "%s%s", r ? ", " : "", a);
        uv += (size_t)snprintf(vars + uv, sizeof(vars) - uv, "%s%s", r ? ", " : "", b);
    }
    op_note(n, "row means %s; row variances %s", means, vars);
}

static bool check_affine(OpCheck *c, size_t d) {
    for (size_t i = 1; i <= 2; i++) {
        const Shape *s = c->shapes[i];
        if (s->rank == 0 || (s->rank == 1 && s->dim[0] == d))
            continue;
        char sh[64];
        shape_text(s, sh, sizeof(sh));
        op_check_error(c, (int)i, "%s must be a number or have shape [%zu] (one per feature), but it is %s",
                       i == 1 ? "gamma" : "beta", d, sh);
        return false;
    }
    return true;
}

// LayerNorm and BatchNorm: x of at least min_rank axes, gamma and beta per feature, eps >= 0.
static bool infer_norm(OpCheck *c, size_t min_rank) {
    if (!needs_rank(c, 0, min_rank))
        return false;
    const Shape *x = c->shapes[0];
    // LayerNorm normalises each row (the last axis), BatchNorm each feature over the batch
    // (every other axis): an empty one has no mean.
    if (min_rank == 1 && x->dim[x->rank - 1] == 0)
        return refuse_empty_axis(c, "layernorm", "a mean or a variance", x->rank - 1);
    for (size_t i = 0; min_rank > 1 && i + 1 < x->rank; i++)
        if (x->dim[i] == 0)
            return refuse_empty_axis(c, "batchnorm", "a mean or a variance", i);
    if (!check_affine(c, x->dim[x->rank - 1]))
        return false;
    c->attrs.number = c->constants[3];
    if (!(c->attrs.number >= 0))
        return op_check_error(c, OP_PARAM(3), "eps must be zero or positive");
    return infer_same(c);
}

static bool infer_layernorm(OpCheck *c) {
    return infer_norm(c, 1);
}

static bool compute_layernorm(OpRun *r) {
    kernel_layernorm(r->out, r->in[0], r->in[1], r->in[2], r->attrs->number);
    return true;
}

static void notes_layernorm(OpNotes *n) {
    // Moments of the normalised values, before gamma and beta: recompute from the output is
    // not possible in general, so report them only when gamma is 1 and beta is 0.
    const Tensor *g = n->in[1], *b = n->in[2];
    for (size_t i = 0; i < g->size; i++)
        if (g->data[i] != 1)
            return;
    for (size_t i = 0; i < b->size; i++)
        if (b->data[i] != 0)
            return;
    note_row_moments(n, n->out);
}

static bool infer_batchnorm(OpCheck *c) {
    return infer_norm(c, 2);  // a batch axis (or a sequence axis) besides the features
}

static bool compute_batchnorm(OpRun *r) {
    kernel_batchnorm(r->out, r->in[0], r->in[1], r->in[2], r->attrs->number);
    return true;
}

// ---------------------------------------------------------------- reductions

static bool infer_reduce(OpCheck *c) {
    const Shape *x = c->shapes[0];
    c->attrs.keepdims = c->present[2] && c->constants[2] != 0;
    if (!c->present[1]) {
        c->attrs.axis = KERNEL_ALL_AXES;
    } else {
        size_t axis;
        if (!resolve_axis(c, 1, c->constants[1], x->rank, &axis))
            return false;
        c->attrs.axis = (int)axis;
    }
    if (!kernel_reduce_shape(x, c->attrs.axis, c->attrs.keepdims, &c->shape))
        return op_check_error(c, -1, "cannot reduce this tensor");
    if (c->attrs.axis != KERNEL_ALL_AXES) {
        size_t out = 0;
        for (size_t i = 0; i < x->rank; i++)
            if ((int)i != c->attrs.axis || c->attrs.keepdims)
                c->out_labels[out++] = (int)i == c->attrs.axis ? (Labels){0} : c->labels[0][i];
    }
    // numpy: the sum of nothing is 0 and its mean and variance nan (0 / 0); a maximum,
    // minimum or its position does not exist.
    KernelReduce op = (KernelReduce)c->op->variant;
    if (op == KERNEL_MAX || op == KERNEL_MIN || op == KERNEL_ARGMAX) {
        const char *nothing = op == KERNEL_MIN ? "a minimum" : "a maximum";
        if (c->attrs.axis != KERNEL_ALL_AXES && x->dim[c->attrs.axis] == 0)
            return refuse_empty_axis(c, c->op->name, nothing, (size_t)c->attrs.axis);
        for (size_t i = 0; c->attrs.axis == KERNEL_ALL_AXES && i < x->rank; i++)
            if (x->dim[i] == 0)
                return refuse_empty_axis(c, c->op->name, nothing, i);
    }
    return true;
}

// Over an empty axis numpy's sum is 0 and its mean and variance nan: say where they came from.
static void notes_reduce(OpNotes *n) {
    const Tensor *x = n->in[0];
    size_t count = x->size;
    if (n->attrs->axis != KERNEL_ALL_AXES)
        count = x->shape.dim[n->attrs->axis];
    if (count != 0 || n->out->size == 0)
        return;
    if ((KernelReduce)n->op->variant == KERNEL_SUM)
        op_note(n, "the sum of no numbers is 0 (as numpy gives it): the axis summed over is empty");
    else
        op_note(n, "the %s of no numbers is nan, 0 / 0 (as numpy gives it): the axis is empty",
                (KernelReduce)n->op->variant == KERNEL_MEAN ? "mean" : "variance");
}

static bool compute_reduce(OpRun *r) {
    if (r->attrs->keepdims) {
        // The kernel drops the axis; keepdims only changes the shape, not the values.
        Tensor view = *r->out;
        kernel_reduce(&view, r->in[0], r->attrs->axis, (KernelReduce)r->op->variant);
        return true;
    }
    kernel_reduce(r->out, r->in[0], r->attrs->axis, (KernelReduce)r->op->variant);
    return true;
}

// A position is a whole number: mark it so it prints as "3", not "3.0000".
static bool compute_argmax(OpRun *r) {
    compute_reduce(r);
    r->out->is_count = true;
    return true;
}

static bool infer_numel(OpCheck *c) {
    c->shape = (Shape){0};
    return true;
}

static bool compute_numel(OpRun *r) {
    size_t n = 1;
    for (size_t i = 0; i < r->in[0]->shape.rank; i++)
        n *= r->in[0]->shape.dim[i];
    r->out->data[0] = (double)n;
    r->out->is_count = true;
    return true;
}

// ---------------------------------------------------------------- joining and heads

static bool infer_concat(OpCheck *c) {
    if (c->n_inputs < 2) {
        op_check_error(c, -1, "concat joins two or more tensors, but got %zu", c->n_inputs);
        op_check_hint(c, "write concat(a, b) or concat(a, b, axis=1)");
        return false;
    }
    size_t rank = c->shapes[0]->rank;
    if (rank == 0)
        return op_check_error(c, 0, "concat cannot join scalars; write a list instead, as in [a, b]");
    size_t axis;
    if (!resolve_axis(c, 1, c->present[1] ? c->constants[1] : 0, rank, &axis))
        return false;
    c->attrs.axis = (int)axis;
    for (size_t i = 1; i < c->n_inputs; i++) {
        const Shape *s = c->shapes[i];
        bool ok = s->rank == rank;
        for (size_t k = 0; ok && k < rank; k++)
            if (k != axis && s->dim[k] != c->shapes[0]->dim[k])
                ok = false;
        if (!ok) {
            char a[64], b[64];
            shape_text(c->shapes[0], a, sizeof(a));
            shape_text(s, b, sizeof(b));
            op_check_error(c, (int)i, "cannot concat %s with %s along axis %zu", a, b, axis);
            op_check_hint(c, "every axis except axis %zu must have the same size", axis);
            return false;
        }
    }
    if (!kernel_concat_shape(c->shapes, c->n_inputs, axis, &c->shape))
        return op_check_error(c, -1, "cannot concat these tensors");
    copy_labels(c->out_labels, c->labels[0], rank);
    // Labels along the joined axis survive only when every part has them.
    bool all = true;
    for (size_t i = 0; i < c->n_inputs; i++)
        all = all && c->labels[i][axis].items;
    c->out_labels[axis] = (Labels){0};
    if (all) {
        const char **items = arena_array(c->arena, c->shape.dim[axis], sizeof(char *));
        if (items) {
            size_t k = 0;
            for (size_t i = 0; i < c->n_inputs; i++)
                for (size_t j = 0; j < c->labels[i][axis].n; j++)
                    items[k++] = c->labels[i][axis].items[j];
            c->out_labels[axis] = (Labels){items, k};
        }
    }
    return true;
}

static bool compute_concat(OpRun *r) {
    kernel_concat(r->out, r->in, r->n_in, (size_t)r->attrs->axis);
    return true;
}

static bool infer_split_heads(OpCheck *c) {
    if (!needs_rank(c, 0, 2))
        return false;
    const Shape *x = c->shapes[0];
    if (x->rank >= TENSOR_MAX_RANK)
        return op_check_error(c, 0, "split_heads would need more than %d axes", TENSOR_MAX_RANK);
    size_t h = (size_t)c->constants[1], d = x->dim[x->rank - 1];
    if (d % h != 0) {
        op_check_error(c, OP_PARAM(1), "%zu columns cannot be split evenly into %zu heads", d, h);
        op_check_hint(c, "d_model must be a multiple of the number of heads");
        return false;
    }
    c->attrs.count = h;
    if (!kernel_split_heads_shape(x, h, &c->shape))
        return op_check_error(c, -1, "cannot split these heads");
    size_t r = x->rank;
    for (size_t i = 0; i + 2 < r; i++)
        c->out_labels[i] = c->labels[0][i];
    c->out_labels[r - 1] = c->labels[0][r - 2];  // the token axis keeps its labels
    // The new axis is the heads: label them "head 0", "head 1", ... so slices say which.
    const char **names = arena_array(c->arena, h, sizeof(char *));
    for (size_t k = 0; names && k < h; k++)
        if (!(names[k] = arena_printf(c->arena, "head %zu", k)))
            names = NULL;
    if (names)
        c->out_labels[r - 2] = (Labels){names, h};
    return true;
}

static bool compute_split_heads(OpRun *r) {
    kernel_split_heads(r->out, r->in[0], r->attrs->count);
    return true;
}

static bool infer_merge_heads(OpCheck *c) {
    if (!needs_rank(c, 0, 3))
        return false;
    const Shape *x = c->shapes[0];
    if (!kernel_merge_heads_shape(x, &c->shape))
        return op_check_error(c, -1, "cannot merge these heads");
    size_t r = x->rank;
    for (size_t i = 0; i + 3 < r; i++)
        c->out_labels[i] = c->labels[0][i];
    c->out_labels[r - 3] = c->labels[0][r - 2];
    return true;
}

static bool compute_merge_heads(OpRun *r) {
    kernel_merge_heads(r->out, r->in[0]);
    return true;
}

// ---------------------------------------------------------------- builders

static bool infer_square(OpCheck *c) {
    size_t n = (size_t)c->constants[0];
    c->attrs.count = n;
    c->shape = (Shape){.rank = 2, .dim = {n, n}};
    return true;
}

static bool compute_causal_mask(OpRun *r) {
    kernel_causal_mask(r->out);
    return true;
}

static void notes_causal_mask(OpNotes *n) {
    op_note(n, "-inf above the diagonal: after softmax those weights are exactly 0, so no token sees a "
               "later one");
}

static bool compute_relative_positions(OpRun *r) {
    kernel_relative_positions(r->out);
    return true;
}

static bool infer_vector(OpCheck *c) {
    c->attrs.count = (size_t)c->constants[0];
    c->shape = (Shape){.rank = 1, .dim = {c->attrs.count}};
    return true;
}

static bool compute_arange(OpRun *r) {
    kernel_arange(r->out);
    return true;
}

static bool compute_alibi_slopes(OpRun *r) {
    kernel_alibi_slopes(r->out);
    return true;
}

static bool infer_sinusoidal(OpCheck *c) {
    size_t n = (size_t)c->constants[0], d = (size_t)c->constants[1];
    if (d % 2 != 0) {
        op_check_error(c, OP_PARAM(1), "d must be even: dimensions come in sin/cos pairs");
        return false;
    }
    c->attrs.number = c->constants[2];
    if (!(c->attrs.number > 0))
        return op_check_error(c, OP_PARAM(2), "base must be positive");
    c->shape = (Shape){.rank = 2, .dim = {n, d}};
    return true;
}

static bool compute_sinusoidal(OpRun *r) {
    kernel_sinusoidal(r->out, r->attrs->number);
    return true;
}

static bool infer_rope(OpCheck *c) {
    const Shape *x = c->shapes[0], *p = c->shapes[1];
    char sx[64], sp[64];
    shape_text(x, sx, sizeof(sx));
    shape_text(p, sp, sizeof(sp));
    if (x->rank != 2)
        return op_check_error(c, 0, "rope rotates rows of a matrix [n, d], but this is %s", sx);
    if (x->dim[1] % 2 != 0) {
        op_check_error(c, 0, "rope needs an even number of columns (pairs are rotated), but this is %s", sx);
        return false;
    }
    if (!(p->rank == 1 && p->dim[0] == x->dim[0]) && !(p->rank == 0 && x->dim[0] == 1)) {
        op_check_error(c, 1, "rope needs one position per row: %zu positions for %s, but got %s", x->dim[0],
                       sx, sp);
        return false;
    }
    c->attrs.number = c->constants[2];
    if (!(c->attrs.number > 0))
        return op_check_error(c, OP_PARAM(2), "base must be positive");
    return infer_same(c);
}

static bool compute_rope(OpRun *r) {
    kernel_rope(r->out, r->in[0], r->in[1], r->attrs->number);
    return true;
}

// ---------------------------------------------------------------- loss

static bool infer_cross_entropy(OpCheck *c) {
    const Shape *l = c->shapes[0], *t = c->shapes[1];
    char sl[64], st[64];
    shape_text(l, sl, sizeof(sl));
    shape_text(t, st, sizeof(st));
    bool ok = l->rank >= 1 && t->rank + 1 == l->rank;
    for (size_t i = 0; ok && i < t->rank; i++)
        ok = t->dim[i] == l->dim[i];
    if (!ok) {
        op_check_error(c, 1, "targets of shape %s do not fit logits of shape %s", st, sl);
        op_check_hint(c, "give one target per row of logits: logits [n, vocab] take targets [n], and one "
                         "row [vocab] takes a single number");
        return false;
    }
    if (l->dim[l->rank - 1] == 0)
        return refuse_empty_axis(c, "cross_entropy", "a probability for the target", l->rank - 1);
    c->shape = *t;
    copy_labels(c->out_labels, c->labels[0], t->rank);
    return true;
}

static bool compute_cross_entropy(OpRun *r) {
    size_t v = r->in[0]->shape.dim[r->in[0]->shape.rank - 1];
    if (!check_whole_indices(r, 1, r->in[1], v, "target",
                             "a target is the position of the right answer in a row of logits, from 0"))
        return false;
    kernel_cross_entropy(r->out, r->in[0], r->in[1]);
    return true;
}

static void notes_cross_entropy(OpNotes *n) {
    if (n->out->size != 1)
        return;
    char p[64];
    format_fixed(exp(-n->out->data[0]), n->digits, p, sizeof(p));
    op_note(n, "the model gave the target a probability of %s; a perfect prediction would give loss 0", p);
}

// ---------------------------------------------------------------- the table

#define X {"x", PARAM_TENSOR, false, 0}

static const OpDef binary_ops[] = {
    {"add", "+", "elementwise sum (numpy broadcasting)", KERNEL_ADD, {X, X}, infer_binary, compute_binary, NULL, explain_binary, INTEGERS_IF_INPUTS},
    {"subtract", "-", "elementwise difference (numpy broadcasting)", KERNEL_SUB, {X, X}, infer_binary,
     compute_binary, NULL, explain_binary, INTEGERS_IF_INPUTS},
    {"multiply", "*", "elementwise product (numpy broadcasting)", KERNEL_MUL, {X, X}, infer_binary,
     compute_binary, NULL, explain_binary, INTEGERS_IF_INPUTS},
    {"divide", "/", "elementwise division (numpy broadcasting)", KERNEL_DIV, {X, X}, infer_binary,
     compute_binary, NULL, explain_binary, INTEGERS_NEVER},
    {"power", "**", "elementwise power (numpy broadcasting)", KERNEL_POW, {X, X}, infer_binary,
     compute_binary, NULL, explain_binary, INTEGERS_NEVER},
    {"matmul", "@", "matrix product: each row of the left against each column of the right", 0, {X, X},
     infer_matmul, compute_matmul, NULL, explain_matmul, INTEGERS_IF_INPUTS},
};

static const OpDef negate_op = {"negate", "-", "elementwise negation", KERNEL_NEG, {X}, infer_same,
                                compute_unary, NULL, explain_unary, INTEGERS_IF_INPUTS};
static const OpDef transpose_op = {"transpose", ".T", "transpose: rows become columns (last two axes swap)",
                                   0, {X}, infer_transpose, compute_transpose, NULL, explain_transpose, INTEGERS_IF_FIRST};
static const OpDef index_op = {"index", "[]", "indexing: pick rows, columns or ranges", 0, {X, X},
                               infer_index, compute_index, NULL, explain_index, INTEGERS_IF_FIRST};

#define COUNT(n) {n, PARAM_COUNT, false, 0}
#define NUMBER(n, v) {n, PARAM_NUMBER, true, v}
#define REDUCE_PARAMS {X, {"axis", PARAM_AXIS, true, 0}, {"keepdims", PARAM_FLAG, true, 0}}

static const OpDef functions[] = {
    {"softmax", NULL, "softmax over the last axis: exp(x - max) / sum of exp(x - max)", 0, {X}, infer_softmax,
     compute_softmax, note_row_sums, explain_softmax, INTEGERS_NEVER},
    {"layernorm", NULL, "LayerNorm over the last axis: (x - mean) / sqrt(var + eps) * gamma + beta", 0,
     {X, {"gamma", PARAM_TENSOR, false, 0}, {"beta", PARAM_TENSOR, false, 0}, NUMBER("eps", 1e-5)},
     infer_layernorm, compute_layernorm, notes_layernorm, explain_layernorm, INTEGERS_NEVER},
    {"batchnorm", NULL, "BatchNorm: each feature normalised over the batch and sequence axes", 0,
     {X, {"gamma", PARAM_TENSOR, false, 0}, {"beta", PARAM_TENSOR, false, 0}, NUMBER("eps", 1e-5)},
     infer_batchnorm, compute_batchnorm, NULL, explain_batchnorm, INTEGERS_NEVER},
    {"sum", NULL, "sum", KERNEL_SUM, REDUCE_PARAMS, infer_reduce, compute_reduce, notes_reduce, explain_reduce,
     INTEGERS_IF_INPUTS},
    {"mean", NULL, "mean", KERNEL_MEAN, REDUCE_PARAMS, infer_reduce, compute_reduce, notes_reduce, explain_reduce,
     INTEGERS_NEVER},
    {"var", NULL, "variance (divide by the count)", KERNEL_VAR, REDUCE_PARAMS, infer_reduce, compute_reduce,
     notes_reduce, explain_reduce, INTEGERS_NEVER},
    {"max", NULL, "maximum", KERNEL_MAX, REDUCE_PARAMS, infer_reduce, compute_reduce, NULL, explain_reduce, INTEGERS_IF_INPUTS},
    {"min", NULL, "minimum", KERNEL_MIN, REDUCE_PARAMS, infer_reduce, compute_reduce, NULL, explain_reduce, INTEGERS_IF_INPUTS},
    {"argmax", NULL, "position of the largest value", KERNEL_ARGMAX,
     {X, {"axis", PARAM_AXIS, true, 0}}, infer_reduce, compute_argmax, NULL, explain_reduce, INTEGERS_ALWAYS},
    {"exp", NULL, "elementwise e^x", KERNEL_EXP, {X}, infer_same, compute_unary, NULL, explain_unary, INTEGERS_NEVER},
    {"log", NULL, "elementwise natural logarithm", KERNEL_LOG, {X}, infer_same, compute_unary, NULL, explain_unary, INTEGERS_NEVER},
    {"sqrt", NULL, "elementwise square root", KERNEL_SQRT, {X}, infer_same, compute_unary, NULL, explain_unary, INTEGERS_NEVER},
    {"abs", NULL, "elementwise absolute value", KERNEL_ABS, {X}, infer_same, compute_unary, NULL, explain_unary, INTEGERS_IF_INPUTS},
    {"relu", NULL, "elementwise max(x, 0)", KERNEL_RELU, {X}, infer_same, compute_unary, NULL, explain_unary, INTEGERS_IF_INPUTS},
    {"gelu", NULL, "elementwise GELU, tanh form: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))",
     KERNEL_GELU, {X}, infer_same, compute_unary, NULL, explain_unary, INTEGERS_NEVER},
    {"tanh", NULL, "elementwise tanh", KERNEL_TANH, {X}, infer_same, compute_unary, NULL, explain_unary, INTEGERS_NEVER},
    {"sin", NULL, "elementwise sine", KERNEL_SIN, {X}, infer_same, compute_unary, NULL, explain_unary, INTEGERS_NEVER},
    {"cos", NULL, "elementwise cosine", KERNEL_COS, {X}, infer_same, compute_unary, NULL, explain_unary, INTEGERS_NEVER},
    {"concat", NULL, "concatenation along an axis", 0,
     {{"x", PARAM_TENSORS, false, 0}, {"axis", PARAM_AXIS, true, 0}}, infer_concat, compute_concat, NULL, explain_concat, INTEGERS_IF_INPUTS},
    {"copy", NULL, "the same values under a new name", 0, {X}, infer_same, compute_copy, NULL, explain_copy, INTEGERS_IF_FIRST},
    {"numel", NULL, "number of elements: the product of the shape", 0, {X}, infer_numel, compute_numel, NULL, explain_numel, INTEGERS_ALWAYS},
    {"split_heads", NULL, "split columns into heads: head h takes columns h*d_head to (h+1)*d_head - 1", 0,
     {X, COUNT("heads")}, infer_split_heads, compute_split_heads, NULL, explain_split_heads, INTEGERS_IF_FIRST},
    {"merge_heads", NULL, "concatenate the heads' columns side by side", 0, {X}, infer_merge_heads,
     compute_merge_heads, NULL, explain_merge_heads, INTEGERS_IF_FIRST},
    {"causal_mask", NULL, "causal mask: 0 where a query may look, -inf at later keys", 0, {COUNT("n")},
     infer_square, compute_causal_mask, notes_causal_mask, explain_causal_mask, INTEGERS_NEVER},
    {"relative_positions", NULL, "relative position i - j of key j from query i", 0, {COUNT("n")},
     infer_square, compute_relative_positions, NULL, explain_relative_positions, INTEGERS_ALWAYS},
    {"arange", NULL, "the positions 0, 1, ..., n-1", 0, {COUNT("n")}, infer_vector, compute_arange, NULL, explain_arange, INTEGERS_ALWAYS},
    {"alibi_slopes", NULL, "ALiBi head slopes 2^(-8k/h) for k = 1..h", 0, {COUNT("h")}, infer_vector,
     compute_alibi_slopes, NULL, explain_alibi_slopes, INTEGERS_NEVER},
    {"sinusoidal", NULL, "sinusoidal position encodings: sin on even, cos on odd dimensions", 0,
     {COUNT("n"), COUNT("d"), NUMBER("base", 10000)}, infer_sinusoidal, compute_sinusoidal, NULL, explain_sinusoidal, INTEGERS_NEVER},
    {"rope", NULL, "rotary position embedding: each pair of dimensions turned by position x frequency", 0,
     {X, {"positions", PARAM_TENSOR, false, 0}, NUMBER("base", 10000)}, infer_rope, compute_rope, NULL, explain_rope, INTEGERS_NEVER},
    {"take", NULL, "look up table entries by index", 0, {{"table", PARAM_TENSOR, false, 0},
     {"indices", PARAM_TENSOR, false, 0}}, infer_take, compute_take, NULL, explain_take, INTEGERS_IF_FIRST},
    {"cross_entropy", NULL, "cross-entropy: -log softmax(logits)[target]", 0,
     {{"logits", PARAM_TENSOR, false, 0}, {"target", PARAM_TENSOR, false, 0}}, infer_cross_entropy,
     compute_cross_entropy, notes_cross_entropy, explain_cross_entropy, INTEGERS_NEVER},
};

const OpDef *ops_find_function(const char *name) {
    for (size_t i = 0; i < ARRAY_LEN(functions); i++)
        if (strcmp(functions[i].name, name) == 0)
            return &functions[i];
    return NULL;
}

const OpDef *ops_binary(char op) {
    const char *symbol = op == '^' ? "**" : (char[2]){op, '\0'};
    for (size_t i = 0; i < ARRAY_LEN(binary_ops); i++)
        if (strcmp(binary_ops[i].symbol, symbol) == 0)
            return &binary_ops[i];
    return NULL;
}

const OpDef *ops_negate(void) {
    return &negate_op;
}

const OpDef *ops_transpose(void) {
    return &transpose_op;
}

const OpDef *ops_index(void) {
    return &index_op;
}

const OpDef *ops_numel(void) {
    return ops_find_function("numel");
}

bool ops_value_from_shapes(const OpDef *op) {
    return op == ops_numel();
}

size_t ops_multiply_adds(const OpDef *op, const Shape *const *inputs, const Shape *out, bool *overflow) {
    *overflow = false;
    if (op != ops_binary('@'))
        return 0;
    size_t size, work;
    const Shape *left = inputs[0];
    size_t k = left->rank ? left->dim[left->rank - 1] : 1;
    if (!shape_size(out, &size) || !util_mul_size(size, k, &work)) {
        *overflow = true;
        return SIZE_MAX;
    }
    return work;
}

size_t ops_function_names(const char **names, size_t cap) {
    size_t n = 0;
    for (size_t i = 0; i < ARRAY_LEN(functions) && n < cap; i++)
        names[n++] = functions[i].name;
    return n;
}
