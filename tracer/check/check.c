// check: a Lesson turned into a Plan. Checks each given, step and claim in turn, so that one run
// reports every error that does not follow from another; the expressions are compiled by
// check_call, check_index, check_names and backward, which share the Checker (check_state.h).
#include "check.h"

#include <math.h>
#include <string.h>

#include "check_call.h"
#include "check_names.h"
#include "check_state.h"
#include "ops.h"

// ---------------------------------------------------------------- labels on steps

static bool apply_step_labels(Checker *c, PlanNode *n, const LessonStep *s) {
    const LabelList *lists[2] = {s->rows, s->cols};
    const Node *nodes[2] = {s->rows_node, s->cols_node};
    for (int k = 0; k < 2; k++) {
        if (!lists[k])
            continue;
        size_t rank = n->shape.rank;
        // cols label the last axis, rows the one before; a vector has only cols.
        if (rank < (size_t)(k == 0 ? 2 : 1)) {
            char s_[64];
            shape_format(&n->shape, s_, sizeof(s_));
            diag_error(c->diag, STATUS_LESSON_ERROR, &c->lesson->doc->source, nodes[k]->line, nodes[k]->col, 1,
                       "%s labels do not fit: the result of '%s' has shape %s", k == 0 ? "rows" : "cols",
                       s->name, s_);
            diag_hint(c->diag, "%s", k == 0 ? "rows label the second-to-last axis; a vector has only cols"
                                            : "a scalar has no axis to label");
            return false;
        }
        size_t axis = k == 0 ? rank - 2 : rank - 1;
        // A list of the wrong length (after an edit of the token count, say) is a warning: the
        // axis is shown by position.
        if (lists[k]->n != n->shape.dim[axis]) {
            char s_[64];
            shape_format(&n->shape, s_, sizeof(s_));
            diag_warning(c->diag, c->lesson->path, nodes[k]->line, nodes[k]->col,
                         "%zu %s labels for an axis of size %zu (the result of '%s' has shape %s): its %s are shown "
                         "by position",
                         lists[k]->n, k == 0 ? "row" : "column", n->shape.dim[axis], s->name, s_,
                         k == 0 ? "rows" : "columns");
            continue;
        }
        n->labels[axis] = (Labels){lists[k]->items, lists[k]->n};
    }
    return true;
}

// An intermediate stage inside an expression takes, for each axis it has no labels of, the
// labels of the axis it becomes in an elementwise operation that reads it (axes meet from the
// right, as they broadcast, and a broadcast axis of size 1 keeps none): in
// softmax(scores + causal_mask(n)) the mask's rows and columns are the tokens of scores, not
// positions 0..n-1. Readers come after what they read, so walking back from the last node
// passes labels down a whole chain (a mask under a + under a *).
static void inherit_labels_from_readers(Plan *plan) {
    for (size_t i = plan->n_nodes; i-- > 0;) {
        const PlanNode *r = &plan->nodes[i];
        if (r->kind != PLAN_OP || !r->op->elementwise)
            continue;
        for (size_t k = 0; k < r->n_args; k++) {
            PlanNode *x = &plan->nodes[r->args[k]];
            if (x->kind != PLAN_OP || !x->is_stage || x->stage_kind != STAGE_INTERMEDIATE ||
                x->shape.rank > r->shape.rank)
                continue;
            for (size_t a = 0; a < x->shape.rank; a++) {
                size_t ra = r->shape.rank - x->shape.rank + a;
                if (!x->labels[a].items && r->labels[ra].items && x->shape.dim[a] == r->shape.dim[ra])
                    x->labels[a] = r->labels[ra];
            }
        }
    }
}

