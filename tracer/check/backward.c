// backward: the backward pass of grad(y, x): the way from the x's to y, its gradient nodes laid
// out at check time, and their values at run time.
#include "backward.h"

#include <math.h>
#include <string.h>

#include "check_names.h"
#include "format.h"
#include "util.h"

// The stages all of a lesson's backward passes may visit and lay out, together: each grad of
// a new y lays out a backward pass as long as the way to y, so a lesson differentiating each
// of 20,000 chained steps would be quadratic (at 2^22, a few seconds here at worst).
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define PLAN_MAX_BACKWARD_WORK ((size_t)1 << 16)
#else
#define PLAN_MAX_BACKWARD_WORK ((size_t)1 << 22)
#endif

// One backward pass: the gradient node of each node on the way to y (NO_NODE elsewhere), for
// the nodes up to y, the only ones it can reach: sized by the plan instead, a lesson taking
// the gradients of 2,000 chained steps would hold gigabytes of arrays mostly NO_NODE.
typedef struct Backward {
    size_t y;
    size_t *gradient;  // y + 1 of them
    struct Backward *next;
} Backward;


// Does input k of node n carry a gradient back to its argument? Unknown derivatives count as
// carrying one, so that the way through them is found and refused.
static bool carries_gradient(const PlanNode *n, size_t k) {
    return n->kind == PLAN_GRAD || !(n->op->no_grad & (1u << k));
}

static bool has_derivative(const PlanNode *n) {
    return n->kind == PLAN_OP && n->op->grad;
}

BackwardPath backward_path(const Plan *plan, size_t n_nodes, size_t y, const size_t *wrt, size_t n_wrt,
                           bool *on, size_t *blocker) {
    ASSERT(y < n_nodes);
    bool *depends = util_calloc(n_nodes, sizeof(bool));
    if (!depends)
        return BACKWARD_OUT_OF_MEMORY;
    // on: first, what y needs (backwards from y); then kept where it also depends on an x
    memset(on, 0, n_nodes * sizeof(bool));
    on[y] = true;
    for (size_t u = y + 1; u-- > 0;) {
        const PlanNode *n = &plan->nodes[u];
        if (!on[u] || (n->kind != PLAN_OP && n->kind != PLAN_GRAD))
            continue;
        for (size_t k = 0; k < n->n_args; k++)
            if (carries_gradient(n, k))
                on[n->args[k]] = true;
    }
    size_t first = y;
    for (size_t i = 0; i < n_wrt; i++) {
        depends[wrt[i]] = true;
        first = wrt[i] < first ? wrt[i] : first;
    }
    for (size_t v = first; v <= y; v++) {
        const PlanNode *n = &plan->nodes[v];
        if (n->kind == PLAN_GRAD && depends[n->grad_of])
            depends[v] = true;
        if (n->kind == PLAN_OP || n->kind == PLAN_GRAD)
            for (size_t k = 0; k < n->n_args && !depends[v]; k++)
                depends[v] = carries_gradient(n, k) && depends[n->args[k]];
    }
    for (size_t v = 0; v < n_nodes; v++)
        on[v] = on[v] && depends[v];
    util_free(depends);
    if (!on[y])
        return BACKWARD_NO_PATH;
    // Every operation that passes a gradient from the way on to the way needs a derivative.
    for (size_t u = first; u <= y; u++) {
        const PlanNode *n = &plan->nodes[u];
        if (!on[u] || (n->kind != PLAN_OP && n->kind != PLAN_GRAD))
            continue;
        for (size_t k = 0; k < n->n_args; k++)
            if (carries_gradient(n, k) && on[n->args[k]] && !has_derivative(n)) {
                *blocker = u;
                return BACKWARD_NO_DERIVATIVE;
            }
    }
    return BACKWARD_OK;
}

// ---------------------------------------------------------------- laying the pass out, at check time

// Appends how node n is written in a gradient's formula: as where it is an input ("Q", "K.T",
// "2"). Marks sb failed when memory runs out, like any other append.
static void put_node(Checker *c, StrBuf *sb, const PlanNode *n) {
    const char *t = check_display_name(c, n);
    if (t)
        strbuf_puts(sb, t);
    else
        sb->failed = true;
}

