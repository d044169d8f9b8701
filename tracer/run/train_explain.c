// train_explain: one weight's update at one training step, resolved and written out.
#include "train_explain.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "format.h"

// A usage error about the request `text`: what is wrong, then the hint.
static bool usage(Diag *diag, const char *text, const char *hint, const char *what) {
    diag_error(diag, STATUS_USAGE_ERROR, NULL, 0, 0, 0, "--explain '%s': %s", text, what);
    diag_hint(diag, "%s", hint);
    return false;
}

bool train_explain_resolve(const Lesson *lesson, const Plan *plan, const char *text, const char *name,
                           const ExplainSpec *spec, long step, TrainExplain *out, Diag *diag) {
    const LessonTrain *train = lesson->train;
    *out = (TrainExplain){.text = text, .digits = -1};
    if (!train)
        return usage(diag, text,
                     "'@' and a step explain one weight's update in a lesson that trains (train:); without "
                     "them --explain works out a value of the trace",
                     "the lesson does not train, so it has no training steps");
    size_t k = 0;
    while (k < train->n_trained && strcmp(train->trained[k], name) != 0)
        k++;
    if (k == train->n_trained) {
        char hint[512];
        size_t len = (size_t)snprintf(hint, sizeof(hint), "the trained givens are ");
        for (size_t i = 0; i < train->n_trained && len < sizeof(hint); i++)
            len += (size_t)snprintf(hint + len, sizeof(hint) - len, "%s%s",
                                    i == 0 ? "" : i + 1 == train->n_trained ? " and " : ", ", train->trained[i]);
        char what[320];
        snprintf(what, sizeof(what), "'%s' is not trained", name);
        return usage(diag, text, hint, what);
    }
    size_t node;
    ASSERT(plan_find_stage(plan, name, &node));  // the loader checked that it is a given
    const Shape *s = &plan->nodes[node].shape;
    char shape[64], example[320];
    shape_format(s, shape, sizeof(shape));
    size_t len = (size_t)snprintf(example, sizeof(example), "as %s[", name);
    for (size_t a = 0; a < s->rank && len < sizeof(example); a++)
        len += (size_t)snprintf(example + len, sizeof(example) - len, "%s%zu", a ? ", " : "", a);
    if (len < sizeof(example))
        snprintf(example + len, sizeof(example) - len, "]@%ld", step);
    if (spec->kind != EXPLAIN_ELEMENT || spec->n_index != s->rank) {
        char what[128];
        if (s->rank == 1)
            snprintf(what, sizeof(what), "name one weight of '%s' %s by its index", name, shape);
        else
            snprintf(what, sizeof(what), "name one weight of '%s' %s by its %zu indices", name, shape, s->rank);
        return usage(diag, text, example, what);
    }
    out->trained = k;
    out->rank = s->rank;
    for (size_t a = 0; a < s->rank; a++) {
        long i = spec->index[a], dim = (long)s->dim[a];
        if (i < -dim || i >= dim) {
            char what[160], hint[160];
            snprintf(what, sizeof(what), "index %ld is past the end of axis %zu of '%s' %s", i, a, name, shape);
            snprintf(hint, sizeof(hint), "indices of axis %zu run from 0 to %ld (or from -%ld to -1, counted from "
                     "the end)", a, dim - 1, dim);
            return usage(diag, text, hint, what);
        }
        out->index[a] = (size_t)(i < 0 ? i + dim : i);
        out->element = out->element * s->dim[a] + out->index[a];
    }
    if (step < 0 || (size_t)step >= train->steps) {
        char what[128], hint[128];
        snprintf(what, sizeof(what), "training takes steps 0 to %zu", train->steps - 1);
        snprintf(hint, sizeof(hint), "name a step from 0 to %zu: the lesson trains for %zu steps", train->steps - 1,
                 train->steps);
        return usage(diag, text, hint, what);
    }
    out->step = (size_t)step;
    return true;
}

const char *train_explain_element(const TrainExplain *q, const LessonTrain *spec, Arena *arena) {
    char index[128] = "";
    size_t len = 0;
    for (size_t a = 0; a < q->rank; a++)
        len += (size_t)snprintf(index + len, sizeof(index) - len, "%s%zu", a ? ", " : "", q->index[a]);
    return arena_printf(arena, "%s[%s]", spec->trained[q->trained], index);
}

// ---------------------------------------------------------------- the words

// The lines and the named numbers of one update, written as they come.
typedef struct Writer {
    Arena *arena;
    TraceUpdate *out;
    size_t cap_work, cap_values;
    int digits;  // as TrainExplain's
    bool failed;
} Writer;

