// train: the training loop of a lesson's train: section, before the lesson is traced.
#include "train.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "backward.h"
#include "check.h"
#include "eval.h"
#include "format.h"
#include "op.h"
#include "optimizer.h"
#include "progress.h"
#include "train_baseline.h"
#include "train_cache.h"
#include "train_draw.h"

// The state of one training: every value and gradient, made once.
typedef struct Trainer {
    const Lesson *lesson;
    const LessonTrain *spec;
    const Plan *plan;       // the plan training runs: the lesson's, or one with the batch's size
    Plan *own_plan;         // that plan when it is not the lesson's
    Lesson batch_lesson;    // the lesson with its drawn givens as large as a training batch
    LessonGiven *batch_givens;
    size_t loss;            // the loss node
    size_t *param, *data;   // the nodes of the trained and drawn givens, in the lesson's order
    bool *needed;           // nodes the loss is computed from
    bool *on;               // nodes on a differentiable way from a trained given to the loss
    Tensor **values, **grads;
    size_t *use_start, *use, *use_input;  // the uses of node v: use[use_start[v] .. use_start[v + 1])
    Tensor **m, **v;        // the optimizer's averages, one per trained given (v: Adam only)
    Tensor **last;          // each trained given before the last update: kept when the loss goes bad
    const Tensor **in;      // the operands of one operation
    Arena *scratch;         // what the operations of one step allocate for themselves
    const TrainExplain *explain;  // the updates to write out (--explain W[i, j]@s)
    size_t n_explain;
    double *raw_g;          // each one's gradient before clipping, at its step
    TrainClip clip;         // what clipping did at this step
    TraceTraining *record;
} Trainer;

static int fail_at(const Lesson *lesson, Diag *diag, const Node *node, const char *hint, const char *fmt,
                   const char *name) {
    diag_error(diag, STATUS_LESSON_ERROR, &lesson->doc->source, node->line, node->col, yamldoc_node_width(node),
               fmt, name);
    if (hint)
        diag_hint(diag, "%s", hint);
    return diag->status;
}

#define NO_NODE ((size_t)-1)

static size_t node_named(const Plan *plan, const char *name) {
    size_t i;
    return plan_find_stage(plan, name, &i) ? i : NO_NODE;
}

// ---------------------------------------------------------------- checked before the first step

// The loss must be one number, and every trained given must reach it through derivatives.
static bool check_train(Trainer *t, const Plan *plan, Diag *diag) {
    const LessonTrain *spec = t->spec;
    size_t y = node_named(plan, spec->loss);
    ASSERT(y != NO_NODE);  // the loader found the step
    const PlanNode *yn = &plan->nodes[y];
    size_t size = 1;
    for (size_t k = 0; k < yn->shape.rank; k++)
        size *= yn->shape.dim[k];
    if (size != 1 || !yn->has_values) {
        char s[64];
        shape_format(&yn->shape, s, sizeof(s));
        diag_error(diag, STATUS_LESSON_ERROR, &t->lesson->doc->source, spec->loss_node->line, spec->loss_node->col,
                   yamldoc_node_width(spec->loss_node), "training lowers a single number, but '%s' is %s%s",
                   spec->loss, s, yn->has_values ? "" : " with no values");
        diag_hint(diag, "add a step `loss: mean(%s)` and train that", spec->loss);
        return false;
    }
    for (size_t k = 0; k < spec->n_trained; k++) {
        size_t x = node_named(plan, spec->trained[k]);
        if (plan->nodes[x].is_count) {
            fail_at(t->lesson, diag, spec->trained_nodes[k], "write a weight's values with a decimal point (1.0, not 1)",
                    "'%s' holds whole numbers, a count or ids, which have no gradient to train by", spec->trained[k]);
            return false;
        }
        bool *on = util_calloc(plan->n_nodes, sizeof(bool));
        size_t blocker = NO_NODE;
        BackwardPath way = on ? backward_path(plan, y + 1, y, &x, 1, on, &blocker) : BACKWARD_OUT_OF_MEMORY;
        util_free(on);
        if (way == BACKWARD_OUT_OF_MEMORY)
            return diag_no_memory(diag);
        if (way == BACKWARD_NO_PATH) {
            // Not an error: a lesson may train a given that a later edit cut off from the loss.
            const Node *at = spec->trained_nodes[k];
            diag_warning(diag, t->lesson->doc->source.path, at->line, at->col,
                         "the loss does not depend on '%s': training leaves it as it was", spec->trained[k]);
            continue;
        }
        if (way == BACKWARD_NO_DERIVATIVE) {
            const PlanNode *b = &plan->nodes[blocker];
            diag_error(diag, STATUS_LESSON_ERROR, &t->lesson->doc->source, spec->trained_nodes[k]->line,
                       spec->trained_nodes[k]->col, yamldoc_node_width(spec->trained_nodes[k]),
                       "the way from '%s' to the loss passes through %s, which has no derivative", spec->trained[k],
                       b->kind == PLAN_GRAD ? "a gradient" : b->op->name);
            diag_hint(diag, "compute the loss without it, so that a gradient can flow back to '%s'", spec->trained[k]);
            return false;
        }
    }
    return true;
}

