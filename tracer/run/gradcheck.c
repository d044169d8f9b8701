// gradcheck: every gradient stage checked against central finite differences of the forward
// pass, run again from the moved tensor to y: the note under each gradient in the trace.
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

// Room for the moved part of a result computed in part: its input's values, its result's, and
// the places of their rows.
typedef struct Gather {
    double *in, *out;
    size_t *at;
    size_t cap_in, cap_out, cap_at;
} Gather;

// Room for at least `in` and `out` values and `rows` places; false when memory runs out.
static bool gather_reserve(Gather *g, size_t in, size_t out, size_t rows) {
    void *p;
    if (in > g->cap_in && (p = util_realloc(g->in, in * sizeof(double))))
        g->in = p, g->cap_in = in;
    if (out > g->cap_out && (p = util_realloc(g->out, out * sizeof(double))))
        g->out = p, g->cap_out = out;
    if (rows > g->cap_at && (p = util_realloc(g->at, rows * sizeof(size_t))))
        g->at = p, g->cap_at = rows;
    return g->cap_in >= in && g->cap_out >= out && g->cap_at >= rows;
}

static void gather_free(Gather *g) {
    util_free(g->in);
    util_free(g->out);
    util_free(g->at);
}

// Did a row of `width` values move: are its bits not those it had?
static inline bool row_moved(const double *now, const double *was, size_t width) {
    uint64_t a, b, differ = 0;
    for (size_t j = 0; j < width; j++) {
        memcpy(&a, &now[j], sizeof(a));
        memcpy(&b, &was[j], sizeof(b));
        differ |= a ^ b;
    }
    return differ != 0;
}

// The last-axis rows of a node of this shape and size: one for a scalar, none when the last
// axis is empty.
static size_t row_width(const Shape *s) {
    return s->rank ? s->dim[s->rank - 1] : 1;
}

static size_t rows_of(const Shape *s, size_t size) {
    size_t width = row_width(s);
    return width ? size / width : 0;
}

// Does each last-axis row of node n's result come from the same row of input 0 alone, the
// other inputs whole (OpDef.rows_alone, with as many rows in and out, and no batch of matrices
// among the others, whose rows would meet other rows)?
static bool rows_alone(const Plan *plan, const PlanNode *n) {
    if (!n->op->rows_alone || n->n_args == 0)
        return false;
    const Shape *in = &plan->nodes[n->args[0]].shape, *out = &n->shape;
    if (in->rank != out->rank || in->rank == 0 || row_width(in) == 0 || row_width(out) == 0)
        return false;
    for (size_t k = 1; k < n->n_args; k++)
        if (plan->nodes[n->args[k]].shape.rank > 2)
            return false;
    for (size_t i = 0; i + 1 < in->rank; i++)
        if (in->dim[i] != out->dim[i])
            return false;
    return true;
}

// How node n's result is computed in part: element by element (a one-input elementwise
// operation: widths 1), or, when rows_too, row by row (rows_alone: the widths of the rows, and
// *by_rows). False: not in part.
static bool part_widths(const Plan *plan, const PlanNode *n, bool rows_too, size_t *in_width, size_t *out_width,
                        bool *by_rows) {
    *in_width = *out_width = 1;
    *by_rows = false;
    if (n->op->elementwise && n->n_args == 1)
        return true;
    if (!rows_too || !rows_alone(plan, n))
        return false;
    *by_rows = true;
    *in_width = row_width(&plan->nodes[n->args[0]].shape);
    *out_width = row_width(&n->shape);
    return true;
}

// What in_part reads and writes: node u's input 0 in `copies` copies side by side (its other
// inputs are as they were), and room for the result's copies.
typedef struct Part {
    const double *now;     // input 0's copies
    size_t copies;
    bool rows_too;         // by rows as well as by elements (part_widths)
    const bool *need;      // the rows of u that y needs; NULL: all
    const bool *moved_in;  // per copy, the rows of input 0 that may have moved; NULL: look at each
    bool *moved_out;       // per copy, the rows of u computed again; NULL: not kept
    double *out;           // the result's copies
} Part;

