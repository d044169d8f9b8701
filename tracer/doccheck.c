// doccheck: numbers a document printed, checked two ways. Chained: against the exact values
// computed from the lesson's givens. Local: against the same operation applied to the
// document's own printed inputs, so a slip shows where it happens rather than in every step
// that inherits it.
#include "doccheck.h"

#include <math.h>
#include <string.h>

#include "eval.h"

// At most this many printed input values are perturbed to widen a local tolerance.
#define DOCCHECK_MAX_PERTURBED 4096
// ... and the re-runs may cost at most this many multiply-adds together (well under a second).
#define DOCCHECK_MAX_WORK 1e8

static double unit(int decimals) {
    return pow(10.0, -decimals);
}

// |a - b|, with nan and inf equal only to themselves: any other pair is infinitely apart.
static double gap_between(double a, double b) {
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b) ? 0 : INFINITY;
    if (isinf(a) || isinf(b))
        return a == b ? 0 : INFINITY;
    return fabs(a - b);
}

// Compare ours with the printed values, each within its tolerance.
static DocVerdict judge(const Tensor *ours, const TraceDocument *doc, const double *widen) {
    DocVerdict v = {.agrees = true};
    double worst_excess = 0;
    size_t worst = 0, largest = 0;
    for (size_t k = 0; k < ours->size; k++) {
        double a = ours->data[k], b = doc->values->data[k];
        double tol = unit(doc->decimals[k]) + (widen ? widen[k] : 0);
        double diff = gap_between(a, b);
        bool ok = diff <= tol * (1 + 1e-9);  // the slack absorbs binary rounding of tol itself
        if (diff > v.max_abs_diff) {
            v.max_abs_diff = diff;
            largest = k;
        }
        if (!ok) {
            double excess = diff - tol;
            if (v.agrees || excess > worst_excess) {
                worst_excess = excess;
                worst = k;
            }
            v.agrees = false;
        }
    }
    size_t at = v.agrees ? largest : worst;
    v.worst_is_disagreement = !v.agrees;
    shape_unflatten(&ours->shape, at, v.at);
    v.ours = ours->data[at];
    v.printed = doc->values->data[at];
    v.gap = gap_between(v.ours, v.printed);
    v.widened = widen ? widen[at] : 0;
    v.tolerance = unit(doc->decimals[at]) + v.widened;
    return v;
}

static Tensor *doc_tensor(Trace *t, const DocValues *dv) {
    Tensor *values = tensor_create(&dv->shape);
    if (!values)
        return NULL;
    memcpy(values->data, dv->values, values->size * sizeof(double));
    Tensor **list = util_realloc(t->doc_tensors, (t->n_doc_tensors + 1) * sizeof(Tensor *));
    if (!list) {
        tensor_destroy(values);
        return NULL;
    }
    t->doc_tensors = list;
    t->doc_tensors[t->n_doc_tensors++] = values;
    return values;
}

// The document values of a node (a given, or a step's result), or NULL.
static const DocValues *node_document(const PlanNode *n) {
    if (n->kind == PLAN_GIVEN)
        return n->given->document;
    if (n->is_stage && n->stage_kind == STAGE_STEP)
        return n->step->document;
    return NULL;
}

// Evaluate nodes first..top with env (one tensor per node; entries for first..top are
// filled here and freed by the caller). Returns the value of top, or NULL when an operation
// cannot run on these numbers (an index a printed value pushes out of range) or, with *oom
// set, when memory ran out.
static Tensor *evaluate(const Plan *plan, Trace *t, Tensor **env, size_t first, size_t top, bool *oom) {
    Diag scratch;
    diag_init(&scratch);
    const Tensor *in[EXPR_MAX_ARGS];
    for (size_t k = first; k <= top; k++) {
        env[k] = eval_node(plan, k, env, in, t->arena, &scratch);
        if (!env[k]) {
            // Only a lesson error (a value out of range) leaves no verdict; anything else is
            // memory running out, which must not pass for a missing verdict.
            *oom = scratch.status != STATUS_LESSON_ERROR;
            return NULL;
        }
    }
    return env[top];
}

static void release(Tensor **env, size_t first, size_t top) {
    for (size_t k = first; k <= top; k++) {
        tensor_destroy(env[k]);
        env[k] = NULL;
    }
}