// show: a picture needs values, a heatmap at least one axis, bars exactly one.
static bool check_show(Checker *c, const PlanNode *n, const LessonStep *s) {
    if ((s->view == VIEW_PERCENT || s->view == VIEW_CORNERS) && !n->has_values) {
        char shape[64];
        shape_format(&n->shape, shape, sizeof(shape));
        const Node *at = s->show_node;
        diag_error(c->diag, STATUS_LESSON_ERROR, &c->lesson->doc->source, at->line, at->col, yamldoc_node_width(at),
                   "show: %s does not fit '%s': its result is shape-only (shape %s), with no values to show",
                   s->view == VIEW_PERCENT ? "percent" : "corners", s->name, shape);
        diag_hint(c->diag, "leave out show:, or give the step's inputs values");
        return false;
    }
    if (s->show == PICTURE_DEFAULT || s->show == PICTURE_TABLE)
        return true;
    const char *what = s->show == PICTURE_BARS ? "bars" : s->view == VIEW_PICTURE ? "picture" : "heatmap";
    char shape[64];
    shape_format(&n->shape, shape, sizeof(shape));
    const char *problem = NULL, *hint = NULL;
    if (!n->has_values) {
        problem = "is shape-only: it has no values to draw";
        hint = "leave out show:, or give the step's inputs values";
    } else if (n->shape.rank == 0) {
        problem = "is a single number";
        hint = s->show == PICTURE_BARS ? "bars draw a vector, one bar per entry: leave out show: for a number"
                                       : "a heatmap colours the cells of a vector or a matrix: leave out show: for a number";
    } else if (s->show == PICTURE_BARS && n->shape.rank != 1) {
        problem = "is not a vector";
        hint = "bars draw a vector, one bar per entry; show: heatmap draws a matrix";
    }
    if (!problem)
        return true;
    const Node *at = s->show_node;
    diag_error(c->diag, STATUS_LESSON_ERROR, &c->lesson->doc->source, at->line, at->col, yamldoc_node_width(at),
               "show: %s does not fit '%s': its result %s (shape %s)", what, s->name, problem, shape);
    diag_hint(c->diag, "%s", hint);
    return false;
}

// ---------------------------------------------------------------- explain requests


// An explain: (or quiz:) request resolved against the node's shape, added to *list; `key` names
// it in errors.
static bool add_target(Checker *c, size_t node, const ExplainSpec *spec, const char *key, ExplainTarget **list,
                       size_t *n) {
    char message[512], hint[512];
    ExplainTarget target;
    if (!plan_resolve_explain(c->plan, node, spec, &target, message, sizeof(message), hint, sizeof(hint))) {
        const Node *at = spec->node;
        diag_error(c->diag, STATUS_LESSON_ERROR, &c->lesson->doc->source, at->line, at->col,
                   yamldoc_node_width(at), "%s: %s", key, message);
        if (hint[0])
            diag_hint(c->diag, "%s", hint);
        return false;
    }
    ExplainTarget *grown = arena_array(c->plan->arena, *n + 1, sizeof(ExplainTarget));
    if (!grown)
        return diag_no_memory(c->diag);
    if (*n)
        memcpy(grown, *list, *n * sizeof(ExplainTarget));
    grown[(*n)++] = target;
    *list = grown;
    return true;
}

// quiz: [i, j], row i, or all for a single number (asked as its one element).
static bool add_quiz(Checker *c, size_t node, const ExplainSpec *spec) {
    const PlanNode *n = &c->plan->nodes[node];
    const Node *at = spec->node;
    size_t size = 0;
    shape_size(&n->shape, &size);
    ExplainSpec whole = *spec;
    if (spec->kind == EXPLAIN_ALL && size != 1) {
        diag_error(c->diag, STATUS_LESSON_ERROR, &c->lesson->doc->source, at->line, at->col, yamldoc_node_width(at),
                   "quiz: all would ask every element; choose an element or a row");
        diag_hint(c->diag, "quiz: takes [i, j] (one element) or row i (one row); all is for a single number");
        return false;
    }
    if (spec->kind == EXPLAIN_ALL) {  // its one element: index 0 on every axis
        whole.kind = EXPLAIN_ELEMENT;
        whole.n_index = n->shape.rank;
        memset(whole.index, 0, sizeof(whole.index));
    }
    if (n->shape.rank == 0 && spec->kind != EXPLAIN_ALL && n->has_values) {
        diag_error(c->diag, STATUS_LESSON_ERROR, &c->lesson->doc->source, at->line, at->col, yamldoc_node_width(at),
                   "quiz: '%s' is a single number (shape []): it has no rows or elements to pick", n->name);
        diag_hint(c->diag, "write quiz: all to ask its one value");
        return false;
    }
    return add_target(c, node, &whole, "quiz", &c->plan->quizzes, &c->plan->n_quizzes);
}