// Node u computed again only where its input 0 moved, in `copies` copies side by side: now
// holds that input's copies (the other inputs are as they were), and out receives the
// result's copies. The rest of the result stays as it was, since the operation on the same
// bits gives the same bits. The moved elements (or rows, see part_widths) go through the
// operation together, each computed exactly as in the whole. Rows of the result that need
// marks false (NULL: every row is needed) are not computed at all: they stay as they were.
// False, out untouched, when too much of the input moved for the part to be worth it: the
// caller computes the whole. *ok false: the operation refused or memory ran out (diag says
// why).
static bool in_part(const Plan *plan, size_t u, Tensor *const *values, const Part *p, Gather *g, Arena *arena,
                    bool *ok, Diag *diag) {
    const PlanNode *n = &plan->nodes[u];
    const double *now = p->now;
    const bool *need = p->need;
    size_t in_w, out_w, copies = p->copies;
    bool by_rows;
    if (!part_widths(plan, n, p->rows_too, &in_w, &out_w, &by_rows))
        return false;
    const Tensor *was = values[n->args[0]], *result = values[u];
    if (!was->data || !result->data || was->size / in_w != result->size / out_w)
        return false;
    // the units computed alone, elements or rows, and how many of them make a row of u
    size_t units = was->size / in_w, total = units * copies, moved = 0;
    size_t per_row = by_rows ? 1 : row_width(&n->shape), rows = per_row ? units / per_row : 0;
    // elements: no more than half, as computing one is cheap; rows: no more than three quarters
    size_t most = by_rows ? total / 4 * 3 : total / 2;
    if (!gather_reserve(g, most * in_w, most * out_w, most)) {
        *ok = false;
        diag_out_of_memory(diag);
        return true;
    }
    // row by row, the rows y needs, then element by element in a row that moved; a row said to
    // have moved (moved_in) is taken whole unseen, as computing it again gives its own bits
    if (p->moved_out)
        memset(p->moved_out, 0, copies * rows * sizeof(bool));
    for (size_t c = 0; c < copies; c++)
        for (size_t r = 0; r < rows; r++) {
            const double *row = now + (c * units + r * per_row) * in_w, *row_was = was->data + r * per_row * in_w;
            bool known = p->moved_in != NULL;
            if ((need && !need[r]) || (known ? !p->moved_in[c * rows + r] : !row_moved(row, row_was, per_row * in_w)))
                continue;
            size_t before = moved;
            for (size_t q = 0; q < per_row; q++) {
                if (per_row > 1 && !row_moved(row + q, row_was + q, 1))
                    continue;
                if (moved == most)
                    return false;
                if (in_w == 1)
                    g->in[moved] = row[q];
                else
                    memcpy(g->in + moved * in_w, row, in_w * sizeof(double));
                g->at[moved++] = c * units + r * per_row + q;
            }
            if (p->moved_out && moved > before)
                p->moved_out[c * rows + r] = true;
        }
    double *out = p->out;
    for (size_t c = 0; c < copies; c++)
        memcpy(out + c * result->size, result->data, result->size * sizeof(double));
    if (moved == 0)  // an inf moved by h is still inf
        return true;
    Tensor part = {.shape = {.rank = by_rows ? 2 : 1, .dim = {moved, in_w}}, .size = moved * in_w, .data = g->in,
                   .is_count = plan->nodes[n->args[0]].is_count};
    // no zeros first: the operations computed in part write every value of their result
    Tensor changed = {.shape = {.rank = by_rows ? 2 : 1, .dim = {moved, out_w}}, .size = moved * out_w,
                      .data = g->out, .is_count = n->is_count};
    const Tensor *in[EXPR_MAX_ARGS] = {&part};
    for (size_t k = 1; k < n->n_args; k++)
        in[k] = values[n->args[k]];
    if (!(*ok = eval_op_on(plan, u, in, &changed, arena, diag)))
        return true;
    for (size_t j = 0; j < moved; j++) {
        if (out_w == 1)
            out[g->at[j]] = g->out[j];
        else
            memcpy(out + g->at[j] * out_w, g->out + j * out_w, out_w * sizeof(double));
    }
    return true;
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
    Gather gather;
    bool shortcuts;
    GradcheckShortcuts *taken;
} Passes;

static bool passes_init(Passes *p, const Plan *plan, Trace *trace, size_t i, Tensor *const *values, bool shortcuts,
                        GradcheckShortcuts *taken) {
    const PlanNode *n = &plan->nodes[i];
    *p = (Passes){.plan = plan, .trace = trace, .values = values, .v = n->grad_wrt, .y = n->grad_of,
                  .shortcuts = shortcuts, .taken = taken};
    p->scratch = util_calloc(p->y + 1, sizeof(Tensor *));
    p->own = util_calloc(p->y + 1, sizeof(Tensor *));
    p->dirty = util_calloc(p->y + 1, sizeof(bool));
    return p->scratch && p->own && p->dirty;
}