// The steps the table lists: the lesson's, or about eight spread over the run, and the last.
static size_t choose_shown(const LessonTrain *s, size_t done, size_t *shown) {
    size_t n = 0;
    if (s->n_shown) {
        for (size_t k = 0; k < s->n_shown; k++)
            if (s->shown[k] < done)
                shown[n++] = s->shown[k];
        return n;
    }
    size_t every = done / 8 ? done / 8 : 1;
    for (size_t k = 0; k < done && n < LESSON_TRAIN_MAX_SHOWN - 1; k += every)
        shown[n++] = k;
    if (done && shown[n - 1] != done - 1)
        shown[n++] = done - 1;
    return n;
}

// The forward passes the validation loss takes: its batches at each step it is measured at
// (those the table lists) and after training; 0 without a held-out text.
static double validation_passes(const Trainer *t) {
    size_t shown[LESSON_TRAIN_MAX_SHOWN];
    for (size_t k = 0; k < t->spec->n_data; k++) {
        const LessonTrainData *d = &t->spec->data[k];
        size_t x;
        if (!d->held || !plan_find_stage(t->plan, d->name, &x))
            continue;
        const Shape *shape = &t->plan->nodes[x].shape;
        size_t batches = train_validation_batches(d, shape->dim[0], shape->dim[1]);
        return (double)batches * (double)(choose_shown(t->spec, t->spec->steps, shown) + 1);
    }
    return 0;
}

// Training repeats the products up to the loss at every step, forwards and back (each product
// passes a share back to each of its two inputs, at its own cost each): its steps x 3 x the
// forward's multiply-adds, and a forward for each validation batch measured, count against the
// budget of every lesson, PLAN_MAX_MULTIPLY_ADDS.
static bool check_training_work(const Trainer *t, Diag *diag) {
    const Plan *plan = t->plan;
    size_t y = node_named(plan, t->spec->loss);
    double forward = 0;
    for (size_t i = 0; i <= y; i++) {
        const PlanNode *n = &plan->nodes[i];
        if (n->kind != PLAN_OP)
            continue;
        const Shape *in[OP_MAX_ARGS];
        for (size_t a = 0; a < n->n_args; a++)
            in[a] = &plan->nodes[n->args[a]].shape;
        size_t work;
        if (op_multiply_adds(n->op, in, &n->shape, &work))
            forward += (double)work;
    }
    double passes = validation_passes(t);
    double per_step = 3 * forward, total = per_step * (double)t->spec->steps + forward * passes;
    if (total <= (double)PLAN_MAX_MULTIPLY_ADDS)
        return true;
    char need[64], each[64], limit[64];
    format_count(total, need, sizeof(need));
    format_count(per_step, each, sizeof(each));
    format_count((double)PLAN_MAX_MULTIPLY_ADDS, limit, sizeof(limit));
    const Node *at = t->spec->steps_node ? t->spec->steps_node : t->spec->node;
    diag_error(diag, STATUS_LESSON_ERROR, &t->lesson->doc->source, at->line, at->col, yamldoc_node_width(at),
               "this training needs about %s multiply-adds (%zu steps of %s each, forward and back%s); a "
               "training, like a lesson's own products, may need at most %s",
               need, t->spec->steps, each, passes ? ", and the validation loss's forward passes" : "", limit);
    // the validation loss is measured about as often at any number of steps
    double most = (double)PLAN_MAX_MULTIPLY_ADDS - forward * passes;
    diag_hint(diag, "that is more than a minute of arithmetic; train for at most %.0f steps, or use smaller shapes",
              most > 0 ? floor(most / per_step) : 0);
    return false;
}