// Can y be differentiated with respect to x at all (before looking for the way between them)?
// Reports why not when report is set.
static bool grad_operands_fit(Checker *c, const Expr *call, size_t y, size_t x, bool report) {
    const PlanNode *yn = &c->plan->nodes[y], *xn = &c->plan->nodes[x];
    const Expr *ye = call->args[0], *xe = call->args[1];
    char shape[64];
    shape_format(&yn->shape, shape, sizeof(shape));
    if (!yn->has_values) {
        if (report) {
            check_expr_error(c, ye, "'%s' is shape-only: it has no values to differentiate", yn->name);
            diag_hint(c->diag, "a gradient needs numbers: give the givens it is computed from values (init: random)");
        }
        return false;
    }
    if (yn->shape.rank != 0) {
        if (report) {
            check_expr_error(c, ye, "grad differentiates a single number, but '%s' is %s", yn->name, shape);
            diag_hint(c->diag, "take the gradient of a scalar such as a loss: add a step `total: mean(%s)` and write "
                               "grad(total, %s)",
                      yn->name, xn->name ? xn->name : "x");
        }
        return false;
    }
    if (x == y) {
        if (report) {
            check_expr_error(c, call, "grad(%s, %s) is 1: a number changes one for one with itself", yn->name,
                             xn->name);
            diag_hint(c->diag, "differentiate with respect to a tensor '%s' is computed from", yn->name);
        }
        return false;
    }
    if (x > y) {
        if (report) {
            check_expr_error(c, xe, "'%s' is computed after '%s', so '%s' cannot depend on it", xn->name, yn->name,
                             yn->name);
            diag_hint(c->diag, "grad(y, x) needs x to be a given or a step that comes before y");
        }
        return false;
    }
    if (!xn->has_values) {
        if (report) {
            check_expr_error(c, xe, "'%s' is shape-only: it has no values, so nothing to differentiate with respect to",
                             xn->name);
            diag_hint(c->diag, "give it values (values:, or init: random) to take a gradient with respect to it");
        }
        return false;
    }
    if (xn->is_count) {
        if (report) {
            check_expr_error(c, xe, "'%s' holds whole numbers (token ids, positions, counts): they carry no gradient",
                             xn->name);
            diag_hint(c->diag, "differentiate with respect to weights or activations; if '%s' is a weight, write its "
                               "values with a decimal point (1.0)",
                      xn->name);
        }
        return false;
    }
    return true;
}

// Counts work of the backward passes (stages visited or laid out); false with an error at the
// grad call once the lesson's backward passes would take too long.
static bool backward_work(Checker *c, const Expr *call, size_t work) {
    if (util_add_size(c->backward_work, work, &c->backward_work) && c->backward_work <= PLAN_MAX_BACKWARD_WORK)
        return true;
    char limit[64];
    format_count((double)PLAN_MAX_BACKWARD_WORK, limit, sizeof(limit));
    check_expr_error(c, call, "the lesson's backward passes would visit more than %s stages", limit);
    c->past_limit = true;
    diag_hint(c->diag, "every grad of a new number lays out a backward pass all the way to it; differentiate fewer "
                       "numbers (one loss), by as many tensors as needed");
    return false;
}

// The way from x to y, and the first node on it without a derivative (blocker). Only the
// nodes up to y can be on it.
static BackwardPath grad_way(Checker *c, size_t y, size_t x, size_t *blocker) {
    bool *on = util_calloc(y + 1, sizeof(bool));
    BackwardPath r = on ? backward_path(c->plan, y + 1, y, &x, 1, on, blocker) : BACKWARD_OUT_OF_MEMORY;
    util_free(on);
    return r;
}

