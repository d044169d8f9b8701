// op_sort: each last-axis row in order (sort, argsort) and its k largest (topk, argtopk), by the
// order kernel_sort.h states: ties keep their order, nan counts as the largest.
#include <string.h>

#include "kernel_sort.h"
#include "op.h"

// The result has x's shape, its last axis k long (topk) or n long (sort).
static bool infer_sort(OpCheck *c) {
    const Shape *x = c->shapes[0];
    KernelSort kind = (KernelSort)c->op->variant;
    if (x->rank == 0) {
        op_error(c->problem, OP_INPUT(0), "%s needs at least one axis: a single number has nothing to order",
                 c->op->name);
        op_hint(c->problem, "give it a row of numbers, as in %s([3, 1, 2]%s)", c->op->name,
                kind == KERNEL_TOPK || kind == KERNEL_ARGTOPK ? ", 2" : "");
        return false;
    }
    size_t n = x->dim[x->rank - 1], k = n;
    if (kind == KERNEL_TOPK || kind == KERNEL_ARGTOPK) {
        k = (size_t)c->constants[1];
        if (k > n) {
            op_error(c->problem, OP_PARAM(1), "k = %zu, but each row has only %zu values to choose from", k, n);
            op_hint(c->problem, "k may be at most the size of the last axis, %zu", n);
            return false;
        }
    }
    c->attrs.count = k;
    c->shape = *x;
    c->shape.dim[x->rank - 1] = k;
    op_copy_labels(c->out_labels, c->labels[0], x->rank - 1);
    return true;
}

static bool compute_sort(OpRun *r) {
    if (!kernel_sort(r->out, r->in[0], (KernelSort)r->op->variant, r->attrs->count))
        return op_out_of_memory(r->problem);
    return true;
}

// out[..., j] is the row's j-th in the order: its value and where it came from, read back
// from the row (for positions, the result itself).
static void explain_sort(OpExplain *e) {
    KernelSort kind = (KernelSort)e->op->variant;
    const Tensor *x = e->in[0];
    size_t rank = x->shape.rank, n = x->shape.dim[rank - 1], k = e->attrs->count, j = e->index[rank - 1];
    size_t row = e->flat / k;
    bool positions = kind == KERNEL_ARGSORT || kind == KERNEL_ARGTOPK;
    bool largest = kind == KERNEL_TOPK || kind == KERNEL_ARGTOPK;
    // where the j-th came from: the result for positions, else found again by its rank
    Tensor *order = NULL;
    size_t from = 0;
    if (positions) {
        from = (size_t)e->out->data[e->flat];
    } else {
        Shape s = x->shape;
        s.dim[rank - 1] = k;
        order = tensor_create(&s);
        if (!order || !kernel_sort(order, x, largest ? KERNEL_ARGTOPK : KERNEL_ARGSORT, k)) {
            tensor_destroy(order);
            e->failed = true;
            return;
        }
        from = (size_t)order->data[e->flat];
        tensor_destroy(order);
    }
    size_t idx[TENSOR_MAX_RANK];
    memcpy(idx, e->index, sizeof(idx));
    idx[rank - 1] = from;
    size_t place = j + 1;
    const char *suffix = place % 100 / 10 == 1 ? "th" : place % 10 == 1 ? "st" : place % 10 == 2 ? "nd" :
                         place % 10 == 3 ? "rd" : "th";
    StrBuf sb;
    strbuf_init(&sb);
    op_work_lhs(&sb, e);
    strbuf_printf(&sb, "%s%zu%s %s, ", positions ? "position of the " : "the ", place, suffix,
                  largest ? "largest" : "smallest");
    op_work_ref(&sb, e->in_names[0], idx, rank);
    if (positions) {
        strbuf_puts(&sb, " (");
        op_work_num(&sb, e, x, x->data[row * n + from]);
        strbuf_putc(&sb, ')');
    }
    op_work_result(&sb, e);
    op_work_line(e, &sb);
}

// A vector's labels follow its values: the entries picked, in their new order, keep their
// labels (the ten likeliest of probs labelled by the vocabulary are labelled by their tokens).
// A matrix's rows each pick other entries, which one list of labels cannot say; a vector whose
// labels are fewer or more than its values (a given's list of the wrong length, shown by
// position) has none to give.
static bool value_labels_sort(OpLabels *l) {
    const Tensor *x = l->in[0];
    const Labels *from = &l->in_labels[0];
    if (x->shape.rank != 1 || !from->items || from->n != x->shape.dim[0])
        return true;
    KernelSort kind = (KernelSort)l->op->variant;
    size_t k = l->out->size;
    const Tensor *positions = l->out;
    Tensor *order = NULL;
    if (kind == KERNEL_SORT || kind == KERNEL_TOPK) {
        order = tensor_create(&l->out->shape);
        if (!order || !kernel_sort(order, x, kind == KERNEL_TOPK ? KERNEL_ARGTOPK : KERNEL_ARGSORT, k)) {
            tensor_destroy(order);
            return false;
        }
        positions = order;
    }
    const char **items = arena_array(l->arena, k ? k : 1, sizeof(char *));
    for (size_t j = 0; items && j < k; j++)
        items[j] = from->items[(size_t)positions->data[j]];
    tensor_destroy(order);
    if (items)
        l->out_labels[0] = (Labels){items, k};
    return items != NULL;
}

static bool grad_sort(OpGrad *g) {
    return kernel_grad_sort(g->din, g->dout, g->in[0], (KernelSort)g->op->variant, g->attrs->count);
}

static const OpDef ops[] = {
    {.name = "sort", .keeps_ids = true, .about = "each row (last axis) smallest first; equal values keep their order", .variant = KERNEL_SORT,
     .params = {OP_X}, .infer = infer_sort, .compute = compute_sort,
     .value_labels = value_labels_sort, .explain = explain_sort,
     .integers = INTEGERS_IF_FIRST, .grad = grad_sort, .grad_formula = {"%g sent back to where each value came from"}},
    {.name = "argsort", .ids_along_last = true, .about = "the positions that put each row smallest first (equal values in order)",
     .variant = KERNEL_ARGSORT, .params = {OP_X}, .infer = infer_sort, .compute = compute_sort,
     .value_labels = value_labels_sort, .explain = explain_sort, .integers = INTEGERS_ALWAYS},
    {.name = "topk", .keeps_ids = true, .about = "the k largest of each row, largest first; of equal values the earlier",
     .variant = KERNEL_TOPK, .params = {OP_X, OP_COUNT("k")}, .infer = infer_sort, .compute = compute_sort,
     .value_labels = value_labels_sort, .explain = explain_sort, .integers = INTEGERS_IF_FIRST, .grad = grad_sort,
     .grad_formula = {"%g sent back to where each value came from"}},
    {.name = "argtopk", .ids_along_last = true, .about = "the positions of the k largest of each row, largest first",
     .variant = KERNEL_ARGTOPK, .params = {OP_X, OP_COUNT("k")}, .infer = infer_sort, .compute = compute_sort,
     .value_labels = value_labels_sort, .explain = explain_sort, .integers = INTEGERS_ALWAYS},
};

const OpFamily op_family_sort = OP_FAMILY(ops);
