// check: a Lesson turned into a Plan. Resolves every name, infers every shape through the op
// table's rules, and reports the first problem with its place in the file, before any output.
#include "check.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "backward.h"
#include "format.h"
#include "ops.h"

// The most values all the stages of one lesson may hold together (8 GiB of doubles: a GPT-2
// block at n = 4096, whose four stages of attention scores hold 6 GiB, fits).
// The multiply-adds of all the lesson's matrix products: 2^36 is a few seconds with the
// vectorised product on two cores, about a minute on one core of plain C, and a full GPT-2
// block at n = 2048 (2.1e10) fits. Without it, one 70-byte lesson multiplying two
// [11000, 11000] givens would run for an hour.
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define PLAN_MAX_TOTAL_VALUES ((size_t)1 << 16)  // see TENSOR_MAX_VALUES
#define PLAN_MAX_MULTIPLY_ADDS ((size_t)1 << 22)
#else
#define PLAN_MAX_TOTAL_VALUES ((size_t)1 << 30)
#define PLAN_MAX_MULTIPLY_ADDS ((size_t)1 << 36)
#endif
#define NO_NODE ((size_t)-1)
// The stages all of a lesson's backward passes may visit and lay out, together: each grad of
// a new y lays out a backward pass as long as the way to y, so a lesson differentiating each
// of 20,000 chained steps would be quadratic (at 2^22, a few seconds here at worst).
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define PLAN_MAX_BACKWARD_WORK ((size_t)1 << 16)
#else
#define PLAN_MAX_BACKWARD_WORK ((size_t)1 << 22)
#endif
// The node of a name whose given or step failed: anything that uses it fails quietly, since
// its error is already reported and a second one would only repeat it.
#define FAILED_NODE ((size_t)-2)
// An axis written beyond this is a slip, not an axis: refused before it is cast to an integer
// (within it, the shape rule says which axes the tensor has).
#define CHECK_MAX_AXIS 64

typedef struct Checker {
    const Lesson *lesson;
    Plan *plan;
    Diag *diag;
    const LessonStep *step;  // the step being compiled
    size_t step_number;      // 1-based
    size_t first_node;       // the step's first node
    size_t total_values;
    size_t total_multiply_adds;  // of the matrix products so far
    size_t backward_work;        // stages visited and laid out by the backward passes so far
    bool uses_failed;  // the current step uses a name whose given or step failed
    bool past_limit;   // the lesson as a whole is too large: later errors would only repeat it
    // Names visible so far: givens, then each step once compiled.
    const char **names;
    size_t *name_node;
    size_t n_names;
    // The names hashed (open addressing; entry i + 1 for names[i], 0 empty), so that a
    // lesson of 100,000 steps that all use X is not 10^10 comparisons.
    size_t *name_slots;
    size_t cap_slots;  // a power of two, at least twice the names
    bool claiming;     // compiling a claim: its operations are worked out, not shown as stages
    // The backward passes laid out so far, one per differentiated y.
    struct Backward *backwards;
    size_t n_backwards;
} Checker;

// One backward pass: the gradient node of each node on the way to y (NO_NODE elsewhere), for
// the first n_nodes nodes of the plan.
typedef struct Backward {
    size_t y;
    size_t *gradient;
    size_t n_nodes;
    struct Backward *next;
} Backward;

// Where an op's arguments stand, to locate the problems its shape rule reports.
typedef struct CallSite {
    const Expr *call;
    const Expr *inputs[EXPR_MAX_ARGS];
    const Expr *params[OP_MAX_PARAMS];
} CallSite;


static bool error_at(Checker *c, size_t pos, size_t width, const char *fmt, va_list ap) {
    char message[sizeof(c->diag->message)];
    vsnprintf(message, sizeof(message), fmt, ap);
    plan_error_at(c->diag, c->lesson, c->step, pos, width, "%s", message);
    return false;
}