// Is there a differentiable way from x to y? Reports why not.
static bool grad_way_exists(Checker *c, const Expr *call, size_t y, size_t x) {
    size_t blocker = 0;
    BackwardPath r = grad_way(c, y, x, &blocker);
    if (r == BACKWARD_OK)
        return true;
    const PlanNode *yn = &c->plan->nodes[y], *xn = &c->plan->nodes[x];
    if (r == BACKWARD_OUT_OF_MEMORY)
        return diag_no_memory(c->diag);
    if (r == BACKWARD_NO_PATH) {
        check_expr_error(c, call, "'%s' does not depend on '%s': its gradient would be 0 everywhere", yn->name,
                         xn->name);
        diag_hint(c->diag, "choose a tensor '%s' is computed from; no gradient flows through indices, targets or "
                           "positions",
                  yn->name);
        return false;
    }
    const PlanNode *b = &c->plan->nodes[blocker];
    size_t line = c->step->key->line;
    if (b->kind == PLAN_GRAD)
        plan_error_at(c->diag, c->lesson, b->step, b->expr->start, b->expr->end - b->expr->start,
                      "'%s' is a gradient: grad(%s, %s) (line %zu) would need second derivatives, which are not "
                      "traced",
                      b->name, yn->name, xn->name, line);
    else
        plan_error_at(c->diag, c->lesson, b->step, b->expr->start, b->expr->end - b->expr->start,
                      "%s has no derivative, so grad(%s, %s) (line %zu) cannot pass back through it", b->op->name,
                      yn->name, xn->name, line);
    diag_hint(c->diag, "%s", b->kind == PLAN_GRAD
                                 ? "differentiate with respect to the updated tensor itself (W_new), not the one before "
                                   "the step"
                             : b->op->no_derivative
                                 ? b->op->no_derivative
                                 : "a position or a count is flat and then jumps: no gradient flows through it; compute "
                                   "the loss without it");
    return false;
}

// Every x of a grad(y_name, x) call in e that can be differentiated, once each, into wrt.
static void collect_wrt(Checker *c, const Expr *call, const Expr *e, const char *y_name, size_t y, size_t *wrt,
                        size_t *n_wrt, bool *picked) {
    if (!e || c->diag->status != STATUS_OK)
        return;
    if (e->kind == EXPR_CALL && strcmp(e->name, "grad") == 0 && e->n_args == 2 && e->args[0]->kind == EXPR_NAME &&
        e->args[1]->kind == EXPR_NAME && strcmp(e->args[0]->name, y_name) == 0) {
        size_t x = check_find_name(c, e->args[1]->name);
        size_t blocker;
        bool fits = x < y && !picked[x] && grad_operands_fit(c, e, y, x, false);
        if (fits && !backward_work(c, call, y + 1))
            return;
        BackwardPath way = fits ? grad_way(c, y, x, &blocker) : BACKWARD_NO_PATH;
        if (way == BACKWARD_OUT_OF_MEMORY)
            diag_out_of_memory(c->diag);
        if (way == BACKWARD_OK) {
            picked[x] = true;
            wrt[(*n_wrt)++] = x;
        }
    }
    for (size_t i = 0; i < e->n_args; i++)
        collect_wrt(c, call, e->args[i], y_name, y, wrt, n_wrt, picked);
}

// How use j's share of a gradient is written, the op's way ("dloss/dscores @ K.T").
static const char *grad_term(Checker *c, const Backward *b, size_t v, size_t use, size_t input) {
    const PlanNode *nodes = c->plan->nodes, *u = &nodes[use];
    const char *g = use == b->y ? "1" : nodes[b->gradient[use]].name;
    const char *f = input < OP_GRAD_FORMULAS ? u->op->grad_formula[input] : NULL;
    StrBuf sb;
    strbuf_init(&sb);
    if (!f) {
        strbuf_printf(&sb, "%s's share for ", g);
        put_node(c, &sb, &nodes[v]);
        f = "";
    }
    // the seed d y / d y is 1: "1 * (softmax(z) - onehot(t))" reads better without it
    if (strcmp(g, "1") == 0 && strncmp(f, "%g * ", 5) == 0)
        f += 5;
    for (const char *p = f; *p; p++) {
        if (*p != '%' || !p[1]) {
            strbuf_putc(&sb, *p);
            continue;
        }
        p++;
        if (*p == 'g')
            strbuf_puts(&sb, g);
        else if (*p == 'y')
            put_node(c, &sb, u);
        else if (*p >= '0' && *p <= '2' && (size_t)(*p - '0') < u->n_args)
            put_node(c, &sb, &nodes[u->args[*p - '0']]);
        else if (*p == 'a' && u->attrs.axis + 1 == (int)u->shape.rank)
            strbuf_puts(&sb, "-1");  // the last axis, as numpy and PyTorch write it
        else if (*p == 'a')
            strbuf_printf(&sb, "%d", u->attrs.axis);
    }
    const char *text = sb.failed ? NULL : arena_strdup(c->plan->arena, strbuf_str(&sb));
    strbuf_finish(&sb);
    return text;
}

