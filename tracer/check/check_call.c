// check_call: an operation called in an expression (an operator, or a function with its
// arguments bound to parameters) checked by its shape rule and added to the plan, and the
// dispatch of every kind of expression to the file that compiles it.
#include "check_call.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "backward.h"
#include "check_index.h"
#include "check_names.h"
#include "format.h"
#include "ops.h"

// An axis written beyond this is a slip, not an axis: refused before it is cast to an integer
// (within it, the shape rule says which axes the tensor has).
#define CHECK_MAX_AXIS 64


// ---------------------------------------------------------------- operations

static char *op_line(Checker *c, const OpDef *op, const OpCheck *chk, const CallSite *site) {
    StrBuf sb;
    strbuf_init(&sb);
    char s[64], out[64];
    shape_format(&chk->shape, out, sizeof(out));
    if (op->syntax != OP_FUNCTION)
        shape_format(chk->shapes[0], s, sizeof(s));
    if (op->syntax == OP_POSTFIX) {
        strbuf_printf(&sb, "%s%s -> %s", s, op->symbol, out);
    } else if (op->syntax == OP_INDEXING) {
        strbuf_printf(&sb, "%s indexed -> %s", s, out);
    } else if (op->syntax == OP_LIST) {
        strbuf_putc(&sb, '[');
        for (size_t i = 0; i < chk->n_inputs; i++) {
            shape_format(chk->shapes[i], s, sizeof(s));
            strbuf_printf(&sb, "%s%s", i ? ", " : "", s);
        }
        strbuf_printf(&sb, "] stacked -> %s", out);
    } else if (op->syntax == OP_PREFIX) {
        strbuf_printf(&sb, "%s%s%s -> %s", op->symbol, op_prefix_gap(op), s, out);
    } else if (op->syntax == OP_INFIX) {
        char b[64];
        shape_format(chk->shapes[1], b, sizeof(b));
        strbuf_printf(&sb, "%s %s %s -> %s", s, op->symbol, b, out);
    } else {
        strbuf_printf(&sb, "%s(", op->name);
        size_t input = 0;
        bool first = true;
        for (size_t p = 0; p < OP_MAX_PARAMS && op->params[p].name; p++) {
            const OpParam *param = &op->params[p];
            if (param->kind == PARAM_TENSOR || param->kind == PARAM_TENSORS) {
                size_t last = param->kind == PARAM_TENSORS ? chk->n_inputs : input + 1;
                for (; input < last && input < chk->n_inputs; input++) {
                    shape_format(chk->shapes[input], s, sizeof(s));
                    strbuf_printf(&sb, "%s%s", first ? "" : ", ", s);
                    first = false;
                }
            } else if (chk->present[p] && site->params[p]) {
                format_short(chk->constants[p], s, sizeof(s));
                if (param->kind == PARAM_FLAG)
                    snprintf(s, sizeof(s), "%s", chk->constants[p] != 0 ? "True" : "False");
                if (param->kind == PARAM_SHAPE || param->kind == PARAM_AXES) {  // as written: [2, -1]
                    size_t used = (size_t)snprintf(s, sizeof(s), "[");
                    for (size_t k = 0; k < chk->attrs.n_dims && used < sizeof(s); k++)
                        used += (size_t)snprintf(s + used, sizeof(s) - used, "%s%lld", k ? ", " : "",
                                                 chk->attrs.dims[k]);
                    if (used < sizeof(s))
                        snprintf(s + used, sizeof(s) - used, "]");
                }
                strbuf_printf(&sb, "%s%s=%s", first ? "" : ", ", param->name, s);
                first = false;
            }
        }
        strbuf_printf(&sb, ") -> %s", out);
    }
    char *text = sb.failed ? NULL : arena_strdup(c->plan->arena, strbuf_str(&sb));
    strbuf_finish(&sb);
    if (!text)
        diag_out_of_memory(c->diag);
    return text;
}