// The plan training runs: the lesson's own when every drawn batch is as large as the given's
// example batch, else the lesson checked again with the drawn givens at the batch's size.
static bool training_plan(Trainer *t, const Plan *plan, Diag *diag) {
    const Lesson *lesson = t->lesson;
    bool same = true;
    for (size_t k = 0; k < t->spec->n_data; k++) {
        const LessonTrainData *d = &t->spec->data[k];
        size_t g = node_named(plan, d->name);
        same = same && (d->batch == 0 || d->batch == plan->nodes[g].shape.dim[0]);
    }
    if (same) {
        t->plan = plan;
        return true;
    }
    if (!(t->batch_givens = util_calloc(lesson->n_givens, sizeof(LessonGiven))))
        return diag_no_memory(diag);
    memcpy(t->batch_givens, lesson->givens, lesson->n_givens * sizeof(LessonGiven));
    for (size_t k = 0; k < t->spec->n_data; k++) {
        const LessonTrainData *d = &t->spec->data[k];
        for (size_t i = 0; i < lesson->n_givens; i++) {
            LessonGiven *g = &t->batch_givens[i];
            if (strcmp(g->name, d->name) != 0 || d->batch == 0)
                continue;
            g->shape.dim[0] = d->batch;
            g->init = GIVEN_ZEROS;  // drawn at every step
            g->document = NULL;
        }
    }
    t->batch_lesson = *lesson;
    t->batch_lesson.givens = t->batch_givens;
    t->batch_lesson.n_claims = 0;  // judged on the traced run, not on a training batch
    t->batch_lesson.train = NULL;
    // Training runs the steps up to the loss; those after it run on the traced example only,
    // whatever shape a training batch would give them.
    for (size_t i = 0; i < lesson->n_steps; i++) {
        const LessonStep *s = &lesson->steps[i];
        bool loss = strcmp(s->name, t->spec->loss) == 0;
        for (size_t a = 0; a < s->n_aliases && !loss; a++)
            loss = strcmp(s->aliases[a], t->spec->loss) == 0;
        if (loss)
            t->batch_lesson.n_steps = i + 1;
    }
    t->own_plan = check_lesson(&t->batch_lesson, diag);
    t->plan = t->own_plan;
    if (!t->plan && diag->status == STATUS_LESSON_ERROR && !diag->out_of_memory) {
        // The same steps passed with the traced example's shapes: say which shape differs.
        const LessonTrainData *d = &t->spec->data[0];
        size_t len = strlen(diag->message);
        snprintf(diag->message + len, sizeof(diag->message) - len,
                 " (in training, where '%s' is a batch of %zu rows)", d->name, d->batch);
    }
    return t->plan != NULL;
}

// ---------------------------------------------------------------- made once

static bool prepare(Trainer *t, Diag *diag) {
    const Plan *plan = t->plan;
    size_t n = plan->n_nodes, y = t->loss = node_named(plan, t->spec->loss);
    t->param = util_calloc(t->spec->n_trained, sizeof(size_t));
    t->data = util_calloc(t->spec->n_data + 1, sizeof(size_t));
    t->needed = util_calloc(n, sizeof(bool));
    t->on = util_calloc(n, sizeof(bool));
    t->values = util_calloc(n, sizeof(Tensor *));
    t->grads = util_calloc(n, sizeof(Tensor *));
    t->use_start = util_calloc(n + 1, sizeof(size_t));
    t->m = util_calloc(t->spec->n_trained, sizeof(Tensor *));
    t->v = util_calloc(t->spec->n_trained, sizeof(Tensor *));
    t->last = util_calloc(t->spec->n_trained, sizeof(Tensor *));
    t->in = util_calloc(OP_MAX_ARGS, sizeof(Tensor *));
    t->scratch = arena_create();
    t->raw_g = util_calloc(t->n_explain + 1, sizeof(double));
    if (!t->param || !t->data || !t->needed || !t->on || !t->values || !t->grads || !t->use_start || !t->m ||
        !t->v || !t->last || !t->in || !t->scratch || !t->raw_g)
        return diag_no_memory(diag);
    for (size_t k = 0; k < t->spec->n_trained; k++)
        t->param[k] = node_named(plan, t->spec->trained[k]);
    for (size_t k = 0; k < t->spec->n_data; k++)
        t->data[k] = node_named(plan, t->spec->data[k].name);
    // Each trained given alone has a way without a blocker, or none at all (check_train).
    size_t blocker;
    if (backward_path(plan, y + 1, y, t->param, t->spec->n_trained, t->on, &blocker) == BACKWARD_OUT_OF_MEMORY)
        return diag_no_memory(diag);
    // What the loss is computed from; a gradient step among it reads every node before it.
    t->needed[y] = true;
    for (size_t i = y + 1; i-- > 0;) {
        const PlanNode *node = &plan->nodes[i];
        if (!t->needed[i])
            continue;
        if (node->kind == PLAN_GRAD)
            for (size_t k = 0; k < i; k++)
                t->needed[k] = true;
        else
            for (size_t k = 0; k < node->n_args; k++)
                t->needed[node->args[k]] = true;
    }
    // A trained given the loss does not depend on keeps its values, unmoved.
    for (size_t k = 0; k < t->spec->n_trained; k++)
        t->needed[t->param[k]] = true;
    // The uses of each node on the way, in the order of the nodes that use it (as grad() sums).
    for (size_t u = 0; u <= y; u++) {
        const PlanNode *un = &plan->nodes[u];
        if (t->on[u] && un->kind == PLAN_OP)
            for (size_t k = 0; k < un->n_args; k++)
                if (t->on[un->args[k]] && !(un->op->no_grad & (1u << k)))
                    t->use_start[un->args[k] + 1]++;
    }
    for (size_t v = 0; v < n; v++)
        t->use_start[v + 1] += t->use_start[v];
    size_t total = t->use_start[n];
    t->use = util_calloc(total + 1, sizeof(size_t));
    t->use_input = util_calloc(total + 1, sizeof(size_t));
    size_t *fill = util_calloc(n, sizeof(size_t));
    if (!t->use || !t->use_input || !fill) {
        util_free(fill);
        return diag_no_memory(diag);
    }
    for (size_t u = 0; u <= y; u++) {
        const PlanNode *un = &plan->nodes[u];
        if (!t->on[u] || un->kind != PLAN_OP)
            continue;
        for (size_t k = 0; k < un->n_args; k++) {
            size_t v = un->args[k];
            if (t->on[v] && !(un->op->no_grad & (1u << k))) {
                t->use[t->use_start[v] + fill[v]] = u;
                t->use_input[t->use_start[v] + fill[v]++] = k;
            }
        }
    }
    util_free(fill);
    // Every value, as the lesson starts: the trained givens from their own values.
    Arena *arena = arena_create();
    if (!arena)
        return diag_no_memory(diag);
    for (size_t i = 0; i <= y; i++) {
        if (!t->needed[i])
            continue;
        if (!(t->values[i] = eval_node(plan, i, t->values, t->in, arena, diag))) {
            arena_destroy(arena);
            return false;
        }
        if (t->on[i] && !(t->grads[i] = tensor_create(&plan->nodes[i].shape))) {
            arena_destroy(arena);
            return diag_no_memory(diag);
        }
    }
    arena_destroy(arena);
    for (size_t k = 0; k < t->spec->n_trained; k++) {
        const Shape *s = &plan->nodes[t->param[k]].shape;
        if (!(t->m[k] = tensor_create(s)) || !(t->last[k] = tensor_create(s)) ||
            (t->spec->optimizer != TRAIN_SGD && !(t->v[k] = tensor_create(s))))
            return diag_no_memory(diag);
    }
    return true;
}