// ---------------------------------------------------------------- document values

// Printed numbers can only be compared with a stage that has values. When their shape no
// longer fits the stage (a student gave X five rows where the document had three), they are
// set aside, not refused: the trace notes it and the lesson still runs.
static bool check_document(Checker *c, PlanNode *n, const DocValues *dv, const char *name) {
    if (dv && !n->has_values) {
        diag_error(c->diag, STATUS_LESSON_ERROR, &c->lesson->doc->source, dv->node->line, dv->node->col,
                   yamldoc_node_width(dv->node), "'%s' has only a shape, no values to compare with the document's",
                   name);
        if (n->kind == PLAN_GIVEN)  // a given has no inputs: its own values are missing
            diag_hint(c->diag, "give it values (or init: random), or leave out document:");
        else
            diag_hint(c->diag, "give its inputs values, or leave out document:");
        return false;
    }
    n->document_set_aside = dv && !shape_equal(&dv->shape, &n->shape);
    return true;
}

// ---------------------------------------------------------------- the plan

static bool add_given(Checker *c, const LessonGiven *g) {
    size_t index;
    c->given = g;
    PlanNode *n = check_new_node(c, PLAN_GIVEN, &index);
    c->given = NULL;
    if (!n)
        return false;
    n->given = g;
    n->shape = g->shape;
    n->has_values = g->init != GIVEN_SHAPE_ONLY;
    n->is_stage = true;
    n->stage_kind = STAGE_GIVEN;
    // Values all written as whole numbers (d_k: 4, token_ids: [0, 1, 2]) are counts: they print
    // as 4, and they keep counts they scale exact. So are a text's token ids.
    size_t n_values = 0;
    shape_size(&g->shape, &n_values);
    n->is_count = (g->init == GIVEN_VALUES && (g->value_nodes || g->text_node)) ||
                  (g->init == GIVEN_FILE && g->file.whole);
    for (size_t i = 0; n->is_count && g->init == GIVEN_VALUES && g->value_nodes && i < n_values; i++)
        n->is_count = check_is_whole(g->values[i]) && fabs(g->values[i]) <= TENSOR_EXACT_COUNT &&
                      !strpbrk(g->value_nodes[i]->text, ".eE");
    if (!check_document(c, n, g->document, g->name))
        return false;
    n->name = g->name;
    n->number = "";
    size_t rank = g->shape.rank;
    if (g->rows && rank >= 2)
        n->labels[rank - 2] = (Labels){g->rows->items, g->rows->n};
    if (g->cols && rank >= 1)
        n->labels[rank - 1] = (Labels){g->cols->items, g->cols->n};
    if (g->ids_of)
        n->ids_of = (Labels){g->ids_of->items, g->ids_of->n};
    if (n->has_values) {
        size_t size;
        shape_size(&g->shape, &size);
        c->total_values += size;  // the loader holds a given to TENSOR_MAX_VALUES: no overflow
        if (c->total_values > PLAN_MAX_TOTAL_VALUES)
            return check_total_too_big(c, NULL, g);
    }
    return check_add_name(c, g->name, index);
}

// The step's (or claim's) expression parsed, or NULL with the error located in the file.
static const Expr *parse_expr(Checker *c, const LessonStep *s) {
    ExprError err;
    Expr *e = expr_parse(c->plan->arena, s->expr, &err);
    if (e && s->scope)
        expr_rename(e, s->scope->from, s->scope->to, s->scope->n);
    if (e)
        return e;
    if (!err.message[0]) {
        diag_no_memory(c->diag);
        return NULL;
    }
    plan_error_at(c->diag, c->lesson, s, err.pos, err.width, "%s", err.message);
    if (err.hint[0])
        diag_hint(c->diag, "%s", err.hint);
    return NULL;
}