// Refuse an operation that would take the lesson past PLAN_MAX_MULTIPLY_ADDS (matrix
// products: each value of the result costs one multiply-add per entry of the left operand's
// last axis).
static bool check_work(Checker *c, const Expr *e, const OpDef *op, const OpCheck *chk) {
    // Inputs with values hold at most TENSOR_MAX_VALUES (2^28) each, so a product counts at
    // most 2^56 and the running total (at most 2^36 before it) cannot overflow.
    size_t work;
    bool counted = op_multiply_adds(op, chk->shapes, &chk->shape, &work);
    ASSERT(counted);
    c->total_multiply_adds += work;
    if (c->total_multiply_adds <= PLAN_MAX_MULTIPLY_ADDS)
        return true;
    char need[64], limit[64];
    size_t size;
    shape_size(&chk->shape, &size);
    const Shape *left = chk->shapes[0];
    double k = left->rank ? (double)left->dim[left->rank - 1] : 1.0;
    format_count((double)size * k, need, sizeof(need));
    format_count((double)PLAN_MAX_MULTIPLY_ADDS, limit, sizeof(limit));
    c->past_limit = true;
    check_expr_error(c, e, "this product needs %s multiply-adds; a lesson's products may need %s in all", need, limit);
    diag_hint(c->diag, "that is about a minute of arithmetic; use smaller shapes, or shape-only givens (a `shape:` "
                       "without values) to reason about sizes alone");
    return false;
}

// A problem an operation's shape rule reported, located where the call writes that input or
// parameter (or under the operator or function name for the whole call).
static void locate_problem(Checker *c, const CallSite *site, const OpProblem *p) {
    if (p->out_of_memory) {
        diag_out_of_memory(c->diag);
        return;
    }
    const Expr *e = site->call;
    const Expr *part = p->at.kind == OP_TARGET_INPUT   ? site->inputs[p->at.index]
                       : p->at.kind == OP_TARGET_PARAM ? site->params[p->at.index]
                                                       : NULL;
    if (part)
        plan_error_at(c->diag, c->lesson, c->step, part->start, part->end - part->start, "%s", p->message);
    else
        plan_error_at(c->diag, c->lesson, c->step, e->op_pos, e->op_len, "%s", p->message);
    if (p->hint[0])
        diag_hint(c->diag, "%s", p->hint);
}