// A gradient's formula: the shares its uses pass back, added up. NULL when memory runs out.
static const char *grad_formula(Checker *c, const char *const *terms, size_t n_uses) {
    StrBuf sb;
    strbuf_init(&sb);
    for (size_t j = 0; j < n_uses; j++)
        strbuf_printf(&sb, "%s%s", j ? " + " : "", terms[j]);
    const char *text = sb.failed ? NULL : arena_strdup(c->plan->arena, strbuf_str(&sb));
    strbuf_finish(&sb);
    return text;
}

// A gradient stage's narration: what it measures and where it comes from.
static const char *grad_say(Checker *c, const char *y_name, const PlanNode *v, const size_t *use, size_t n_uses) {
    StrBuf sb;
    strbuf_init(&sb);
    strbuf_printf(&sb, "How much %s moves per unit change of each entry of ", y_name);
    put_node(c, &sb, v);
    if (n_uses == 1) {
        strbuf_puts(&sb, ", passed back from its one use, ");
        put_node(c, &sb, &c->plan->nodes[use[0]]);
        strbuf_putc(&sb, '.');
    } else {
        strbuf_printf(&sb, ": the sum of what its %zu uses pass back (", n_uses);
        for (size_t j = 0; j < n_uses; j++) {
            strbuf_puts(&sb, j ? ", " : "");
            put_node(c, &sb, &c->plan->nodes[use[j]]);
        }
        strbuf_puts(&sb, ").");
    }
    const char *text = sb.failed ? NULL : arena_strdup(c->plan->arena, strbuf_str(&sb));
    strbuf_finish(&sb);
    return text;
}

