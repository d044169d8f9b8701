// check_state: errors located in the step being checked, new plan nodes, and the lesson's size
// limits, for every file of the checker.
#include "check_state.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "format.h"

static bool error_at(Checker *c, size_t pos, size_t width, const char *fmt, va_list ap) {
    char message[sizeof(c->diag->message)];
    vsnprintf(message, sizeof(message), fmt, ap);
    plan_error_at(c->diag, c->lesson, c->step, pos, width, "%s", message);
    return false;
}

// An error under the whole of e.
bool check_expr_error(Checker *c, const Expr *e, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    error_at(c, e->start, e->end - e->start, fmt, ap);
    va_end(ap);
    return false;
}

// An error under e's operator or name.
bool check_token_error(Checker *c, const Expr *e, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    error_at(c, e->op_pos, e->op_len, fmt, ap);
    va_end(ap);
    return false;
}

// ---------------------------------------------------------------- nodes

// Refuse a plan past c->memory, at the given or the step being checked. Returns false.
static bool plan_too_big(Checker *c) {
    c->past_limit = true;
    const char *fmt = "checking the lesson this far needs more memory than its check may use: %s";
    const LessonGiven *g = c->given;
    if (g)
        diag_error(c->diag, STATUS_LESSON_ERROR, &c->lesson->doc->source, g->key->line, g->key->col,
                   strlen(g->name), fmt, c->memory->limit);
    else {
        ASSERT(c->step);  // every node is made for a given, a step or a claim
        plan_error_at(c->diag, c->lesson, c->step, 0, strlen(c->step->expr), fmt, c->memory->limit);
    }
    diag_hint(c->diag, "each given and step, and each stage of a backward pass, takes about a kilobyte to check: "
                       "use fewer steps, or take grad of fewer numbers (one loss)%s",
              c->memory->raise);
    return false;
}

PlanNode *check_new_node(Checker *c, PlanKind kind, size_t *index) {
    Plan *p = c->plan;
    // the nodes and the arena's names, formulas and expressions are nearly all the plan holds
    if (c->memory && c->memory->bytes) {
        size_t bytes = (p->n_nodes + 1) * sizeof(PlanNode) + arena_bytes(p->arena);  // both in memory: no overflow
        if (bytes > c->memory->bytes) {
            plan_too_big(c);
            return NULL;
        }
    }
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
bool check_total_too_big(Checker *c, const Expr *e, const LessonGiven *g) {
    c->past_limit = true;
    char limit[64], bytes[64];
    format_count((double)PLAN_MAX_TOTAL_VALUES, limit, sizeof(limit));
    format_bytes((double)PLAN_MAX_TOTAL_VALUES * sizeof(double), bytes, sizeof(bytes));
    const char *fmt = "the lesson's tensors together would exceed %s values (%s)";
    if (e)
        check_expr_error(c, e, fmt, limit, bytes);
    else
        diag_error(c->diag, STATUS_LESSON_ERROR, &c->lesson->doc->source, g->key->line, g->key->col,
                   strlen(g->name), fmt, limit, bytes);
    diag_hint(c->diag, "use smaller shapes, or shape-only givens (a `shape:` without values)");
    return false;
}

// Refuse tensors too large to hold, saying how much they would need.
bool check_size(Checker *c, const Expr *e, const Shape *shape, bool has_values) {
    size_t size;
    char s[64];
    shape_format(shape, s, sizeof(s));
    if (!shape_size(shape, &size))
        return check_expr_error(c, e, "the shape %s has more elements than this computer can count", s);
    if (!has_values)
        return true;
    if (size > TENSOR_MAX_VALUES) {
        char n[64], bytes[64];
        format_count((double)size, n, sizeof(n));
        format_count((double)size * 8.0, bytes, sizeof(bytes));
        check_expr_error(c, e, "this result, of shape %s, would hold %s values (%s bytes)", s, n, bytes);
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
        return check_total_too_big(c, e, NULL);
    return true;
}
