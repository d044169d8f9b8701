// check_index: an indexing, x[...], as numpy writes it: whole numbers, slices, None, one list
// of indices or one tensor of them, checked against the tensor's axes.
#include "check_index.h"

#include <string.h>

#include "check_call.h"
#include "check_names.h"
#include "ops.h"

// An index item that is a whole number known before running, normalised against dim.
static bool const_index(Checker *c, const Expr *e, size_t dim, bool is_stop, size_t axis, size_t *out) {
    double v;
    if (!check_const_eval(c, e, &v))
        return false;
    if (!check_is_whole(v))
        return check_expr_error(c, e, "an index must be a whole number, not %g", v);
    double limit = is_stop ? (double)dim : (double)dim - 1;
    double w = v < 0 ? v + (double)dim : v;
    if (w < 0 || w > limit) {
        if (dim == 0)
            return check_expr_error(c, e, "axis %zu is empty: there is nothing to index", axis);
        // A slice bound may also be the size itself: X[0:3] takes all 3 rows. A bound written
        // as a name says what it is: "n (numel(tokens) = 65)" reads as a text too long.
        size_t named = e->kind == EXPR_NAME ? check_find_name(c, e->name) : NO_NODE;
        const char *how = named != NO_NODE && named != FAILED_NODE ? c->plan->nodes[named].expr_text : NULL;
        if (e->kind == EXPR_NAME && how)
            check_expr_error(c, e, "%s %s (%s = %g) is out of range for axis %zu, which has %zu entries",
                             is_stop ? "slice bound" : "index", e->name, how, v, axis, dim);
        else if (e->kind == EXPR_NAME)
            check_expr_error(c, e, "%s %s (%g) is out of range for axis %zu, which has %zu entries",
                             is_stop ? "slice bound" : "index", e->name, v, axis, dim);
        else
            check_expr_error(c, e, "%s %g is out of range for axis %zu, which has %zu entries",
                             is_stop ? "slice bound" : "index", v, axis, dim);
        if (is_stop)
            diag_hint(c->diag, "a slice bound is 0 to %zu (or -%zu to -1 from the end)", dim, dim);
        else
            diag_hint(c->diag, "valid indices are 0 to %zu (or -%zu to -1 from the end)", dim - 1, dim);
        return false;
    }
    *out = (size_t)w;
    return true;
}

// numpy pairs two lists up element by element, which reads like something else: refused.
static size_t two_lists(Checker *c, const Expr *item) {
    check_expr_error(c, item, "only one list of indices is allowed in one indexing");
    diag_hint(c->diag, "numpy would pair the lists up (X[[0, 1], [2, 3]] is X[0, 2] and X[1, 3]); to pick rows "
                       "and then columns, index twice: X[[0, 1]][:, [2, 3]]");
    return NO_NODE;
}

// None as an index item: a new axis, as numpy writes it, unless the lesson names something None.
static bool is_new_axis(Checker *c, const Expr *item) {
    return item->kind == EXPR_NAME && strcmp(item->name, "None") == 0 && check_find_name(c, "None") == NO_NODE;
}