static void passes_finish(Passes *p) {
    for (size_t u = 0; p->own && u <= p->y; u++)
        tensor_destroy(p->own[u]);
    util_free(p->scratch);
    util_free(p->own);
    util_free(p->dirty);
    gather_free(&p->gather);
}

// y computed again with node v's element e moved by h: every node between v and y that
// depends on v is recomputed; the rest keep their values. The moved tensor and the nodes
// recomputed are held in own, made on the first pass and written whole again by each one
// after (as eval_node makes them: zeros, then the operation). Two shortcuts keep the bits: a
// node whose values come out as they were moves nothing after it, and a one-input elementwise
// node is computed only where its input moved. NAN when memory runs out.
static double perturbed_loss(Passes *p, size_t e, double h, Diag *diag) {
    const Plan *plan = p->plan;
    Tensor *const *values = p->values;
    Tensor **scratch = p->scratch, **own = p->own;
    bool *dirty = p->dirty;
    size_t v = p->v, y = p->y;
    memcpy(scratch, values, (y + 1) * sizeof(Tensor *));
    memset(dirty, 0, (y + 1) * sizeof(bool));
    if (!own[v] && !(own[v] = tensor_copy(values[v]))) {
        diag_out_of_memory(diag);
        return NAN;
    }
    own[v]->data[e] = values[v]->data[e] + h;
    scratch[v] = own[v];
    dirty[v] = true;
    bool ok = true;
    for (size_t u = v + 1; u <= y && ok; u++) {
        const PlanNode *n = &plan->nodes[u];
        if (!moves(plan, u, dirty))
            continue;
        if (!own[u]) {
            own[u] = n->has_values ? tensor_create(&n->shape) : tensor_create_shape_only(&n->shape);
            if (!own[u]) {
                diag_out_of_memory(diag);
                ok = false;
                break;
            }
            own[u]->is_count = n->is_count;
        } else if (n->has_values) {
            memset(own[u]->data, 0, own[u]->size * sizeof(double));
        }
        if (n->has_values && p->shortcuts && n->n_args == 1 && scratch[n->args[0]]->data &&
            in_part(plan, u, values, &(Part){.now = scratch[n->args[0]]->data, .copies = 1, .out = own[u]->data},
                    &p->gather, p->trace->arena, &ok, diag)) {
            if (p->taken)
                p->taken->in_part++;
        } else if (n->has_values) {
            const Tensor *in[EXPR_MAX_ARGS];
            ok = eval_op_into(plan, u, scratch, in, own[u], p->trace->arena, diag);
        }
        scratch[u] = own[u];
        // the same bits as without the move (an embedding row no token reads, a masked score):
        // nothing after it moves through this node
        if (ok && p->shortcuts && n->has_values && values[u]->data &&
            memcmp(own[u]->data, values[u]->data, own[u]->size * sizeof(double)) == 0) {
            scratch[u] = values[u];
            dirty[u] = false;
            if (p->taken)
                p->taken->unmoved++;
        }
    }
    own[v]->data[e] = values[v]->data[e];
    return ok ? scratch[y]->data[0] : NAN;
}

// The step at element e of x: 1e-5, relative for large values: truncation error h^2 f'''/6
// near 1e-11, rounding error 1e-16 |y| / h near 1e-11 for losses of a few units.
static double step_at(const Tensor *x, size_t e) {
    return 1e-5 * fmax(1.0, fabs(x->data[e]));
}

// The central difference at element e of node v, one pass at a time. False when memory runs
// out.
static bool difference(Passes *p, size_t e, double *fd, Diag *diag) {
    double h = step_at(p->values[p->v], e);
    double up = perturbed_loss(p, e, h, diag);
    double down = perturbed_loss(p, e, -h, diag);
    *fd = (up - down) / (2.0 * h);
    return diag->status == STATUS_OK;
}

// ---------------------------------------------------------------- every pass at once