static char *stage_number(Checker *c, size_t step, size_t k) {
    if (k < 26)
        return arena_printf(c->plan->arena, "%zu%c", step, (char)('a' + k));
    return arena_printf(c->plan->arena, "%zu.%zu", step, k + 1);
}

// Whether a value of shape `have` broadcasts to `want` as numpy would, without growing it.
static bool broadcasts_to(const Shape *have, const Shape *want) {
    if (have->rank > want->rank)
        return false;
    for (size_t i = 1; i <= have->rank; i++) {
        size_t h = have->dim[have->rank - i], w = want->dim[want->rank - i];
        if (h != w && h != 1)
            return false;
    }
    return true;
}

// An intervention's step (replace:) stands in for a stage, so it has that stage's shape: a
// value that broadcasts to it (0, a mean over an axis) fills every place of it, exactly, as
// where(1, value, stage) does; the gradient then reaches the value and not the stage.
static size_t fit_replacement(Checker *c, const LessonStep *s, const Expr *e, size_t top) {
    size_t stage = check_find_name(c, s->replaces);
    if (stage == NO_NODE || stage == FAILED_NODE) {
        c->uses_failed = stage == FAILED_NODE;
        return NO_NODE;  // the stage itself was refused, with its own error
    }
    const Shape *want = &c->plan->nodes[stage].shape, *have = &c->plan->nodes[top].shape;
    if (shape_equal(want, have))
        return top;
    if (!broadcasts_to(have, want)) {
        char hs[64], ws[64];
        shape_format(have, hs, sizeof(hs));
        shape_format(want, ws, sizeof(ws));
        check_expr_error(c, e, "this value has shape %s, but the stage it replaces, %s, has shape %s", hs, s->name, ws);
        diag_hint(c->diag, "give a value of the stage's shape, or one that broadcasts to it: 0 zeroes the stage, "
                           "mean(x, axis=0) puts the mean of its rows in every row");
        return NO_NODE;
    }
    ExprError err;
    const Expr *one = expr_parse(c->plan->arena, "1", &err);
    if (!one) {
        diag_no_memory(c->diag);
        return NO_NODE;
    }
    size_t cond = check_add_constant(c, one);
    if (cond == NO_NODE)
        return NO_NODE;
    size_t inputs[3] = {cond, top, stage};
    OpCheck chk = {0};
    CallSite site = {.call = e, .inputs = {e, e, e}};
    size_t fit = check_add_op(c, ops_find_function("where"), inputs, 3, &chk, &site, e);
    if (fit == NO_NODE)
        return NO_NODE;
    char hs[64], ws[64];
    shape_format(have, hs, sizeof(hs));
    shape_format(want, ws, sizeof(ws));
    PlanNode *n = &c->plan->nodes[fit];
    n->op_line = arena_printf(c->plan->arena, "%s -> %s", hs, ws);
    n->op_about = "the value in every place of the stage it replaces (numpy broadcasting)";
    if (!n->op_line) {
        diag_no_memory(c->diag);
        return NO_NODE;
    }
    return fit;
}