// An error under the whole of e.
static bool expr_error(Checker *c, const Expr *e, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool expr_error(Checker *c, const Expr *e, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    error_at(c, e->start, e->end - e->start, fmt, ap);
    va_end(ap);
    return false;
}

// An error under e's operator or name.
static bool token_error(Checker *c, const Expr *e, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool token_error(Checker *c, const Expr *e, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    error_at(c, e->op_pos, e->op_len, fmt, ap);
    va_end(ap);
    return false;
}

// ---------------------------------------------------------------- nodes

static PlanNode *new_node(Checker *c, PlanKind kind, size_t *index) {
    Plan *p = c->plan;
    if (p->n_nodes == p->cap) {
        // never cleared ahead, since a node is 700 bytes and memory first touched costs a page
        // fault: its pages are touched only as nodes are added
        size_t cap = p->cap ? p->cap * 2 : 256, bytes;
        PlanNode *nodes = util_mul_size(cap, sizeof(PlanNode), &bytes) ? util_realloc(p->nodes, bytes) : NULL;
        if (!nodes) {
            diag_out_of_memory(c->diag);
            return NULL;
        }
        p->nodes = nodes;
        p->cap = cap;
    }
    *index = p->n_nodes;
    PlanNode *n = &p->nodes[p->n_nodes++];
    memset(n, 0, sizeof(*n));
    n->kind = kind;
    n->step = c->step;
    return n;
}

// Refuse a lesson whose tensors together would pass PLAN_MAX_TOTAL_VALUES, with the error at
// e in the current step, or at the given g's name.
static bool total_too_big(Checker *c, const Expr *e, const LessonGiven *g) {
    c->past_limit = true;
    char limit[64], bytes[64];
    format_count((double)PLAN_MAX_TOTAL_VALUES, limit, sizeof(limit));
    format_bytes((double)PLAN_MAX_TOTAL_VALUES * sizeof(double), bytes, sizeof(bytes));
    const char *fmt = "the lesson's tensors together would exceed %s values (%s)";
    if (e)
        expr_error(c, e, fmt, limit, bytes);
    else
        diag_error(c->diag, STATUS_LESSON_ERROR, &c->lesson->doc->source, g->key->line, g->key->col,
                   strlen(g->name), fmt, limit, bytes);
    diag_hint(c->diag, "use smaller shapes, or shape-only givens (a `shape:` without values)");
    return false;
}

// Refuse tensors too large to hold, saying how much they would need.
static bool check_size(Checker *c, const Expr *e, const Shape *shape, bool has_values) {
    size_t size;
    char s[64];
    shape_format(shape, s, sizeof(s));
    if (!shape_size(shape, &size))
        return expr_error(c, e, "the shape %s has more elements than this computer can count", s);
    if (!has_values)
        return true;
    if (size > TENSOR_MAX_VALUES) {
        char n[64], bytes[64];
        format_count((double)size, n, sizeof(n));
        format_count((double)size * 8.0, bytes, sizeof(bytes));
        expr_error(c, e, "this result, of shape %s, would hold %s values (%s bytes)", s, n, bytes);
        char limit[64], limit_bytes[64];
        format_count((double)TENSOR_MAX_VALUES, limit, sizeof(limit));
        format_bytes((double)TENSOR_MAX_VALUES * sizeof(double), limit_bytes, sizeof(limit_bytes));
        diag_hint(c->diag, "the tracer keeps at most %s values (%s) in one tensor; give the inputs a `shape:` "
                           "without values to reason about sizes alone",
                  limit, limit_bytes);
        return false;
    }
    c->total_values += size;  // at most 2^30 + 2^28: no overflow
    if (c->total_values > PLAN_MAX_TOTAL_VALUES)
        return total_too_big(c, e, NULL);
    return true;
}

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
static bool add_name(Checker *c, const char *name, size_t node) {
    c->names[c->n_names] = name;
    c->name_node[c->n_names] = node;
    c->n_names++;
    c->name_slots[name_slot(c, name)] = c->n_names;
    return true;
}

static size_t find_name(const Checker *c, const char *name) {
    size_t at = c->name_slots[name_slot(c, name)];
    return at ? c->name_node[at - 1] : NO_NODE;
}

// ---------------------------------------------------------------- constants

static bool is_whole(double v) {
    return isfinite(v) && v == floor(v);
}

// Numbers known before running: literals, True/False/pi/inf, scalar givens, and arithmetic
// on those. False (with no error) when e is not such a number.
static bool const_eval(Checker *c, const Expr *e, double *out) {
    switch (e->kind) {
    case EXPR_NUMBER:
        *out = e->number;
        return true;
    case EXPR_NEG:
        if (!const_eval(c, e->args[0], out))
            return false;
        *out = -*out;
        return true;
    case EXPR_BINARY: {
        double a, b;
        const OpDef *op = ops_operator(OP_INFIX, e->op);
        if (!op->fold || !const_eval(c, e->args[0], &a) || !const_eval(c, e->args[1], &b))
            return false;
        *out = op->fold(op, a, b);
        return true;
    }
    case EXPR_NAME: {
        size_t node = find_name(c, e->name);
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
            if (n->kind == PLAN_CONSTANT && n->shape.rank == 0) {
                *out = n->values[0];
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
    default:
        return false;
    }
}

// Does node n hold only whole numbers: a count, or a constant whose values are all whole?
static bool counts_as_integer(const PlanNode *n) {
    if (n->is_count)
        return true;
    if (n->kind != PLAN_CONSTANT)
        return false;
    size_t size;
    shape_size(&n->shape, &size);
    for (size_t i = 0; i < size; i++)
        if (!is_whole(n->values[i]))
            return false;
    return true;
}

// Has a const_eval that failed been explained already: by an error of its own, or by the
// error of a given or step it reads, which failed before? Then nothing more is said.
static bool already_explained(const Checker *c) {
    return c->diag->status != STATUS_OK || c->uses_failed;
}

// A constant node for a number or a list literal (nested lists of numbers).
static bool list_shape(Checker *c, const Expr *e, Shape *shape, size_t depth) {
    if (e->kind != EXPR_LIST) {
        double v;
        if (!const_eval(c, e, &v))
            return !already_explained(c) && expr_error(c, e, "a list written in an expression holds numbers only");
        return true;
    }
    if (depth >= TENSOR_MAX_RANK)
        return expr_error(c, e, "lists nest at most %d deep (rank %d)", TENSOR_MAX_RANK, TENSOR_MAX_RANK);
    if (shape->rank <= depth) {
        shape->rank = depth + 1;
        shape->dim[depth] = e->n_args;
    } else if (shape->dim[depth] != e->n_args) {
        return expr_error(c, e, "this list has %zu item%s where %zu were expected: rows must have equal lengths",
                          e->n_args, e->n_args == 1 ? "" : "s", shape->dim[depth]);
    }
    for (size_t i = 0; i < e->n_args; i++) {
        bool inner_is_list = e->args[i]->kind == EXPR_LIST;
        if (inner_is_list != (e->args[0]->kind == EXPR_LIST))
            return expr_error(c, e->args[i], "mixing numbers and lists in one list");
        if (!list_shape(c, e->args[i], shape, depth + 1))
            return false;
    }
    return true;
}

static void list_fill(Checker *c, const Expr *e, double *values, size_t *k) {
    if (e->kind != EXPR_LIST) {
        const_eval(c, e, &values[(*k)++]);
        return;
    }
    for (size_t i = 0; i < e->n_args; i++)
        list_fill(c, e->args[i], values, k);
}

static size_t add_constant(Checker *c, const Expr *e) {
    // A number, or a list of them: callers have checked that a name is a constant.
    Shape shape = {0};
    if (e->kind == EXPR_LIST && !list_shape(c, e, &shape, 0))
        return NO_NODE;
    size_t size;
    bool fits = shape_size(&shape, &size);
    ASSERT(fits);  // at most EXPR_MAX_ARGS items on each of TENSOR_MAX_RANK axes
    double *values = arena_array(c->plan->arena, size, sizeof(double));
    if (!values) {
        diag_out_of_memory(c->diag);
        return NO_NODE;
    }
    size_t k = 0;
    list_fill(c, e, values, &k);
    size_t index;
    PlanNode *n = new_node(c, PLAN_CONSTANT, &index);
    if (!n)
        return NO_NODE;
    n->shape = shape;
    n->values = values;
    n->has_values = true;
    n->expr = e;
    n->is_count = counts_as_integer(n);
    return index;
}

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
    } else if (op->syntax == OP_PREFIX) {
        strbuf_printf(&sb, "%s%s -> %s", op->symbol, s, out);
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
                if (param->kind == PARAM_SHAPE) {  // the sizes as written: [2, -1]
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
    expr_error(c, e, "this product needs %s multiply-adds; a lesson's products may need %s in all", need, limit);
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

static size_t add_op(Checker *c, const OpDef *op, const size_t *inputs, size_t n_inputs, OpCheck *chk,
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
        all_integer = all_integer && counts_as_integer(in);
    }
    bool is_count = op->integers == INTEGERS_ALWAYS ||
                    (op->integers == INTEGERS_IF_INPUTS && n_inputs > 0 && all_integer) ||
                    (op->integers == INTEGERS_IF_FIRST && counts_as_integer(&plan->nodes[inputs[0]]));
    if (op->from_shapes_only)
        has_values = true;
    if (!check_size(c, e, &chk->shape, has_values) || (has_values && !check_work(c, e, op, chk)))
        return NO_NODE;
    size_t *args = arena_array(plan->arena, n_inputs, sizeof(size_t));
    const Expr **args_at = arena_array(plan->arena, n_inputs, sizeof(Expr *));
    const char *line = op_line(c, op, chk, site);
    const char *text = arena_strndup(plan->arena, c->step->expr + e->start, e->end - e->start);
    if (!args || !args_at || !line || !text) {
        diag_out_of_memory(c->diag);
        return NO_NODE;
    }
    memcpy(args, inputs, n_inputs * sizeof(size_t));
    memcpy(args_at, site->inputs, n_inputs * sizeof(Expr *));
    size_t index;
    PlanNode *n = new_node(c, PLAN_OP, &index);
    if (!n)
        return NO_NODE;
    n->op = op;
    n->args = args;
    n->args_at = args_at;
    n->n_args = n_inputs;
    n->attrs = chk->attrs;
    n->shape = chk->shape;
    n->has_values = has_values;
    n->is_count = is_count;
    memcpy(n->labels, chk->out_labels, sizeof(n->labels));
    n->is_stage = !c->claiming;
    n->stage_kind = STAGE_INTERMEDIATE;
    n->expr_text = text;
    n->op_line = line;
    n->expr = e;
    return index;
}

static size_t compile(Checker *c, const Expr *e);

static size_t compile_name(Checker *c, const Expr *e) {
    size_t node = find_name(c, e->name);
    if (node == FAILED_NODE) {
        c->uses_failed = true;
        return NO_NODE;
    }
    if (node != NO_NODE)
        return node;
    double v;
    if (const_eval(c, e, &v))
        return add_constant(c, e);
    if (ops_find_function(e->name)) {
        token_error(c, e, "'%s' is a function: call it with its arguments, as in %s(x)", e->name, e->name);
        return NO_NODE;
    }
    // A step defined further down cannot be used yet.
    for (size_t i = 0; i < c->lesson->n_steps; i++) {
        const LessonStep *s = &c->lesson->steps[i];
        if (strcmp(s->name, e->name) == 0 && s != c->step) {
            token_error(c, e, "'%s' is not defined yet: it is the result of a later step (line %zu)", e->name,
                        s->key->line);
            diag_hint(c->diag, "steps run in order; move this step below the one that defines '%s'", e->name);
            return NO_NODE;
        }
        if (s == c->step && strcmp(s->name, e->name) == 0) {
            token_error(c, e, "the step '%s' uses its own result", e->name);
            diag_hint(c->diag, "a step can only use givens and earlier steps");
            return NO_NODE;
        }
    }
    token_error(c, e, "unknown name '%s'", e->name);
    const char *closest = diag_closest(e->name, c->names, c->n_names);
    if (closest)
        diag_hint(c->diag, "did you mean '%s'?", closest);
    else
        diag_hint(c->diag, "names come from given: and from earlier steps");
    return NO_NODE;
}

// An index item that is a whole number known before running, normalised against dim.
static bool const_index(Checker *c, const Expr *e, size_t dim, bool is_stop, size_t axis, size_t *out) {
    double v;
    if (!const_eval(c, e, &v))
        return false;
    if (!is_whole(v))
        return expr_error(c, e, "an index must be a whole number, not %g", v);
    double limit = is_stop ? (double)dim : (double)dim - 1;
    double w = v < 0 ? v + (double)dim : v;
    if (w < 0 || w > limit) {
        if (dim == 0)
            return expr_error(c, e, "axis %zu is empty: there is nothing to index", axis);
        // A slice bound may also be the size itself: X[0:3] takes all 3 rows.
        expr_error(c, e, "%s %g is out of range for axis %zu, which has %zu entries", is_stop ? "slice bound" : "index",
                   v, axis, dim);
        if (is_stop)
            diag_hint(c->diag, "a slice bound is 0 to %zu (or -%zu to -1 from the end)", dim, dim);
        else
            diag_hint(c->diag, "valid indices are 0 to %zu (or -%zu to -1 from the end)", dim - 1, dim);
        return false;
    }
    *out = (size_t)w;
    return true;
}

// A shape argument, [2, -1] or a single number: whole numbers known before running, at most
// TENSOR_MAX_RANK of them. The operation's shape rule judges what they say.
static bool shape_argument(Checker *c, const Expr *arg, const OpParam *param, OpAttrs *attrs) {
    const Expr *const *items = (const Expr *const *)&arg;
    size_t n = 1;
    if (arg->kind == EXPR_LIST) {
        items = (const Expr *const *)arg->args;
        n = arg->n_args;
    }
    if (n > TENSOR_MAX_RANK) {
        expr_error(c, arg, "'%s' has %zu sizes, but a tensor has at most %d axes", param->name, n, TENSOR_MAX_RANK);
        diag_hint(c->diag, "give one size per axis, as in [2, 3] or [2, -1]");
        return false;
    }
    for (size_t k = 0; k < n; k++) {
        double v;
        if (!const_eval(c, items[k], &v) || !is_whole(v) || fabs(v) > (double)TENSOR_MAX_VALUES) {
            if (!already_explained(c)) {
                expr_error(c, items[k], "a size in '%s' must be a whole number known before the lesson runs",
                           param->name);
                diag_hint(c->diag, "write sizes such as [2, 3], or -1 for the one to work out: [2, -1]");
            }
            return false;
        }
        attrs->dims[k] = (long long)v;
    }
    attrs->n_dims = n;
    return true;
}

// numpy pairs two lists up element by element, which reads like something else: refused.
static size_t two_lists(Checker *c, const Expr *item) {
    expr_error(c, item, "only one list of indices is allowed in one indexing");
    diag_hint(c->diag, "numpy would pair the lists up (X[[0, 1], [2, 3]] is X[0, 2] and X[1, 3]); to pick rows "
                       "and then columns, index twice: X[[0, 1]][:, [2, 3]]");
    return NO_NODE;
}

// None as an index item: a new axis, as numpy writes it, unless the lesson names something None.
static bool is_new_axis(Checker *c, const Expr *item) {
    return item->kind == EXPR_NAME && strcmp(item->name, "None") == 0 && find_name(c, "None") == NO_NODE;
}

static size_t compile_index(Checker *c, const Expr *e) {
    size_t target = compile(c, e->args[0]);
    if (target == NO_NODE)
        return NO_NODE;
    const Shape shape = c->plan->nodes[target].shape;
    OpCheck chk = {0};
    CallSite site = {.call = e, .inputs = {e->args[0]}};
    chk.attrs.index_input = OP_NO_INDEX_INPUT;
    size_t inputs[2] = {target, NO_NODE};
    size_t n_items = e->n_args - 1;
    // None, as numpy writes it, adds an axis of size 1 (x[:, None]) and reads none.
    size_t n_new = 0;
    for (size_t i = 0; i < n_items; i++)
        n_new += is_new_axis(c, e->args[i + 1]);
    if (n_new > TENSOR_MAX_RANK) {
        expr_error(c, e, "%zu new axes (None): a tensor has at most %d axes", n_new, TENSOR_MAX_RANK);
        diag_hint(c->diag, "add fewer axes with None");
        return NO_NODE;
    }
    if (n_items - n_new > shape.rank) {
        char s[64];
        shape_format(&shape, s, sizeof(s));
        if (shape.rank == 0) {
            expr_error(c, e, "this is a single number (shape []): it has no axes to index");
            diag_hint(c->diag, "only lists and matrices take an index, as in X[0]; None adds an axis (X[None])");
        } else {
            expr_error(c, e, "%zu indices for a tensor of shape %s, which has %zu ax%s", n_items - n_new, s,
                       shape.rank, shape.rank == 1 ? "is" : "es");
            diag_hint(c->diag, "give at most one index per axis (None, which adds an axis, does not count)");
        }
        return NO_NODE;
    }
    size_t axis = 0;  // the tensor's axis the next item reads
    for (size_t i = 0; i < n_items; i++, axis++) {
        const Expr *item = e->args[i + 1];
        KernelAxisIndex *ix = &chk.attrs.index[i];
        if (is_new_axis(c, item)) {
            ix->kind = KERNEL_INDEX_NEW;
            axis--;
            continue;
        }
        size_t dim = shape.dim[axis];
        if (item->kind == EXPR_SLICE) {
            ix->kind = KERNEL_INDEX_RANGE;
            ix->start = 0;
            ix->stop = dim;
            if (item->args[0] && !const_index(c, item->args[0], dim, true, axis, &ix->start)) {
                if (!already_explained(c))
                    expr_error(c, item->args[0], "a slice bound must be a whole number known before running");
                return NO_NODE;
            }
            if (item->args[1] && !const_index(c, item->args[1], dim, true, axis, &ix->stop)) {
                if (!already_explained(c))
                    expr_error(c, item->args[1], "a slice bound must be a whole number known before running");
                return NO_NODE;
            }
            if (ix->stop < ix->start) {
                expr_error(c, item, "this slice is empty: it stops (%zu) before it starts (%zu)", ix->stop,
                           ix->start);
                return NO_NODE;
            }
            if (!item->args[0] && !item->args[1])
                ix->kind = KERNEL_INDEX_ALL;
            continue;
        }
        if (item->kind == EXPR_LIST) {
            size_t *list = arena_array(c->plan->arena, item->n_args, sizeof(size_t));
            if (!list) {
                diag_out_of_memory(c->diag);
                return NO_NODE;
            }
            for (size_t k = 0; k < item->n_args; k++) {
                if (!const_index(c, item->args[k], dim, false, axis, &list[k])) {
                    if (!already_explained(c))
                        expr_error(c, item->args[k], "a list of indices holds whole numbers");
                    return NO_NODE;
                }
            }
            if (chk.attrs.index_input != OP_NO_INDEX_INPUT) {
                return two_lists(c, item);
            }
            ix->kind = KERNEL_INDEX_LIST;
            ix->list = list;
            ix->n_list = item->n_args;
            for (size_t k = 0; k < i; k++)
                if (chk.attrs.index[k].kind == KERNEL_INDEX_LIST) {
                    return two_lists(c, item);
                }
            continue;
        }
        double v;
        if (const_eval(c, item, &v)) {
            ix->kind = KERNEL_INDEX_AT;
            if (!const_index(c, item, dim, false, axis, &ix->start))
                return NO_NODE;
            continue;
        }
        // An index computed by an expression: its values are known only while running.
        if (chk.attrs.index_input != OP_NO_INDEX_INPUT) {
            expr_error(c, item, "only one index in an indexing can be a tensor");
            diag_hint(c->diag, "index with one tensor at a time, in two steps: X[ids][:, cols]");
            return NO_NODE;
        }
        for (size_t k = 0; k < i; k++)
            if (chk.attrs.index[k].kind == KERNEL_INDEX_LIST) {
                return two_lists(c, item);
            }
        size_t ixnode = compile(c, item);
        if (ixnode == NO_NODE)
            return NO_NODE;
        chk.attrs.index_input = (int)i;
        inputs[1] = ixnode;
        site.inputs[1] = item;
    }
    chk.attrs.n_index = n_items;
    // Whole numbers take axes away, None adds them: at most TENSOR_MAX_RANK may remain.
    size_t removed = 0;
    for (size_t i = 0; i < n_items; i++)
        removed += chk.attrs.index[i].kind == KERNEL_INDEX_AT ||
                   ((int)i == chk.attrs.index_input && c->plan->nodes[inputs[1]].shape.rank == 0);
    if (shape.rank + n_new - removed > TENSOR_MAX_RANK) {
        expr_error(c, e, "the result would have %zu axes; a tensor has at most %d", shape.rank + n_new - removed,
                   TENSOR_MAX_RANK);
        diag_hint(c->diag, "add fewer axes with None, or take some away with a whole-number index");
        return NO_NODE;
    }
    return add_op(c, ops_operator(OP_INDEXING, '['), inputs, inputs[1] == NO_NODE ? 1 : 2, &chk, &site, e);
}

static void signature(const OpDef *op, char *buf, size_t cap) {
    size_t used = (size_t)snprintf(buf, cap, "%s(", op->name);
    for (size_t p = 0; p < OP_MAX_PARAMS && op->params[p].name && used < cap; p++) {
        const OpParam *param = &op->params[p];
        char v[32] = "";
        if (param->optional && param->kind == PARAM_AXIS)
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

// ---------------------------------------------------------------- gradients

static const char *display_name(Checker *c, const PlanNode *n);

// Appends how node n is written in a gradient's formula: as where it is an input ("Q", "K.T",
// "2"). Marks sb failed when memory runs out, like any other append.
static void put_node(Checker *c, StrBuf *sb, const PlanNode *n) {
    const char *t = display_name(c, n);
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
            expr_error(c, ye, "'%s' is shape-only: it has no values to differentiate", yn->name);
            diag_hint(c->diag, "a gradient needs numbers: give the givens it is computed from values (init: random)");
        }
        return false;
    }
    if (yn->shape.rank != 0) {
        if (report) {
            expr_error(c, ye, "grad differentiates a single number, but '%s' is %s", yn->name, shape);
            diag_hint(c->diag, "take the gradient of a scalar such as a loss: add a step `total: mean(%s)` and write "
                               "grad(total, %s)",
                      yn->name, xn->name ? xn->name : "x");
        }
        return false;
    }
    if (x == y) {
        if (report) {
            expr_error(c, call, "grad(%s, %s) is 1: a number changes one for one with itself", yn->name, xn->name);
            diag_hint(c->diag, "differentiate with respect to a tensor '%s' is computed from", yn->name);
        }
        return false;
    }
    if (x > y) {
        if (report) {
            expr_error(c, xe, "'%s' is computed after '%s', so '%s' cannot depend on it", xn->name, yn->name, yn->name);
            diag_hint(c->diag, "grad(y, x) needs x to be a given or a step that comes before y");
        }
        return false;
    }
    if (!xn->has_values) {
        if (report) {
            expr_error(c, xe, "'%s' is shape-only: it has no values, so nothing to differentiate with respect to",
                       xn->name);
            diag_hint(c->diag, "give it values (values:, or init: random) to take a gradient with respect to it");
        }
        return false;
    }
    if (xn->is_count) {
        if (report) {
            expr_error(c, xe, "'%s' holds whole numbers (token ids, positions, counts): they carry no gradient",
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
    expr_error(c, call, "the lesson's backward passes would visit more than %s stages", limit);
    c->past_limit = true;
    diag_hint(c->diag, "every grad of a new number lays out a backward pass all the way to it; differentiate fewer "
                       "numbers (one loss), by as many tensors as needed");
    return false;
}

// The way from x to y, and the first node on it without a derivative (blocker).
static BackwardPath grad_way(Checker *c, size_t y, size_t x, size_t *blocker) {
    bool *on = util_calloc(c->plan->n_nodes, sizeof(bool));
    BackwardPath r = on ? backward_path(c->plan, c->plan->n_nodes, y, &x, 1, on, blocker) : BACKWARD_OUT_OF_MEMORY;
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
        expr_error(c, call, "'%s' does not depend on '%s': its gradient would be 0 everywhere", yn->name, xn->name);
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
        size_t x = find_name(c, e->args[1]->name);
        size_t blocker;
        bool fits = x != NO_NODE && x != FAILED_NODE && !picked[x] && grad_operands_fit(c, e, y, x, false);
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
    size_t n = plan->n_nodes, n_wrt = 1;
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
        const Expr *e = expr_parse(plan->arena, s->expr, &err);
        if (!e && !err.message[0])
            goto oom;
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
    b->n_nodes = n;
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
            const Shape *in_shapes[EXPR_MAX_ARGS];
            for (size_t a = 0; a < u->n_args; a++)
                in_shapes[a] = &plan->nodes[u->args[a]].shape;
            size_t work;
            if (!op_multiply_adds(u->op, in_shapes, &u->shape, &work) ||
                !util_add_size(c->total_multiply_adds, work, &c->total_multiply_adds) ||
                c->total_multiply_adds > PLAN_MAX_MULTIPLY_ADDS) {
                char limit[64];
                format_count((double)PLAN_MAX_MULTIPLY_ADDS, limit, sizeof(limit));
                expr_error(c, call, "this backward pass would take the lesson past %s multiply-adds", limit);
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
        PlanNode *g = new_node(c, PLAN_GRAD, &index);
        if (!name || !say || !formula || !g)
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
static size_t compile_grad(Checker *c, const Expr *e) {
    if (e->n_args != 2 || e->arg_names[0] || e->arg_names[1]) {
        token_error(c, e, "grad takes two names: the number to differentiate and the tensor to differentiate it by");
        diag_hint(c->diag, "write grad(loss, W): how loss changes with each entry of W");
        return NO_NODE;
    }
    size_t operand[2];
    for (size_t k = 0; k < 2; k++) {
        const Expr *a = e->args[k];
        if (a->kind != EXPR_NAME) {
            expr_error(c, a, "grad needs the name of a %s here, not an expression",
                       k == 0 ? "stage" : "given or a stage");
            diag_hint(c->diag, "give it a step of its own, as in `total: sum(x * x)`, and write grad(total, x)");
            return NO_NODE;
        }
        operand[k] = find_name(c, a->name);
        if (operand[k] == FAILED_NODE) {
            c->uses_failed = true;  // its own error is already reported
            return NO_NODE;
        }
        // the steps after this one; a claim is none of them (it is checked after every step,
        // and compile_name below says what is wrong with a name it cannot use)
        const LessonStep *end = c->lesson->steps + c->lesson->n_steps;
        for (const LessonStep *s = c->claiming ? end : c->step + 1; operand[k] == NO_NODE && s < end; s++)
            if (strcmp(s->name, a->name) == 0) {
                token_error(c, a, "'%s' is the result of a later step (line %zu): grad cannot use it before it is computed",
                            a->name, s->key->line);
                diag_hint(c->diag, "steps run in order; move this step below the one that computes '%s'", a->name);
                return NO_NODE;
            }
        if (operand[k] == NO_NODE) {
            // not a given or stage: the usual errors (a later step, an unknown name), or a
            // constant such as pi, which is no stage
            if (compile_name(c, a) != NO_NODE) {
                expr_error(c, a, "'%s' is a number of the language, not a given or a stage", a->name);
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
    const Backward *b = build_backward(c, e, y, x);
    return b ? b->gradient[x] : NO_NODE;
}

static size_t compile_call(Checker *c, const Expr *e) {
    const OpDef *op = ops_find_function(e->name);
    char sig[256];
    if (!op && strcmp(e->name, "grad") == 0 && find_name(c, e->name) == NO_NODE)
        return compile_grad(c, e);
    if (!op && find_name(c, e->name) != NO_NODE) {
        token_error(c, e, "'%s' is a value, not a function: it cannot be called", e->name);
        if (strcmp(e->name, "grad") == 0)  // the learner's own grad hides the language's
            diag_hint(c->diag, "a given or step named 'grad' hides the function grad(y, x): rename it");
        else
            diag_hint(c->diag, "is an operator missing before '('? a product is written %s * (...) or %s @ (...)",
                      e->name, e->name);
        return NO_NODE;
    }
    if (!op) {
        token_error(c, e, "unknown function '%s'", e->name);
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
    const Expr *tensors_list[EXPR_MAX_ARGS];
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
                expr_error(c, arg, "%s takes %zu argument%s, but %zu were given", op->name, n_params,
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
    size_t inputs[EXPR_MAX_ARGS];
    size_t n_inputs = 0;
    for (size_t p = 0; p < n_params; p++) {
        const OpParam *param = &op->params[p];
        const Expr *arg = bound[p];
        site.params[p] = arg;
        if (param->kind == PARAM_TENSORS) {
            for (size_t k = 0; k < n_tensors_list; k++) {
                size_t node = compile(c, tensors_list[k]);
                if (node == NO_NODE)
                    return NO_NODE;
                site.inputs[n_inputs] = tensors_list[k];
                inputs[n_inputs++] = node;
            }
            continue;
        }
        if (!arg) {
            if (!param->optional) {
                token_error(c, e, "%s needs the argument '%s'", op->name, param->name);
                diag_hint(c->diag, "write %s", sig);
                return NO_NODE;
            }
            chk.constants[p] = param->fallback;
            continue;
        }
        if (param->kind == PARAM_TENSOR) {
            size_t node = compile(c, arg);
            if (node == NO_NODE)
                return NO_NODE;
            site.inputs[n_inputs] = arg;
            inputs[n_inputs++] = node;
            continue;
        }
        if (param->kind == PARAM_SHAPE) {
            if (!shape_argument(c, arg, param, &chk.attrs))
                return NO_NODE;
            chk.present[p] = true;
            continue;
        }
        // axis=None, as numpy writes it: every axis, the same as leaving axis out.
        if (param->kind == PARAM_AXIS && arg->kind == EXPR_NAME && strcmp(arg->name, "None") == 0 &&
            find_name(c, "None") == NO_NODE) {
            chk.constants[p] = param->fallback;
            continue;
        }
        double v;
        if (!const_eval(c, arg, &v)) {
            if (already_explained(c))
                return NO_NODE;
            expr_error(c, arg, "'%s' must be a number known before the lesson runs", param->name);
            if (param->kind == PARAM_AXIS)
                diag_hint(c->diag, "write a number such as -1 or the name of a number under given:, or leave "
                                   "axis out (or write None) for every axis");
            else
                diag_hint(c->diag, "write a number such as %s, or the name of a number under given:",
                          param->kind == PARAM_FLAG ? "True" : "4");
            return NO_NODE;
        }
        if (param->kind == PARAM_COUNT && (!is_whole(v) || v < 1 || v > (double)TENSOR_MAX_VALUES)) {
            char limit[64];
            format_count((double)TENSOR_MAX_VALUES, limit, sizeof(limit));
            return expr_error(c, arg, "'%s' must be a whole number from 1 to %s, not %g", param->name, limit, v),
                   NO_NODE;
        }
        if (param->kind == PARAM_AXIS && (!is_whole(v) || fabs(v) > CHECK_MAX_AXIS))
            return expr_error(c, arg, "'%s' must be a whole number such as 0, 1 or -1, not %g", param->name, v),
                   NO_NODE;
        if (param->kind == PARAM_FLAG && v != 0 && v != 1)
            return expr_error(c, arg, "'%s' must be True or False", param->name), NO_NODE;
        chk.constants[p] = v;
        chk.present[p] = true;
    }
    return add_op(c, op, inputs, n_inputs, &chk, &site, e);
}

static size_t compile(Checker *c, const Expr *e) {
    if (c->diag->status != STATUS_OK)
        return NO_NODE;
    switch (e->kind) {
    case EXPR_NUMBER:
    case EXPR_LIST:
        return add_constant(c, e);
    case EXPR_NAME:
        return compile_name(c, e);
    case EXPR_NEG: {
        size_t in = compile(c, e->args[0]);
        if (in == NO_NODE)
            return NO_NODE;
        OpCheck chk = {0};
        CallSite site = {.call = e, .inputs = {e->args[0]}};
        return add_op(c, ops_operator(OP_PREFIX, '-'), &in, 1, &chk, &site, e);
    }
    case EXPR_BINARY: {
        size_t in[2] = {compile(c, e->args[0]), NO_NODE};
        if (in[0] == NO_NODE || (in[1] = compile(c, e->args[1])) == NO_NODE)
            return NO_NODE;
        OpCheck chk = {0};
        CallSite site = {.call = e, .inputs = {e->args[0], e->args[1]}};
        return add_op(c, ops_operator(OP_INFIX, e->op), in, 2, &chk, &site, e);
    }
    case EXPR_TRANSPOSE: {
        size_t in = compile(c, e->args[0]);
        if (in == NO_NODE)
            return NO_NODE;
        OpCheck chk = {0};
        CallSite site = {.call = e, .inputs = {e->args[0]}};
        return add_op(c, ops_operator(OP_POSTFIX, 'T'), &in, 1, &chk, &site, e);
    }
    case EXPR_INDEX:
        return compile_index(c, e);
    case EXPR_CALL:
        return compile_call(c, e);
    case EXPR_SLICE:
        break;  // the parser makes slices only as index items, which compile_index reads
    }
    ASSERT(!"an expression the checker does not know");
    return NO_NODE;
}

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

// show: a picture needs values, a heatmap at least one axis, bars exactly one.
static bool check_show(Checker *c, const PlanNode *n, const LessonStep *s) {
    if (s->show == PICTURE_DEFAULT || s->show == PICTURE_TABLE)
        return true;
    const char *what = s->show == PICTURE_BARS ? "bars" : "heatmap";
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
    PlanNode *n = new_node(c, PLAN_GIVEN, &index);
    if (!n)
        return false;
    n->given = g;
    n->shape = g->shape;
    n->has_values = g->init != GIVEN_SHAPE_ONLY;
    n->is_stage = true;
    n->stage_kind = STAGE_GIVEN;
    // Values all written as whole numbers (d_k: 4, token_ids: [0, 1, 2]) are counts: they print
    // as 4, and they keep counts they scale exact.
    size_t n_values = 0;
    shape_size(&g->shape, &n_values);
    n->is_count = (g->init == GIVEN_VALUES && g->value_nodes) || (g->init == GIVEN_FILE && g->file.whole);
    for (size_t i = 0; n->is_count && g->init == GIVEN_VALUES && i < n_values; i++)
        n->is_count = is_whole(g->values[i]) && !strpbrk(g->value_nodes[i]->text, ".eE");
    if (!check_document(c, n, g->document, g->name))
        return false;
    n->name = g->name;
    n->number = "";
    size_t rank = g->shape.rank;
    if (g->rows && rank >= 2)
        n->labels[rank - 2] = (Labels){g->rows->items, g->rows->n};
    if (g->cols && rank >= 1)
        n->labels[rank - 1] = (Labels){g->cols->items, g->cols->n};
    if (n->has_values) {
        size_t size;
        shape_size(&g->shape, &size);
        c->total_values += size;  // the loader holds a given to TENSOR_MAX_VALUES: no overflow
        if (c->total_values > PLAN_MAX_TOTAL_VALUES)
            return total_too_big(c, NULL, g);
    }
    return add_name(c, g->name, index);
}

// The step's (or claim's) expression parsed, or NULL with the error located in the file.
static const Expr *parse_expr(Checker *c, const LessonStep *s) {
    ExprError err;
    const Expr *e = expr_parse(c->plan->arena, s->expr, &err);
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

static bool add_step(Checker *c, const LessonStep *s, size_t number) {
    c->step = s;
    c->step_number = number;
    c->first_node = c->plan->n_nodes;
    const Expr *e = parse_expr(c, s);
    if (!e)
        return false;
    size_t top = compile(c, e);
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
            top = add_op(c, ops_find_function("copy"), &top, 1, &chk, &site, e);
            if (top == NO_NODE)
                return false;
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
    if (s->quiz.kind != EXPLAIN_NONE && !add_target(c, top, &s->quiz, "quiz", &p->quizzes, &p->n_quizzes))
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
    return add_name(c, s->name, top);
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
    size_t top = compile(c, e);
    if (top == NO_NODE)
        return false;
    const PlanNode *t = &c->plan->nodes[top];
    if (t->kind != PLAN_OP || !t->op->truth) {
        expr_error(c, e, "this claim is not true or false: '%s' gives numbers", w->expr);
        diag_hint(c->diag, "end a claim in a comparison (==, !=, <, <=, >, >=), allclose(a, b), all(...) or "
                           "any(...), as in allclose(sum(weights, axis=-1), 1)");
        return false;
    }
    if (!t->has_values) {
        expr_error(c, e, "this claim reads shape-only tensors: there are no values to judge it by");
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
        size_t own = find_name(c, claim->step->name);
        if (own != NO_NODE && own > after)
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
static const char *display_name(Checker *c, const PlanNode *n) {
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

Plan *check_lesson(const Lesson *lesson, Diag *diag) {
    Plan *plan = plan_create(lesson);
    if (!plan) {
        diag_out_of_memory(diag);
        return NULL;
    }
    Checker c = {.lesson = lesson, .plan = plan, .diag = diag};
    bool out_of_memory = false;
    size_t n_names = lesson->n_givens + lesson->n_steps;
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
        if (!ok && !claim)
            add_name(&c, given ? lesson->givens[i].name : lesson->steps[i - lesson->n_givens].name, FAILED_NODE);
    }
    util_free(item);
    if (failed)
        goto fail;
    // Names are final only now (a step's result takes the step's name at its end).
    for (size_t i = 0; i < plan->n_nodes; i++)
        if (!(plan->nodes[i].display = display_name(&c, &plan->nodes[i])))
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