// Lays out the backward pass of y for every x the lesson differentiates y by, from this step
// on: one gradient node per node on the way, in backward order. NULL on an error.
static Backward *build_backward(Checker *c, const Expr *call, size_t y, size_t x) {
    Plan *plan = c->plan;
    // Only the nodes up to y are on the way, and every x comes before y.
    size_t n = y + 1, n_wrt = 1;
    size_t *wrt = arena_array(plan->arena, n, sizeof(size_t));
    Backward *b = arena_alloc(plan->arena, sizeof(Backward));
    bool *on = util_calloc(n, sizeof(bool));
    size_t *count = util_calloc(n + 1, sizeof(size_t));
    bool *picked = util_calloc(n, sizeof(bool));  // already among the x's
    if (!wrt || !b || !on || !count || !picked)
        goto oom;
    wrt[0] = x;
    picked[x] = true;
    // Several grad calls on one y share this pass: gather their x's from this step and every
    // later one (those that do not fit report their error when their own step is checked).
    for (const LessonStep *s = c->step; s < c->lesson->steps + c->lesson->n_steps; s++) {
        if (!backward_work(c, call, 1 + strlen(s->expr) / 16))
            goto fail;
        ExprError err;
        Expr *e = expr_parse(plan->arena, s->expr, &err);
        if (!e && !err.message[0])
            goto oom;
        if (e && s->scope)
            expr_rename(e, s->scope->from, s->scope->to, s->scope->n);
        collect_wrt(c, call, e, plan->nodes[y].name, y, wrt, &n_wrt, picked);
        if (c->diag->status != STATUS_OK)
            goto fail;
    }
    size_t blocker;
    if (!backward_work(c, call, 2 * (y + 1)))
        goto fail;
    if (backward_path(plan, n, y, wrt, n_wrt, on, &blocker) != BACKWARD_OK)
        goto oom;  // each x alone has a way, so their union has one too: only memory can fail
    // The uses of each node on the way, grouped by node: count[v] .. count[v + 1] in use[].
    size_t total = 0;
    for (size_t u = 0; u <= y; u++) {
        const PlanNode *un = &plan->nodes[u];
        if (!on[u] || un->kind != PLAN_OP)
            continue;
        for (size_t k = 0; k < un->n_args; k++)
            if (on[un->args[k]] && !(un->op->no_grad & (1u << k))) {
                count[un->args[k] + 1]++;
                total++;
            }
    }
    for (size_t v = 0; v < n; v++)
        count[v + 1] += count[v];
    size_t *use = arena_array(plan->arena, total, sizeof(size_t));
    size_t *input = arena_array(plan->arena, total, sizeof(size_t));
    size_t *fill = util_calloc(n, sizeof(size_t));
    b->gradient = arena_array(plan->arena, n, sizeof(size_t));
    if (!use || !input || !fill || !b->gradient) {
        util_free(fill);
        goto oom;
    }
    for (size_t u = 0; u <= y; u++) {
        const PlanNode *un = &plan->nodes[u];
        if (!on[u] || un->kind != PLAN_OP)
            continue;
        for (size_t k = 0; k < un->n_args; k++) {
            size_t v = un->args[k];
            if (on[v] && !(un->op->no_grad & (1u << k))) {
                use[count[v] + fill[v]] = u;
                input[count[v] + fill[v]++] = k;
            }
        }
    }
    util_free(fill);
    b->y = y;
    for (size_t v = 0; v < n; v++)
        b->gradient[v] = NO_NODE;
    for (size_t v = y + 1; v-- > 0;) {
        if (!on[v])
            continue;
        size_t n_uses = count[v + 1] - count[v], *args = arena_array(plan->arena, n_uses, sizeof(size_t));
        const PlanNode *vn = &plan->nodes[v];
        Shape shape = vn->shape;
        if (!args || !check_size(c, call, &shape, true))
            goto fail;
        for (size_t j = 0; j < n_uses; j++) {
            const PlanNode *u = &plan->nodes[use[count[v] + j]];
            args[j] = b->gradient[use[count[v] + j]];
            // the share passed back costs what the product cost forwards
            const Shape *in_shapes[OP_MAX_ARGS];
            for (size_t a = 0; a < u->n_args; a++)
                in_shapes[a] = &plan->nodes[u->args[a]].shape;
            size_t work;
            if (!op_multiply_adds(u->op, in_shapes, &u->shape, &work) ||
                !util_add_size(c->total_multiply_adds, work, &c->total_multiply_adds) ||
                c->total_multiply_adds > PLAN_MAX_MULTIPLY_ADDS) {
                char limit[64];
                format_count((double)PLAN_MAX_MULTIPLY_ADDS, limit, sizeof(limit));
                check_expr_error(c, call, "this backward pass would take the lesson past %s multiply-adds", limit);
                diag_hint(c->diag, "a backward pass repeats the products of the forward pass; use smaller shapes");
                goto fail;
            }
        }
        // named after the stage (dloss/dweights_1.2, as --explain and the JSON call it); the
        // narration writes it as it reads ((Q_1 @ K_1.T))
        const char *y_name = plan->nodes[y].name;
        const char *name = arena_printf(plan->arena, "d%s/d%s", y_name, vn->name);
        const char *say = grad_say(c, y_name, vn, use + count[v], n_uses);
        const char **terms = arena_array(plan->arena, n_uses, sizeof(char *));
        for (size_t j = 0; terms && j < n_uses; j++)
            if (!(terms[j] = grad_term(c, b, v, use[count[v] + j], input[count[v] + j])))
                terms = NULL;
        const char *formula = terms ? grad_formula(c, terms, n_uses) : NULL;
        size_t index;
        PlanNode *g = check_new_node(c, PLAN_GRAD, &index);
        if (!g)
            goto fail;  // check_new_node says why
        if (!name || !say || !formula)
            goto oom;
        g->grad_terms = terms;
        vn = &plan->nodes[v];
        g->shape = vn->shape;
        g->has_values = true;
        memcpy(g->labels, vn->labels, sizeof(g->labels));
        g->args = args;
        g->n_args = n_uses;
        g->grad_use = use + count[v];
        g->grad_use_input = input + count[v];
        g->grad_of = y;
        g->grad_wrt = v;
        g->is_stage = v != y;  // d y / d y = 1 only starts the pass
        g->stage_kind = STAGE_GRADIENT;
        g->name = name;
        g->say = say;
        g->expr_text = formula;
        g->expr = call;
        b->gradient[v] = index;
    }
    util_free(on);
    util_free(count);
    util_free(picked);
    b->next = c->backwards;
    c->backwards = b;
    c->n_backwards++;
    return b;
oom:
    diag_out_of_memory(c->diag);
fail:
    util_free(on);
    util_free(count);
    util_free(picked);
    return NULL;
}