size_t check_add_op(Checker *c, const OpDef *op, const size_t *inputs, size_t n_inputs, OpCheck *chk,
                    const CallSite *site, const Expr *e) {
    Plan *plan = c->plan;
    OpProblem problem = {0};
    chk->op = op;
    chk->n_inputs = n_inputs;
    chk->arena = plan->arena;
    chk->problem = &problem;
    for (size_t i = 0; i < n_inputs; i++) {
        chk->shapes[i] = &plan->nodes[inputs[i]].shape;
        chk->labels[i] = plan->nodes[inputs[i]].labels;
    }
    if (!op->infer(chk)) {
        locate_problem(c, site, &problem);
        return NO_NODE;
    }
    bool has_values = true, all_integer = true;
    for (size_t i = 0; i < n_inputs; i++) {
        const PlanNode *in = &plan->nodes[inputs[i]];
        has_values = has_values && in->has_values;
        all_integer = all_integer && check_counts_as_integer(in);
    }
    bool is_count = op->integers == INTEGERS_ALWAYS || op->integers == INTEGERS_ROUNDED ||
                    (op->integers == INTEGERS_IF_INPUTS && n_inputs > 0 && all_integer) ||
                    (op->integers == INTEGERS_IF_FIRST && check_counts_as_integer(&plan->nodes[inputs[0]]));
    if (op->from_shapes_only)
        has_values = true;
    if (!check_size(c, e, &chk->shape, has_values) || (has_values && !check_work(c, e, op, chk)))
        return NO_NODE;
    size_t *args = arena_array(plan->arena, n_inputs, sizeof(size_t));
    const Expr **args_at = arena_array(plan->arena, n_inputs, sizeof(Expr *));
    double *constants = arena_array(plan->arena, OP_MAX_PARAMS, sizeof(double));
    bool *present = arena_array(plan->arena, OP_MAX_PARAMS, sizeof(bool));
    const char *line = op_line(c, op, chk, site);
    const char *text = arena_strndup(plan->arena, c->step->expr + e->start, e->end - e->start);
    if (!args || !args_at || !constants || !present || !line || !text) {
        diag_out_of_memory(c->diag);
        return NO_NODE;
    }
    memcpy(args, inputs, n_inputs * sizeof(size_t));
    memcpy(args_at, site->inputs, n_inputs * sizeof(Expr *));
    size_t index;
    PlanNode *n = check_new_node(c, PLAN_OP, &index);
    if (!n)
        return NO_NODE;
    n->op = op;
    n->args = args;
    n->args_at = args_at;
    n->n_args = n_inputs;
    n->attrs = chk->attrs;
    memcpy(constants, chk->constants, sizeof(chk->constants));
    memcpy(present, chk->present, sizeof(chk->present));
    n->constants = constants;
    n->present = present;
    n->shape = chk->shape;
    n->has_values = has_values;
    n->is_count = is_count;
    memcpy(n->labels, chk->out_labels, sizeof(n->labels));
    if (n_inputs > 0)
        n->ids_of = plan_ids_of(op, &chk->attrs, &plan->nodes[inputs[0]].shape, &plan->nodes[inputs[0]].ids_of,
                                plan->nodes[inputs[0]].labels);
    n->is_stage = !c->claiming;
    n->stage_kind = STAGE_INTERMEDIATE;
    n->expr_text = text;
    n->op_line = line;
    n->op_about = chk->about;
    n->expr = e;
    return index;
}

// A shape argument, [2, -1] or a single number: whole numbers known before running, at most
// TENSOR_MAX_RANK of them. The operation's shape rule judges what they say.
// A list of sizes (PARAM_SHAPE) or of axes (PARAM_AXES) known before running, as written: [2, -1].
static bool shape_argument(Checker *c, const Expr *arg, const OpParam *param, OpAttrs *attrs) {
    bool axes = param->kind == PARAM_AXES;
    const char *item = axes ? "an axis" : "a size";
    const Expr *const *items = (const Expr *const *)&arg;
    size_t n = 1;
    if (arg->kind == EXPR_LIST) {
        items = (const Expr *const *)arg->args;
        n = arg->n_args;
    }
    if (n > TENSOR_MAX_RANK) {
        check_expr_error(c, arg, "'%s' has %zu %s, but a tensor has at most %d axes", param->name, n,
                         axes ? "axes" : "sizes", TENSOR_MAX_RANK);
        diag_hint(c->diag, axes ? "name each axis once, in its new order, as in [1, 0, 2]"
                                : "give one size per axis, as in [2, 3] or [2, -1]");
        return false;
    }
    for (size_t k = 0; k < n; k++) {
        double v;
        bool known = check_const_eval(c, items[k], &v);
        if (known && !axes && check_is_whole(v) && v > (double)TENSOR_MAX_VALUES) {
            char size[64], most[32];
            format_count(v, size, sizeof(size));
            format_count((double)TENSOR_MAX_VALUES, most, sizeof(most));
            check_expr_error(c, items[k], "a size in '%s' is %s: too large, as a tensor holds at most %s values",
                             param->name, size, most);
            diag_hint(c->diag, "write a smaller size (%s values of a tensor are 2 GiB of doubles)", most);
            return false;
        }
        if (!known || !check_is_whole(v) || fabs(v) > (double)TENSOR_MAX_VALUES) {
            if (!check_already_explained(c)) {
                check_expr_error(c, items[k], "%s in '%s' must be a whole number known before the lesson runs", item,
                                 param->name);
                diag_hint(c->diag, axes ? "write the axes in their new order, as [1, 0, 2]; -1 is the last"
                                        : "write sizes such as [2, 3], or -1 for the one to work out: [2, -1]");
            }
            return false;
        }
        attrs->dims[k] = (long long)v;
    }
    attrs->n_dims = n;
    return true;
}