static void trainer_finish(Trainer *t) {
    size_t n = t->plan ? t->plan->n_nodes : 0;
    for (size_t i = 0; t->values && i < n; i++)
        tensor_destroy(t->values[i]);
    for (size_t i = 0; t->grads && i < n; i++)
        tensor_destroy(t->grads[i]);
    for (size_t k = 0; k < t->spec->n_trained; k++) {
        if (t->m)
            tensor_destroy(t->m[k]);
        if (t->v)
            tensor_destroy(t->v[k]);
        if (t->last)
            tensor_destroy(t->last[k]);
    }
    util_free(t->last);
    util_free(t->raw_g);
    util_free(t->values);
    util_free(t->grads);
    util_free(t->m);
    util_free(t->v);
    util_free(t->in);
    arena_destroy(t->scratch);
    util_free(t->param);
    util_free(t->data);
    util_free(t->needed);
    util_free(t->on);
    util_free(t->use_start);
    util_free(t->use);
    util_free(t->use_input);
    plan_destroy(t->own_plan);
    util_free(t->batch_givens);
}

// ---------------------------------------------------------------- one step

// The batch of step s into each drawn given.
static void draw_batches(Trainer *t, size_t s) {
    for (size_t k = 0; k < t->spec->n_data; k++)
        if (t->values[t->data[k]])  // else the loss does not read it
            train_draw_batch(t->values[t->data[k]], &t->spec->data[k], s);
}

static bool forward(Trainer *t, Diag *diag) {
    Arena *arena = t->scratch;  // what an operation needs for itself (an index's list)
    arena_clear(arena);
    bool ok = true;
    for (size_t i = 0; ok && i <= t->loss; i++) {
        const PlanNode *n = &t->plan->nodes[i];
        if (!t->needed[i] || n->kind == PLAN_GIVEN || n->kind == PLAN_CONSTANT || !n->has_values)
            continue;
        if (n->kind == PLAN_GRAD) {
            Tensor *g = backward_gradient(t->plan, i, t->values);
            ok = g || diag_no_memory(diag);
            if (ok) {
                tensor_destroy(t->values[i]);
                t->values[i] = g;
            }
            continue;
        }
        ok = eval_op_into(t->plan, i, t->values, t->in, t->values[i], arena, diag);
    }
    return ok;
}

