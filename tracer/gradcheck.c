// gradcheck: every gradient stage checked against central finite differences of the forward
// pass, run again from the moved tensor to y: the note under each gradient in the trace.
#include "gradcheck.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "eval.h"
#include "format.h"
#include "util.h"

// Does operation u move when the nodes marked dirty move? Marks it when it does.
static bool moves(const Plan *plan, size_t u, bool *dirty) {
    const PlanNode *n = &plan->nodes[u];
    if (n->kind != PLAN_OP)
        return false;
    for (size_t k = 0; k < n->n_args && !dirty[u]; k++)
        dirty[u] = dirty[n->args[k]];
    return dirty[u];
}

// y computed again with node v's element e moved by h: every node between v and y that
// depends on v is recomputed; the rest keep their values. The moved tensor and the nodes
// recomputed are held in own, made on the first pass and written whole again by each one
// after (as eval_node makes them: zeros, then the operation). NAN when memory runs out.
static double perturbed_loss(const Plan *plan, Trace *trace, size_t v, size_t y, size_t e, double h,
                             Tensor *const *values, Tensor **scratch, Tensor **own, bool *dirty, Diag *diag) {
    memcpy(scratch, values, (y + 1) * sizeof(Tensor *));
    memset(dirty, 0, (y + 1) * sizeof(bool));
    if (!own[v] && !(own[v] = tensor_copy(values[v]))) {
        diag_out_of_memory(diag);
        return NAN;
    }
    own[v]->data[e] = values[v]->data[e] + h;
    scratch[v] = own[v];
    dirty[v] = true;
    bool ok = true;
    for (size_t u = v + 1; u <= y && ok; u++) {
        const PlanNode *n = &plan->nodes[u];
        if (!moves(plan, u, dirty))
            continue;
        if (!own[u]) {
            own[u] = n->has_values ? tensor_create(&n->shape) : tensor_create_shape_only(&n->shape);
            if (!own[u]) {
                diag_out_of_memory(diag);
                ok = false;
                break;
            }
            own[u]->is_count = n->is_count;
        } else if (n->has_values) {
            memset(own[u]->data, 0, own[u]->size * sizeof(double));
        }
        const Tensor *in[EXPR_MAX_ARGS];
        ok = !n->has_values || eval_op_into(plan, u, scratch, in, own[u], trace->arena, diag);
        scratch[u] = own[u];
    }
    own[v]->data[e] = values[v]->data[e];
    return ok ? scratch[y]->data[0] : NAN;
}

// The work of one forward pass from v to y: every node that depends on v, its multiply-adds
// and its values, and 64 for making the node at all. It stops counting past limit (and
// returns more than limit), so that a long lesson does not spend its time counting.
static size_t forward_work(const Plan *plan, size_t v, size_t y, bool *dirty, size_t limit) {
    memset(dirty, 0, (y + 1) * sizeof(bool));
    dirty[v] = true;
    size_t work = 0;
    for (size_t u = v + 1; u <= y; u++) {
        const PlanNode *n = &plan->nodes[u];
        if (!moves(plan, u, dirty))
            continue;
        const Shape *in[EXPR_MAX_ARGS];
        for (size_t k = 0; k < n->n_args; k++)
            in[k] = &plan->nodes[n->args[k]].shape;
        size_t macs, size;
        if (!op_multiply_adds(n->op, in, &n->shape, &macs) || !shape_size(&n->shape, &size) ||
            !util_add_size(work, macs, &work) || !util_add_size(work, size, &work) ||
            !util_add_size(work, 64, &work) || work > limit)
            return SIZE_MAX;
    }
    return work;
}

