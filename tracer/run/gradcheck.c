// gradcheck: every gradient stage checked against central finite differences of the forward
// pass, the way a textbook does it: move one element of x by a small step h up, run the
// forward pass from x to y again, move it down, run it again, and compare (y(x + h) - y(x - h))
// / 2h with the gradient the backward pass gave: the note under each gradient in the trace.
#include "gradcheck.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
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

// What the passes of one gradient stage share: the tensors they compute into and which nodes
// moved, reused from one pass to the next.
typedef struct Passes {
    const Plan *plan;
    Trace *trace;
    Tensor *const *values;
    size_t v, y;
    Tensor **scratch;  // the values a pass reads: own where a node moved, values where not
    Tensor **own;      // made on the first pass that needs them
    bool *dirty;
    // The operations between v and y that move with v, in order: the same for every element
    // moved, so found once.
    size_t *moving, n_moving;
} Passes;

static bool passes_init(Passes *p, const Plan *plan, Trace *trace, size_t i, Tensor *const *values) {
    const PlanNode *n = &plan->nodes[i];
    *p = (Passes){.plan = plan, .trace = trace, .values = values, .v = n->grad_wrt, .y = n->grad_of};
    p->scratch = util_calloc(p->y + 1, sizeof(Tensor *));
    p->own = util_calloc(p->y + 1, sizeof(Tensor *));
    p->dirty = util_calloc(p->y + 1, sizeof(bool));
    p->moving = util_calloc(p->y + 1, sizeof(size_t));
    if (!p->scratch || !p->own || !p->dirty || !p->moving)
        return false;
    p->dirty[p->v] = true;
    for (size_t u = p->v + 1; u <= p->y; u++)
        if (moves(plan, u, p->dirty))
            p->moving[p->n_moving++] = u;
    return true;
}

static void passes_finish(Passes *p) {
    for (size_t u = 0; p->own && u <= p->y; u++)
        tensor_destroy(p->own[u]);
    util_free(p->scratch);
    util_free(p->own);
    util_free(p->dirty);
    util_free(p->moving);
}

// y computed again with node v's element e moved by h: every node between v and y that
// depends on v is computed again, whole; the rest keep their values. The moved tensor and the
// nodes computed again are held in own, made on the first pass and written whole again by
// each one after (as eval_node makes them: zeros, then the operation). NAN when memory runs
// out or an operation refuses (diag says why).
static double perturbed_loss(Passes *p, size_t e, double h, Diag *diag) {
    const Plan *plan = p->plan;
    Tensor *const *values = p->values;
    Tensor **scratch = p->scratch, **own = p->own;
    size_t v = p->v, y = p->y;
    memcpy(scratch, values, (y + 1) * sizeof(Tensor *));
    if (!own[v] && !(own[v] = tensor_copy(values[v]))) {
        diag_out_of_memory(diag);
        return NAN;
    }
    own[v]->data[e] = values[v]->data[e] + h;
    scratch[v] = own[v];
    bool ok = true;
    for (size_t m = 0; m < p->n_moving && ok; m++) {
        size_t u = p->moving[m];
        const PlanNode *n = &plan->nodes[u];
        if (!own[u]) {
            own[u] = n->has_values ? tensor_create(&n->shape) : tensor_create_shape_only(&n->shape);
            if (!own[u]) {
                diag_out_of_memory(diag);
                ok = false;
                break;
            }
            own[u]->is_count = n->is_count;
        }
        if (n->has_values) {
            // A memset on this thread: a hand-sized lesson zeroes small tensors here by the ten
            // thousand, and each is the first pass's again, its pages already faulted in.
            memset(own[u]->data, 0, own[u]->size * sizeof(double));
            const Tensor *in[OP_MAX_ARGS];
            ok = eval_op_into(plan, u, scratch, in, own[u], p->trace->arena, diag);
        }
        scratch[u] = own[u];
    }
    own[v]->data[e] = values[v]->data[e];
    return ok ? scratch[y]->data[0] : NAN;
}

// The step at element e of x: 1e-5, relative for large values: truncation error h^2 f'''/6
// near 1e-11, rounding error 1e-16 |y| / h near 1e-11 for losses of a few units.
static double step_at(const Tensor *x, size_t e) {
    return 1e-5 * fmax(1.0, fabs(x->data[e]));
}