static void signature(const OpDef *op, char *buf, size_t cap) {
    size_t used = (size_t)snprintf(buf, cap, "%s(", op->name);
    for (size_t p = 0; p < OP_MAX_PARAMS && op->params[p].name && used < cap; p++) {
        const OpParam *param = &op->params[p];
        char v[32] = "";
        if (param->optional && ((param->kind == PARAM_AXIS && param->fallback == 0) || param->kind == PARAM_AXES))
            snprintf(v, sizeof(v), "=None");
        else if (param->optional && param->kind == PARAM_FLAG)
            snprintf(v, sizeof(v), "=False");
        else if (param->optional)
            snprintf(v, sizeof(v), "=%g", param->fallback);
        used += (size_t)snprintf(buf + used, cap - used, "%s%s%s%s", p ? ", " : "",
                                 param->kind == PARAM_TENSORS ? "*" : "", param->name, v);
    }
    if (used < cap)
        snprintf(buf + used, cap - used, ")");
}

static size_t compile_call(Checker *c, const Expr *e) {
    const OpDef *op = ops_find_function(e->name);
    char sig[256];
    if (!op && strcmp(e->name, "grad") == 0 && check_find_name(c, e->name) == NO_NODE)
        return backward_compile_grad(c, e);
    if (!op && check_find_name(c, e->name) != NO_NODE) {
        check_token_error(c, e, "'%s' is a value, not a function: it cannot be called", e->name);
        if (strcmp(e->name, "grad") == 0)  // the learner's own grad hides the language's
            diag_hint(c->diag, "a given or step named 'grad' hides the function grad(y, x): rename it");
        else
            diag_hint(c->diag, "is an operator missing before '('? a product is written %s * (...) or %s @ (...)",
                      e->name, e->name);
        return NO_NODE;
    }
    if (!op) {
        check_token_error(c, e, "unknown function '%s'", e->name);
        size_t n = ops_function_count();
        const char **names = arena_array(c->plan->arena, n + 1, sizeof(char *));
        if (!names)
            return diag_no_memory(c->diag), NO_NODE;
        // grad is not an operation of the table but a function of the language; first, so a
        // misspelt grad is taken for it rather than for an operation as close
        names[0] = "grad";
        ops_function_names(names + 1, n++);
        const char *closest = diag_closest(e->name, names, n);
        if (closest) {
            diag_hint(c->diag, "did you mean '%s'?", closest);
        } else {
            // No close name: list them all, so the learner need not look elsewhere.
            char list[sizeof(c->diag->hint)];
            size_t used = (size_t)snprintf(list, sizeof(list), "the functions are");
            // the operations in table order, then grad
            for (size_t i = 1; i <= n && used < sizeof(list); i++)
                used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s", i > 1 ? ", " : " ", names[i % n]);
            diag_hint(c->diag, "%s", list);
        }
        return NO_NODE;
    }
    signature(op, sig, sizeof(sig));
    size_t n_params = 0;
    while (n_params < OP_MAX_PARAMS && op->params[n_params].name)
        n_params++;
    // Bind the arguments to parameters: positional first, then keywords.
    const Expr *bound[OP_MAX_PARAMS] = {0};
    const Expr *tensors_list[OP_MAX_ARGS];
    size_t n_tensors_list = 0;
    size_t next = 0;
    for (size_t i = 0; i < e->n_args; i++) {
        const Expr *arg = e->args[i];
        const char *kw = e->arg_names[i];
        if (!kw) {
            if (next < n_params && op->params[next].kind == PARAM_TENSORS) {
                tensors_list[n_tensors_list++] = arg;
                continue;
            }
            if (next >= n_params) {
                check_expr_error(c, arg, "%s takes %zu argument%s, but %zu were given", op->name, n_params,
                                 n_params == 1 ? "" : "s", e->n_args);
                diag_hint(c->diag, "write %s", sig);
                return NO_NODE;
            }
            bound[next++] = arg;
            continue;
        }
        size_t p = 0;
        while (p < n_params && strcmp(op->params[p].name, kw) != 0)
            p++;
        if (p == n_params) {
            plan_error_at(c->diag, c->lesson, c->step, e->arg_name_pos[i], strlen(kw), "%s has no parameter '%s'",
                          op->name, kw);
            diag_hint(c->diag, "write %s", sig);
            return NO_NODE;
        }
        if (op->params[p].kind == PARAM_TENSORS) {  // *x in the signature: the tensors, one by one
            plan_error_at(c->diag, c->lesson, c->step, e->arg_name_pos[i], strlen(kw),
                          "%s takes its tensors without a name: '%s=' cannot be written", op->name, kw);
            diag_hint(c->diag, "list them first, as in %s(a, b)", op->name);
            return NO_NODE;
        }
        if (bound[p] || (p < next && op->params[p].kind != PARAM_TENSORS)) {
            plan_error_at(c->diag, c->lesson, c->step, e->arg_name_pos[i], strlen(kw),
                          "the argument '%s' is given twice", kw);
            return NO_NODE;
        }
        bound[p] = arg;
    }
    OpCheck chk = {0};
    CallSite site = {.call = e};
    size_t inputs[OP_MAX_ARGS];
    size_t n_inputs = 0;
    for (size_t p = 0; p < n_params; p++) {
        const OpParam *param = &op->params[p];
        const Expr *arg = bound[p];
        site.params[p] = arg;
        if (param->kind == PARAM_TENSORS) {
            for (size_t k = 0; k < n_tensors_list; k++) {
                size_t node = check_compile(c, tensors_list[k]);
                if (node == NO_NODE)
                    return NO_NODE;
                site.inputs[n_inputs] = tensors_list[k];
                inputs[n_inputs++] = node;
            }
            continue;
        }
        if (!arg) {
            if (!param->optional) {
                check_token_error(c, e, "%s needs the argument '%s'", op->name, param->name);
                diag_hint(c->diag, "write %s", sig);
                return NO_NODE;
            }
            chk.constants[p] = param->fallback;
            continue;
        }
        if (param->kind == PARAM_TENSOR) {
            size_t node = check_compile(c, arg);
            if (node == NO_NODE)
                return NO_NODE;
            site.inputs[n_inputs] = arg;
            inputs[n_inputs++] = node;
            continue;
        }
        // axis=None and axes=None, as numpy writes them: the same as leaving the argument out.
        if ((param->kind == PARAM_AXIS || param->kind == PARAM_AXES) && arg->kind == EXPR_NAME &&
            strcmp(arg->name, "None") == 0 && check_find_name(c, "None") == NO_NODE) {
            chk.constants[p] = param->fallback;
            continue;
        }
        if (param->kind == PARAM_SHAPE || param->kind == PARAM_AXES) {
            if (!shape_argument(c, arg, param, &chk.attrs))
                return NO_NODE;
            chk.present[p] = true;
            continue;
        }
        double v;
        if (!check_const_eval(c, arg, &v)) {
            if (check_already_explained(c))
                return NO_NODE;
            check_expr_error(c, arg, "'%s' must be a number known before the lesson runs", param->name);
            if (param->kind == PARAM_AXIS)
                diag_hint(c->diag, "write a number such as -1 or the name of a number under given:, or leave "
                                   "axis out (or write None) for every axis");
            else if (param->kind == PARAM_FLAG)
                diag_hint(c->diag, "write a number such as True, or the name of a number under given:");
            else
                diag_hint(c->diag, "write a number such as 4, the name of a number under given:, or a size read "
                                   "from the shape of a named given or step, as numel(x) or size(x, -1)");
            return NO_NODE;
        }
        if (param->kind == PARAM_COUNT && (!check_is_whole(v) || v < 1 || v > (double)TENSOR_MAX_VALUES)) {
            char limit[64];
            format_count((double)TENSOR_MAX_VALUES, limit, sizeof(limit));
            return check_expr_error(c, arg, "'%s' must be a whole number from 1 to %s, not %g", param->name, limit, v),
                   NO_NODE;
        }
        if (param->kind == PARAM_AXIS && (!check_is_whole(v) || fabs(v) > CHECK_MAX_AXIS))
            return check_expr_error(c, arg, "'%s' must be a whole number such as 0, 1 or -1, not %g", param->name, v),
                   NO_NODE;
        if (param->kind == PARAM_FLAG && v != 0 && v != 1)
            return check_expr_error(c, arg, "'%s' must be True or False", param->name), NO_NODE;
        chk.constants[p] = v;
        chk.present[p] = true;
    }
    return check_add_op(c, op, inputs, n_inputs, &chk, &site, e);
}