bool gradcheck_note(const Plan *plan, Trace *trace, size_t i, Tensor *const *values, size_t *budget, Diag *diag,
                    char *note, size_t cap) {
    const PlanNode *n = &plan->nodes[i];
    size_t v = n->grad_wrt, y = n->grad_of;
    const Tensor *x = values[v], *grad = values[i];
    Tensor **scratch = util_calloc(y + 1, sizeof(Tensor *)), **own = util_calloc(y + 1, sizeof(Tensor *));
    bool *dirty = util_calloc(y + 1, sizeof(bool));
    bool ok = scratch && own && dirty;
    size_t samples = x->size <= BACKWARD_CHECK_ALL ? x->size : BACKWARD_CHECK_SAMPLES;
    if (ok && !isfinite(values[y]->data[0])) {
        util_free(scratch);
        util_free(own);
        util_free(dirty);
        char text[64];
        format_short(values[y]->data[0], text, sizeof(text));
        snprintf(note, cap, "finite differences not checked: %s is %s, and differences of it are not numbers",
                 plan->nodes[y].name, text);
        return true;
    }
    // two forward passes per element checked, within the stage's and the lesson's budgets
    size_t allowed = *budget < BACKWARD_CHECK_WORK ? *budget : BACKWARD_CHECK_WORK;
    size_t work = ok ? forward_work(plan, v, y, dirty, allowed / 2) : 0;
    if (ok && work > allowed / 2 / samples)
        samples = work > allowed / 2 ? 0 : allowed / 2 / work;
    if (ok && samples == 0) {
        util_free(scratch);
        util_free(own);
        util_free(dirty);
        if (allowed < BACKWARD_CHECK_WORK)
            snprintf(note, cap, "finite differences not checked: the lesson's earlier checks used up the time they "
                                "may take");
        else
            snprintf(note, cap, "finite differences not checked: the forward pass from %s to %s is too long to run "
                                "twice per element",
                     plan->nodes[v].name, plan->nodes[y].name);
        return true;
    }
    *budget -= 2 * samples * work;
    double worst = 0.0, scale = 0.0, worst_grad = 0.0, worst_fd = 0.0;
    size_t worst_at = 0;
    for (size_t s = 0; s < samples && ok; s++) {
        // evenly spread over the tensor, the same elements on every run
        size_t e = samples == x->size ? s : s * x->size / samples;
        // a step of 1e-5 (relative for large values): truncation error h^2 f'''/6 near 1e-11,
        // rounding error 1e-16 |y| / h near 1e-11 for losses of a few units
        double h = 1e-5 * fmax(1.0, fabs(x->data[e]));
        double up = perturbed_loss(plan, trace, v, y, e, h, values, scratch, own, dirty, diag);
        double down = perturbed_loss(plan, trace, v, y, e, -h, values, scratch, own, dirty, diag);
        if (diag->status != STATUS_OK) {
            ok = false;
            break;
        }
        double fd = (up - down) / (2.0 * h), g = grad->data[e];
        scale = fmax(scale, fmax(fabs(fd), fabs(g)));
        double diff = fabs(fd - g);
        if (!(diff <= worst)) {  // nan counts as the worst
            worst = diff;
            worst_at = e;
            worst_grad = g;
            worst_fd = fd;
        }
    }
    for (size_t u = 0; own && u <= y; u++)
        tensor_destroy(own[u]);
    util_free(scratch);
    util_free(own);
    util_free(dirty);
    if (!ok) {
        if (diag->status == STATUS_OK)
            diag_out_of_memory(diag);
        return false;
    }
    double rel = scale > 0 ? worst / scale : worst;
    char how_many[64];
    if (samples == x->size)
        snprintf(how_many, sizeof(how_many), "all %zu element%s", x->size, x->size == 1 ? "" : "s");
    else
        snprintf(how_many, sizeof(how_many), "%zu of %zu elements", samples, x->size);
    // 1e-6 of the largest gradient: far above the error of the differences themselves, far
    // below any wrong derivative; a large y rounds each of its values by more, which a
    // difference over 2h magnifies (the step is at least 1e-5)
    double y_size = fabs(values[y]->data[0]);
    double noise = scale > 0 ? 1e3 * DBL_EPSILON * fmax(1.0, y_size) / 1e-5 / scale : 0;
    if (rel <= fmax(1e-6, noise)) {
        if (rel == 0)
            snprintf(note, cap, "finite differences agree exactly (%s)", how_many);
        else
            snprintf(note, cap, "finite differences agree: largest relative difference %.0e (%s)", rel, how_many);
    } else {
        snprintf(note, cap,
                 "finite differences DISAGREE: largest relative difference %.1e at element %zu (gradient %.6g, "
                 "finite difference %.6g; %s)",
                 rel, worst_at, worst_grad, worst_fd, how_many);
    }
    return true;
}