// grad(y, x): the gradient of the scalar stage y with respect to x, a given or an earlier
// stage. The first grad of each y lays out its backward pass; later ones find their x in it.
size_t backward_compile_grad(Checker *c, const Expr *e) {
    if (e->n_args != 2 || e->arg_names[0] || e->arg_names[1]) {
        check_token_error(c, e,
                          "grad takes two names: the number to differentiate and the tensor to differentiate it by");
        diag_hint(c->diag, "write grad(loss, W): how loss changes with each entry of W");
        return NO_NODE;
    }
    size_t operand[2];
    for (size_t k = 0; k < 2; k++) {
        const Expr *a = e->args[k];
        if (a->kind != EXPR_NAME) {
            check_expr_error(c, a, "grad needs the name of a %s here, not an expression",
                             k == 0 ? "stage" : "given or a stage");
            diag_hint(c->diag, "give it a step of its own, as in `total: sum(x * x)`, and write grad(total, x)");
            return NO_NODE;
        }
        operand[k] = check_find_name(c, a->name);
        if (operand[k] == FAILED_NODE) {
            c->uses_failed = true;  // its own error is already reported
            return NO_NODE;
        }
        // the steps after this one; a claim is none of them (it is checked after every step,
        // and check_compile_name below says what is wrong with a name it cannot use)
        const LessonStep *end = c->lesson->steps + c->lesson->n_steps;
        for (const LessonStep *s = c->claiming ? end : c->step + 1; operand[k] == NO_NODE && s < end; s++)
            if (strcmp(s->name, a->name) == 0) {
                check_token_error(c, a, "'%s' is the result of a later step (line %zu): grad cannot use it before it is computed",
                                  a->name, s->key->line);
                diag_hint(c->diag, "steps run in order; move this step below the one that computes '%s'", a->name);
                return NO_NODE;
            }
        if (operand[k] == NO_NODE) {
            // not a given or stage: the usual errors (a later step, an unknown name), or a
            // constant such as pi, which is no stage
            if (check_compile_name(c, a) != NO_NODE) {
                check_expr_error(c, a, "'%s' is a number of the language, not a given or a stage", a->name);
                diag_hint(c->diag, "grad differentiates one stage of the lesson by another, by name");
            }
            return NO_NODE;
        }
    }
    size_t y = operand[0], x = operand[1];
    if (!grad_operands_fit(c, e, y, x, true))
        return NO_NODE;
    // a later grad of the same y finds its gradient in the pass laid out before
    if (!backward_work(c, e, c->n_backwards))
        return NO_NODE;
    // (x comes before y, so a pass laid out for y, which covers every node up to y, holds x)
    for (const Backward *b = c->backwards; b; b = b->next)
        if (b->y == y && b->gradient[x] != NO_NODE)
            return b->gradient[x];
    if (!backward_work(c, e, y + 1) || !grad_way_exists(c, e, y, x))
        return NO_NODE;
    // A claim is worked out, not shown: the stages of a new backward pass would have no place.
    if (c->claiming) {
        check_expr_error(c, e, "a claim can only read a gradient that a step takes: no step takes grad(%s, %s)",
                         e->args[0]->name, e->args[1]->name);
        diag_hint(c->diag, "take it in a step first, as `d%s: grad(%s, %s)`, then claim about it", e->args[1]->name,
                  e->args[0]->name, e->args[1]->name);
        return NO_NODE;
    }
    const Backward *b = build_backward(c, e, y, x);
    return b ? b->gradient[x] : NO_NODE;
}


// ---------------------------------------------------------------- the gradients' values, at run time

Tensor *backward_gradient(const Plan *plan, size_t i, Tensor *const *values) {
    const PlanNode *n = &plan->nodes[i];
    ASSERT(n->kind == PLAN_GRAD);
    Tensor *d = tensor_create(&n->shape);
    if (!d)
        return NULL;
    if (n->n_args == 0) {
        kernel_fill(d, 1.0);  // d y / d y
        return d;
    }
    // Each use adds into d, reading it first. Zeros written before the first use, by the
    // threads of the loops (backend.h), touch every page once, for writing: a page the first use
    // reads before writing would be faulted in twice, once to read as zero and once to write.
    kernel_fill(d, 0.0);
    for (size_t k = 0; k < n->n_args; k++) {
        const PlanNode *use = &plan->nodes[n->grad_use[k]];
        const Tensor *in[OP_MAX_ARGS];
        plan_operands(use, values, in);
        OpGrad g = {.op = use->op, .din = d, .input = n->grad_use_input[k], .dout = values[n->args[k]],
                    .out = values[n->grad_use[k]], .in = in, .n_in = use->n_args, .attrs = &use->attrs};
        if (!use->op->grad(&g)) {
            tensor_destroy(d);
            return NULL;
        }
    }
    return d;
}
