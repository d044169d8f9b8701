// in_place: which stages are read in place, and their values.
#include "in_place.h"

#include <math.h>

#include "eval.h"
#include "fast_ops.h"

static bool all_finite(const double *v, size_t n) {
    for (size_t k = 0; k < n; k++)
        if (!isfinite(v[k]))
            return false;
    return true;
}

// Each node's NodeMode (and merge). One walk from the last node back, counting each node's
// readers as it passes them: a node's readers all come after it, so its counts are complete
// when the walk reaches it. Nothing before the latest gradient is read in place: the
// finite-difference check computes any node before it again from its inputs. False when
// memory runs out.
static bool plan_modes(const Plan *plan, const bool *keep, const bool *explained, InPlace *ip) {
    size_t n = plan->n_nodes, gradient = 0;  // one past the latest gradient
    for (size_t j = 0; j < n; j++)
        if (plan->nodes[j].kind == PLAN_GRAD)
            gradient = j + 1;
    // how many nodes read each node, how many of those in place
    size_t *readers = util_calloc(n + 1, sizeof(size_t)), *in_place = util_calloc(n + 1, sizeof(size_t));
    bool ok = readers && in_place;
    for (size_t k = 0; ok && k < n; k++)
        ip->merge[k] = SIZE_MAX;
    for (size_t k = n; ok && k-- > 0;) {
        const PlanNode *v = &plan->nodes[k];
        const FastOp *f = fast_op(v->kind == PLAN_OP ? v->op : NULL);
        ip->mode[k] = MODE_COMPUTE;
        if (k >= gradient && v->kind == PLAN_OP && v->has_values && !v->is_count && !keep[k] && !explained[k]) {
            const PlanNode *x = v->n_args ? &plan->nodes[v->args[0]] : NULL;
            if (f->view && x && x->shape.rank >= 2 && !x->is_count && readers[k] && in_place[k] == readers[k])
                ip->mode[k] = MODE_VIEW;
            else if (f->reads_views && readers[k] == 1 && ip->merge[k] != SIZE_MAX)
                ip->mode[k] = MODE_INTO;
        }
        bool reads_in_place = ip->mode[k] == MODE_VIEW || (f->reads_views && !explained[k]);
        bool merges = f->input_steps && v->has_values && !explained[k];
        for (size_t a = 0; a < v->n_args; a++) {
            readers[v->args[a]]++;
            in_place[v->args[a]] += reads_in_place;
            if (merges)
                ip->merge[v->args[a]] = k;
        }
    }
    util_free(readers);
    util_free(in_place);
    return ok;
}

bool in_place_init(InPlace *ip, const Plan *plan, const bool *keep, const bool *explained) {
    size_t n = plan->n_nodes;
    ip->mode = util_calloc(n + 1, sizeof(NodeMode));
    ip->merge = util_calloc(n + 1, sizeof(size_t));
    ip->pending = util_calloc(n + 1, sizeof(Tensor *));
    bool ok = ip->mode && ip->merge && ip->pending && plan_modes(plan, keep, explained, ip);
    if (!ok)
        in_place_finish(ip, plan);
    return ok;
}

void in_place_finish(InPlace *ip, const Plan *plan) {
    for (size_t k = 0; ip->pending && k < plan->n_nodes; k++)
        tensor_destroy(ip->pending[k]);
    util_free(ip->pending);
    util_free(ip->merge);
    util_free(ip->mode);
    *ip = (InPlace){0};
}

// Node i in place: a view of its input, when that holds only finite values. NULL with *made
// false to compute it as usual instead.
static Tensor *view_value(const ScheduleNode *sn, bool *made) {
    const PlanNode *n = &sn->plan->nodes[sn->i];
    const Tensor *x = sn->trace->tensors[n->args[0]];
    // a view's values were all finite when it was made
    if (!x->view && !all_finite(x->data, x->size))
        return NULL;
    *made = true;
    plan_operands(n, sn->trace->tensors, sn->in);
    size_t x_step[TENSOR_MAX_RANK], step[TENSOR_MAX_RANK];
    tensor_steps(x, x_step);
    fast_op(n->op)->view(&x->shape, x_step, &n->attrs, step);
    Tensor *out = tensor_create_view(&n->shape, x->view ? x->view : x->data, step);
    if (!out)
        diag_out_of_memory(sn->diag);
    sn->trace->n_in_place += out != NULL;
    return out;
}

// Product i written into the result of its one reader, merge_heads, made here and held until
// that node runs. When a value is not finite the product gets values of its own instead.
static Tensor *into_value(InPlace *ip, const ScheduleNode *sn) {
    const Plan *plan = sn->plan;
    size_t i = sn->i;
    const PlanNode *n = &plan->nodes[i];
    size_t q = ip->merge[i];
    size_t step[TENSOR_MAX_RANK];
    fast_op(plan->nodes[q].op)->input_steps(&n->shape, step);
    Tensor *merged = tensor_create(&plan->nodes[q].shape);
    Tensor *out = merged ? tensor_create_view(&n->shape, merged->data, step) : NULL;
    Tensor *own = NULL;
    if (!out) {
        tensor_destroy(merged);
        diag_out_of_memory(sn->diag);
        return NULL;
    }
    if (!eval_op_into(plan, i, sn->trace->tensors, sn->in, out, sn->trace->arena, sn->diag))
        goto fail;
    if (all_finite(merged->data, merged->size)) {
        ip->pending[q] = merged;
        sn->trace->n_in_place++;
        return out;
    }
    if (!(own = tensor_from_view(out))) {
        diag_out_of_memory(sn->diag);
        goto fail;
    }
    tensor_destroy(out);
    tensor_destroy(merged);
    return own;
fail:
    tensor_destroy(out);
    tensor_destroy(merged);
    return NULL;
}

Tensor *in_place_value(InPlace *ip, const ScheduleNode *sn, bool *made) {
    const PlanNode *n = &sn->plan->nodes[sn->i];
    *made = false;
    if (ip->pending[sn->i]) {
        Tensor *out = ip->pending[sn->i];
        ip->pending[sn->i] = NULL;
        plan_operands(n, sn->trace->tensors, sn->in);
        *made = true;
        return out;
    }
    if (ip->mode[sn->i] == MODE_VIEW)
        return view_value(sn, made);
    if (ip->mode[sn->i] == MODE_INTO) {
        *made = true;
        return into_value(ip, sn);
    }
    return NULL;
}
