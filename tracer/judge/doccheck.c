// doccheck: numbers a document printed, checked two ways. Chained: against the exact values
// computed from the lesson's givens. Local: against the same operation applied to the
// document's own printed inputs, so a slip shows where it happens rather than in every step
// that inherits it.
#include "doccheck.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "eval.h"

// At most this many printed input values are perturbed to widen a local tolerance.
#define DOCCHECK_MAX_PERTURBED 4096
// ... and the re-runs may cost at most this many multiply-adds together (well under a second).
#define DOCCHECK_MAX_WORK 1e8

static double unit(int decimals) {
    return pow(10.0, -decimals);
}

// |ours - printed|, with an inf equal only to itself: any other pair with an inf, and a nan
// of ours against any printed number, is infinitely apart. (A lesson cannot print nan: the
// loader refuses it in a document.)
static double gap_between(double ours, double printed) {
    ASSERT(!isnan(printed));
    if (isnan(ours))
        return INFINITY;
    if (isinf(ours) || isinf(printed))
        return ours == printed ? 0 : INFINITY;
    return fabs(ours - printed);
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

// The document values of a node (a given, or a step's result), set aside or not, or NULL.
static const DocValues *printed_document(const PlanNode *n) {
    if (n->kind == PLAN_GIVEN)
        return n->given->document;
    if (n->is_stage && n->stage_kind == STAGE_STEP)
        return n->step->document;
    return NULL;
}

// The document values a node can be compared with: NULL when set aside.
static const DocValues *node_document(const PlanNode *n) {
    return n->document_set_aside ? NULL : printed_document(n);
}

// Evaluate nodes first..top with env (one tensor per node; entries for first..top are
// filled here and freed by the caller). Returns the value of top, or NULL when an operation
// cannot run on these numbers (an index a printed value pushes out of range) or, with *oom
// set, when memory ran out.
static Tensor *evaluate(const Plan *plan, Trace *t, Tensor **env, size_t first, size_t top, bool *oom) {
    Diag scratch;
    diag_init(&scratch);
    const Tensor *in[OP_MAX_ARGS];
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

// A given the student changed: its values differ from what the document printed for it by
// more than rounding to the printed places explains, half a unit of the last (or its shape
// differs): 0.123 printed as 0.12 is the document's, 0.9 against 0.5 and 16 against 4 are edits. Returns how many values differ
// (its size when the shape changed) and where the first is.
static size_t given_changes(const PlanNode *n, const Tensor *value, size_t *first) {
    const DocValues *dv = n->given->document;
    *first = 0;
    if (n->document_set_aside)
        return value->size;
    size_t changed = 0;
    for (size_t k = 0; k < value->size; k++)
        if (gap_between(value->data[k], dv->values[k]) > 0.5 * unit(dv->decimals[k]) * (1 + 1e-9) && !changed++)
            *first = k;
    return changed;
}

// A given's printed numbers are its definition, not a rounding, when they are its values
// exactly, or when the student changed it: the local check reads them as exact and widens
// nothing for them. A given printed rounded (0.12 for 0.123) is widened like any print.
static bool exact_print(const PlanNode *n, const Tensor *value) {
    if (n->kind != PLAN_GIVEN)
        return false;
    size_t first;
    if (given_changes(n, value, &first))
        return true;
    return memcmp(value->data, n->given->document->values, value->size * sizeof(double)) == 0;
}

// The first node of the step whose result is node top: the local check runs from there.
static size_t step_first(const Plan *plan, size_t top) {
    const PlanNode *nodes = plan->nodes;
    size_t first = top;
    while (first > 0 && nodes[first - 1].step == nodes[top].step && nodes[first - 1].kind != PLAN_GIVEN)
        first--;
    return first;
}

// The local check of the step whose result is node `top`. False only when memory runs out.
static bool local_check(const Plan *plan, Trace *t, size_t top, TraceDocument *doc) {
    const PlanNode *nodes = plan->nodes;
    size_t first = step_first(plan, top);
    Tensor **env = util_calloc(plan->n_nodes, sizeof(Tensor *));
    double *widen = util_calloc(t->tensors[top]->size, sizeof(double));
    Tensor **swapped = util_calloc(plan->n_nodes, sizeof(Tensor *));
    bool *exact = util_calloc(plan->n_nodes, sizeof(bool));
    bool ok = env && widen && swapped && exact;
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
            exact[k] = exact_print(&nodes[k], t->tensors[k]);
            if (!exact[k])
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
        const Shape *shapes[OP_MAX_ARGS];
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
            if (!swapped[k] || exact[k])
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
    util_free(exact);
    util_free(widen);
    util_free(env);
    return ok;
}

// Which edited givens each node depends on: bit g for the g-th edited given (the first 64).
typedef struct Edits {
    uint64_t *mask;            // one per plan node
    const char *names[64];
    size_t n;
} Edits;

static bool find_edits(const Plan *plan, const Trace *t, Edits *e) {
    e->mask = util_calloc(plan->n_nodes, sizeof(uint64_t));
    if (!e->mask)
        return false;
    for (size_t i = 0; i < plan->n_nodes; i++) {
        const PlanNode *n = &plan->nodes[i];
        for (size_t a = 0; a < n->n_args; a++)
            e->mask[i] |= e->mask[n->args[a]];
        size_t first;
        if (n->kind == PLAN_GIVEN && n->given->document && n->has_values && given_changes(n, t->tensors[i], &first) &&
            e->n < ARRAY_LEN(e->names)) {
            e->mask[i] |= (uint64_t)1 << e->n;
            e->names[e->n++] = n->name;
        }
    }
    return true;
}

// The names of the edited givens in mask, into the trace's arena.
static bool edited_names(Trace *t, const Edits *e, uint64_t mask, TraceDocument *doc) {
    size_t n = 0;
    for (size_t g = 0; g < e->n; g++)
        n += (mask >> g) & 1;
    if (!n)
        return true;
    doc->edited = arena_array(t->arena, n, sizeof(char *));
    if (!doc->edited)
        return false;
    for (size_t g = 0; g < e->n; g++)
        if ((mask >> g) & 1)
            doc->edited[doc->n_edited++] = e->names[g];
    return true;
}

// Whether the local check of the step ending at top reads a value that the student's edit
// changed and the document did not print: then it is not a check on the document's own printed
// inputs, and says nothing of the document alone.
static bool local_reads_edit(const Plan *plan, const Edits *e, size_t top) {
    size_t first = step_first(plan, top);
    for (size_t j = first; j <= top; j++)
        for (size_t a = 0; a < plan->nodes[j].n_args; a++) {
            size_t k = plan->nodes[j].args[a];
            if (k < first && e->mask[k] && !node_document(&plan->nodes[k]))
                return true;
        }
    return false;
}

// Judge one stage's document values, in the light of the student's edits.
static bool judge_stage(const Plan *plan, Trace *t, const Edits *e, TraceStage *s, const DocValues *dv,
                        TraceDocument *doc) {
    const PlanNode *n = &plan->nodes[s->node];
    uint64_t mask = e->mask[s->node];
    doc->decimals = dv->decimals;
    if (!(doc->values = doc_tensor(t, dv)) || !edited_names(t, e, mask, doc))
        return false;
    if (n->document_set_aside) {
        doc->verdict = DOC_SET_ASIDE;
        return true;
    }
    doc->chained = judge(s->value, doc, NULL);
    // The local check runs on the document's own printed inputs, edits or not.
    if (n->kind == PLAN_OP && !local_check(plan, t, s->node, doc))
        return false;
    if (doc->has_local && mask && local_reads_edit(plan, e, s->node))
        doc->has_local = false;
    doc->same_as_given = n->kind == PLAN_GIVEN && !mask &&
                         memcmp(s->value->data, dv->values, s->value->size * sizeof(double)) == 0;
    if (n->kind == PLAN_GIVEN && mask) {
        doc->verdict = DOC_EDITED;
        doc->values_changed = given_changes(n, s->value, &doc->first_changed);
    } else if (doc->chained.agrees) {
        doc->verdict = DOC_AGREES;
    } else if (mask) {
        doc->verdict = DOC_FOLLOWS_EDIT;  // whatever the document did, the student's numbers differ
    } else {
        // A given printed wrong, or a step wrong on its own inputs, is a slip of its own.
        bool own_slip = doc->has_local ? !doc->local.agrees : true;
        doc->verdict = own_slip ? DOC_OWN_SLIP : DOC_INHERITS;
    }
    return true;
}

bool doccheck_trace(const Plan *plan, Trace *t, Diag *diag) {
    t->doc_first_slip = -1;
    t->doc_first_hidden_slip = -1;
    Edits edits = {0};
    if (!find_edits(plan, t, &edits))
        return diag_no_memory(diag);
    for (size_t i = 0; i < t->n_stages; i++) {
        TraceStage *s = &t->stages[i];
        const DocValues *dv = printed_document(&plan->nodes[s->node]);
        if (!dv || !s->value->data || s->kind == STAGE_INTERMEDIATE)
            continue;
        TraceDocument *doc = arena_alloc(t->arena, sizeof(TraceDocument));
        if (!doc || !judge_stage(plan, t, &edits, s, dv, doc)) {
            util_free(edits.mask);
            return diag_no_memory(diag);
        }
        s->document = doc;
        t->doc_printed++;
        t->doc_agree += doc->verdict == DOC_AGREES;
        t->doc_edited += doc->verdict == DOC_EDITED;
        t->doc_follow += doc->verdict == DOC_FOLLOWS_EDIT;
        t->doc_set_aside += doc->verdict == DOC_SET_ASIDE;
        if (doc->verdict == DOC_OWN_SLIP && t->doc_first_slip < 0)
            t->doc_first_slip = (long)i;
        if (doc->verdict == DOC_FOLLOWS_EDIT && doc->has_local && !doc->local.agrees && t->doc_first_hidden_slip < 0)
            t->doc_first_hidden_slip = (long)i;
    }
    util_free(edits.mask);
    return true;
}

void doccheck_needs(const Plan *plan, bool *keep) {
    for (size_t i = 0; i < plan->n_nodes; i++) {
        const PlanNode *n = &plan->nodes[i];
        if (n->kind == PLAN_GIVEN && n->given->document)
            keep[i] = true;  // find_edits compares every given with what the document printed
        if (!printed_document(n) || n->stage_kind == STAGE_INTERMEDIATE)
            continue;
        keep[i] = true;
        if (n->kind != PLAN_OP)
            continue;
        // The local check computes the step again from the values it reads before its first node.
        size_t first = step_first(plan, i);
        for (size_t j = first; j <= i; j++) {
            if (plan->nodes[j].kind == PLAN_GRAD)
                for (size_t k = 0; k < first; k++)
                    keep[k] = true;  // a gradient may read any node before it
            for (size_t a = 0; a < plan->nodes[j].n_args; a++)
                if (plan->nodes[j].args[a] < first)
                    keep[plan->nodes[j].args[a]] = true;
        }
    }
}