bool gradcheck_differences(const Plan *plan, Trace *trace, size_t i, Tensor *const *values, const size_t *elements,
                           size_t count, double *fd, Diag *diag) {
    Passes p;
    bool ok = passes_init(&p, plan, trace, i, values);
    for (size_t s = 0; s < count && ok; s++) {
        size_t e = elements[s];
        double h = step_at(values[p.v], e);
        double up = perturbed_loss(&p, e, h, diag);
        double down = perturbed_loss(&p, e, -h, diag);
        fd[s] = (up - down) / (2.0 * h);
        ok = diag->status == STATUS_OK;
    }
    passes_finish(&p);
    if (!ok && diag->status == STATUS_OK)
        diag_out_of_memory(diag);
    return ok;
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
        const Shape *in[OP_MAX_ARGS];
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

// Why an element was left out of the comparison, in the note's words: "where x is -inf" (a
// step from it is not a number), or "where x is 0 and the difference is nan" (y a step away is
// not finite, as sqrt just below 0). When it is the only one left out, the note has no "where
// x or the difference is not finite" before it, so the first says why as well.
static void left_out_where(const char *name, double x, double fd, bool alone, char *buf, size_t cap) {
    char x_text[32], fd_text[32];
    format_short(x, x_text, sizeof(x_text));
    format_short(fd, fd_text, sizeof(fd_text));
    if (!isfinite(x))
        snprintf(buf, cap, "where %s is %s%s", name, x_text, alone ? " and a difference is not a number" : "");
    else
        snprintf(buf, cap, "where %s is %s and the difference is %s", name, x_text, fd_text);
}

// Past this allowance for the rounding of y, a relative difference of the whole gradient
// passes: the differences measure nothing.
#define GRADCHECK_MAX_NOISE 1.0

// The note of gradient node i from the central differences fds at the sampled elements (nan
// where x is not finite). An element where x or the difference is not finite cannot be
// checked: it is left out, and the note names the first. A gradient that is not finite where
// the difference is, is a disagreement.
static void compare_note(const Plan *plan, size_t i, Tensor *const *values, const size_t *elements,
                         const double *fds, size_t samples, char *note, size_t cap) {
    const PlanNode *n = &plan->nodes[i];
    const char *name = plan->nodes[n->grad_wrt].name;
    const Tensor *x = values[n->grad_wrt], *grad = values[i];
    double worst = 0.0, scale = 0.0, worst_grad = 0.0, worst_fd = 0.0;
    size_t worst_at = 0, left_out = 0, first_out = 0;
    for (size_t s = 0; s < samples; s++) {
        double fd = fds[s], g = grad->data[elements[s]];
        if (!isfinite(fd)) {
            if (left_out++ == 0)
                first_out = s;
            continue;
        }
        // a g that is not finite makes diff inf or nan, reported as such before scale is used
        // (fmax would pass over a nan)
        scale = fmax(scale, fmax(fabs(fd), fabs(g)));
        double diff = fabs(fd - g);
        if (!isnan(worst) && !(diff <= worst)) {  // nan counts as the worst, and stays the worst
            worst = diff;
            worst_at = elements[s];
            worst_grad = g;
            worst_fd = fd;
        }
    }
    char where[192] = "";
    if (left_out > 0)
        left_out_where(name, x->data[elements[first_out]], fds[first_out], left_out == 1 && left_out < samples, where,
                       sizeof(where));
    if (left_out == samples) {
        char tried[96];
        if (x->size == 1)
            snprintf(tried, sizeof(tried), "its one element");
        else if (samples == 1)
            snprintf(tried, sizeof(tried), "the one element sampled of %zu", x->size);
        else if (samples == x->size)
            snprintf(tried, sizeof(tried), "all %zu elements", samples);
        else
            snprintf(tried, sizeof(tried), "all %zu elements sampled of %zu", samples, x->size);
        snprintf(note, cap,
                 "finite differences not checked: %s or the difference is not finite at %s (%selement %zu, %s)",
                 name, tried, samples == 1 ? "" : "first ", elements[first_out], where);
        return;
    }
    char how_many[320];
    size_t checked = samples - left_out;
    if (left_out == 1)
        snprintf(how_many, sizeof(how_many), "%zu of %zu elements; element %zu left out, %s", checked, x->size,
                 elements[first_out], where);
    else if (left_out > 1)
        snprintf(how_many, sizeof(how_many),
                 "%zu of %zu elements; %zu left out, where %s or the difference is not finite: first element %zu, %s",
                 checked, x->size, left_out, name, elements[first_out], where);
    else if (samples == x->size)
        snprintf(how_many, sizeof(how_many), "all %zu element%s", x->size, x->size == 1 ? "" : "s");
    else
        snprintf(how_many, sizeof(how_many), "%zu of %zu elements", samples, x->size);
    if (!isfinite(worst)) {
        char g_text[32];
        format_short(worst_grad, g_text, sizeof(g_text));
        snprintf(note, cap, "finite differences DISAGREE: the gradient is %s at element %zu, where the finite "
                            "difference is %.6g (%s)",
                 g_text, worst_at, worst_fd, how_many);
        return;
    }
    double rel = scale > 0 ? worst / scale : worst;
    // 1e-6 of the largest gradient: far above the error of the differences themselves, far
    // below any wrong derivative; a large y rounds each of its values by more, which a
    // difference over 2h magnifies (the step is at least 1e-5)
    double y_size = fabs(values[n->grad_of]->data[0]);
    double noise = scale > 0 ? 1e3 * DBL_EPSILON * fmax(1.0, y_size) / 1e-5 / scale : 0;
    if (noise >= GRADCHECK_MAX_NOISE) {
        // a gradient so small beside y that rounding y swamps any difference: a note of
        // agreement (or disagreement) would claim what cannot be measured
        snprintf(note, cap,
                 "finite differences cannot check this: beside a gradient of at most %.0e, the rounding of %s "
                 "allows a relative difference of %.0e (%s)",
                 scale, plan->nodes[n->grad_of].name, noise, how_many);
        return;
    }
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
}

bool gradcheck_note(const Plan *plan, Trace *trace, size_t i, Tensor *const *values, size_t *budget, Diag *diag,
                    char *note, size_t cap) {
    const PlanNode *n = &plan->nodes[i];
    size_t v = n->grad_wrt, y = n->grad_of;
    const Tensor *x = values[v];
    size_t samples = x->size <= BACKWARD_CHECK_ALL ? x->size : BACKWARD_CHECK_SAMPLES;
    if (!isfinite(values[y]->data[0])) {
        char text[64];
        format_short(values[y]->data[0], text, sizeof(text));
        snprintf(note, cap, "finite differences not checked: %s is %s, and differences of it are not numbers",
                 plan->nodes[y].name, text);
        return true;
    }
    if (x->size == 0) {  // A[0:0]: nothing to move, and nothing to compare
        snprintf(note, cap, "finite differences not checked: %s has no elements to move", plan->nodes[v].name);
        return true;
    }
    // two forward passes per element checked, within the stage's and the lesson's budgets
    bool *dirty = util_calloc(y + 1, sizeof(bool));
    if (!dirty) {
        diag_out_of_memory(diag);
        return false;
    }
    size_t allowed = *budget < BACKWARD_CHECK_WORK ? *budget : BACKWARD_CHECK_WORK;
    size_t work = forward_work(plan, v, y, dirty, allowed / 2);
    util_free(dirty);
    if (work > allowed / 2 / samples)
        samples = work > allowed / 2 ? 0 : allowed / 2 / work;
    if (samples == 0) {
        if (allowed < BACKWARD_CHECK_WORK)
            snprintf(note, cap, "finite differences not checked: the lesson's earlier checks used up the time they "
                                "may take");
        else
            snprintf(note, cap, "finite differences not checked: the forward pass from %s to %s is too long to run "
                                "twice per element",
                     plan->nodes[v].name, plan->nodes[y].name);
        return true;
    }
    // evenly spread over the tensor, the same elements on every run
    _Static_assert(BACKWARD_CHECK_SAMPLES <= BACKWARD_CHECK_ALL, "a stage checks at most BACKWARD_CHECK_ALL");
    size_t elements[BACKWARD_CHECK_ALL];
    for (size_t s = 0; s < samples; s++)
        elements[s] = samples == x->size ? s : s * x->size / samples;
    // a step from an x that is not finite is not a number (-inf + inf is nan): its passes are
    // not run, and its difference is left out as nan
    size_t tried[BACKWARD_CHECK_ALL], n_tried = 0;
    for (size_t s = 0; s < samples; s++)
        if (isfinite(x->data[elements[s]]))
            tried[n_tried++] = elements[s];
    *budget -= 2 * n_tried * work;
    double fds[BACKWARD_CHECK_ALL], tried_fds[BACKWARD_CHECK_ALL];
    if (!gradcheck_differences(plan, trace, i, values, tried, n_tried, tried_fds, diag))
        return false;
    for (size_t s = 0, k = 0; s < samples; s++)
        fds[s] = k < n_tried && tried[k] == elements[s] ? tried_fds[k++] : NAN;
    compare_note(plan, i, values, elements, fds, samples, note, cap);
    return true;
}
