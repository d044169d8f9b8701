// op_index: picking and joining: indexing x[...], take(table, idx), take_along_axis(x, idx, axis)
// and concat.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "format.h"
#include "kernel_grad.h"
#include "op.h"

// Where the gathered axis of a LIST stands in the result before numpy's rule moves it first:
// after the axes the items before it keep (a whole number keeps none, a new axis adds one).
static size_t unmoved_list_axis(const KernelAxisIndex *index, size_t n_index) {
    size_t at = 0;
    for (size_t i = 0; i < n_index && index[i].kind != KERNEL_INDEX_LIST; i++)
        at += index[i].kind != KERNEL_INDEX_AT;
    return at;
}

// A tensor of positions with several axes (E[ids], ids [batch, n]) gathers as the list of its
// values in reading order, and its axes then stand where that list's one axis stood: the same
// values in the same order, so the kernels work on the shape with the one axis (this one).
static Shape gathered_as_list(const Shape *shape, size_t list_axis, size_t ids_rank) {
    Shape flat = *shape;
    if (ids_rank <= 1 || list_axis == KERNEL_NO_AXIS)
        return flat;
    size_t n = 1;
    for (size_t k = 0; k < ids_rank; k++)
        n *= shape->dim[list_axis + k];
    flat.dim[list_axis] = n;
    memmove(flat.dim + list_axis + 1, shape->dim + list_axis + ids_rank,
            (shape->rank - list_axis - ids_rank) * sizeof(size_t));
    flat.rank = shape->rank - ids_rank + 1;
    return flat;
}

static size_t item_axis(const KernelAxisIndex *index, int item);

// The labels of the ids' axes (out, one per axis of ids) where the ids pick from `from`, the
// labels of an axis of n entries: the one axis of ids longer than 1 (or its last) takes the
// label of each id, when it has none of its own, every id is a whole number in range and from
// labels every entry. False when memory runs out.
static bool labels_of_ids(Arena *arena, const Tensor *ids, const Labels *from, size_t n, Labels *out) {
    const Shape *is = &ids->shape;
    if (!from->items || from->n != n || is->rank == 0 || ids->size == 0)
        return true;
    size_t along = is->rank - 1;
    for (size_t k = 0; k < is->rank; k++)
        if (is->dim[k] > 1) {
            if (is->dim[along] > 1 && k != along)
                return true;  // ids along two axes: one list of labels per axis cannot say it
            along = k;
        }
    if (out[along].items)
        return true;
    for (size_t j = 0; j < ids->size; j++)
        if (!(ids->data[j] >= 0 && ids->data[j] < (double)n && ids->data[j] == floor(ids->data[j])))
            return true;
    const char **items = arena_array(arena, ids->size, sizeof(char *));
    if (!items)
        return false;
    for (size_t j = 0; j < ids->size; j++)
        items[j] = from->items[(size_t)ids->data[j]];
    out[along] = (Labels){items, ids->size};
    return true;
}