size_t check_compile_index(Checker *c, const Expr *e) {
    size_t target = check_compile(c, e->args[0]);
    if (target == NO_NODE)
        return NO_NODE;
    const Shape shape = c->plan->nodes[target].shape;
    OpCheck chk = {0};
    CallSite site = {.call = e, .inputs = {e->args[0]}};
    chk.attrs.index_input = OP_NO_INDEX_INPUT;
    size_t inputs[2] = {target, NO_NODE};
    size_t n_items = e->n_args - 1;
    // None, as numpy writes it, adds an axis of size 1 (x[:, None]) and reads none.
    size_t n_new = 0;
    for (size_t i = 0; i < n_items; i++)
        n_new += is_new_axis(c, e->args[i + 1]);
    if (n_new > TENSOR_MAX_RANK) {
        check_expr_error(c, e, "%zu new axes (None): a tensor has at most %d axes", n_new, TENSOR_MAX_RANK);
        diag_hint(c->diag, "add fewer axes with None");
        return NO_NODE;
    }
    if (n_items - n_new > shape.rank) {
        char s[64];
        shape_format(&shape, s, sizeof(s));
        if (shape.rank == 0) {
            check_expr_error(c, e, "this is a single number (shape []): it has no axes to index");
            diag_hint(c->diag, "only lists and matrices take an index, as in X[0]; None adds an axis (X[None])");
        } else {
            check_expr_error(c, e, "%zu indices for a tensor of shape %s, which has %zu ax%s", n_items - n_new, s,
                             shape.rank, shape.rank == 1 ? "is" : "es");
            diag_hint(c->diag, "give at most one index per axis (None, which adds an axis, does not count)");
        }
        return NO_NODE;
    }
    size_t axis = 0;  // the tensor's axis the next item reads
    for (size_t i = 0; i < n_items; i++, axis++) {
        const Expr *item = e->args[i + 1];
        KernelAxisIndex *ix = &chk.attrs.index[i];
        if (is_new_axis(c, item)) {
            ix->kind = KERNEL_INDEX_NEW;
            axis--;
            continue;
        }
        size_t dim = shape.dim[axis];
        if (item->kind == EXPR_SLICE) {
            ix->kind = KERNEL_INDEX_RANGE;
            ix->start = 0;
            ix->stop = dim;
            if (item->args[0] && !const_index(c, item->args[0], dim, true, axis, &ix->start)) {
                if (!check_already_explained(c))
                    check_expr_error(c, item->args[0], "a slice bound must be a whole number known before running");
                return NO_NODE;
            }
            if (item->args[1] && !const_index(c, item->args[1], dim, true, axis, &ix->stop)) {
                if (!check_already_explained(c))
                    check_expr_error(c, item->args[1], "a slice bound must be a whole number known before running");
                return NO_NODE;
            }
            if (ix->stop < ix->start) {
                check_expr_error(c, item, "this slice is empty: it stops (%zu) before it starts (%zu)", ix->stop,
                                 ix->start);
                return NO_NODE;
            }
            if (!item->args[0] && !item->args[1])
                ix->kind = KERNEL_INDEX_ALL;
            continue;
        }
        if (item->kind == EXPR_LIST) {
            size_t *list = arena_array(c->plan->arena, item->n_args, sizeof(size_t));
            if (!list) {
                diag_out_of_memory(c->diag);
                return NO_NODE;
            }
            for (size_t k = 0; k < item->n_args; k++) {
                if (!const_index(c, item->args[k], dim, false, axis, &list[k])) {
                    if (!check_already_explained(c))
                        check_expr_error(c, item->args[k], "a list of indices holds whole numbers");
                    return NO_NODE;
                }
            }
            if (chk.attrs.index_input != OP_NO_INDEX_INPUT) {
                return two_lists(c, item);
            }
            ix->kind = KERNEL_INDEX_LIST;
            ix->list = list;
            ix->n_list = item->n_args;
            for (size_t k = 0; k < i; k++)
                if (chk.attrs.index[k].kind == KERNEL_INDEX_LIST) {
                    return two_lists(c, item);
                }
            continue;
        }
        double v;
        if (check_const_eval(c, item, &v)) {
            ix->kind = KERNEL_INDEX_AT;
            if (!const_index(c, item, dim, false, axis, &ix->start))
                return NO_NODE;
            continue;
        }
        // An index computed by an expression: its values are known only while running.
        if (chk.attrs.index_input != OP_NO_INDEX_INPUT) {
            check_expr_error(c, item, "only one index in an indexing can be a tensor");
            diag_hint(c->diag, "index with one tensor at a time, in two steps: X[ids][:, cols]");
            return NO_NODE;
        }
        for (size_t k = 0; k < i; k++)
            if (chk.attrs.index[k].kind == KERNEL_INDEX_LIST) {
                return two_lists(c, item);
            }
        size_t ixnode = check_compile(c, item);
        if (ixnode == NO_NODE)
            return NO_NODE;
        chk.attrs.index_input = (int)i;
        inputs[1] = ixnode;
        site.inputs[1] = item;
    }
    chk.attrs.n_index = n_items;
    // Whole numbers take axes away, None adds them: at most TENSOR_MAX_RANK may remain.
    size_t removed = 0;
    for (size_t i = 0; i < n_items; i++)
        removed += chk.attrs.index[i].kind == KERNEL_INDEX_AT ||
                   ((int)i == chk.attrs.index_input && c->plan->nodes[inputs[1]].shape.rank == 0);
    if (shape.rank + n_new - removed > TENSOR_MAX_RANK) {
        check_expr_error(c, e, "the result would have %zu axes; a tensor has at most %d", shape.rank + n_new - removed,
                         TENSOR_MAX_RANK);
        diag_hint(c->diag, "add fewer axes with None, or take some away with a whole-number index");
        return NO_NODE;
    }
    return check_add_op(c, ops_operator(OP_INDEXING, '['), inputs, inputs[1] == NO_NODE ? 1 : 2, &chk, &site, e);
}