static bool add_step(Checker *c, const LessonStep *s, size_t number) {
    c->step = s;
    c->step_number = number;
    c->first_node = c->plan->n_nodes;
    const Expr *e = parse_expr(c, s);
    if (!e)
        return false;
    size_t top = check_compile(c, e);
    if (top != NO_NODE && s->replaces)
        top = fit_replacement(c, s, e, top);
    if (top == NO_NODE)
        return false;
    // A step that only names another value, or a constant that is already a stage, gets a
    // node of its own so that it shows as a stage.
    PlanNode *t = &c->plan->nodes[top];
    if (top < c->first_node || t->is_stage == false || t->kind == PLAN_GRAD) {
        if (t->kind == PLAN_CONSTANT && top >= c->first_node) {
            t->is_stage = true;
            t->op_line = NULL;
        } else {
            OpCheck chk = {0};
            CallSite site = {.call = e, .inputs = {e}};
            top = check_add_op(c, ops_find_function("copy"), &top, 1, &chk, &site, e);
            if (top == NO_NODE)
                return false;
            c->plan->nodes[top].renames = true;
        }
        t = &c->plan->nodes[top];
    }
    t->stage_kind = STAGE_STEP;
    t->is_stage = true;
    t->name = s->name;
    t->number = arena_printf(c->plan->arena, "%zu", number);
    t->expr_text = s->expr;
    if (!t->number)
        return diag_no_memory(c->diag);
    if (!apply_step_labels(c, t, s) || !check_show(c, t, s))
        return false;
    Plan *p = c->plan;
    if (s->explain.kind != EXPLAIN_NONE && !add_target(c, top, &s->explain, "explain", &p->explains, &p->n_explains))
        return false;
    if (s->quiz.kind != EXPLAIN_NONE && t->kind != PLAN_OP) {
        const Node *at = s->quiz.node;
        diag_error(c->diag, STATUS_LESSON_ERROR, &c->lesson->doc->source, at->line, at->col, yamldoc_node_width(at),
                   "quiz: '%s' is written out in the lesson: there is nothing to work out", s->name);
        diag_hint(c->diag, "ask about a step that computes something, as `quiz: [0, 1]` under `scores: Q @ K.T`");
        return false;
    }
    if (s->quiz.kind != EXPLAIN_NONE && !add_quiz(c, top, &s->quiz))
        return false;
    if (!check_document(c, t, s->document, s->name))
        return false;
    size_t k = 0;
    for (size_t i = c->first_node; i < top; i++) {
        PlanNode *n = &c->plan->nodes[i];
        if (!n->is_stage)
            continue;
        if (n->stage_kind != STAGE_GRADIENT)  // a gradient keeps its name, dloss/dW
            n->name = arena_printf(c->plan->arena, "%s.%zu", s->name, k + 1);
        n->number = stage_number(c, number, k);
        if (!n->name || !n->number)
            return diag_no_memory(c->diag);
        k++;
    }
    for (size_t i = 0; i < s->n_aliases; i++)
        if (!check_add_name(c, s->aliases[i], top))
            return false;
    return check_add_name(c, s->name, top);
}

// ---------------------------------------------------------------- claims

// A claim ends in a truth value that has values, and prints under the latest stage it reads
// (for a step's claim:, never before that step).
static bool add_claim(Checker *c, const LessonClaim *claim, PlanClaim *out) {
    const LessonStep *w = &claim->where;
    c->step = w;
    c->first_node = c->plan->n_nodes;
    c->claiming = true;
    const Expr *e = parse_expr(c, w);
    if (!e)
        return false;
    size_t top = check_compile(c, e);
    if (top == NO_NODE)
        return false;
    const PlanNode *t = &c->plan->nodes[top];
    if (t->kind != PLAN_OP || !t->op->truth) {
        check_expr_error(c, e, "this claim is not true or false: '%s' gives numbers", w->expr);
        diag_hint(c->diag, "end a claim in a comparison (==, !=, <, <=, >, >=), allclose(a, b), all(...) or "
                           "any(...), as in allclose(sum(weights, axis=-1), 1)");
        return false;
    }
    if (!t->has_values) {
        check_expr_error(c, e, "this claim reads shape-only tensors: there are no values to judge it by");
        diag_hint(c->diag, "a claim about sizes can use numel(x), as in numel(W) == 768 * 50257");
        return false;
    }
    // The latest stage it reads: a name stands for a node before the claim's own.
    size_t after = top < c->first_node ? top : 0;
    for (size_t i = c->first_node; i < c->plan->n_nodes; i++) {
        const PlanNode *n = &c->plan->nodes[i];
        for (size_t k = 0; k < n->n_args; k++)
            if (n->args[k] < c->first_node && n->args[k] > after)
                after = n->args[k];
    }
    if (claim->step) {
        size_t own = check_find_name(c, claim->step->name);
        if (own != NO_NODE && own != FAILED_NODE && own > after)  // a failed step's error is reported
            after = own;
    }
    // A constant read by a claim (1 in x == 1) sits in no stage: the claim follows the givens.
    while (after > 0 && !c->plan->nodes[after].is_stage)
        after--;
    out->claim = claim;
    out->node = top;
    out->after = after;
    return true;
}