// The checker has filled attrs.index (constants) before calling; this derives the shape and
// labels, with a tensor index (attrs.index_input) standing for a list of its size.
static bool infer_index(OpCheck *c) {
    const Shape *a = c->shapes[0];
    OpAttrs *at = &c->attrs;
    size_t n_read = 0;  // items that read an axis of the tensor (None reads none)
    for (size_t i = 0; i < at->n_index; i++)
        n_read += at->index[i].kind != KERNEL_INDEX_NEW;
    ASSERT(n_read <= a->rank);  // the checker refuses more indices than axes, with the lesson's words
    KernelAxisIndex index[KERNEL_MAX_INDEX];
    memcpy(index, at->index, sizeof(index));
    size_t placeholder_n = 0;
    if (at->index_input != OP_NO_INDEX_INPUT) {
        const Shape *is = c->shapes[1];
        placeholder_n = 1;
        for (size_t k = 0; k < is->rank; k++)
            placeholder_n *= is->dim[k];
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
    bool placeholder_list = at->index_input != OP_NO_INDEX_INPUT && index[at->index_input].kind == KERNEL_INDEX_LIST;
    if (placeholder_list)
        for_shape[at->index_input].kind = KERNEL_INDEX_ALL;
    if (!kernel_index_shape(a, for_shape, at->n_index, &c->shape))
        return op_error(c->problem, OP_CALL, "this index does not fit the tensor");
    size_t list_axis = kernel_index_list_axis(index, at->n_index);
    size_t unmoved = unmoved_list_axis(index, at->n_index);
    if (placeholder_list) {
        c->shape.dim[unmoved] = placeholder_n;
        if (list_axis == 0 && unmoved > 0) {
            memmove(c->shape.dim + 1, c->shape.dim, unmoved * sizeof(size_t));
            c->shape.dim[0] = placeholder_n;
        }
        // The index tensor's axes take the place of the list's one axis: E[ids] of ids [2, 3]
        // is [2, 3, d].
        const Shape *is = c->shapes[1];
        if (is->rank > 1) {
            if (c->shape.rank - 1 + is->rank > TENSOR_MAX_RANK) {
                char s[64];
                shape_format(is, s, sizeof(s));
                op_error(c->problem, OP_INPUT(1), "indexing with positions of shape %s would give %zu axes; a tensor has at most %d",
                         s, c->shape.rank - 1 + is->rank, TENSOR_MAX_RANK);
                op_hint(c->problem, "index with fewer axes of positions, or take some axes away first with a whole-number index");
                return false;
            }
            memmove(c->shape.dim + list_axis + is->rank, c->shape.dim + list_axis + 1,
                    (c->shape.rank - list_axis - 1) * sizeof(size_t));
            memcpy(c->shape.dim + list_axis, is->dim, is->rank * sizeof(size_t));
            c->shape.rank += is->rank - 1;
        }
    }
    // Labels: AT drops the axis, RANGE keeps a window, LIST gathers, a tensor list takes its
    // own (below), a new axis has none.
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
                if (!items)
                    return op_out_of_memory(c->problem);
                for (size_t k = 0; k < ix.n_list; k++)
                    items[k] = l->items[ix.list[k]];
                c->out_labels[out] = (Labels){items, ix.n_list};
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
    // The index tensor's axes in place of that axis, with the index tensor's labels: wte[tokens]
    // has one row per token, labelled as tokens is (' cat'), whatever labels wte's rows had.
    // Once the ids are known, an axis of them without labels of its own is labelled by the
    // tokens they pick: E[ids] has the rows of the ids' tokens.
    if (placeholder_list) {
        size_t extra = c->shapes[1]->rank - 1;
        memmove(c->out_labels + list_axis + 1 + extra, c->out_labels + list_axis + 1,
                (c->shape.rank - list_axis - 1 - extra) * sizeof(Labels));
        for (size_t k = 0; k <= extra; k++)
            c->out_labels[list_axis + k] = c->labels[1][k];
    }
    return true;
}

// Once the ids are known, an axis of them without labels of its own is labelled by the tokens
// they pick: E[ids] has the rows of the ids' tokens (the shape rule above gives the ids' axes
// the ids' own labels).
static bool value_labels_index(OpLabels *l) {
    const OpAttrs *at = l->attrs;
    if (at->index_input == OP_NO_INDEX_INPUT || l->in[1]->shape.rank == 0)
        return true;
    KernelAxisIndex index[KERNEL_MAX_INDEX];
    memcpy(index, at->index, sizeof(index));
    index[at->index_input].kind = KERNEL_INDEX_LIST;
    size_t list_axis = kernel_index_list_axis(index, at->n_index);
    size_t axis = item_axis(index, at->index_input);
    return labels_of_ids(l->arena, l->in[1], &l->in_labels[axis], l->in[0]->shape.dim[axis], l->out_labels + list_axis);
}

// The tensor's axis that index item `item` reads: None items before it read none.
static size_t item_axis(const KernelAxisIndex *index, int item) {
    size_t axis = 0;
    for (int i = 0; i < item; i++)
        axis += index[i].kind != KERNEL_INDEX_NEW;
    return axis;
}

static bool compute_index(OpRun *r) {
    KernelAxisIndex index[KERNEL_MAX_INDEX];
    memcpy(index, r->attrs->index, sizeof(index));
    const Tensor *a = r->in[0];
    if (r->attrs->index_input != OP_NO_INDEX_INPUT) {
        int item = r->attrs->index_input;
        size_t axis = item_axis(index, item);
        const Tensor *ix = r->in[1];
        size_t dim = a->shape.dim[axis];
        size_t *list = arena_array(r->arena, ix->size, sizeof(size_t));
        if (!list)
            return op_out_of_memory(r->problem);
        for (size_t k = 0; k < ix->size; k++) {
            double v = ix->data[k];
            if (!(v == floor(v)) || v < -(double)dim || v >= (double)dim) {
                // Say it as a learner sees it: positions[4] is 4, but pos_emb has rows 0 to 3.
                char s[64];
                format_short(v, s, sizeof(s));
                const char *what = axis == 0 ? "rows" : axis == 1 && a->shape.rank == 2 ? "columns" : "entries";
                char at[INDEX_TEXT_MAX] = "";
                if (ix->shape.rank >= 1) {
                    size_t place[TENSOR_MAX_RANK];
                    shape_unflatten(&ix->shape, k, place);
                    index_format(place, ix->shape.rank, at, sizeof(at));
                }
                if (v != floor(v))
                    return op_error(r->problem, OP_INPUT(1), "%s%s is %s, which is not a whole number: it cannot pick one of %s's %s",
                                    r->in_names[1], at, s, r->in_names[0], what);
                if (dim == 0) {
                    op_error(r->problem, OP_INPUT(1), "%s%s is %s, but %s has no %s: axis %zu is empty",
                             r->in_names[1], at, s, r->in_names[0], what, axis);
                    op_hint(r->problem, "an empty axis has nothing to pick; index before slicing it empty");
                    return false;
                }
                op_error(r->problem, OP_INPUT(1), "%s%s is %s, past the end of %s, which has %s 0 to %zu", r->in_names[1], at, s,
                         r->in_names[0], what, dim - 1);
                op_hint(r->problem, "every index must be from 0 to %zu (or -%zu to -1, counting from the end); a table "
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
    Tensor out = *r->out;
    if (r->attrs->index_input != OP_NO_INDEX_INPUT)
        out.shape = gathered_as_list(&out.shape, kernel_index_list_axis(index, r->attrs->n_index), r->in[1]->shape.rank);
    kernel_index(&out, a, index, r->attrs->n_index);
    return true;
}

static void explain_index(OpExplain *e) {
    const Tensor *x = e->in[0];
    const OpAttrs *at = e->attrs;
    // The result's index in the order of the items: numpy's rule may have moved the gathered
    // axis first, so put it back where its item stands.
    KernelAxisIndex items[KERNEL_MAX_INDEX];
    memcpy(items, at->index, sizeof(items));
    if (at->index_input != OP_NO_INDEX_INPUT)  // a tensor of positions gathers like a list
        items[at->index_input].kind = e->in[1]->shape.rank == 0 ? KERNEL_INDEX_AT : KERNEL_INDEX_LIST;
    // Positions with several axes count as one list in reading order: their axes of the
    // result become one place in that list.
    size_t out[TENSOR_MAX_RANK], flat[TENSOR_MAX_RANK];
    memcpy(flat, e->index, sizeof(flat));
    size_t list_axis = kernel_index_list_axis(items, at->n_index);
    if (at->index_input != OP_NO_INDEX_INPUT && e->in[1]->shape.rank > 1) {
        const Shape *is = &e->in[1]->shape;
        flat[list_axis] = shape_flatten(is, e->index + list_axis);
        memmove(flat + list_axis + 1, e->index + list_axis + is->rank,
                (e->out->shape.rank - list_axis - is->rank) * sizeof(size_t));
    }
    memcpy(out, flat, sizeof(out));
    size_t unmoved = unmoved_list_axis(items, at->n_index);
    if (list_axis == 0 && unmoved > 0) {
        memmove(out, out + 1, unmoved * sizeof(size_t));
        out[unmoved] = flat[0];
    }
    size_t src[TENSOR_MAX_RANK];
    size_t o = 0, axis = 0;
    for (size_t i = 0; axis < x->shape.rank; i++) {
        KernelAxisIndex ix = i < at->n_index ? at->index[i] : (KernelAxisIndex){.kind = KERNEL_INDEX_ALL};
        if (at->index_input != OP_NO_INDEX_INPUT && i == (size_t)at->index_input) {
            // An index computed while running (x[ids]): its values are the second input,
            // already checked, negative ones counting from the end.
            const Tensor *ids = e->in[1];
            double v = ids->data[ids->shape.rank ? out[o++] : 0];
            src[axis] = (size_t)(v < 0 ? v + (double)x->shape.dim[axis] : v);
            axis++;
            continue;
        }
        switch (ix.kind) {
        case KERNEL_INDEX_NEW:
            o++;  // a new axis of size 1 reads nothing
            continue;
        case KERNEL_INDEX_AT:
            src[axis] = ix.start;
            break;
        case KERNEL_INDEX_ALL:
            src[axis] = out[o++];
            break;
        case KERNEL_INDEX_RANGE:
            src[axis] = ix.start + out[o++];
            break;
        case KERNEL_INDEX_LIST:
            src[axis] = ix.list ? ix.list[out[o]] : 0;
            o++;
            break;
        }
        axis++;
    }
    StrBuf sb;
    strbuf_init(&sb);
    op_work_lhs(&sb, e);
    op_work_ref(&sb, e->in_names[0], src, x->shape.rank);
    op_work_result(&sb, e);
    op_work_line(e, &sb);
}

static bool infer_take(OpCheck *c) {
    size_t table = 1, idx = 1;
    for (size_t i = 0; i < c->shapes[0]->rank; i++)
        table *= c->shapes[0]->dim[i];
    for (size_t i = 0; i < c->shapes[1]->rank; i++)
        idx *= c->shapes[1]->dim[i];
    if (table == 0 && idx > 0) {
        char sh[64];
        shape_format(c->shapes[0], sh, sizeof(sh));
        op_error(c->problem, OP_INPUT(0), "take from an empty table: %s has no entries to pick", sh);
        op_hint(c->problem, "the table must hold at least one value for an index to point at");
        return false;
    }
    c->shape = *c->shapes[1];
    op_copy_labels(c->out_labels, c->labels[1], c->shape.rank);
    return true;
}

static bool compute_take(OpRun *r) {
    if (!op_check_whole_indices(r, 1, r->in[1], r->in[0]->size, "index",
                                "take counts the table's values in reading order (row by row), from 0"))
        return false;
    kernel_take(r->out, r->in[0], r->in[1]);
    return true;
}

static void explain_take(OpExplain *e) {
    const Tensor *table = e->in[0], *idx = e->in[1];
    size_t k = (size_t)idx->data[e->flat];
    size_t tidx[TENSOR_MAX_RANK];
    shape_unflatten(&table->shape, k, tidx);
    StrBuf sb;
    strbuf_init(&sb);
    op_work_lhs(&sb, e);
    strbuf_printf(&sb, "%s[", e->in_names[0]);
    op_work_ref(&sb, e->in_names[1], e->index, idx->shape.rank);
    strbuf_puts(&sb, "] = ");
    op_work_ref(&sb, e->in_names[0], tidx, table->shape.rank);
    op_work_result(&sb, e);
    op_work_line(e, &sb);
}

// take_along_axis(x, indices, axis), numpy's: indices of x's rank, its sizes broadcasting with
// x's on every other axis. Axes of x keep their labels where x gives the size, the picking axis
// takes the indices' (and the picked entries' own labels once the values are known).
static bool infer_take_along_axis(OpCheck *c) {
    const Shape *x = c->shapes[0], *idx = c->shapes[1];
    if (!c->present[2]) {
        op_error(c->problem, OP_CALL, "take_along_axis picks along one axis, but axis is None");
        op_hint(c->problem, "give the axis, as take_along_axis(x, indices, axis=-1); to count x's values in "
                            "reading order, write take(x, indices)");
        return false;
    }
    size_t axis;
    if (!op_resolve_axis(c, 2, c->constants[2], x->rank, &axis))
        return false;
    char sx[64], si[64];
    shape_format(x, sx, sizeof(sx));
    shape_format(idx, si, sizeof(si));
    if (x->rank != idx->rank) {
        op_error(c->problem, OP_INPUT(1), "the indices have %zu %s, but x has %zu: %s and %s", idx->rank,
                 idx->rank == 1 ? "axis" : "axes", x->rank, si, sx);
        op_hint(c->problem, "give the indices one axis for each of x's, a size of 1 where every line picks the same: "
                            "ids[:, None] picks from each row of a matrix");
        return false;
    }
    if (!kernel_take_along_axis_shape(x, idx, axis, &c->shape)) {
        op_error(c->problem, OP_INPUT(1), "indices of shape %s do not broadcast with x's %s on the axes other than %zu",
                 si, sx, axis);
        op_hint(c->problem, "on every axis but the one picked along, the sizes must be equal, or one of them 1");
        return false;
    }
    for (size_t k = 0; k < x->rank; k++)
        c->out_labels[k] = k != axis && x->dim[k] == c->shape.dim[k] ? c->labels[0][k] : c->labels[1][k];
    c->attrs.axis = (int)axis;
    return true;
}

static bool compute_take_along_axis(OpRun *r) {
    const Tensor *x = r->in[0], *idx = r->in[1];
    size_t axis = (size_t)r->attrs->axis, n = x->shape.dim[axis];
    for (size_t k = 0; k < idx->size; k++) {
        double v = idx->data[k];
        if (v == floor(v) && v >= -(double)n && v < (double)n)
            continue;
        // the indices have x's rank, one axis at least: where the index stands is a place in them
        char s[64], at[INDEX_TEXT_MAX], where[INDEX_TEXT_MAX + 64];
        size_t i[TENSOR_MAX_RANK];
        format_short(v, s, sizeof(s));
        shape_unflatten(&idx->shape, k, i);
        index_format(i, idx->shape.rank, at, sizeof(at));
        snprintf(where, sizeof(where), " (at %s of %s)", at, r->in_names[1]);
        if (v != floor(v))
            op_error(r->problem, OP_INPUT(1), "index %s%s is not a whole number", s, where);
        else if (n == 0)
            op_error(r->problem, OP_INPUT(1), "index %s%s points into nothing: axis %zu of %s has size 0", s, where,
                     axis, r->in_names[0]);
        else
            op_error(r->problem, OP_INPUT(1), "index %s%s is out of range: axis %zu of %s has size %zu, so an index "
                     "runs from 0 to %zu (or -%zu to -1)", s, where, axis, r->in_names[0], n, n - 1, n);
        op_hint(r->problem, "an index is a position along axis %zu of %s: 0 the first, -1 the last", axis,
                r->in_names[0]);
        return false;
    }
    kernel_take_along_axis(r->out, x, idx, axis);
    return true;
}

// Labels follow the picked entries when every line picks the same ones: indices whose only size
// above 1 is along the axis (topk of a vector picks its labels the same way).
static bool value_labels_take_along_axis(OpLabels *l) {
    const Tensor *idx = l->in[1];
    size_t axis = (size_t)l->attrs->axis, n = l->in[0]->shape.dim[axis], k = idx->shape.dim[axis];
    const Labels *from = &l->in_labels[axis];
    if (!from->items || from->n != n || k == 0 || idx->size != k || l->out_labels[axis].items)
        return true;
    const char **items = arena_array(l->arena, k ? k : 1, sizeof(char *));
    for (size_t j = 0; items && j < k; j++)
        items[j] = from->items[(size_t)(idx->data[j] < 0 ? idx->data[j] + (double)n : idx->data[j])];
    if (items)
        l->out_labels[axis] = (Labels){items, k};
    return items != NULL;
}

// out[i, j] = x[i, ids[i, j]] = x[i, 2]: the index read, then the entry it names.
static void explain_take_along_axis(OpExplain *e) {
    const Tensor *x = e->in[0], *idx = e->in[1];
    size_t axis = (size_t)e->attrs->axis, at_idx[TENSOR_MAX_RANK], at_x[TENSOR_MAX_RANK];
    op_broadcast_index(idx, e->out, e->index, at_idx);
    op_broadcast_index(x, e->out, e->index, at_x);
    double v = idx->data[shape_flatten(&idx->shape, at_idx)];
    StrBuf sb;
    strbuf_init(&sb);
    op_work_lhs(&sb, e);
    strbuf_printf(&sb, "%s[", e->in_names[0]);
    for (size_t k = 0; k < x->shape.rank; k++) {
        strbuf_puts(&sb, k ? ", " : "");
        if (k == axis)
            op_work_ref(&sb, e->in_names[1], at_idx, idx->shape.rank);
        else
            strbuf_printf(&sb, "%zu", at_x[k]);
    }
    strbuf_puts(&sb, "] = ");
    at_x[axis] = (size_t)(v < 0 ? v + (double)x->shape.dim[axis] : v);
    op_work_ref(&sb, e->in_names[0], at_x, x->shape.rank);
    op_work_result(&sb, e);
    op_work_line(e, &sb);
}

static bool infer_concat(OpCheck *c) {
    if (c->n_inputs < 2) {
        op_error(c->problem, OP_CALL, "concat joins two or more tensors, but got %zu", c->n_inputs);
        op_hint(c->problem, "write concat(a, b) or concat(a, b, axis=1)");
        return false;
    }
    size_t rank = c->shapes[0]->rank;
    if (rank == 0)
        return op_error(c->problem, OP_INPUT(0), "concat cannot join scalars; write a list instead, as in [a, b]");
    size_t axis;
    if (!op_resolve_axis(c, 1, c->present[1] ? c->constants[1] : 0, rank, &axis))
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
            shape_format(c->shapes[0], a, sizeof(a));
            shape_format(s, b, sizeof(b));
            op_error(c->problem, OP_INPUT(i), "cannot concat %s with %s along axis %zu", a, b, axis);
            op_hint(c->problem, "every axis except axis %zu must have the same size", axis);
            return false;
        }
    }
    bool fits = kernel_concat_shape(c->shapes, c->n_inputs, axis, &c->shape);
    ASSERT(fits);  // every other axis was compared above
    op_copy_labels(c->out_labels, c->labels[0], rank);
    // Labels along the joined axis survive only when every part has them.
    bool all = true;
    for (size_t i = 0; i < c->n_inputs; i++)
        all = all && c->labels[i][axis].items;
    c->out_labels[axis] = (Labels){0};
    if (all) {
        const char **items = arena_array(c->arena, c->shape.dim[axis], sizeof(char *));
        if (!items)
            return op_out_of_memory(c->problem);
        size_t k = 0;
        for (size_t i = 0; i < c->n_inputs; i++)
            for (size_t j = 0; j < c->labels[i][axis].n; j++)
                items[k++] = c->labels[i][axis].items[j];
        c->out_labels[axis] = (Labels){items, k};
    }
    return true;
}

static bool compute_concat(OpRun *r) {
    kernel_concat(r->out, r->in, r->n_in, (size_t)r->attrs->axis);
    return true;
}

static void explain_concat(OpExplain *e) {
    size_t axis = (size_t)e->attrs->axis;
    size_t pos = e->index[axis], part = 0;
    while (part + 1 < e->n_in && pos >= e->in[part]->shape.dim[axis])
        pos -= e->in[part++]->shape.dim[axis];
    size_t idx[TENSOR_MAX_RANK];
    memcpy(idx, e->index, sizeof(idx));
    idx[axis] = pos;
    StrBuf sb;
    strbuf_init(&sb);
    op_work_lhs(&sb, e);
    op_work_ref(&sb, e->in_names[part], idx, e->out->shape.rank);
    strbuf_printf(&sb, " (part %zu of %zu)", part + 1, e->n_in);
    op_work_result(&sb, e);
    op_work_line(e, &sb);
}

// ---------------------------------------------------------------- the table

// The index the forward pass used: a tensor index (E[ids]) is read again from its values,
// which the forward pass has already checked to be whole and in range.
static bool resolve_index(const OpAttrs *attrs, const Tensor *const *in, KernelAxisIndex *index, size_t **list) {
    memcpy(index, attrs->index, sizeof(attrs->index));
    *list = NULL;
    if (attrs->index_input == OP_NO_INDEX_INPUT)
        return true;
    int item = attrs->index_input;
    const Tensor *ix = in[1];
    double dim = (double)in[0]->shape.dim[item_axis(index, item)];
    if (!(*list = util_calloc(ix->size, sizeof(size_t))))
        return false;
    for (size_t k = 0; k < ix->size; k++)
        (*list)[k] = (size_t)(ix->data[k] < 0 ? ix->data[k] + dim : ix->data[k]);
    if (ix->shape.rank == 0)
        index[item] = (KernelAxisIndex){.kind = KERNEL_INDEX_AT, .start = (*list)[0]};
    else
        index[item] = (KernelAxisIndex){.kind = KERNEL_INDEX_LIST, .list = *list, .n_list = ix->size};
    return true;
}

// The gradient of a result that indexing gave, with the shape the kernels gathered into.
static Tensor gathered_gradient(const Tensor *dout, const KernelAxisIndex *index, size_t n_index, const Tensor *ids) {
    Tensor flat = *dout;
    if (ids)
        flat.shape = gathered_as_list(&dout->shape, kernel_index_list_axis(index, n_index), ids->shape.rank);
    return flat;
}

static bool grad_index(OpGrad *g) {
    KernelAxisIndex index[KERNEL_MAX_INDEX];
    size_t *list;
    if (!resolve_index(g->attrs, g->in, index, &list))
        return false;
    const Tensor *ids = g->attrs->index_input != OP_NO_INDEX_INPUT ? g->in[1] : NULL;
    Tensor dout = gathered_gradient(g->dout, index, g->attrs->n_index, ids);
    kernel_grad_index(g->din, &dout, index, g->attrs->n_index);
    util_free(list);
    return true;
}

// The share of one entry of the indexed tensor (or the table) is the sum of the gradient at
// every place that took it: found by indexing a tensor of the entries' own positions.
static void explain_grad_gather(OpGradWork *w, bool take) {
    const Tensor *a = w->in[0];
    KernelAxisIndex index[KERNEL_MAX_INDEX];
    size_t *list = NULL;
    bool resolved = take || resolve_index(w->attrs, w->in, index, &list);
    // The places are counted in reading order, the same for the gathered shape and dout's.
    Shape gathered = w->dout->shape;
    if (resolved && !take && w->attrs->index_input != OP_NO_INDEX_INPUT)
        gathered = gathered_gradient(w->dout, index, w->attrs->n_index, w->in[1]).shape;
    Tensor *where = tensor_create(&a->shape), *from = resolved ? tensor_create(&gathered) : NULL;
    bool ok = where && from;
    if (ok) {
        for (size_t i = 0; i < where->size; i++)
            where->data[i] = (double)i;
        if (take)
            kernel_take(from, where, w->in[1]);
        else
            kernel_index(from, where, index, w->attrs->n_index);
        size_t found = 0, idx[TENSOR_MAX_RANK];
        for (size_t o = 0; o < from->size; o++)
            if (from->data[o] == (double)w->flat) {
                shape_unflatten(&w->dout->shape, o, idx);
                strbuf_puts(w->sb, found++ ? " + " : "");
                op_work_ref(w->sb, w->dout_name, idx, w->dout->shape.rank);
            }
        strbuf_puts(w->sb, found ? " = " : "nothing took this entry: ");
    } else {
        w->sb->failed = true;  // out of memory: the line would leave out where the share comes from
    }
    op_grad_num(w, w->share->data[w->flat]);
    util_free(list);
    tensor_destroy(where);
    tensor_destroy(from);
}

static void explain_grad_index(OpGradWork *w) {
    explain_grad_gather(w, false);
}

static void explain_grad_take(OpGradWork *w) {
    explain_grad_gather(w, true);
}

static bool grad_take(OpGrad *g) {
    kernel_grad_take(g->din, g->dout, g->in[1]);
    return true;
}

static bool grad_take_along_axis(OpGrad *g) {
    kernel_grad_take_along_axis(g->din, g->dout, g->in[1], (size_t)g->attrs->axis);
    return true;
}

static bool grad_concat(OpGrad *g) {
    size_t axis = (size_t)g->attrs->axis, offset = 0;
    for (size_t p = 0; p < g->input; p++)
        offset += g->in[p]->shape.dim[axis];
    kernel_grad_concat(g->din, offset, g->dout, axis);
    return true;
}

static const OpDef ops[] = {
    {.name = "index", .syntax = OP_INDEXING, .token = '[', .symbol = "[]",
     .about = "indexing: pick rows, columns or ranges", .params = {OP_X, OP_X}, .infer = infer_index,
     .compute = compute_index, .explain = explain_index, .integers = INTEGERS_IF_FIRST, .grad = grad_index,
     .no_grad = OP_NO_GRAD(1), .grad_formula = {"%g put back in the places %y took from %0"},
     .explain_grad = explain_grad_index, .value_labels = value_labels_index, .keeps_ids = true},
    {.name = "take", .keeps_ids = true, .about = "look up table entries by index",
     .params = {OP_TENSOR("table"), OP_TENSOR("indices")}, .infer = infer_take, .compute = compute_take,
     .explain = explain_take, .integers = INTEGERS_IF_FIRST, .grad = grad_take, .no_grad = OP_NO_GRAD(1),
     .grad_formula = {"%g added into the entries taken"}, .explain_grad = explain_grad_take},
    {.name = "take_along_axis", .keeps_ids = true,
     .about = "each line along the axis picks the entries its indices name, as numpy's take_along_axis",
     .params = {OP_X, OP_TENSOR("indices"), {"axis", PARAM_AXIS, false, 0}}, .infer = infer_take_along_axis,
     .compute = compute_take_along_axis, .value_labels = value_labels_take_along_axis,
     .explain = explain_take_along_axis, .integers = INTEGERS_IF_FIRST, .grad = grad_take_along_axis,
     .no_grad = OP_NO_GRAD(1), .grad_formula = {"%g added into the entries of %0 it took"}},
    {.name = "concat", .about = "concatenation along an axis",
     .params = {{"x", PARAM_TENSORS, false, 0}, {"axis", PARAM_AXIS, true, 0}}, .infer = infer_concat,
     .compute = compute_concat, .explain = explain_concat, .integers = INTEGERS_IF_INPUTS, .grad = grad_concat,
     .grad_formula = {"%0's block of %g", "%1's block of %g", "%2's block of %g"}},
};

const OpFamily op_family_index = OP_FAMILY(ops);
