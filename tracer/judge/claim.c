// claim: a claim's truth value read from the trace, and the words that say why it fails.
#include "claim.h"

#include <math.h>
#include <string.h>

#include "format.h"

// Numbers as the trace prints them on their own, with more decimals (up to LESSON_MAX_DIGITS)
// only when the lesson's would print two different numbers alike: "0.2462 != 0.2462" would be
// no help.
static void format_pair(const Tensor *ta, double a, const Tensor *tb, double b, int digits, char *buf_a,
                        char *buf_b, size_t cap) {
    for (int d = digits;; d++) {
        if (ta->is_count)
            format_whole(a, d, buf_a, cap);
        else
            format_number(a, d, buf_a, cap);
        if (tb->is_count)
            format_whole(b, d, buf_b, cap);
        else
            format_number(b, d, buf_b, cap);
        if (strcmp(buf_a, buf_b) != 0 || a == b || d >= LESSON_MAX_DIGITS || (ta->is_count && tb->is_count))
            return;
    }
}

static void put_at(StrBuf *sb, const size_t *at, size_t rank) {
    if (!rank)
        return;
    strbuf_puts(sb, "at [");
    for (size_t i = 0; i < rank; i++)
        strbuf_printf(sb, "%s%zu", i ? ", " : "", at[i]);
    strbuf_puts(sb, "] ");
}

// How many values of t are false (0), and the first of them.
static size_t count_false(const Tensor *t, size_t *first) {
    size_t n = 0;
    for (size_t i = t->size; i-- > 0;)
        if (t->data[i] == 0) {
            n++;
            *first = i;
        }
    return n;
}

// Where a comparison a OP b is false: "at [0, 1] 0.3000 < 0.2000 is false"; for a prefix
// operator, "at [2] not 1 is false".
static void comparison_false(const Plan *plan, const Trace *tr, const PlanNode *n, size_t flat, StrBuf *sb) {
    const Tensor *out = tr->tensors[n - plan->nodes];
    if (n->op->syntax == OP_PREFIX) {
        const Tensor *x = tr->tensors[n->args[0]];
        size_t idx[TENSOR_MAX_RANK], ix[TENSOR_MAX_RANK];
        shape_unflatten(&out->shape, flat, idx);
        shape_broadcast_index(&x->shape, &out->shape, idx, ix);
        char bx[64];
        if (x->is_count)
            format_whole(x->data[shape_flatten(&x->shape, ix)], tr->digits, bx, sizeof(bx));
        else
            format_number(x->data[shape_flatten(&x->shape, ix)], tr->digits, bx, sizeof(bx));
        put_at(sb, idx, out->shape.rank);
        strbuf_printf(sb, "%s%s%s is false", n->op->symbol, op_prefix_gap(n->op), bx);
        return;
    }
    const Tensor *a = tr->tensors[n->args[0]], *b = tr->tensors[n->args[1]];
    size_t idx[TENSOR_MAX_RANK], ia[TENSOR_MAX_RANK], ib[TENSOR_MAX_RANK];
    shape_unflatten(&out->shape, flat, idx);
    shape_broadcast_index(&a->shape, &out->shape, idx, ia);
    shape_broadcast_index(&b->shape, &out->shape, idx, ib);
    double x = a->data[shape_flatten(&a->shape, ia)], y = b->data[shape_flatten(&b->shape, ib)];
    char bx[64], by[64];
    format_pair(a, x, b, y, tr->digits, bx, by, sizeof(bx));
    put_at(sb, idx, out->shape.rank);
    strbuf_printf(sb, "%s %s %s is false", bx, n->op->symbol, by);
}

// Where allclose(a, b) fails worst: "at [0, 3] 0.2462 != 0.2404 (largest difference 0.0058)".
static void allclose_false(const Trace *tr, const PlanNode *n, StrBuf *sb) {
    const Tensor *a = tr->tensors[n->args[0]], *b = tr->tensors[n->args[1]];
    OpCloseWorst w;
    op_allclose_worst(a, b, &n->attrs, &w);
    char bx[64], by[64], gap[64];
    format_pair(a, w.a, b, w.b, tr->digits, bx, by, sizeof(bx));
    put_at(sb, w.at, w.rank);
    strbuf_printf(sb, "%s != %s", bx, by);
    format_number(w.largest_difference, tr->digits, gap, sizeof(gap));
    strbuf_printf(sb, " (largest difference %s", gap);
    if (w.n_far > 1)
        strbuf_printf(sb, "; %zu values are not close", w.n_far);
    strbuf_putc(sb, ')');
}