// The passes of one gradient stage run together. Each pass has its own copy of every node
// that moves, and a node's copies lie one after another: a stack. An operation that takes
// stacked inputs (OpDef.stacks) is computed once for the whole stack, any other once per
// copy, so a stage pays for each operation's set-up once rather than once per pass. Each copy
// is computed as its pass would compute it alone, so the bits are those of one pass at a
// time. A round of passes makes at most STACK_BYTES of copies (one pass alone when its copies
// are more); more passes take more rounds, each reusing the memory of the round before.
enum { STACK_BYTES = 256 * 1024 };

typedef struct Stacks {
    const Plan *plan;
    Trace *trace;
    Tensor *const *values;
    size_t v, y;
    bool *moves;        // the nodes that depend on v
    bool **need;        // of those, the last-axis rows y depends on (true where it does)
    bool *needed;       // the nodes a pass computes: those y depends on by a row at least
    bool *dirty;        // this round: the nodes whose copies differ from their values
    size_t *last_read;  // the last node up to y that reads each node (0: none)
    double **copies;    // this round: each node's copies, one per pass; NULL: read its values
    bool **moved;       // this round: per copy, the rows of a node computed again in part (and
                        // of x, the one moved); NULL: not known
    size_t passes;      // in this round
    Gather gather;
    GradcheckShortcuts *taken;
} Stacks;

// Marks in need_a the rows of input k of node w that the rows need_w of w read: the same rows
// when each row of w comes from the same row of the input (elementwise, rows_alone), those
// the operation names (rows_read), or else all of them.
static void mark_need(const Plan *plan, size_t w, size_t k, const bool *need_w, bool *need_a, size_t rows_a) {
    const PlanNode *n = &plan->nodes[w];
    const Shape *in = &plan->nodes[n->args[k]].shape;
    if ((n->op->elementwise && shape_equal(in, &n->shape)) || (k == 0 && rows_alone(plan, n))) {
        for (size_t r = 0; r < rows_a; r++)
            need_a[r] = need_a[r] || need_w[r];
        return;
    }
    if (n->op->rows_read && n->op->rows_read(&n->attrs, in, k, need_a))
        return;
    memset(need_a, 1, rows_a * sizeof(bool));
}

// The nodes the passes compute, the rows of each that y needs, and when each is last read.
// False when a pass cannot run as a stack (a node between x and y holds no values) or memory
// runs out (*no_memory).
static bool stacks_init(Stacks *s, const Plan *plan, Trace *trace, size_t i, Tensor *const *values,
                        GradcheckShortcuts *taken, size_t *bytes_per_pass, bool *no_memory) {
    const PlanNode *g = &plan->nodes[i];
    *s = (Stacks){.plan = plan, .trace = trace, .values = values, .v = g->grad_wrt, .y = g->grad_of, .taken = taken};
    size_t v = s->v, y = s->y, rows = 0;
    s->moves = util_calloc(y + 1, sizeof(bool));
    s->need = util_calloc(y + 1, sizeof(bool *));
    s->needed = util_calloc(y + 1, sizeof(bool));
    s->dirty = util_calloc(y + 1, sizeof(bool));
    s->last_read = util_calloc(y + 1, sizeof(size_t));
    s->copies = util_calloc(y + 1, sizeof(double *));
    s->moved = util_calloc(y + 1, sizeof(bool *));
    if (!s->moves || !s->need || !s->needed || !s->dirty || !s->last_read || !s->copies || !s->moved) {
        *no_memory = true;
        return false;
    }
    if (!values[v]->data)
        return false;
    s->moves[v] = true;
    for (size_t u = v; u <= y; u++) {
        if (u > v && !moves(plan, u, s->moves))
            continue;
        if (!plan->nodes[u].has_values || !values[u])
            return false;
        rows += rows_of(&plan->nodes[u].shape, values[u]->size);
    }
    // the rows y needs, from y back to x; all of y (a scalar)
    bool *flat = util_calloc(rows + 1, sizeof(bool));
    if (!flat) {
        *no_memory = true;
        return false;
    }
    s->need[v] = flat;  // freed through need[v]
    for (size_t u = v, at = 0; u <= y; u++)
        if (s->moves[u]) {
            s->need[u] = flat + at;
            at += rows_of(&plan->nodes[u].shape, values[u]->size);
        }
    memset(s->need[y], 1, rows_of(&plan->nodes[y].shape, values[y]->size) * sizeof(bool));
    for (size_t w = y; w > v; w--) {
        const PlanNode *n = &plan->nodes[w];
        size_t rows_w = rows_of(&n->shape, values[w]->size);
        for (size_t r = 0; r < rows_w && s->moves[w]; r++)
            s->needed[w] = s->needed[w] || s->need[w][r];
        for (size_t k = 0; k < n->n_args && s->needed[w]; k++) {
            size_t a = n->args[k];
            if (a >= v && s->moves[a])
                mark_need(plan, w, k, s->need[w], s->need[a], rows_of(&plan->nodes[a].shape, values[a]->size));
        }
    }
    s->needed[v] = true;
    size_t bytes = 0;
    for (size_t u = v; u <= y; u++) {
        if (!s->needed[u])
            continue;
        const PlanNode *n = &plan->nodes[u];
        for (size_t k = 0; k < n->n_args && u > v; k++)
            s->last_read[n->args[k]] = u;
        bytes += values[u]->size * sizeof(double);
    }
    *bytes_per_pass = bytes;
    return true;
}

