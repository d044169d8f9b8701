// lesson_train: the train: section's form, each key refused at its node when it is not what
// it should be; whether the loss is one number and depends on what is trained is the run's
// check (run/train.c), once shapes are known.
#include "lesson_train.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "files.h"
#include "lesson_loader.h"
#include "lesson_values.h"

static const char *const TRAIN_KEYS[] = {"loss", "trained", "optimizer", "lr",   "momentum", "weight_decay",
                                         "betas", "eps",    "clip",      "steps", "data",    "show"};
static const char *const OPTIMIZERS[] = {[TRAIN_SGD] = "sgd", [TRAIN_ADAM] = "adam", [TRAIN_ADAMW] = "adamw"};
static const char *const DATA_KEYS[] = {"draw", "vocab", "batch", "seed", "shifts", "sequences", "text",
                                        "validation"};
// A text read for training is at most this large.
#define TRAIN_TEXT_MAX_BYTES ((size_t)64 << 20)
// The draws from the generator; sequences: written out is not one of them.
static const char *const DRAWS[] = {[TRAIN_DRAW_UNIFORM] = "uniform", [TRAIN_DRAW_REPEAT] = "repeat",
                                    [TRAIN_DRAW_SHIFTED] = "shifted"};
#define N_DRAWS ARRAY_LEN(DRAWS)

static const LessonGiven *find_given(const Lesson *lesson, const char *name) {
    for (size_t i = 0; i < lesson->n_givens; i++)
        if (strcmp(lesson->givens[i].name, name) == 0)
            return &lesson->givens[i];
    return NULL;
}

static bool is_step(const Lesson *lesson, const char *name) {
    for (size_t i = 0; i < lesson->n_steps; i++)
        if (strcmp(lesson->steps[i].name, name) == 0)
            return true;
    return false;
}

static bool name_of(Loader *L, const Node *node, const char *what, const char **out) {
    if (node->kind != NODE_SCALAR || lesson_is_null(node) || !node->text[0])
        return lesson_fail(L, node, "write the name as it stands in the lesson, as in loss: loss",
                           "%s must be a name, but this is %s", what, lesson_describe(L, node));
    *out = node->text;
    return true;
}

// A number above zero (or at least zero, with zero_ok), at most `most` when it is below inf.
static bool number_in(Loader *L, const Node *node, const char *key, bool zero_ok, double most, double *out) {
    if (!lesson_parse_number(L, node, out, NULL))
        return false;
    bool ok = isfinite(*out) && (zero_ok ? *out >= 0 : *out > 0) && *out <= most;
    if (!ok) {
        char hint[160];
        snprintf(hint, sizeof(hint), "%s is a number %s%s, as in %s: %s", key, zero_ok ? "from 0" : "above 0",
                 isinf(most) ? "" : most == 1 ? " and below 1" : "", key,
                 strcmp(key, "lr") == 0 ? "0.01" : strcmp(key, "clip") == 0 ? "1.0" : "0.9");
        return lesson_fail(L, node, hint, "%s must be a %snumber%s, but this is %s", key,
                           zero_ok ? "finite, non-negative " : "positive ", most == 1 ? " below 1" : "",
                           node->text);
    }
    if (most == 1 && *out >= 1)
        return lesson_fail(L, node, "a beta is how much of the last average is kept: below 1, as in 0.9",
                           "%s must be below 1, but this is %s", key, node->text);
    return true;
}

static bool whole_in(Loader *L, const Node *node, const char *key, uint64_t least, uint64_t most, uint64_t *out) {
    if (!lesson_whole_number(node, out) || *out < least || *out > most) {
        char hint[96];
        snprintf(hint, sizeof(hint), "write a whole number from %llu to %llu, without a point",
                 (unsigned long long)least, (unsigned long long)most);
        return lesson_fail(L, node, lesson_whole_hint(node, hint),
                           "%s must be a whole number from %llu to %llu, but this is %s", key,
                           (unsigned long long)least, (unsigned long long)most, lesson_describe(L, node));
    }
    return true;
}