// What kind of truth value node n is, as its operation says (TRUTH_NONE: not an operation's).
static OpTruth truth_of(const PlanNode *n) {
    return n->kind == PLAN_OP ? n->op->truth : TRUTH_NONE;
}

// Why element `flat` of node's result is false, as far as its operation tells.
static void explain_false(const Plan *plan, const Trace *tr, size_t node, size_t flat, StrBuf *sb) {
    const PlanNode *n = &plan->nodes[node];
    const Tensor *out = tr->tensors[node];
    OpTruth truth = truth_of(n);
    if (truth == TRUTH_COMPARES) {
        comparison_false(plan, tr, n, flat, sb);
        return;
    }
    if (truth == TRUTH_CLOSE) {
        allclose_false(tr, n, sb);
        return;
    }
    if ((truth == TRUTH_ALL || truth == TRUTH_ANY) && n->attrs.axis == KERNEL_ALL_AXES) {
        const Tensor *x = tr->tensors[n->args[0]];
        size_t first = 0;
        size_t n_false = count_false(x, &first);
        if (truth == TRUTH_ANY) {
            strbuf_printf(sb, "none of the %zu values of %s is true", x->size, plan->nodes[n->args[0]].display);
            return;
        }
        explain_false(plan, tr, n->args[0], first, sb);
        if (n_false > 1)
            strbuf_printf(sb, " (and %zu more)", n_false - 1);
        return;
    }
    size_t idx[TENSOR_MAX_RANK];
    shape_unflatten(&out->shape, flat, idx);
    put_at(sb, idx, out->shape.rank);
    strbuf_printf(sb, "%s is false", n->display);
}

static bool judge(const Plan *plan, Trace *tr, const PlanClaim *pc, TraceClaim *tc) {
    const LessonClaim *claim = pc->claim;
    const Tensor *value = tr->tensors[pc->node];
    tc->text = claim->text;
    tc->expr = claim->where.expr;
    size_t first = 0;
    size_t n_false = count_false(value, &first);
    tc->holds = n_false == 0;
    // The stage shown last among those the claim reads.
    tc->stage = 0;
    for (size_t i = 0; i < tr->n_stages; i++)
        if (tr->stages[i].node <= pc->after)
            tc->stage = i;
    if (tc->holds)
        return true;
    StrBuf sb;
    strbuf_init(&sb);
    explain_false(plan, tr, pc->node, first, &sb);
    if (value->size > 1 && truth_of(&plan->nodes[pc->node]) == TRUTH_COMPARES && n_false > 1)
        strbuf_printf(&sb, " (and %zu more of %zu)", n_false - 1, value->size);
    tc->detail = sb.failed ? NULL : arena_strdup(tr->arena, strbuf_str(&sb));
    strbuf_finish(&sb);
    return tc->detail != NULL;
}

bool claim_judge(const Plan *plan, Trace *trace, Diag *diag) {
    if (!plan->n_claims)
        return true;
    trace->claims = arena_array(trace->arena, plan->n_claims, sizeof(TraceClaim));
    if (!trace->claims)
        return diag_no_memory(diag);
    for (size_t i = 0; i < plan->n_claims; i++) {
        TraceClaim *tc = &trace->claims[i];
        memset(tc, 0, sizeof(*tc));
        if (!judge(plan, trace, &plan->claims[i], tc))
            return diag_no_memory(diag);
        trace->n_claims++;
        trace->n_claims_failed += !tc->holds;
    }
    return true;
}

// A truth value and, when it is a comparison or a reduction of truth values, what explain_false
// reads to say where it fails.
static void truth_needs(const Plan *plan, size_t node, bool *keep) {
    const PlanNode *n = &plan->nodes[node];
    keep[node] = true;
    if (truth_of(n) != TRUTH_NONE)
        for (size_t a = 0; a < n->n_args; a++)
            truth_needs(plan, n->args[a], keep);
}

void claim_needs(const Plan *plan, bool *keep) {
    for (size_t i = 0; i < plan->n_claims; i++)
        truth_needs(plan, plan->claims[i].node, keep);
}