// The validation loss: the lesson's loss on each validation batch of every text with a held-out
// tail (the other drawn givens as at step s), their mean; the training batch of step s is
// drawn afresh after it.
static bool validate(Trainer *t, size_t s, double *loss, Diag *diag) {
    draw_batches(t, s);
    size_t batches = TRAIN_VALIDATION_MAX_BATCHES;
    for (size_t k = 0; k < t->spec->n_data; k++) {
        const LessonTrainData *d = &t->spec->data[k];
        const Tensor *x = t->values[t->data[k]];
        if (d->held && x) {
            size_t b = train_validation_batches(d, x->shape.dim[0], x->shape.dim[1]);
            batches = b < batches ? b : batches;
        }
    }
    double sum = 0;
    for (size_t b = 0; b < batches; b++) {
        for (size_t k = 0; k < t->spec->n_data; k++)
            if (t->spec->data[k].held && t->values[t->data[k]])
                train_validation_batch(t->values[t->data[k]], &t->spec->data[k], b, batches);
        if (!forward(t, diag))
            return false;
        sum += t->values[t->loss]->data[0];
    }
    *loss = sum / (double)batches;
    return true;
}

// Every gradient on the way, from the loss down: d loss / d loss = 1, and each node gathers
// its uses' shares in the order of the uses, as backward_gradient does.
static bool backward(Trainer *t, Diag *diag) {
    const Plan *plan = t->plan;
    for (size_t v = t->loss + 1; v-- > 0;) {
        if (!t->on[v])
            continue;
        Tensor *d = t->grads[v];
        kernel_fill(d, v == t->loss ? 1.0 : 0.0);
        for (size_t j = t->use_start[v]; j < t->use_start[v + 1]; j++) {
            const PlanNode *u = &plan->nodes[t->use[j]];
            plan_operands(u, t->values, t->in);
            OpGrad g = {.op = u->op, .din = d, .input = t->use_input[j], .dout = t->grads[t->use[j]],
                        .out = t->values[t->use[j]], .in = t->in, .n_in = u->n_args, .attrs = &u->attrs};
            if (!u->op->grad(&g))
                return diag_no_memory(diag);
        }
    }
    return true;
}

static double sum_of_squares(const Tensor *g) {
    double s = 0;
    for (size_t i = 0; i < g->size; i++)
        s += g->data[i] * g->data[i];
    return s;
}

// PyTorch's clip_grad_norm_: the norm of the trained givens' gradient norms; above `clip`,
// every gradient is scaled by clip / (norm + 1e-6).
static void clip_gradients(Trainer *t) {
    double total = 0;
    for (size_t k = 0; k < t->spec->n_trained; k++) {
        if (!t->grads[t->param[k]])
            continue;  // the loss does not depend on it
        double norm = sqrt(sum_of_squares(t->grads[t->param[k]]));
        total += norm * norm;
    }
    double coef = t->spec->clip / (sqrt(total) + 1e-6);
    t->clip = (TrainClip){.clip = t->spec->clip, .norm = sqrt(total), .scale = coef, .applied = coef < 1};
    if (coef >= 1)
        return;
    for (size_t k = 0; k < t->spec->n_trained; k++) {
        Tensor *g = t->grads[t->param[k]];
        for (size_t i = 0; g && i < g->size; i++)
            g->data[i] *= coef;
    }
}

// Update `step` (from 1) of the optimizer on every trained given (optimizer.h), each update
// the command line asks to see written out first, from the same code.
static bool update(Trainer *t, size_t step) {
    const LessonTrain *s = t->spec;
    OptimizerRule rule = optimizer_rule(s, step);
    for (size_t k = 0; k < s->n_trained; k++) {
        if (!t->grads[t->param[k]])
            continue;  // the loss does not depend on it: it stays as it was
        double *w = t->values[t->param[k]]->data, *g = t->grads[t->param[k]]->data, *m = t->m[k]->data;
        double *v = t->v[k] ? t->v[k]->data : NULL;
        size_t n = t->values[t->param[k]]->size;
        for (size_t j = 0; j < t->n_explain; j++) {
            const TrainExplain *q = &t->explain[j];
            if (q->trained != k || q->step + 1 != step)
                continue;
            OptimizerWork work;
            optimizer_explain(&rule, w, g, m, v, q->element, &work);
            TraceUpdate *u = &t->record->updates[j];
            u->not_reached = NULL;
            if (!train_explain_write(q, s, &rule, &work, t->raw_g[j], &t->clip, t->record->arena, u))
                return false;
        }
        memcpy(t->last[k]->data, w, n * sizeof(double));
        optimizer_update(&rule, w, g, m, v, n);
    }
    return true;
}

// ---------------------------------------------------------------- the record

static bool all_finite(const Tensor *x, bool nan_only) {
    for (size_t i = 0; x && x->data && i < x->size; i++)
        if (isnan(x->data[i]) || (!nan_only && isinf(x->data[i]) && x->data[i] > 0))
            return false;
    return true;
}