// The local check of the step whose result is node `top`. False only when memory runs out.
static bool local_check(const Plan *plan, Trace *t, size_t top, TraceDocument *doc) {
    const PlanNode *nodes = plan->nodes;
    size_t first = top;
    while (first > 0 && nodes[first - 1].step == nodes[top].step && nodes[first - 1].kind != PLAN_GIVEN)
        first--;
    Tensor **env = util_calloc(plan->n_nodes, sizeof(Tensor *));
    double *widen = util_calloc(t->tensors[top]->size, sizeof(double));
    Tensor **swapped = util_calloc(plan->n_nodes, sizeof(Tensor *));
    bool ok = env && widen && swapped;
    if (!ok)
        goto done;
    // Inputs the step reads take their printed values where the document printed them.
    size_t perturbable = 0;
    for (size_t k = 0; k < first; k++)
        env[k] = t->tensors[k];
    for (size_t j = first; j <= top; j++)
        for (size_t a = 0; a < nodes[j].n_args; a++) {
            size_t k = nodes[j].args[a];
            const DocValues *dv = k < first && !swapped[k] ? node_document(&nodes[k]) : NULL;
            if (!dv || !nodes[k].has_values)
                continue;
            Tensor *printed = tensor_create(&dv->shape);
            if (!printed) {
                ok = false;
                goto done;
            }
            memcpy(printed->data, dv->values, printed->size * sizeof(double));
            env[k] = swapped[k] = printed;
            perturbable += printed->size;
        }
    bool oom = false;
    Tensor *local = evaluate(plan, t, env, first, top, &oom);
    if (!local) {
        release(env, first, top);
        ok = !oom;
        goto done;  // no local verdict for these numbers
    }
    Tensor *base = tensor_copy(local);
    release(env, first, top);
    if (!base) {
        ok = false;
        goto done;
    }
    // Widen: move each printed input by half a unit of its last place and see how far the
    // result moves (first order, summed over the inputs).
    // Perturbing re-runs the step once per printed input value: keep that within bounds.
    double work = 0;
    for (size_t k = first; k <= top; k++) {
        // An operation that counts multiply-adds (a matrix product) costs those; anything else
        // about one per value.
        const PlanNode *n = &nodes[k];
        const Shape *shapes[EXPR_MAX_ARGS];
        for (size_t a = 0; a < n->n_args; a++)
            shapes[a] = &t->tensors[n->args[a]]->shape;
        size_t multiply_adds = 0;
        if (n->kind == PLAN_OP && n->op->cost)
            op_multiply_adds(n->op, shapes, &t->tensors[k]->shape, &multiply_adds);
        work += n->kind == PLAN_OP && n->op->cost ? (double)multiply_adds : (double)t->tensors[k]->size;
    }
    doc->printed_inputs = perturbable;
    doc->widening_skipped = perturbable > DOCCHECK_MAX_PERTURBED || (double)perturbable * work > DOCCHECK_MAX_WORK;
    if (!doc->widening_skipped) {
        for (size_t k = 0; k < first; k++) {
            if (!swapped[k])
                continue;
            const DocValues *dv = node_document(&nodes[k]);
            for (size_t e = 0; e < swapped[k]->size; e++) {
                double keep = swapped[k]->data[e];
                swapped[k]->data[e] = keep + 0.5 * unit(dv->decimals[e]);
                Tensor *moved = evaluate(plan, t, env, first, top, &oom);
                if (oom) {
                    release(env, first, top);
                    swapped[k]->data[e] = keep;
                    tensor_destroy(base);
                    ok = false;
                    goto done;
                }
                if (moved)
                    for (size_t o = 0; o < base->size; o++)
                        if (isfinite(moved->data[o] - base->data[o]))
                            widen[o] += fabs(moved->data[o] - base->data[o]);
                release(env, first, top);
                swapped[k]->data[e] = keep;
            }
        }
    }
    doc->has_local = true;
    doc->local = judge(base, doc, widen);
    for (size_t o = 0; o < base->size; o++)
        if (widen[o] > doc->widened_by)
            doc->widened_by = widen[o];
    tensor_destroy(base);
done:
    if (swapped)
        for (size_t k = 0; k < plan->n_nodes; k++)
            tensor_destroy(swapped[k]);
    util_free(swapped);
    util_free(widen);
    util_free(env);
    return ok;
}

bool doccheck_trace(const Plan *plan, Trace *t, Diag *diag) {
    t->doc_first_slip = -1;
    for (size_t i = 0; i < t->n_stages; i++) {
        TraceStage *s = &t->stages[i];
        const PlanNode *n = &plan->nodes[s->node];
        const DocValues *dv = node_document(n);
        if (!dv || !s->value->data || s->kind == STAGE_INTERMEDIATE)
            continue;
        TraceDocument *doc = arena_alloc(t->arena, sizeof(TraceDocument));
        if (!doc || !(doc->values = doc_tensor(t, dv))) {
            diag_out_of_memory(diag);
            return false;
        }
        doc->decimals = dv->decimals;
        doc->chained = judge(s->value, doc, NULL);
        if (n->kind == PLAN_OP && !local_check(plan, t, s->node, doc)) {
            diag_out_of_memory(diag);
            return false;
        }
        s->document = doc;
        t->doc_printed++;
        t->doc_agree += doc->chained.agrees;
        // A given printed wrong, or a step wrong on its own inputs, is a slip of its own.
        bool own_slip = doc->has_local ? !doc->local.agrees : !doc->chained.agrees;
        doc->verdict = own_slip ? DOC_OWN_SLIP : doc->chained.agrees ? DOC_AGREES : DOC_INHERITS;
        if (own_slip && t->doc_first_slip < 0)
            t->doc_first_slip = (long)i;
    }
    return true;
}