// Node u's copies, and what is known of where they moved, are no longer read.
static void stacks_free_node(Stacks *s, size_t u) {
    util_free(s->copies[u]);
    s->copies[u] = NULL;
    util_free(s->moved[u]);
    s->moved[u] = NULL;
}

static void stacks_free_copies(Stacks *s) {
    for (size_t u = s->v; s->copies && s->moved && u <= s->y; u++)
        stacks_free_node(s, u);
}

static void stacks_finish(Stacks *s) {
    stacks_free_copies(s);
    util_free(s->moves);
    if (s->need)
        util_free(s->need[s->v]);
    util_free(s->need);
    util_free(s->needed);
    util_free(s->dirty);
    util_free(s->last_read);
    util_free(s->copies);
    util_free(s->moved);
    gather_free(&s->gather);
}

// The shape of a stack of a node's copies as an operation with a result of rank `rank` reads
// it: the passes in front, then the node's own shape, padded with 1s to that rank unless the
// operation takes its stacks unpadded (OpDef.stack_prepends).
static Shape stacked_shape(const OpDef *op, const Shape *own, size_t passes, size_t rank) {
    if (op->stack_prepends || rank < own->rank)
        rank = own->rank;
    Shape s = {.rank = rank + 1, .dim = {passes}};
    for (size_t i = 1; i <= rank - own->rank; i++)
        s.dim[i] = 1;
    for (size_t i = 0; i < own->rank; i++)
        s.dim[rank + 1 - own->rank + i] = own->dim[i];
    return s;
}

// Can node n be computed once for the whole stack, with these attrs? Its stacked inputs must
// be ones the operation takes stacked, each of them and the result with room for one more
// axis, and its attrs must have a stacked form when they change.
static bool computes_stacked(const Stacks *s, const PlanNode *n, OpAttrs *attrs) {
    const OpDef *op = n->op;
    if (n->shape.rank + 1 > TENSOR_MAX_RANK || (op->stack_attrs && !op->stack_attrs(&n->attrs, attrs)))
        return false;
    for (size_t k = 0; k < n->n_args; k++) {
        const Shape *own = &s->plan->nodes[n->args[k]].shape;
        if (s->copies[n->args[k]] && (!(op->stacks & OP_STACKS(k)) || own->rank < op->stack_min_rank ||
                                      own->rank + 1 > TENSOR_MAX_RANK))
            return false;
    }
    return true;
}

