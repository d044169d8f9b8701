// check_names: what a name or a number in an expression stands for: the names visible so far
// (givens, then steps), numbers known before running, and how a node is written where another
// node uses it.
#include "check_names.h"

#include <ctype.h>
#include <math.h>
#include <string.h>

#include "format.h"
#include "ops.h"

// ---------------------------------------------------------------- the names visible so far

static size_t name_slot(const Checker *c, const char *name) {
    size_t h = 14695981039346656037u;  // FNV-1a
    for (const char *p = name; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211u;
    size_t at = h & (c->cap_slots - 1);
    while (c->name_slots[at] && strcmp(c->names[c->name_slots[at] - 1], name) != 0)
        at = (at + 1) & (c->cap_slots - 1);
    return at;
}

// The loader has refused a name defined twice, so each name is new here.
bool check_add_name(Checker *c, const char *name, size_t node) {
    c->names[c->n_names] = name;
    c->name_node[c->n_names] = node;
    c->n_names++;
    c->name_slots[name_slot(c, name)] = c->n_names;
    return true;
}

size_t check_find_name(const Checker *c, const char *name) {
    size_t at = c->name_slots[name_slot(c, name)];
    return at ? c->name_node[at - 1] : NO_NODE;
}

// ---------------------------------------------------------------- constants

bool check_is_whole(double v) {
    return isfinite(v) && v == floor(v);
}

// The value of an operation that needs only its inputs' shapes (numel, size), computed from the
// shapes: the inputs hold no values. False when memory runs out or it refuses them.
static bool shape_op_value(const OpDef *op, const Shape *const *shapes, size_t n_in, const OpAttrs *attrs,
                           OpProblem *problem, double *out) {
    Tensor in[OP_MAX_ARGS];
    const Tensor *in_ptrs[OP_MAX_ARGS];
    for (size_t k = 0; k < n_in; k++) {
        in[k] = (Tensor){.shape = *shapes[k]};  // no values: a shape-only operation reads none
        shape_size(shapes[k], &in[k].size);
        in_ptrs[k] = &in[k];
    }
    Tensor result = {.shape = {.rank = 0}, .size = 1, .data = out};
    OpRun r = {.op = op, .out = &result, .in = in_ptrs, .n_in = n_in, .attrs = attrs, .problem = problem};
    return op->compute(&r);
}

// A call that needs only shapes, numel(logits) or size(x, -1), as a number known before running:
// its tensor arguments are names of givens or steps, whose shapes the checker knows, its other
// arguments numbers known before running. False (with no error) when e is not such a call;
// false with an error when the call refuses what it is given.
static bool shape_call_eval(Checker *c, const Expr *e, double *out) {
    const OpDef *op = ops_find_function(e->name);
    if (!op || !op->from_shapes_only || check_find_name(c, e->name) != NO_NODE)
        return false;
    OpProblem problem;
    op_problem_clear(&problem);
    OpCheck chk = {.op = op, .arena = c->plan->arena, .problem = &problem};
    size_t tensors = 0;
    for (size_t p = 0; p < OP_MAX_PARAMS && op->params[p].name; p++) {
        chk.constants[p] = op->params[p].fallback;
        tensors += op->params[p].kind == PARAM_TENSOR;
    }
    for (size_t i = 0; i < e->n_args; i++) {
        size_t p = i;
        for (size_t q = 0; e->arg_names && e->arg_names[i] && q < OP_MAX_PARAMS && op->params[q].name; q++)
            if (strcmp(op->params[q].name, e->arg_names[i]) == 0)
                p = q;
        if (p >= OP_MAX_PARAMS || !op->params[p].name || chk.present[p])
            return false;  // the call's own check says what is wrong with it
        const Expr *arg = e->args[i];
        if (op->params[p].kind == PARAM_TENSOR) {
            size_t node = arg->kind == EXPR_NAME ? check_find_name(c, arg->name) : NO_NODE;
            c->uses_failed = c->uses_failed || node == FAILED_NODE;
            if (node == NO_NODE || node == FAILED_NODE || chk.n_inputs != p)
                return false;
            chk.shapes[chk.n_inputs] = &c->plan->nodes[node].shape;
            chk.labels[chk.n_inputs++] = c->plan->nodes[node].labels;
        } else if (!check_const_eval(c, arg, &chk.constants[p])) {
            return false;
        }
        chk.present[p] = true;
    }
    if (chk.n_inputs != tensors)
        return false;
    if (!op->infer(&chk) || chk.shape.rank != 0) {
        if (problem.failed) {
            check_expr_error(c, e, "%s", problem.message);
            if (problem.hint[0])
                diag_hint(c->diag, "%s", problem.hint);
        }
        return false;
    }
    if (!shape_op_value(op, chk.shapes, chk.n_inputs, &chk.attrs, &problem, out))
        return check_expr_error(c, e, "%s", problem.message);
    return true;
}

// Numbers known before running: literals, True/False/pi/inf, scalar givens, calls that need only
// shapes (numel(x)), and arithmetic on those. False (with no error) when e is not such a number.
bool check_const_eval(Checker *c, const Expr *e, double *out) {
    switch (e->kind) {
    case EXPR_NUMBER:
        *out = e->number;
        return true;
    case EXPR_PREFIX: {
        const OpDef *op = ops_operator(OP_PREFIX, e->op);
        if (!op->fold || !check_const_eval(c, e->args[0], out))
            return false;
        *out = op->fold(op, *out, 0);
        return true;
    }
    case EXPR_BINARY: {
        double a, b;
        const OpDef *op = ops_operator(OP_INFIX, e->op);
        if (!op->fold || !check_const_eval(c, e->args[0], &a) || !check_const_eval(c, e->args[1], &b))
            return false;
        *out = op->fold(op, a, b);
        return true;
    }
    case EXPR_NAME: {
        size_t node = check_find_name(c, e->name);
        if (node == FAILED_NODE) {
            c->uses_failed = true;  // its own error is already reported
            return false;
        }
        if (node != NO_NODE) {
            const PlanNode *n = &c->plan->nodes[node];
            if (n->kind == PLAN_GIVEN && n->shape.rank == 0 && n->given->init == GIVEN_VALUES) {
                *out = n->given->values[0];
                return true;
            }
            // A number of a model's config.json (n_embd: {file: config.json}) is read at load.
            if (n->kind == PLAN_GIVEN && n->given->init == GIVEN_FILE && !n->given->file.tensor) {
                *out = n->given->file.number;
                return true;
            }
            if (n->kind == PLAN_CONSTANT && n->shape.rank == 0) {
                *out = n->values[0];
                return true;
            }
            // A step of arithmetic on numbers known before the run (group: n_q / n_kv) is one
            // too, folded as the run would compute it.
            if (n->kind == PLAN_OP && n->stage_kind == STAGE_STEP && n->shape.rank == 0 && n->expr &&
                n->expr->kind != EXPR_NAME && check_const_eval(c, n->expr, out))
                return true;
            // A count from a shape (n: numel(tokens), k: size(x, -1)) is known once the shapes
            // are: a lesson on a text of any length takes its positions and mask from it.
            if (n->kind == PLAN_OP && n->op->from_shapes_only && n->shape.rank == 0) {
                const Shape *shapes[OP_MAX_ARGS];
                for (size_t k = 0; k < n->n_args; k++)
                    shapes[k] = &c->plan->nodes[n->args[k]].shape;
                OpProblem problem;
                op_problem_clear(&problem);
                // the step's own check accepted these shapes, and a shape-only value needs nothing more
                bool known = shape_op_value(n->op, shapes, n->n_args, &n->attrs, &problem, out);
                ASSERT(known);
                return true;
            }
            return false;
        }
        if (strcmp(e->name, "True") == 0 || strcmp(e->name, "False") == 0) {
            *out = e->name[0] == 'T';
            return true;
        }
        if (strcmp(e->name, "pi") == 0) {
            *out = 3.14159265358979323846;
            return true;
        }
        if (strcmp(e->name, "inf") == 0) {
            *out = INFINITY;
            return true;
        }
        return false;
    }
    case EXPR_CALL:
        return shape_call_eval(c, e, out);
    default:
        return false;
    }
}

// Does node n hold only whole numbers: a count, or a constant whose values are all whole?
bool check_counts_as_integer(const PlanNode *n) {
    if (n->is_count)
        return true;
    if (n->kind != PLAN_CONSTANT)
        return false;
    size_t size;
    shape_size(&n->shape, &size);
    for (size_t i = 0; i < size; i++)
        if (!check_is_whole(n->values[i]))
            return false;
    return true;
}

// Has a check_const_eval that failed been explained already: by an error of its own, or by the
// error of a given or step it reads, which failed before? Then nothing more is said.
bool check_already_explained(const Checker *c) {
    return c->diag->status != STATUS_OK || c->uses_failed;
}

// A constant node for a number or a list literal (nested lists of numbers).
static bool list_shape(Checker *c, const Expr *e, Shape *shape, size_t depth) {
    if (e->kind != EXPR_LIST) {
        double v;
        if (!check_const_eval(c, e, &v))
            return !check_already_explained(c) &&
                   check_expr_error(c, e, "a list written in an expression holds numbers only");
        return true;
    }
    if (depth >= TENSOR_MAX_RANK)
        return check_expr_error(c, e, "lists nest at most %d deep (rank %d)", TENSOR_MAX_RANK, TENSOR_MAX_RANK);
    if (shape->rank <= depth) {
        shape->rank = depth + 1;
        shape->dim[depth] = e->n_args;
    } else if (shape->dim[depth] != e->n_args) {
        return check_expr_error(c, e, "this list has %zu item%s where %zu were expected: rows must have equal lengths",
                                e->n_args, e->n_args == 1 ? "" : "s", shape->dim[depth]);
    }
    for (size_t i = 0; i < e->n_args; i++) {
        bool inner_is_list = e->args[i]->kind == EXPR_LIST;
        if (inner_is_list != (e->args[0]->kind == EXPR_LIST))
            return check_expr_error(c, e->args[i], "mixing numbers and lists in one list");
        if (!list_shape(c, e->args[i], shape, depth + 1))
            return false;
    }
    return true;
}

static void list_fill(Checker *c, const Expr *e, double *values, size_t *k) {
    if (e->kind != EXPR_LIST) {
        check_const_eval(c, e, &values[(*k)++]);
        return;
    }
    for (size_t i = 0; i < e->n_args; i++)
        list_fill(c, e->args[i], values, k);
}

size_t check_add_constant(Checker *c, const Expr *e) {
    // A number, or a list of them: callers have checked that a name is a constant.
    Shape shape = {0};
    if (e->kind == EXPR_LIST && !list_shape(c, e, &shape, 0))
        return NO_NODE;
    size_t size;
    bool fits = shape_size(&shape, &size);
    ASSERT(fits);  // at most OP_MAX_ARGS items on each of TENSOR_MAX_RANK axes
    double *values = arena_array(c->plan->arena, size, sizeof(double));
    if (!values) {
        diag_out_of_memory(c->diag);
        return NO_NODE;
    }
    size_t k = 0;
    list_fill(c, e, values, &k);
    size_t index;
    PlanNode *n = check_new_node(c, PLAN_CONSTANT, &index);
    if (!n)
        return NO_NODE;
    n->shape = shape;
    n->values = values;
    n->has_values = true;
    n->expr = e;
    n->is_count = check_counts_as_integer(n);
    return index;
}

// ---------------------------------------------------------------- names in expressions

size_t check_compile_name(Checker *c, const Expr *e) {
    size_t node = check_find_name(c, e->name);
    if (node == FAILED_NODE) {
        c->uses_failed = true;
        return NO_NODE;
    }
    if (node != NO_NODE)
        return node;
    double v;
    if (check_const_eval(c, e, &v))
        return check_add_constant(c, e);
    if (ops_find_function(e->name)) {
        check_token_error(c, e, "'%s' is a function: call it with its arguments, as in %s(x)", e->name, e->name);
        return NO_NODE;
    }
    // A step defined further down cannot be used yet.
    for (size_t i = 0; i < c->lesson->n_steps; i++) {
        const LessonStep *s = &c->lesson->steps[i];
        if (strcmp(s->name, e->name) == 0 && s != c->step) {
            check_token_error(c, e, "'%s' is not defined yet: it is the result of a later step (line %zu)", e->name,
                              s->key->line);
            diag_hint(c->diag, "steps run in order; move this step below the one that defines '%s'", e->name);
            return NO_NODE;
        }
        if (s == c->step && strcmp(s->name, e->name) == 0) {
            check_token_error(c, e, "the step '%s' uses its own result", e->name);
            diag_hint(c->diag, "a step can only use givens and earlier steps");
            return NO_NODE;
        }
    }
    // X.shape: a name with an attribute, not a stage of a block's application (layer1.y).
    const char *dot = strrchr(e->name, '.');
    if (dot) {
        char *base = arena_strndup(c->plan->arena, e->name, (size_t)(dot - e->name));
        size_t at = base ? check_find_name(c, base) : NO_NODE;
        if (at != NO_NODE && at != FAILED_NODE) {
            size_t shift = (size_t)(dot - e->name);
            Expr attr = *e;
            attr.op_pos += shift;
            attr.op_len -= shift;
            check_token_error(c, &attr, "unknown attribute '%s'", dot);
            diag_hint(c->diag, "the only attribute is .T (the transpose); functions are called as f(x), and a "
                               "stage of a block's application is named layer1.y");
            return NO_NODE;
        }
    }
    check_token_error(c, e, "unknown name '%s'", e->name);
    const char *closest = diag_closest(e->name, c->names, c->n_names);
    if (closest)
        diag_hint(c->diag, "did you mean '%s'?", closest);
    else
        diag_hint(c->diag, "names come from given: and from earlier steps");
    return NO_NODE;
}

// ---------------------------------------------------------------- how a node is written

// Text that reads as one value: a name, a number, f(...), x[...], (...), or anything
// without spaces. Anything else is bracketed before it is indexed or combined.
static bool is_atomic(const char *text) {
    if (!strchr(text, ' '))
        return true;
    const char *p = text;
    while (isalnum((unsigned char)*p) || *p == '_' || *p == '.')
        p++;
    if (*p != '(' && *p != '[')
        return false;
    // The bracket opened at p must close at the very end.
    int depth = 0;
    for (const char *q = p; *q; q++) {
        if (*q == '(' || *q == '[')
            depth++;
        else if (*q == ')' || *q == ']')
            if (--depth == 0)
                return q[1] == '\0';
    }
    return false;
}

// How node n is written where it is an input, in shown work and in messages: its name, a
// number, or its expression (in brackets unless it reads as one value).
const char *check_display_name(Checker *c, const PlanNode *n) {
    if (n->kind == PLAN_GIVEN || (n->is_stage && (n->stage_kind == STAGE_STEP || n->stage_kind == STAGE_GRADIENT)))
        return n->name;
    if (n->kind == PLAN_GRAD)
        return "1";  // d y / d y, the seed of a backward pass
    const char *text = n->expr_text;
    char buf[64];
    if (n->kind == PLAN_CONSTANT) {
        if (n->shape.rank == 0) {
            format_short(n->values[0], buf, sizeof(buf));
            text = buf;
        } else {
            text = arena_strndup(c->plan->arena, n->step->expr + n->expr->start, n->expr->end - n->expr->start);
            if (!text)
                return NULL;
        }
    }
    if (is_atomic(text))
        return arena_strdup(c->plan->arena, text);
    return arena_printf(c->plan->arena, "(%s)", text);
}