static bool load_trained(Loader *L, LessonTrain *t, const Node *node) {
    const Lesson *lesson = L->lesson;
    const Node *const *items = (const Node *const *)&node;
    size_t n = 1;
    if (node->kind == NODE_SEQUENCE) {
        items = (const Node *const *)node->items;
        n = node->n_items;
    }
    if (n == 0)
        return lesson_fail(L, node, "name the givens training changes, as in trained: [W_Q, W_K]",
                           "trained: lists no given");
    t->trained = arena_array(lesson->arena, n, sizeof(char *));
    t->trained_nodes = arena_array(lesson->arena, n, sizeof(Node *));
    if (!t->trained || !t->trained_nodes)
        return diag_no_memory(L->diag);
    for (size_t i = 0; i < n; i++) {
        const char *name;
        if (!name_of(L, items[i], "a trained given", &name))
            return false;
        const LessonGiven *g = find_given(lesson, name);
        if (!g)
            return lesson_fail(L, items[i],
                               is_step(lesson, name) ? "a step is computed from the givens; train the givens it "
                                                       "is computed from"
                                                     : "list givens of this lesson, with values to start from",
                               "'%s' is not a given of this lesson: only givens are trained", name);
        if (g->init == GIVEN_SHAPE_ONLY)
            return lesson_fail(L, items[i], "give it values to start from, as in init: random with a seed",
                               "'%s' has only a shape: training needs its values to start from", name);
        for (size_t k = 0; k < i; k++)
            if (strcmp(t->trained[k], name) == 0)
                return lesson_fail(L, items[i], "list each trained given once", "'%s' is listed twice", name);
        t->trained[i] = name;
        t->trained_nodes[i] = items[i];
    }
    t->n_trained = n;
    return true;
}

static bool load_sequences(Loader *L, LessonTrainData *d, const Node *node) {
    Values v;
    if (!lesson_parse_values(L, node, false, &v))
        return false;
    if (v.shape.rank != 2 || v.shape.dim[0] == 0 || v.shape.dim[1] == 0)
        return lesson_fail(L, node, "write one sequence of ids a row: [[0, 1, 2], [3, 4, 5]]",
                           "sequences: must be rows of ids, one sequence a row");
    for (size_t k = 0; k < v.size; k++)
        if (!(v.values[k] >= 0 && v.values[k] == floor(v.values[k])))
            return lesson_fail(L, v.nodes[k], "an id is a whole number from 0", "an id must be a whole number "
                               "from 0, but this is %g", v.values[k]);
    d->rows = v.values;
    d->n_rows = v.shape.dim[0];
    d->length = v.shape.dim[1];
    d->rows_node = node;
    return true;
}

// shifts: [lo, hi] of draw: shifted, each from 1 to n - 1 so that every row holds a copy.
static bool load_shifts(Loader *L, LessonTrainData *d, const Node *shifts, size_t n) {
    if (d->draw != TRAIN_DRAW_SHIFTED) {
        if (shifts)
            return lesson_fail(L, shifts, "shifts: belongs to draw: shifted; leave it out, or draw: shifted",
                               "shifts: is a setting of draw: shifted, not of draw: %s", DRAWS[d->draw]);
        return true;
    }
    if (!shifts)
        return lesson_fail(L, d->node, "as in ids: {draw: shifted, shifts: [2, 8], vocab: 16, batch: 64}",
                           "draw: shifted needs shifts: [lo, hi], how far apart the copies may be");
    if (n < 2)
        return lesson_fail(L, shifts, "give the batch at least two positions, so that a row can hold a copy",
                           "a row of '%s' has 1 position: nothing can repeat in it", d->name);
    if (shifts->kind != NODE_SEQUENCE || shifts->n_items != 2)
        return lesson_fail(L, shifts, "write the smallest and the largest shift, as in shifts: [2, 8]",
                           "shifts: must be two whole numbers, [lo, hi]");
    uint64_t lo, hi;
    if (!whole_in(L, shifts->items[0], "a shift", 1, n - 1, &lo) ||
        !whole_in(L, shifts->items[1], "a shift", 1, n - 1, &hi))
        return false;
    if (hi < lo)
        return lesson_fail(L, shifts, "write the smallest shift first, as in shifts: [2, 8]",
                           "shifts: [%llu, %llu] runs backwards", (unsigned long long)lo, (unsigned long long)hi);
    d->shift_lo = (size_t)lo;
    d->shift_hi = (size_t)hi;
    return true;
}