// The first stage that made a nan, else the first that made +inf: where the loss went wrong.
static const char *first_non_finite(const Trainer *t) {
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i <= t->loss; i++) {
            const PlanNode *n = &t->plan->nodes[i];
            if (t->needed[i] && n->is_stage && !all_finite(t->values[i], pass == 0))
                return n->name;
        }
    return t->spec->loss;
}

static const char *describe_optimizer(Arena *a, const LessonTrain *s) {
    char lr[32], wd[32];
    format_short(s->lr, lr, sizeof(lr));
    format_short(s->weight_decay, wd, sizeof(wd));
    if (s->optimizer == TRAIN_SGD) {
        char mo[32];
        format_short(s->momentum, mo, sizeof(mo));
        return arena_printf(a, "sgd: lr %s, momentum %s, weight_decay %s", lr, mo, wd);
    }
    char b1[32], b2[32], eps[32];
    format_short(s->beta1, b1, sizeof(b1));
    format_short(s->beta2, b2, sizeof(b2));
    format_short(s->eps, eps, sizeof(eps));
    return arena_printf(a, "%s: lr %s, betas (%s, %s), eps %s, weight_decay %s",
                        s->optimizer == TRAIN_ADAM ? "adam" : "adamw", lr, b1, b2, eps, wd);
}

static const char *describe_data(Arena *a, const LessonTrainData *d, const Shape *shape) {
    char s[64];
    shape_format(shape, s, sizeof(s));
    if (d->draw == TRAIN_DRAW_SEQUENCES)
        return arena_printf(a, "%s %s a step: the %zu sequences written out, taken in turn", d->name, s, d->n_rows);
    if (d->draw == TRAIN_DRAW_TEXT && d->held)
        return arena_printf(a, "%s %s a step: windows of the first %zu of the %zu bytes of %s, each at a place drawn "
                               "from seed %llu + the step",
                            d->name, s, d->text_len - d->held, d->text_len, d->text_name, (unsigned long long)d->seed);
    if (d->draw == TRAIN_DRAW_TEXT)
        return arena_printf(a, "%s %s a step: windows of the %zu bytes of %s, each at a place drawn from seed %llu + "
                               "the step",
                            d->name, s, d->text_len, d->text_name, (unsigned long long)d->seed);
    const char *copies = d->draw == TRAIN_DRAW_REPEAT ? ", the second half of each row a copy of the first" : "";
    if (d->draw == TRAIN_DRAW_SHIFTED)
        copies = arena_printf(a, ", each row its first s ids over and over, s from %zu to %zu in turn",
                              d->shift_lo, d->shift_hi);
    if (!copies)
        return NULL;  // out of memory, as the line itself would be
    return arena_printf(a, "%s %s a step: ids drawn at random from 0 to %llu%s, from seed %llu + the step",
                        d->name, s, (unsigned long long)(d->vocab - 1), copies,
                        (unsigned long long)d->seed);
}

// What the validation loss is measured on, and the counting baselines of the first text with
// a held-out tail that the loss reads; r->validation stays NULL when there is none.
static bool validation_create(Trainer *t, TraceTraining *r) {
    for (size_t k = 0; k < t->spec->n_data; k++) {
        const LessonTrainData *d = &t->spec->data[k];
        if (!d->held || !t->needed[t->data[k]])
            continue;
        Arena *a = r->arena;
        TraceValidation *v = arena_alloc(a, sizeof(TraceValidation));
        if (!v)
            return false;
        const Shape *x = &t->plan->nodes[t->data[k]].shape;
        size_t rows = x->dim[0], n = x->dim[1], batches = train_validation_batches(d, rows, n);
        TrainBaseline counts;
        *v = (TraceValidation){
            .steps = arena_array(a, LESSON_TRAIN_MAX_SHOWN, sizeof(size_t)),
            .losses = arena_array(a, LESSON_TRAIN_MAX_SHOWN, sizeof(double)),
            .about = arena_printf(a, "the loss on %zu fixed windows of %zu bytes, spread evenly over the last %zu "
                                     "bytes of %s (held out from training), in %zu batch%s of %zu",
                                  rows * batches, n, d->held, d->text_name, batches, batches > 1 ? "es" : "",
                                  rows)};
        if (!v->steps || !v->losses || !v->about || !train_baseline(d->text, d->text_len, d->held, &counts))
            return false;
        v->bigram = counts.bigram;
        v->trigram = counts.trigram;
        r->validation = v;
        return true;
    }
    return true;
}