Plan *check_lesson(const Lesson *lesson, Diag *diag) {
    return check_lesson_within(lesson, NULL, diag);
}

Plan *check_lesson_within(const Lesson *lesson, const PlanMemory *memory, Diag *diag) {
    Plan *plan = plan_create(lesson);
    if (!plan) {
        diag_out_of_memory(diag);
        return NULL;
    }
    Checker c = {.lesson = lesson, .plan = plan, .diag = diag, .memory = memory};
    bool out_of_memory = false;
    size_t n_names = lesson->n_givens + lesson->n_steps;
    for (size_t i = 0; i < lesson->n_steps; i++)
        n_names += lesson->steps[i].n_aliases;
    for (c.cap_slots = 16; c.cap_slots < 2 * (n_names + 1); c.cap_slots *= 2)
        ;
    if (!(c.names = arena_array(plan->arena, n_names + 1, sizeof(char *))) ||
        !(c.name_node = arena_array(plan->arena, n_names + 1, sizeof(size_t))) ||
        !(c.name_slots = arena_array(plan->arena, c.cap_slots, sizeof(size_t))))
        goto fail;
    // Each given and step is checked on its own, so that one run reports every error that does
    // not follow from another, as a compiler does; what uses a failed name fails quietly.
    Diag *item = util_malloc(sizeof(Diag));
    if (!item)
        goto fail;
    bool failed = false;
    // Then each claim, once every name is known.
    size_t n_items = lesson->n_givens + lesson->n_steps + lesson->n_claims;
    if (lesson->n_claims && !(plan->claims = arena_array(plan->arena, lesson->n_claims, sizeof(PlanClaim)))) {
        util_free(item);
        goto fail;
    }
    for (size_t i = 0; i < n_items; i++) {
        bool given = i < lesson->n_givens;
        bool claim = i >= lesson->n_givens + lesson->n_steps;
        diag_init(item);
        c.diag = item;
        c.uses_failed = false;
        size_t k = i - lesson->n_givens;  // the step, or past the steps the claim
        bool ok = given   ? add_given(&c, &lesson->givens[i])
                  : claim ? add_claim(&c, &lesson->claims[k - lesson->n_steps], &plan->claims[plan->n_claims])
                          : add_step(&c, &lesson->steps[k], k + 1);
        c.diag = diag;
        plan->n_claims += claim && ok;
        failed |= !ok;
        if (!ok && item->status != STATUS_LESSON_ERROR && !c.uses_failed) {
            out_of_memory = true;  // that alone is reported
            break;
        }
        if (!diag_append(diag, item)) {
            diag->more_dropped = i + 1 < n_items;  // what follows is not checked
            break;
        }
        if (!ok && c.past_limit)
            break;  // enough said
        if (!ok && !claim) {
            // The step's other names (a block's results: {last: out}) fail with it, quietly:
            // 'unknown name last' would only repeat its error.
            const LessonStep *s = given ? NULL : &lesson->steps[i - lesson->n_givens];
            for (size_t a = 0; s && a < s->n_aliases; a++)
                check_add_name(&c, s->aliases[a], FAILED_NODE);
            check_add_name(&c, given ? lesson->givens[i].name : s->name, FAILED_NODE);
        }
    }
    util_free(item);
    if (failed)
        goto fail;
    inherit_labels_from_readers(plan);
    // Names are final only now (a step's result takes the step's name at its end).
    for (size_t i = 0; i < plan->n_nodes; i++)
        if (!(plan->nodes[i].display = check_display_name(&c, &plan->nodes[i])))
            goto fail;
    if (!plan_index_stages(plan))
        goto fail;
    return plan;
fail:
    if (diag->status != STATUS_LESSON_ERROR || out_of_memory) {
        // Memory ran out (perhaps after lesson errors): say only that.
        diag->status = STATUS_OK;
        diag->n_more = 0;
        diag->more_dropped = false;
        diag_out_of_memory(diag);
    }
    plan_destroy(plan);
    return NULL;
}