// text: FILE (beside the lesson): rows of n bytes, each a window at a random place of it.
static bool load_text(Loader *L, LessonTrainData *d, const Node *node, const Node *text, const Node *seed, size_t n) {
    const Node *validation = yamldoc_get(node, "validation");
    if (validation) {
        if (!lesson_parse_number(L, validation, &d->validation, NULL))
            return false;
        if (!(d->validation > 0 && d->validation < 1))
            return lesson_fail(L, validation, "validation: is the part of the text held out at its end, as in "
                                              "validation: 0.1 for the last tenth",
                               "validation: must be a number above 0 and below 1, but this is %s",
                               lesson_describe(L, validation));
        d->validation_node = validation;
    }
    static const char *const others[] = {"draw", "vocab", "shifts", "sequences"};
    for (size_t i = 0; i < ARRAY_LEN(others); i++)
        if (yamldoc_get(node, others[i]))
            return lesson_fail(L, yamldoc_get(node, others[i]),
                               "a text's ids are its bytes, 0 to 255, in windows at random places: leave out "
                               "draw:, vocab:, shifts: and sequences:",
                               "%s: does not go with text:", others[i]);
    if (text->kind != NODE_SCALAR || text->text_len == 0)
        return lesson_fail(L, text, "name a text file beside the lesson, as in text: story.txt",
                           "text: must name a file, but this is %s", lesson_describe(L, text));
    if (seed && !whole_in(L, seed, "seed", 0, UINT64_MAX, &d->seed))
        return false;
    const char *slash = strrchr(L->lesson->path, '/');
    int folder = text->text[0] != '/' && slash ? (int)(slash - L->lesson->path) + 1 : 0;
    d->text_path = arena_printf(L->lesson->arena, "%.*s%s", folder, L->lesson->path, text->text);
    if (!d->text_path)
        return diag_no_memory(L->diag);
    char *bytes;
    size_t len;
    int err = files_read(d->text_path, 0, TRAIN_TEXT_MAX_BYTES, &bytes, &len);
    if (err == ENOMEM)
        return diag_no_memory(L->diag);
    if (err)
        return lesson_fail(L, text, files_not_regular(err) ? FILES_NOT_REGULAR_HINT : "check the name: the file is "
                                                                                      "read from the lesson's folder",
                           "cannot read the text '%s': %s", d->text_path, files_error_text(err));
    unsigned char *kept = len > TRAIN_TEXT_MAX_BYTES || len < n ? NULL : arena_alloc(L->lesson->arena, len);
    if (kept)
        memcpy(kept, bytes, len);
    util_free(bytes);
    if (len > TRAIN_TEXT_MAX_BYTES)
        return lesson_fail(L, text, "train on a shorter text, or on a part of it",
                           "the text '%s' is larger than %zu MiB", d->text_path, TRAIN_TEXT_MAX_BYTES >> 20);
    if (len < n)
        return lesson_fail(L, text, "train on a longer text, or on shorter rows",
                           "the text '%s' has %zu bytes, fewer than a row of '%s' takes (%zu)", d->text_path, len,
                           d->name, n);
    if (!kept)
        return diag_no_memory(L->diag);
    if (validation) {
        // the tail: the last F of the bytes, rounded down
        d->held = (size_t)(d->validation * (double)len);
        if (d->held < n)
            return lesson_fail(L, validation, "hold out a larger part of the text, or train on shorter rows",
                               "the held-out tail of '%s' has %zu byte%s, fewer than a row of '%s' takes (%zu)",
                               d->text_path, d->held, d->held == 1 ? "" : "s", d->name, n);
        if (len - d->held < n || len - d->held < 2)
            return lesson_fail(L, validation, "hold out a smaller part of the text, or train on a longer one",
                               "the %zu bytes of '%s' before its held-out tail are fewer than a row of '%s' "
                               "takes (%zu)",
                               len - d->held, d->text_path, d->name, n < 2 ? 2 : n);
    }
    d->draw = TRAIN_DRAW_TEXT;
    d->vocab = 256;
    d->text = kept;
    d->text_len = len;
    d->text_name = text->text;
    return true;
}