// v at full precision, the shortest text that reads back to the same double (so that each
// line can be worked again on the numbers shown, to the bit), or as --digits asks; in
// brackets when it is negative and an operand, as in 0.01 · (-0.45).
static const char *text_of(Writer *w, double v, bool operand) {
    char buf[FORMAT_NUMBER_CAP];
    if (w->digits >= 0)
        format_number(v, w->digits, buf, sizeof(buf));
    else
        format_short(v, buf, sizeof(buf));
    const char *s = operand && signbit(v) && !isnan(v) ? arena_printf(w->arena, "(%s)", buf) : arena_strdup(w->arena, buf);
    w->failed = w->failed || !s;
    return s ? s : "";
}

static const char *num(Writer *w, double v) {
    return text_of(w, v, true);
}

static const char *res(Writer *w, double v) {
    return text_of(w, v, false);
}

static void value(Writer *w, const char *name, double v) {
    ASSERT(w->out->n_values < w->cap_values);
    w->out->names[w->out->n_values] = name;
    w->out->values[w->out->n_values++] = v;
}

static void say(Writer *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(Writer *w, const char *fmt, ...) {
    ASSERT(w->out->n_work < w->cap_work);
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    char *line = arena_strdup(w->arena, buf);
    w->failed = w->failed || !line;
    w->out->work[w->out->n_work++] = line ? line : "";
}

#define MAX_LINES 24
#define MAX_VALUES 32

static void clipping(Writer *w, const TrainClip *c, double raw_g, double g) {
    if (c->clip <= 0)
        return;
    value(w, "g_unclipped", raw_g);
    value(w, "norm", c->norm);
    value(w, "scale", c->scale);
    say(w, "clipping: the global norm of every gradient N = %s, and clip / (N + 1e-6) = %s / (%s + 1e-6) = %s",
        num(w, c->norm), num(w, c->clip), num(w, c->norm), res(w, c->scale));
    if (c->applied)
        say(w, "  below 1, so every gradient is scaled by it: g ← g · %s = %s · %s = %s", num(w, c->scale),
            num(w, raw_g), num(w, c->scale), res(w, g));
    else
        say(w, "  not below 1, so the gradients stay as they are");
}

static void sgd(Writer *w, const LessonTrain *s, const OptimizerRule *r, const OptimizerWork *k) {
    const char *grad = "g";
    if (s->weight_decay != 0) {
        value(w, "decayed", k->decayed);
        say(w, "weight decay, added to the gradient: g ← g + weight_decay · w = %s + %s · %s = %s", num(w, k->g),
            num(w, s->weight_decay), num(w, k->w), res(w, k->decayed));
    }
    if (s->momentum != 0) {
        grad = "b";
        value(w, "b_before", k->m_before);
        value(w, "b", k->m);
        if (r->t == 1)
            say(w, "momentum buffer, at the first update: b ← g = %s", res(w, k->m));
        else
            say(w, "momentum buffer: b ← momentum · b + g = %s · %s + %s = %s", num(w, s->momentum),
                num(w, k->m_before), num(w, k->decayed), res(w, k->m));
    }
    value(w, "step", k->step);
    say(w, "step = lr · %s = %s · %s = %s", grad, num(w, s->lr), num(w, s->momentum != 0 ? k->m : k->decayed),
        res(w, k->step));
}

static void adam(Writer *w, const LessonTrain *s, const OptimizerRule *r, const OptimizerWork *k) {
    if (s->optimizer == TRAIN_ADAMW) {
        value(w, "shrink", r->shrink);
        value(w, "w_decayed", k->shrunk);
        say(w, "weight decay, apart from the gradient (adamw): w ← w · (1 − lr · weight_decay) = %s · %s = %s",
            num(w, k->w), num(w, r->shrink), res(w, k->shrunk));
    } else if (s->weight_decay != 0) {
        value(w, "decayed", k->decayed);
        say(w, "weight decay, added to the gradient: g ← g + weight_decay · w = %s + %s · %s = %s", num(w, k->g),
            num(w, s->weight_decay), num(w, k->w), res(w, k->decayed));
    }
    value(w, "lerp_weight", r->lerp_weight);
    value(w, "m_before", k->m_before);
    value(w, "m", k->m);
    say(w, "first moment: m ← beta1 · m + (1 − beta1) · g, computed from the nearer end (torch.lerp), "
           "1 − beta1 = %s:", res(w, r->lerp_weight));
    if (r->lerp_weight < 0.5)
        say(w, "  m + (1 − beta1) · (g − m) = %s + %s · (%s − %s) = %s", num(w, k->m_before), num(w, r->lerp_weight),
            num(w, k->decayed), num(w, k->m_before), res(w, k->m));
    else
        say(w, "  g − (g − m) · (1 − (1 − beta1)) = %s − (%s − %s) · (1 − %s) = %s − (%s − %s) · %s = %s",
            num(w, k->decayed), num(w, k->decayed), num(w, k->m_before), num(w, r->lerp_weight), num(w, k->decayed),
            num(w, k->decayed), num(w, k->m_before), num(w, 1 - r->lerp_weight), res(w, k->m));
    value(w, "one_minus_beta2", r->one_minus_beta2);
    value(w, "g_squared", k->g_squared);
    value(w, "v_before", k->v_before);
    value(w, "v", k->v);
    say(w, "second moment: v ← beta2 · v + (1 − beta2) · g², g² = %s · %s = %s", num(w, k->decayed),
        num(w, k->decayed), res(w, k->g_squared));
    say(w, "  = %s · %s + %s · %s = %s", num(w, s->beta2), num(w, k->v_before), num(w, r->one_minus_beta2),
        num(w, k->g_squared), res(w, k->v));
    value(w, "beta1_t", r->beta1_t);
    value(w, "beta2_t", r->beta2_t);
    value(w, "bias1", r->bias1);
    value(w, "bias2", r->bias2);
    say(w, "bias corrections, t = %zu: 1 − beta1^t = 1 − %s^%zu = 1 − %s = %s; 1 − beta2^t = 1 − %s^%zu = 1 − %s = %s",
        r->t, num(w, s->beta1), r->t, num(w, r->beta1_t), num(w, r->bias1), num(w, s->beta2), r->t,
        num(w, r->beta2_t), res(w, r->bias2));
    value(w, "m_hat", k->m_hat);
    value(w, "v_hat", k->v_hat);
    say(w, "m̂ = m / (1 − beta1^t) = %s / %s = %s; v̂ = v / (1 − beta2^t) = %s / %s = %s", num(w, k->m),
        num(w, r->bias1), res(w, k->m_hat), num(w, k->v), num(w, r->bias2), res(w, k->v_hat));
    say(w, "step = lr · m̂ / (sqrt(v̂) + eps), which PyTorch computes as "
           "lr / (1 − beta1^t) · (m / (sqrt(v) / sqrt(1 − beta2^t) + eps)):");
    value(w, "step_size", r->step_size);
    value(w, "sqrt_v", k->sqrt_v);
    value(w, "bias2_sqrt", r->bias2_sqrt);
    value(w, "root_v_hat", k->root_v_hat);
    value(w, "denom", k->denom);
    value(w, "ratio", k->ratio);
    value(w, "step", k->step);
    say(w, "  lr / (1 − beta1^t) = %s / %s = %s", num(w, s->lr), num(w, r->bias1), res(w, r->step_size));
    say(w, "  sqrt(v) = sqrt(%s) = %s; sqrt(1 − beta2^t) = sqrt(%s) = %s", num(w, k->v), num(w, k->sqrt_v),
        num(w, r->bias2), res(w, r->bias2_sqrt));
    say(w, "  sqrt(v) / sqrt(1 − beta2^t) + eps = %s / %s + %s = %s + %s = %s", num(w, k->sqrt_v),
        num(w, r->bias2_sqrt), num(w, s->eps), num(w, k->root_v_hat), num(w, s->eps), res(w, k->denom));
    say(w, "  m / (sqrt(v) / sqrt(1 − beta2^t) + eps) = %s / %s = %s", num(w, k->m), num(w, k->denom),
        res(w, k->ratio));
    say(w, "  step = %s · %s = %s", num(w, r->step_size), num(w, k->ratio), res(w, k->step));
}

bool train_explain_write(const TrainExplain *q, const LessonTrain *spec, const OptimizerRule *r,
                         const OptimizerWork *k, double raw_g, const TrainClip *clip, Arena *arena, TraceUpdate *out) {
    Writer w = {.arena = arena, .out = out, .cap_work = MAX_LINES, .cap_values = MAX_VALUES, .digits = q->digits};
    out->work = arena_array(arena, MAX_LINES, sizeof(char *));
    out->names = arena_array(arena, MAX_VALUES, sizeof(char *));
    out->values = arena_array(arena, MAX_VALUES, sizeof(double));
    if (!out->work || !out->names || !out->values)
        return false;
    const char *element = out->element;
    static const char *const names[] = {[TRAIN_SGD] = "sgd", [TRAIN_ADAM] = "adam", [TRAIN_ADAMW] = "adamw"};
    say(&w, "%s at training step %zu, update t = %zu of %s:", element, q->step, r->t, names[spec->optimizer]);
    value(&w, "w", k->w);
    value(&w, "g", k->g);
    say(&w, "w = %s, the weight before the step", res(&w, k->w));
    say(&w, "g = d %s / d %s = %s, on step %zu's batch", spec->loss, element, res(&w, clip->clip > 0 ? raw_g : k->g),
        q->step);
    clipping(&w, clip, raw_g, k->g);
    if (spec->optimizer == TRAIN_SGD)
        sgd(&w, spec, r, k);
    else
        adam(&w, spec, r, k);
    value(&w, "w_after", k->w_after);
    say(&w, "w ← w − step = %s − %s = %s", num(&w, spec->optimizer == TRAIN_ADAMW ? k->shrunk : k->w),
        num(&w, k->step), res(&w, k->w_after));
    return !w.failed;
}