static TraceTraining *record_create(Trainer *t, Diag *diag) {
    Arena *a = arena_create();
    TraceTraining *r = a ? arena_alloc(a, sizeof(TraceTraining)) : NULL;
    if (!r) {
        arena_destroy(a);
        diag_no_memory(diag);
        return NULL;
    }
    const LessonTrain *s = t->spec;
    *r = (TraceTraining){.arena = a, .loss = s->loss, .steps = s->steps, .n_trained = s->n_trained,
                         .n_data = s->n_data};
    r->optimizer = describe_optimizer(a, s);
    if (s->clip > 0) {
        char c[32];
        format_short(s->clip, c, sizeof(c));
        r->clip = arena_printf(a, "the gradients scaled down together when their global norm is above %s", c);
    }
    r->data = arena_array(a, s->n_data + 1, sizeof(char *));
    r->trained = arena_array(a, s->n_trained, sizeof(TraceTrainGiven));
    r->losses = arena_array(a, s->steps, sizeof(double));
    size_t *shown = arena_array(a, LESSON_TRAIN_MAX_SHOWN, sizeof(size_t));
    r->shown = shown;
    r->updates = arena_array(a, t->n_explain + 1, sizeof(TraceUpdate));
    r->n_updates = t->n_explain;
    bool ok = r->optimizer && (!s->clip || r->clip) && r->data && r->trained && r->losses && shown && r->updates;
    for (size_t j = 0; ok && j < t->n_explain; j++) {
        TraceUpdate *u = &r->updates[j];
        u->step = t->explain[j].step;
        const char *name = s->trained[t->explain[j].trained];
        ok = (u->element = train_explain_element(&t->explain[j], s, a)) &&
             (u->not_reached = t->on[t->param[t->explain[j].trained]]
                                   ? arena_printf(a, "training stopped before step %zu", u->step)
                                   : arena_printf(a, "the loss does not depend on %s, so training never moves it",
                                                  name));
    }
    r->notes = arena_array(a, s->n_trained + 1, sizeof(char *));
    ok = ok && r->notes;
    for (size_t k = 0; ok && k < s->n_trained; k++)
        if (!t->on[t->param[k]])
            ok = (r->notes[r->n_notes++] = arena_printf(
                      a, "the loss does not depend on %s: training leaves it as it was", s->trained[k])) != NULL;
    for (size_t k = 0; ok && k < s->n_data; k++)
        ok = (r->data[k] = describe_data(a, &s->data[k], &t->plan->nodes[t->data[k]].shape)) != NULL;
    ok = ok && validation_create(t, r);
    for (size_t k = 0; ok && k < s->n_trained; k++) {
        r->trained[k].name = s->trained[k];
        ok = (r->trained[k].before = tensor_copy(t->values[t->param[k]])) != NULL;
    }
    if (!ok) {
        trace_training_destroy(r);
        diag_no_memory(diag);
        return NULL;
    }
    return r;
}


// The trained values become the given's own, as if the lesson had written them out.
static bool keep_trained(Lesson *lesson, const Trainer *t, Diag *diag) {
    for (size_t k = 0; k < t->spec->n_trained; k++) {
        const Tensor *w = t->values[t->param[k]];
        for (size_t i = 0; i < lesson->n_givens; i++) {
            LessonGiven *g = &lesson->givens[i];
            if (strcmp(g->name, t->spec->trained[k]) != 0)
                continue;
            double *values = arena_array(lesson->arena, w->size, sizeof(double));
            if (!values)
                return diag_no_memory(diag);
            memcpy(values, w->data, w->size * sizeof(double));
            g->init = GIVEN_VALUES;
            g->values = values;
            g->document = NULL;  // a textbook's numbers were for the weights before training
        }
    }
    return true;
}

// A value known only while running was wrong (an id past its table): the error is at the
// step that used it; the hint says it came from a drawn batch, and from which.
static void say_which_batch(const Trainer *t, size_t step, bool validating, Diag *diag) {
    const LessonTrainData *d = &t->spec->data[0];
    double most = (double)d->vocab - 1;
    for (size_t i = 0; d->draw == TRAIN_DRAW_SEQUENCES && i < d->n_rows * d->length; i++)
        most = i ? fmax(most, d->rows[i]) : d->rows[i];
    char when[96];
    if (validating && step == t->spec->steps)
        snprintf(when, sizeof(when), "the validation loss after training");
    else
        snprintf(when, sizeof(when), "%s %zu", validating ? "the validation loss before training step" :
                                                             "training step", step);
    snprintf(diag->hint, sizeof(diag->hint),
             "this is %s, on a batch %s '%s' with ids from 0 to %.0f: draw only ids the tables they pick from "
             "have rows for",
             when, validating ? "of the held-out windows of" : "drawn for", d->name, most);
}

// The trained tensors, in the order of the lesson's trained: (the cache's order).
static Tensor **trained_tensors(const Trainer *t) {
    Tensor **w = util_calloc(t->spec->n_trained + 1, sizeof(Tensor *));
    for (size_t k = 0; w && k < t->spec->n_trained; k++)
        w[k] = t->values[t->param[k]];
    return w;
}