static bool load_one_data(Loader *L, LessonTrainData *d, const Node *key, const Node *node) {
    const LessonGiven *g = find_given(L->lesson, key->text);
    d->name = key->text;
    d->key = key;
    d->node = node;
    if (!g)
        return lesson_fail(L, key, "name a given of this lesson: its values are the example batch traced after "
                                   "training",
                           "'%s' is not a given of this lesson", key->text);
    if (g->init == GIVEN_SHAPE_ONLY || g->shape.rank != 2)
        return lesson_fail(L, key, "write the example batch as the given's values, one sequence a row: "
                                   "[[0, 1, 2, 3]]",
                           "'%s' must be a batch of ids with values, [batch, n], to be drawn afresh each step",
                           key->text);
    if (node->kind != NODE_MAPPING)
        return lesson_fail(L, node, "as in ids: {draw: uniform, vocab: 16, batch: 64, seed: 1}",
                           "data: %s must be a mapping of draw:, vocab:, batch: and seed:, or of sequences:",
                           key->text);
    for (size_t i = 0; i < node->n_pairs; i++) {
        const Node *k = node->pairs[i].key;
        if (lesson_find_name(k->text, DATA_KEYS, ARRAY_LEN(DATA_KEYS)) == ARRAY_LEN(DATA_KEYS))
            return lesson_fail(L, k, lesson_suggest(L, k->text, DATA_KEYS, ARRAY_LEN(DATA_KEYS),
                                                   "the keys of a batch are draw, vocab, batch, seed, shifts, "
                                                   "sequences, text and validation"),
                               "unknown key '%s' in data: %s", k->text, key->text);
    }
    const Node *draw = yamldoc_get(node, "draw"), *seqs = yamldoc_get(node, "sequences");
    const Node *vocab = yamldoc_get(node, "vocab"), *batch = yamldoc_get(node, "batch"),
               *seed = yamldoc_get(node, "seed");
    uint64_t v = 0;
    if (batch && !whole_in(L, batch, "batch", 1, 1u << 20, &v))
        return false;
    d->batch = (size_t)v;
    const Node *text = yamldoc_get(node, "text");
    const Node *validation = yamldoc_get(node, "validation");
    if (validation && !text)
        return lesson_fail(L, validation, "a validation loss is measured on the end of a text: give text: FILE, or "
                                          "leave validation: out",
                           "validation: holds out the end of a text, but this batch is not drawn from one");
    if (seqs) {
        const Node *shifts = yamldoc_get(node, "shifts");
        if (draw || vocab || seed || shifts)
            return lesson_fail(L, draw ? draw : vocab ? vocab : seed ? seed : shifts,
                               "sequences: are taken in turn; leave out draw:, vocab:, seed: and shifts:",
                               "sequences: are written out, not drawn");
        d->draw = TRAIN_DRAW_SEQUENCES;
        if (!load_sequences(L, d, seqs))
            return false;
        if (d->length != g->shape.dim[1])
            return lesson_fail(L, seqs, "every sequence has as many ids as a row of the example batch",
                               "these sequences have %zu ids, but a row of '%s' has %zu", d->length, d->name,
                               g->shape.dim[1]);
        return true;
    }
    if (text)
        return load_text(L, d, node, text, seed, g->shape.dim[1]);
    if (!draw || !vocab)
        return lesson_fail(L, node, "as in ids: {draw: uniform, vocab: 16, batch: 64, seed: 1}",
                           "data: %s needs draw: and vocab: (or sequences: written out)", key->text);
    size_t which = draw->kind == NODE_SCALAR ? lesson_find_name(draw->text, DRAWS, N_DRAWS) : N_DRAWS;
    if (which == N_DRAWS)
        return lesson_fail(L, draw, "draw: uniform (every id at random), repeat (the second half repeats the "
                                    "first) or shifted (copies shifts: apart)",
                           "unknown draw '%s'", draw->kind == NODE_SCALAR ? draw->text : "");
    d->draw = (TrainDraw)which;
    if (!whole_in(L, vocab, "vocab", 1, 1u << 30, &d->vocab))
        return false;
    if (seed && !whole_in(L, seed, "seed", 0, UINT64_MAX, &d->seed))
        return false;
    if (d->draw == TRAIN_DRAW_REPEAT && g->shape.dim[1] % 2)
        return lesson_fail(L, draw, "give the batch an even number of positions: the second half repeats the first",
                           "a row of '%s' has %zu positions, which cannot be split in two halves", d->name,
                           g->shape.dim[1]);
    return load_shifts(L, d, yamldoc_get(node, "shifts"), g->shape.dim[1]);
}