// Node u's copies into out (room for every pass's copy): once for the stack, only where its
// input moved (the rows computed again in s->moved[u]), or once per copy. Each writes every value of its result (once per copy, into
// zeros, as eval_node makes a result). False with diag filled when the operation refuses.
static bool compute_copies(Stacks *s, size_t u, double *out, Diag *diag) {
    const Plan *plan = s->plan;
    const PlanNode *n = &plan->nodes[u];
    Arena *arena = s->trace->arena;
    size_t passes = s->passes, size = s->values[u]->size;
    Tensor args[EXPR_MAX_ARGS];
    const Tensor *in[EXPR_MAX_ARGS];
    OpAttrs attrs;
    if (computes_stacked(s, n, &attrs)) {
        bool ok = true;
        bool others_whole = n->n_args > 0 && s->copies[n->args[0]];
        for (size_t k = 1; k < n->n_args; k++)
            others_whole = others_whole && !s->copies[n->args[k]];
        if (others_whole) {
            size_t rows = rows_of(&n->shape, size);
            bool *moved = util_malloc(passes * rows * sizeof(bool) + 1);
            if (!moved) {
                diag_out_of_memory(diag);
                return false;
            }
            Part part = {.now = s->copies[n->args[0]], .copies = passes, .rows_too = true, .need = s->need[u],
                         .moved_in = s->moved[n->args[0]], .moved_out = moved, .out = out};
            if (in_part(plan, u, s->values, &part, &s->gather, arena, &ok, diag)) {
                s->moved[u] = moved;
                if (s->taken)
                    s->taken->in_part++;
                return ok;
            }
            util_free(moved);
        }
        double *tiles = NULL;  // the inputs repeated along the stack, one after another
        size_t tiled = 0;
        for (size_t k = 0; k < n->n_args; k++)
            if (!s->copies[n->args[k]] && (n->op->stack_tiles & OP_STACKS(k)))
                tiled += passes * s->values[n->args[k]]->size;
        if (tiled && !(tiles = util_malloc(tiled * sizeof(double)))) {
            diag_out_of_memory(diag);
            return false;
        }
        for (size_t k = 0, at = 0; k < n->n_args; k++) {
            size_t a = n->args[k], a_size = s->values[a]->size;
            const PlanNode *an = &plan->nodes[a];
            in[k] = s->values[a];
            double *data = s->copies[a];
            if (!data && (n->op->stack_tiles & OP_STACKS(k))) {
                data = tiles + at;
                for (size_t c = 0; c < passes; c++)
                    memcpy(data + c * a_size, s->values[a]->data, a_size * sizeof(double));
                at += passes * a_size;
            }
            if (data) {
                args[k] = (Tensor){.shape = stacked_shape(n->op, &an->shape, passes, n->shape.rank),
                                   .size = passes * a_size, .data = data, .is_count = an->is_count};
                in[k] = &args[k];
            }
        }
        Tensor result = {.shape = stacked_shape(n->op, &n->shape, passes, n->shape.rank), .size = passes * size,
                         .data = out, .is_count = n->is_count};
        if (s->taken)
            s->taken->stacked++;
        ok = eval_op_with(plan, u, n->op->stack_attrs ? &attrs : &n->attrs, in, &result, arena, diag);
        util_free(tiles);
        return ok;
    }
    memset(out, 0, passes * size * sizeof(double));
    for (size_t c = 0; c < passes; c++) {
        for (size_t k = 0; k < n->n_args; k++) {
            size_t a = n->args[k], a_size = s->values[a]->size;
            const PlanNode *an = &plan->nodes[a];
            in[k] = s->values[a];
            if (s->copies[a]) {
                args[k] = (Tensor){.shape = an->shape, .size = a_size, .data = s->copies[a] + c * a_size,
                                   .is_count = an->is_count};
                in[k] = &args[k];
            }
        }
        Tensor result = {.shape = n->shape, .size = size, .data = out + c * size, .is_count = n->is_count};
        if (!eval_op_on(plan, u, in, &result, arena, diag))
            return false;
    }
    return true;
}