TraceTraining *train_lesson(Lesson *lesson, const Plan *plan, const TrainExplain *explain, size_t n_explain,
                            const char *cache_dir, Diag *diag) {
    Trainer t = {.lesson = lesson, .spec = lesson->train, .explain = explain, .n_explain = n_explain};
    TraceTraining *record = NULL;
    bool ok = check_train(&t, plan, diag) && training_plan(&t, plan, diag) && check_training_work(&t, diag) &&
              prepare(&t, diag) &&
              (t.record = record = record_create(&t, diag)) != NULL;
    // A training done before on the same content is read instead of run again, unless the
    // command line asks to see updates as they are made.
    uint8_t key[SHA256_BYTES];
    Tensor **trained = NULL;
    bool cached = false, keyed = false;
    int lock = -1;
    if (ok && cache_dir && !n_explain) {
        keyed = train_cache_key(lesson, t.plan, t.needed, t.values, t.loss, key);
        ok = (trained = trained_tensors(&t)) != NULL || diag_no_memory(diag);
        cached = ok && keyed && train_cache_load(cache_dir, key, record, trained, t.spec->n_trained);
        // Not there: wait for any other tracer training the same, which then stored it.
        if (ok && keyed && !cached) {
            lock = train_cache_lock(cache_dir, key);
            cached = lock >= 0 && train_cache_load(cache_dir, key, record, trained, t.spec->n_trained);
        }
    }
    Progress progress;  // shown on a terminal while a long training runs (progress.h)
    progress_begin(&progress, "training", "steps", t.spec->steps, "loss");
    // The validation loss is measured at the steps the table would list if every step is
    // taken (as each step begins), and after the last.
    TraceValidation *val = ok ? record->validation : NULL;
    size_t measured[LESSON_TRAIN_MAX_SHOWN], n_measured = val ? choose_shown(t.spec, t.spec->steps, measured) : 0;
    for (size_t s = 0; ok && !cached && s < t.spec->steps; s++) {
        if (val && val->n < n_measured && measured[val->n] == s) {
            val->steps[val->n] = s;
            ok = validate(&t, s, &val->losses[val->n], diag);
            val->n += ok;
            if (!ok && !diag->out_of_memory)
                say_which_batch(&t, s, true, diag);
        }
        if (!ok)
            break;
        draw_batches(&t, s);
        ok = forward(&t, diag);
        if (!ok && !diag->out_of_memory && t.spec->n_data)
            say_which_batch(&t, s, false, diag);
        double loss = ok ? t.values[t.loss]->data[0] : 0;
        if (ok && !isfinite(loss)) {
            char num[32];
            format_short(loss, num, sizeof(num));
            // the weights of the step before, the last with a finite loss
            for (size_t k = 0; s > 0 && k < t.spec->n_trained; k++)
                memcpy(t.values[t.param[k]]->data, t.last[k]->data, t.last[k]->size * sizeof(double));
            record->stopped = arena_printf(record->arena,
                                           "training stopped at step %zu: the loss is %s, first not finite at "
                                           "stage '%s'; the trace uses the weights %s",
                                           s, num, first_non_finite(&t),
                                           s ? "of the step before, the last with a finite loss"
                                             : "it started from");
            ok = record->stopped || diag_no_memory(diag);
            break;
        }
        if (ok) {
            record->losses[s] = loss;
            record->steps_done = s + 1;
            ok = backward(&t, diag);
        }
        for (size_t j = 0; ok && j < n_explain; j++)
            if (explain[j].step == s && t.grads[t.param[explain[j].trained]])
                t.raw_g[j] = t.grads[t.param[explain[j].trained]]->data[explain[j].element];
        if (ok && t.spec->clip > 0)
            clip_gradients(&t);
        if (ok)
            ok = update(&t, s + 1) || diag_no_memory(diag);
        if (ok)
            progress_update(&progress, s + 1, record->losses[s], NULL);
    }
    progress_end(&progress);
    if (ok && val && !cached) {
        ok = validate(&t, t.spec->steps, &val->after, diag);
        if (!ok && !diag->out_of_memory)
            say_which_batch(&t, t.spec->steps, true, diag);
    }
    if (ok)
        record->n_shown = choose_shown(t.spec, record->steps_done, (size_t *)record->shown);
    if (ok && keyed && !cached)
        train_cache_store(cache_dir, key, record, trained, t.spec->n_trained);
    train_cache_unlock(lock);
    util_free(trained);
    ok = ok && keep_trained(lesson, &t, diag);
    trainer_finish(&t);
    if (!ok) {
        trace_training_destroy(record);
        return NULL;
    }
    return record;
}