static bool load_data(Loader *L, LessonTrain *t, const Node *node) {
    if (node->kind != NODE_MAPPING || node->n_pairs == 0)
        return lesson_fail(L, node, "as in data: {ids: {draw: uniform, vocab: 16, batch: 64, seed: 1}}",
                           "data: must map each drawn given to how it is drawn");
    t->data = arena_array(L->lesson->arena, node->n_pairs, sizeof(LessonTrainData));
    if (!t->data)
        return diag_no_memory(L->diag);
    for (size_t i = 0; i < node->n_pairs; i++) {
        if (!load_one_data(L, &t->data[i], node->pairs[i].key, node->pairs[i].value))
            return false;
        for (size_t k = 0; k < t->n_trained; k++)
            if (strcmp(t->trained[k], t->data[i].name) == 0)
                return lesson_fail(L, node->pairs[i].key, "a batch is data, drawn afresh; train the weights",
                                   "'%s' is both trained and drawn", t->data[i].name);
        t->n_data++;
    }
    return true;
}

static bool load_shown(Loader *L, LessonTrain *t, const Node *node) {
    if (node->kind != NODE_SEQUENCE || node->n_items == 0 || node->n_items > LESSON_TRAIN_MAX_SHOWN)
        return lesson_fail(L, node, "as in show: [0, 10, 100, 200]",
                           "show: must list 1 to %d steps for the table of the loss", LESSON_TRAIN_MAX_SHOWN);
    for (size_t i = 0; i < node->n_items; i++) {
        uint64_t s;
        if (!whole_in(L, node->items[i], "a step to show", 0, t->steps - 1, &s))
            return false;
        if (i && s <= t->shown[i - 1])
            return lesson_fail(L, node->items[i], "list the steps in increasing order, each once",
                               "step %llu comes after step %zu", (unsigned long long)s, t->shown[i - 1]);
        t->shown[i] = (size_t)s;
    }
    t->n_shown = node->n_items;
    return true;
}