// One round: passes `first` to first + s->passes - 1, pass 2k moving element elements[k] of x
// up by its step and pass 2k + 1 down, each pass's y into ys. False with diag filled when an
// operation refuses or memory runs out.
static bool stacks_round(Stacks *s, const size_t *elements, size_t first, double *ys, Diag *diag) {
    const Plan *plan = s->plan;
    Tensor *const *values = s->values;
    size_t v = s->v, y = s->y, passes = s->passes;
    const Tensor *x = values[v];
    memset(s->dirty, 0, (y + 1) * sizeof(bool));
    if (!(s->copies[v] = util_malloc(passes * x->size * sizeof(double)))) {
        diag_out_of_memory(diag);
        return false;
    }
    size_t x_width = row_width(&plan->nodes[v].shape), x_rows = rows_of(&plan->nodes[v].shape, x->size);
    if (!(s->moved[v] = util_calloc(passes * x_rows + 1, sizeof(bool)))) {
        diag_out_of_memory(diag);
        return false;
    }
    for (size_t c = 0; c < passes; c++) {
        double *copy = s->copies[v] + c * x->size;
        memcpy(copy, x->data, x->size * sizeof(double));
        size_t pass = first + c, e = elements[pass / 2];
        double h = step_at(x, e);
        copy[e] = x->data[e] + (pass % 2 ? -h : h);
        s->moved[v][c * x_rows + e / x_width] = true;
    }
    s->dirty[v] = true;
    for (size_t u = v + 1; u <= y; u++) {
        const PlanNode *n = &plan->nodes[u];
        if (!moves(plan, u, s->dirty) || !s->needed[u]) {
            s->dirty[u] = false;
            continue;
        }
        size_t size = values[u]->size;
        double *out = util_malloc(passes * size * sizeof(double));
        if (!out) {
            diag_out_of_memory(diag);
            return false;
        }
        s->copies[u] = out;
        if (!compute_copies(s, u, out, diag))
            return false;
        // the same bits as without the move in every pass (an embedding row no token reads, a
        // masked score): nothing after it moves through this node
        // (in the rows y needs: the others may hold anything)
        bool unmoved = values[u]->data != NULL;
        size_t width = row_width(&n->shape), rows = rows_of(&n->shape, size);
        for (size_t c = 0; c < passes && unmoved; c++)
            for (size_t r = 0; r < rows && unmoved; r++)
                unmoved = !s->need[u][r] ||
                          (s->moved[u] ? !s->moved[u][c * rows + r]
                                       : !row_moved(out + c * size + r * width, values[u]->data + r * width, width));
        if (unmoved) {
            stacks_free_node(s, u);
            s->dirty[u] = false;
            if (s->taken)
                s->taken->unmoved++;
        }
        for (size_t k = 0; k < n->n_args; k++) {
            size_t a = n->args[k];
            if (s->last_read[a] == u)
                stacks_free_node(s, a);
        }
    }
    for (size_t c = 0; c < passes; c++)
        ys[first + c] = s->copies[y] ? s->copies[y][c] : values[y]->data[0];
    stacks_free_copies(s);
    return true;
}

// The differences at every element asked for, all passes at once, in rounds. *stacked
// false: the stage cannot run as a stack, and nothing was done.
static bool stacked_differences(const Plan *plan, Trace *trace, size_t i, Tensor *const *values,
                                const size_t *elements, size_t count, double *fd, GradcheckShortcuts *taken,
                                bool *stacked, Diag *diag) {
    Stacks s;
    size_t bytes_per_pass = 0;
    bool no_memory = false;
    *stacked = stacks_init(&s, plan, trace, i, values, taken, &bytes_per_pass, &no_memory) || no_memory;
    double *ys = *stacked && !no_memory ? util_malloc(2 * count * sizeof(double) + 1) : NULL;
    bool ok = ys != NULL;
    if (*stacked && !ok)
        diag_out_of_memory(diag);
    size_t per_round = bytes_per_pass && STACK_BYTES / bytes_per_pass ? STACK_BYTES / bytes_per_pass : 1;
    for (size_t first = 0; ok && first < 2 * count; first += s.passes) {
        s.passes = 2 * count - first < per_round ? 2 * count - first : per_round;
        ok = stacks_round(&s, elements, first, ys, diag);
    }
    for (size_t k = 0; ok && k < count; k++)
        fd[k] = (ys[2 * k] - ys[2 * k + 1]) / (2.0 * step_at(values[s.v], elements[k]));
    util_free(ys);
    stacks_finish(&s);
    return ok;
}

bool gradcheck_differences(const Plan *plan, Trace *trace, size_t i, Tensor *const *values, const size_t *elements,
                           size_t count, GradcheckMode mode, double *fd, GradcheckShortcuts *taken, Diag *diag) {
    if (mode == GRADCHECK_STACKED) {
        bool stacked;
        bool ok = stacked_differences(plan, trace, i, values, elements, count, fd, taken, &stacked, diag);
        if (stacked)
            return ok;
        mode = GRADCHECK_SHORTCUTS;
    }
    Passes p;
    bool ok = passes_init(&p, plan, trace, i, values, mode == GRADCHECK_SHORTCUTS, taken);
    for (size_t s = 0; s < count && ok; s++)
        ok = difference(&p, elements[s], &fd[s], diag);
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
        const Shape *in[EXPR_MAX_ARGS];
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
    if (!gradcheck_differences(plan, trace, i, values, tried, n_tried, GRADCHECK_STACKED, tried_fds, NULL, diag))
        return false;
    for (size_t s = 0, k = 0; s < samples; s++)
        fds[s] = k < n_tried && tried[k] == elements[s] ? tried_fds[k++] : NAN;
    compare_note(plan, i, values, elements, fds, samples, note, cap);
    return true;
}