// Is every item of the list a number known before running (nested lists included)?
static bool list_is_known(Checker *c, const Expr *e) {
    if (e->kind != EXPR_LIST) {
        double v;
        return check_const_eval(c, e, &v);
    }
    for (size_t i = 0; i < e->n_args; i++)
        if (!list_is_known(c, e->args[i]))
            return false;
    return true;
}

// A list with an item known only when the lesson runs ([a, mb], mb a step): its items, each
// compiled, stacked into one tensor (op_list.c); a list of known numbers is a constant.
static size_t compile_list(Checker *c, const Expr *e) {
    if (list_is_known(c, e))
        return check_add_constant(c, e);
    size_t inputs[OP_MAX_ARGS];
    CallSite site = {.call = e};
    for (size_t i = 0; i < e->n_args; i++) {
        if ((inputs[i] = check_compile(c, e->args[i])) == NO_NODE)
            return NO_NODE;
        site.inputs[i] = e->args[i];
    }
    OpCheck chk = {0};
    return check_add_op(c, ops_operator(OP_LIST, '['), inputs, e->n_args, &chk, &site, e);
}

size_t check_compile(Checker *c, const Expr *e) {
    if (c->diag->status != STATUS_OK)
        return NO_NODE;
    switch (e->kind) {
    case EXPR_NUMBER:
        return check_add_constant(c, e);
    case EXPR_LIST:
        return compile_list(c, e);
    case EXPR_NAME:
        return check_compile_name(c, e);
    case EXPR_PREFIX: {
        size_t in = check_compile(c, e->args[0]);
        if (in == NO_NODE)
            return NO_NODE;
        OpCheck chk = {0};
        CallSite site = {.call = e, .inputs = {e->args[0]}};
        return check_add_op(c, ops_operator(OP_PREFIX, e->op), &in, 1, &chk, &site, e);
    }
    case EXPR_BINARY: {
        size_t in[2] = {check_compile(c, e->args[0]), NO_NODE};
        if (in[0] == NO_NODE || (in[1] = check_compile(c, e->args[1])) == NO_NODE)
            return NO_NODE;
        OpCheck chk = {0};
        CallSite site = {.call = e, .inputs = {e->args[0], e->args[1]}};
        return check_add_op(c, ops_operator(OP_INFIX, e->op), in, 2, &chk, &site, e);
    }
    case EXPR_TRANSPOSE: {
        size_t in = check_compile(c, e->args[0]);
        if (in == NO_NODE)
            return NO_NODE;
        OpCheck chk = {0};
        CallSite site = {.call = e, .inputs = {e->args[0]}};
        return check_add_op(c, ops_operator(OP_POSTFIX, 'T'), &in, 1, &chk, &site, e);
    }
    case EXPR_INDEX:
        return check_compile_index(c, e);
    case EXPR_CALL:
        return compile_call(c, e);
    case EXPR_SLICE:
        break;  // the parser makes slices only as index items, which check_compile_index reads
    }
    ASSERT(!"an expression the checker does not know");
    return NO_NODE;
}