bool lesson_load_train(Loader *L, const Node *node) {
    if (node->kind != NODE_MAPPING)
        return lesson_fail(L, node, "as in train: {loss: loss, trained: [W], optimizer: sgd, lr: 0.1, steps: 100}",
                           "train: must be a mapping of loss:, trained:, optimizer:, lr:, steps: and data:");
    for (size_t i = 0; i < node->n_pairs; i++) {
        const Node *k = node->pairs[i].key;
        if (lesson_find_name(k->text, TRAIN_KEYS, ARRAY_LEN(TRAIN_KEYS)) == ARRAY_LEN(TRAIN_KEYS))
            return lesson_fail(L, k, lesson_suggest(L, k->text, TRAIN_KEYS, ARRAY_LEN(TRAIN_KEYS),
                                                   "the keys of train: are loss, trained, optimizer, lr, momentum, "
                                                   "weight_decay, betas, eps, clip, steps, data and show"),
                               "unknown key '%s' in train:", k->text);
    }
    LessonTrain *t = arena_alloc(L->lesson->arena, sizeof(LessonTrain));
    if (!t)
        return diag_no_memory(L->diag);
    *t = (LessonTrain){.node = node, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8};
    const char *required[] = {"loss", "trained", "optimizer", "lr", "steps"};
    for (size_t i = 0; i < ARRAY_LEN(required); i++)
        if (!yamldoc_get(node, required[i]))
            return lesson_fail(L, node, "train: names the loss, the trained givens, the optimizer, lr and steps",
                               "train: has no %s:", required[i]);
    t->loss_node = yamldoc_get(node, "loss");
    if (!name_of(L, t->loss_node, "loss:", &t->loss))
        return false;
    if (!is_step(L->lesson, t->loss))
        return lesson_fail(L, t->loss_node, "name the step that computes the loss, a single number",
                           "'%s' is not a step of this lesson", t->loss);
    if (!load_trained(L, t, yamldoc_get(node, "trained")))
        return false;
    const Node *opt = t->optimizer_node = yamldoc_get(node, "optimizer");
    size_t which = opt->kind == NODE_SCALAR ? lesson_find_name(opt->text, OPTIMIZERS, ARRAY_LEN(OPTIMIZERS))
                                            : ARRAY_LEN(OPTIMIZERS);
    if (which == ARRAY_LEN(OPTIMIZERS))
        return lesson_fail(L, opt, "the optimizers are sgd, adam and adamw", "unknown optimizer %s",
                           lesson_describe(L, opt));
    t->optimizer = (TrainOptimizer)which;
    if (!number_in(L, yamldoc_get(node, "lr"), "lr", false, INFINITY, &t->lr))
        return false;
    const Node *momentum = yamldoc_get(node, "momentum"), *betas = yamldoc_get(node, "betas"),
               *eps = yamldoc_get(node, "eps");
    if (momentum && t->optimizer != TRAIN_SGD)
        return lesson_fail(L, momentum, "Adam keeps its own averages: set betas: instead",
                           "momentum: is a setting of sgd, not of %s", OPTIMIZERS[t->optimizer]);
    if ((betas || eps) && t->optimizer == TRAIN_SGD)
        return lesson_fail(L, betas ? betas : eps, "sgd takes lr, momentum and weight_decay",
                           "%s: is a setting of adam and adamw, not of sgd", betas ? "betas" : "eps");
    if (momentum && !number_in(L, momentum, "momentum", true, 1, &t->momentum))
        return false;
    if (betas) {
        if (betas->kind != NODE_SEQUENCE || betas->n_items != 2)
            return lesson_fail(L, betas, "as in betas: [0.9, 0.999]", "betas: must be two numbers");
        if (!number_in(L, betas->items[0], "beta1", true, 1, &t->beta1) ||
            !number_in(L, betas->items[1], "beta2", true, 1, &t->beta2))
            return false;
    }
    if (eps && !number_in(L, eps, "eps", false, INFINITY, &t->eps))
        return false;
    const Node *wd = yamldoc_get(node, "weight_decay"), *clip = yamldoc_get(node, "clip");
    if (wd && !number_in(L, wd, "weight_decay", true, INFINITY, &t->weight_decay))
        return false;
    if (clip && !number_in(L, clip, "clip", false, INFINITY, &t->clip))
        return false;
    uint64_t steps;
    t->steps_node = yamldoc_get(node, "steps");
    if (!lesson_whole_number(t->steps_node, &steps) || steps < 1 || steps > LESSON_TRAIN_MAX_STEPS)
        return lesson_fail(L, t->steps_node,
                           lesson_whole_hint(t->steps_node, "a few hundred steps train the course's small models"),
                           "steps: must be a whole number from 1 to %d, but this is %s",
                           LESSON_TRAIN_MAX_STEPS, lesson_describe(L, t->steps_node));
    t->steps = (size_t)steps;
    const Node *data = yamldoc_get(node, "data"), *shown = yamldoc_get(node, "show");
    if (data && !load_data(L, t, data))
        return false;
    if (shown && !load_shown(L, t, shown))
        return false;
    L->lesson->train = t;
    return true;
}
