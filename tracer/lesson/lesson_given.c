// lesson_given: what a lesson is given: the label lists under labels: (which givens and steps
// name for their rows and columns) and the tensors under given:.
#include "lesson_given.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "format.h"
#include "given_file.h"
#include "given_text.h"
#include "lesson_step.h"
#include "lesson_values.h"

static const char *const GIVEN_KEYS[] = {"values", "about", "rows",         "cols",  "document",
                                         "shape",  "init",  "distribution", "scale", "seed",
                                         "file",   "tensor", "slice",  "text",         "tokenizer", "times",
                                         "ids_of", "show", "trained"};
static const char *const INIT_NAMES[] = {"zeros", "ones", "identity", "random"};
static const char *const DISTRIBUTION_NAMES[] = {"uniform", "normal"};

// ---------------------------------------------------------------- labels

// The tokenizer in folder, for the lesson's tokenizer: line at; a problem without a place in
// the tokenizer's own files is placed there.
static bool open_tokenizer(Loader *L, GivenText *gt, const char *folder, const Node *at) {
    if (!L->lesson->tokenizers && !(L->lesson->tokenizers = given_tokenizers_create()))
        return diag_no_memory(L->diag);
    Diag found;
    diag_init(&found);
    if (given_text_open(gt, L->lesson->tokenizers, L->lesson->path, folder, &found))
        return true;
    if (found.out_of_memory)
        return diag_no_memory(L->diag);
    if (found.path[0]) {  // located in the tokenizer's own files
        diag_append(L->diag, &found);
        return false;
    }
    if (diag_error(L->diag, STATUS_LESSON_ERROR, L->src, at->line, at->col, yamldoc_node_width(at), "%s",
                   found.message) == STATUS_LESSON_ERROR)
        diag_hint(L->diag, "%s", found.hint);
    return false;
}

// vocabulary: {tokenizer: gpt2/}: every token of the tokenizer, in the order of their ids, as a
// learner reads them (' cat' for GPT-2's 'Ġcat'), to label an axis that runs over the vocabulary.
static bool load_vocabulary(Loader *L, const Node *node, const char *what, LabelList *list) {
    const Node *folder_node = yamldoc_get(node, "tokenizer");
    if (!folder_node || node->n_pairs != 1)
        return lesson_fail(L, node, "write the words, [The, cat, sat], or a tokenizer's vocabulary: {tokenizer: gpt2/}",
                           "%s must be a list of words or {tokenizer: FOLDER}", what);
    const char *folder = NULL;
    if (!lesson_parse_text(L, "tokenizer", folder_node, &folder))
        return false;
    GivenText gt;
    if (!open_tokenizer(L, &gt, folder, folder_node))
        return false;
    // the labels are the tokenizer's own, which the lesson keeps as long as itself
    if (!(list->items = tokenizer_labels(gt.tokenizer)))
        return diag_no_memory(L->diag);
    list->n = tokenizer_size(gt.tokenizer);
    list->node = node;
    return true;
}

static bool parse_label_words(Loader *L, const Node *node, const char *what, LabelList *list) {
    if (node->kind != NODE_SEQUENCE)
        return lesson_fail(L, node, "write the words as a list: [The, cat, sat]",
                           "%s must be a list of words, but this is %s", what,
                           yamldoc_kind_name(node->kind));
    if (node->n_items == 0)
        return lesson_fail(L, node, "write at least one word: [The, cat, sat]",
                           "%s is an empty list", what);
    list->items = arena_array(L->lesson->arena, node->n_items, sizeof(char *));
    if (!list->items)
        return diag_no_memory(L->diag);
    for (size_t i = 0; i < node->n_items; i++) {
        const Node *item = node->items[i];
        if (item->kind != NODE_SCALAR)
            return lesson_fail(L, item, "write the words as a list: [The, cat, sat]",
                               "a label must be a word, but this is %s", yamldoc_kind_name(item->kind));
        // a label is printed in a table's header and beside its rows: a line break or a tab
        // would tear them apart
        if (strpbrk(item->text, "\n\t"))
            return lesson_fail(L, item, "write each label on one line, without a tab",
                               "a label must be one word, but this one holds a %s",
                               strchr(item->text, '\n') ? "line break" : "tab");
        list->items[i] = item->text;
    }
    list->n = node->n_items;
    list->node = node;
    return true;
}

// The slot of the label list called name: where it is, or the empty slot it would take.
static size_t label_slot(const Loader *L, const char *name) {
    size_t at = lesson_hash_name(name) & (L->cap_label_slots - 1);
    while (L->label_slots[at] && strcmp(L->lesson->labels[L->label_slots[at] - 1].name, name) != 0)
        at = (at + 1) & (L->cap_label_slots - 1);
    return at;
}

bool lesson_load_labels(Loader *L, const Node *node) {
    Lesson *lesson = L->lesson;
    if (lesson_is_null(node))
        return true;
    if (node->kind != NODE_MAPPING)
        return lesson_fail(L, node, "write one list a line, like `tokens: [The, cat, sat]`",
                           "labels: must be a mapping of names to lists of words, but this is %s",
                           yamldoc_kind_name(node->kind));
    lesson->labels = arena_array(lesson->arena, node->n_pairs, sizeof(LabelList));
    for (L->cap_label_slots = 16; L->cap_label_slots < 2 * (node->n_pairs + 1); L->cap_label_slots *= 2)
        ;
    L->label_slots = arena_array(lesson->arena, L->cap_label_slots, sizeof(size_t));
    if ((node->n_pairs && !lesson->labels) || !L->label_slots)
        return diag_no_memory(L->diag);
    for (size_t i = 0; i < node->n_pairs; i++) {
        const NodePair *pair = &node->pairs[i];
        LabelList *list = &lesson->labels[i];
        const char *what = arena_printf(lesson->arena, "the labels '%s'", pair->key->text);
        if (!what)
            return diag_no_memory(L->diag);
        list->name = pair->key->text;
        if (pair->value->kind == NODE_MAPPING ? !load_vocabulary(L, pair->value, what, list)
                                              : !parse_label_words(L, pair->value, what, list))
            return false;
        lesson->n_labels++;
        L->label_slots[label_slot(L, list->name)] = lesson->n_labels;  // YAML keys are unique
    }
    return true;
}

// rows: tokens (a list under labels:) or rows: [The, cat, sat] (inline).
bool lesson_parse_label_ref(Loader *L, const char *key, const Node *node, const LabelList **out) {
    Lesson *lesson = L->lesson;
    if (node->kind == NODE_SCALAR) {
        size_t found = L->label_slots ? L->label_slots[label_slot(L, node->text)] : 0;
        if (found) {
            *out = &lesson->labels[found - 1];
            return true;
        }
        const char **names = arena_array(lesson->arena, lesson->n_labels + 1, sizeof(char *));
        if (!names)
            return diag_no_memory(L->diag);
        for (size_t i = 0; i < lesson->n_labels; i++)
            names[i] = lesson->labels[i].name;
        const char *hint = lesson_suggest(L, node->text, names, lesson->n_labels,
                                          "define it under labels:, or write the words here: "
                                          "[The, cat, sat]");
        if (node->text_len == 0)
            return lesson_fail(L, node, hint, "%s: needs the name of a label list or a list of words",
                               key);
        return lesson_fail(L, node, hint, "there is no label list named '%s' under labels:",
                           node->text);
    }
    if (node->kind == NODE_MAPPING)
        return lesson_fail(L, node, "write rows: tokens (a list under labels:) or rows: [The, cat, sat]",
                           "%s: must name a label list or list the words, but this is a mapping", key);
    LabelList *list = arena_alloc(lesson->arena, sizeof(LabelList));
    const char *what = arena_printf(lesson->arena, "%s:", key);
    if (!list || !what)
        return diag_no_memory(L->diag);
    if (!parse_label_words(L, node, what, list))
        return false;
    *out = list;
    return true;
}

// A given's rows: and cols: must label an axis it has; a step's are checked once its shape is
// known. A list of the wrong length is only a warning (a student who adds a token to X has not
// yet added its word): the axis is then shown by position.
static bool check_given_labels(Loader *L, LessonGiven *g) {
    char shape[64];
    shape_format(&g->shape, shape, sizeof(shape));
    if (g->rows) {
        if (g->shape.rank < 2)
            return lesson_fail(L, g->rows_node, "label a list's only axis with cols:",
                               "rows: labels the second-to-last axis, but '%s' has shape %s", g->name,
                               shape);
        size_t n = g->shape.dim[g->shape.rank - 2];
        if (g->rows->n != n) {
            diag_warning(L->diag, L->src->path, g->rows_node->line, g->rows_node->col,
                         "rows: gives %zu labels, but '%s' has %zu rows (shape %s): its rows are shown by position",
                         g->rows->n, g->name, n, shape);
            g->rows = NULL;
        }
    }
    if (g->cols) {
        if (g->shape.rank < 1)
            return lesson_fail(L, g->cols_node, "a single number has no axis to label",
                               "cols: labels the last axis, but '%s' is a single number", g->name);
        size_t n = g->shape.dim[g->shape.rank - 1];
        if (g->cols->n != n) {
            diag_warning(L->diag, L->src->path, g->cols_node->line, g->cols_node->col,
                         "cols: gives %zu labels, but '%s' has %zu columns (shape %s): its columns are shown by "
                         "position",
                         g->cols->n, g->name, n, shape);
            g->cols = NULL;
        }
    }
    return true;
}

// ---------------------------------------------------------------- givens

// ids_of: tokens: the values are ids, each the position of its token in that label list; the
// trace prints each as its token. Every value must be one.
static bool load_given_ids_of(Loader *L, const Node *node, LessonGiven *g) {
    g->ids_of_node = node;
    if (!lesson_parse_label_ref(L, "ids_of", node, &g->ids_of))
        return false;
    if (g->init != GIVEN_VALUES)
        return lesson_fail(L, node, "write the ids under values:",
                           "ids_of: names the tokens of ids written under values:, and '%s' has none", g->name);
    size_t n = 0;
    (void)shape_size(&g->shape, &n);
    for (size_t i = 0; i < n; i++) {
        double v = g->values[i];
        if (v >= 0 && v < (double)g->ids_of->n && v == floor(v))
            continue;
        char num[FORMAT_NUMBER_CAP];
        format_short(v, num, sizeof(num));
        const Node *at = g->value_nodes ? g->value_nodes[i] : node;
        return lesson_fail(L, at, arena_printf(L->lesson->arena, "an id is a whole number from 0 to %zu, the "
                                                                 "position of a token in the list",
                                               g->ids_of->n - 1),
                           "%s is not an id of the %zu tokens of ids_of:", num, g->ids_of->n);
    }
    return true;
}

// The keys of a given written as a mapping.
typedef struct GivenKeys {
    const NodePair *values, *about, *rows, *cols, *document, *shape, *init, *distribution,
        *scale, *seed, *file, *tensor, *slice, *text, *tokenizer,
        *times,  // read by lesson_load_givens, which makes the given once per layer
        *ids_of, *show, *trained;
} GivenKeys;

static bool load_given_init(Loader *L, const GivenKeys *k, LessonGiven *g) {
    const NodePair *random_only[] = {k->distribution, k->scale, k->seed};
    g->init = GIVEN_SHAPE_ONLY;
    if (k->init) {
        const Node *v = k->init->value;
        static const GivenInit inits[] = {GIVEN_ZEROS, GIVEN_ONES, GIVEN_IDENTITY, GIVEN_RANDOM};
        _Static_assert(ARRAY_LEN(inits) == ARRAY_LEN(INIT_NAMES), "one init for each of its names");
        const size_t n = ARRAY_LEN(INIT_NAMES);
        size_t i = v->kind == NODE_SCALAR ? lesson_find_name(v->text, INIT_NAMES, n) : n;
        if (i == n)
            return lesson_fail(L, v,
                               lesson_suggest(L, v->kind == NODE_SCALAR ? v->text : "", INIT_NAMES, n,
                                       "init: is zeros, ones, identity or random"),
                               "unknown init: %s", lesson_describe(L, v));
        g->init = inits[i];
    }
    for (size_t i = 0; i < ARRAY_LEN(random_only); i++)
        if (random_only[i] && g->init != GIVEN_RANDOM)
            return lesson_fail(L, random_only[i]->key, "add init: random, or remove this line",
                               "%s: only applies to init: random", random_only[i]->key->text);
    char shape[64];
    shape_format(&g->shape, shape, sizeof(shape));
    if (g->init == GIVEN_IDENTITY &&
        (g->shape.rank < 2 || g->shape.dim[g->shape.rank - 1] != g->shape.dim[g->shape.rank - 2]))
        return lesson_fail(L, k->init->value, "an identity matrix is square, like shape: [4, 4]",
                           "init: identity needs the last two sizes equal, but the shape is %s", shape);
    g->distribution = KERNEL_NORMAL;
    g->scale = 1;
    g->seed = 0;
    if (k->distribution) {
        const Node *v = k->distribution->value;
        static const KernelDistribution distributions[] = {KERNEL_UNIFORM, KERNEL_NORMAL};
        _Static_assert(ARRAY_LEN(distributions) == ARRAY_LEN(DISTRIBUTION_NAMES), "one distribution per name");
        const size_t n = ARRAY_LEN(DISTRIBUTION_NAMES);
        size_t i = v->kind == NODE_SCALAR ? lesson_find_name(v->text, DISTRIBUTION_NAMES, n) : n;
        if (i == n)
            return lesson_fail(L, v,
                               lesson_suggest(L, v->kind == NODE_SCALAR ? v->text : "", DISTRIBUTION_NAMES, n,
                                       "distribution: is uniform or normal"),
                               "unknown distribution: %s", lesson_describe(L, v));
        g->distribution = distributions[i];
    }
    if (k->scale) {
        if (!lesson_parse_number(L, k->scale->value, &g->scale, NULL))
            return false;
        if (!isfinite(g->scale) || g->scale < 0)
            return lesson_fail(L, k->scale->value, "write a scale like 0.02",
                               "scale: must be a finite number of at least 0, but this is '%s'",
                               k->scale->value->text);
    }
    if (k->seed && !lesson_whole_number(k->seed->value, &g->seed))
        return lesson_fail(L, k->seed->value, lesson_whole_hint(k->seed->value, NULL),
                           "seed: must be a whole number from 0 to %llu, but this is %s",
                           (unsigned long long)UINT64_MAX, lesson_describe(L, k->seed->value));
    return true;
}

static bool load_given_shape(Loader *L, const GivenKeys *k, LessonGiven *g) {
    if (!lesson_parse_shape(L, k->shape->value, &g->shape) || !load_given_init(L, k, g))
        return false;
    char shape[64], count[32], limit[32], bytes[32], limit_bytes[32];
    shape_format(&g->shape, shape, sizeof(shape));
    size_t size;
    if (!shape_size(&g->shape, &size))
        return lesson_fail(L, k->shape->value, "the sizes of a shape multiply to its number of values",
                           "shape %s has more values than a 64-bit count can hold", shape);
    if (g->init == GIVEN_SHAPE_ONLY || size <= TENSOR_MAX_VALUES)
        return true;
    format_count((double)size, count, sizeof(count));
    format_count((double)TENSOR_MAX_VALUES, limit, sizeof(limit));
    format_bytes((double)size * sizeof(double), bytes, sizeof(bytes));
    format_bytes((double)TENSOR_MAX_VALUES * sizeof(double), limit_bytes, sizeof(limit_bytes));
    return lesson_fail(L, k->shape->value,
                       "leave out init: to make it shape-only (a shape without values), or make it "
                       "smaller",
                       "shape %s needs %s values (%s); a tensor holds at most %s values (%s)", shape,
                       count, bytes, limit, limit_bytes);
}

// One axis's part of slice: [a, b] (two whole numbers), or all.
static bool read_slice_part(const Node *s, size_t axis, GivenFileRequest *req) {
    uint64_t begin, end;
    req->slice_at[axis] = s;
    if (s->kind == NODE_SCALAR && strcmp(s->text, "all") == 0)
        return req->slice_whole[axis] = true;
    if (s->kind != NODE_SEQUENCE || s->n_items != 2 || !lesson_whole_number(s->items[0], &begin) ||
        !lesson_whole_number(s->items[1], &end) || begin > SIZE_MAX || end > SIZE_MAX)
        return false;
    req->slice_begin[axis] = (size_t)begin;
    req->slice_end[axis] = (size_t)end;
    return true;
}

// slice: [a, b] takes rows a to b - 1 of the first axis; slice: [all, [a, b]] takes one part
// of each of the first axes, [a, b] or all of it (the axes after them whole).
static bool read_slice(Loader *L, const Node *s, GivenFileRequest *req) {
    req->slice = s;
    bool per_axis = s->kind == NODE_SEQUENCE && s->n_items >= 1 && s->items[0]->kind != NODE_SCALAR;
    per_axis = per_axis || (s->kind == NODE_SEQUENCE && s->n_items >= 1 && strcmp(s->items[0]->text, "all") == 0);
    if (!per_axis) {
        req->n_slice = 1;
        if (read_slice_part(s, 0, req) && !req->slice_whole[0])
            return true;
        return lesson_fail(L, s, "slice: [a, b] takes rows a to b - 1 of the first axis, like Python's a:b",
                           "slice: must be two whole numbers [begin, end], but this is %s", lesson_describe(L, s));
    }
    if (s->n_items > WEIGHT_MAX_RANK)
        return lesson_fail(L, s->items[WEIGHT_MAX_RANK], "a tensor of a lesson has at most 4 axes",
                           "slice: names %zu axes, more than a weight file's tensor has (at most %d)", s->n_items,
                           WEIGHT_MAX_RANK);
    req->n_slice = s->n_items;
    for (size_t i = 0; i < s->n_items; i++)
        if (!read_slice_part(s->items[i], i, req))
            return lesson_fail(L, s->items[i],
                               "slice: [all, [a, b]] takes the whole first axis and a to b - 1 of the second",
                               "each part of slice: is [begin, end] or all, but this is %s",
                               lesson_describe(L, s->items[i]));
    return true;
}

// file: with tensor:, slice: and shape:, checked against the file now, so that a lesson
// whose file is wrong stops before any output.
static bool load_given_file(Loader *L, const GivenKeys *k, LessonGiven *g) {
    const NodePair *others[] = {k->values, k->init, k->distribution, k->scale, k->seed};
    for (size_t i = 0; i < ARRAY_LEN(others); i++)
        if (others[i])
            return lesson_fail(L, others[i]->key, "the values come from the file; remove this line",
                               "%s: does not go with file:", others[i]->key->text);
    GivenFileRequest req = {.lesson_path = L->lesson->path, .name = g->name, .file = k->file->value};
    Shape want;
    if (k->shape) {
        if (!lesson_parse_shape(L, k->shape->value, &want))
            return false;
        req.shape = k->shape->value;
        req.want = &want;
    }
    if (k->tensor)
        req.tensor = k->tensor->value;
    if (k->slice && !read_slice(L, k->slice->value, &req))
        return false;
    if (!L->lesson->files && !(L->lesson->files = given_files_create()))
        return diag_no_memory(L->diag);
    GivenFileProblem problem;
    if (!given_file_load(L->lesson->files, &req, &g->file, &problem)) {
        if (problem.reported) {
            L->quiet = true;
            L->diag->status = STATUS_LESSON_ERROR;
            return false;
        }
        given_file_report(&problem, L->src, L->diag);
        return false;
    }
    g->init = GIVEN_FILE;
    g->shape = g->file.shape;
    return true;
}

// The ids of text in g (its values, one axis) and its tokens as the labels of that axis.
bool lesson_set_given_ids(Arena *arena, LessonGiven *g, const GivenText *gt) {
    LabelList *list = arena_alloc(arena, sizeof(LabelList));
    if (!list)
        return false;
    *list = (LabelList){.items = gt->labels, .n = gt->n, .node = g->text_node};
    g->init = GIVEN_VALUES;
    g->shape = (Shape){.rank = 1, .dim = {gt->n}};
    g->values = gt->ids;
    g->value_nodes = NULL;
    g->cols = list;
    g->cols_node = g->text_node;
    return true;
}

// The rest of a text given, once its tokenizer is read.
static bool load_given_ids(Loader *L, const GivenKeys *k, LessonGiven *g, const char *text) {
    size_t bad;
    if (!given_text_encode(&g->text, text, k->text->value->text_len, L->lesson->arena, &bad,
                           L->diag))
        return bad == SIZE_MAX ? false
                               : lesson_fail(L, g->text_node, "save the lesson as UTF-8",
                                      "text: is not UTF-8 at byte %zu", bad);
    if (!lesson_set_given_ids(L->lesson->arena, g, &g->text))
        return diag_no_memory(L->diag);
    if (k->about && !lesson_parse_text(L, "about", k->about->value, &g->about))
        return false;
    g->about_node = k->about ? k->about->value : NULL;
    return !k->document || lesson_parse_document(L, k->document->value, &g->document);
}

// text: with tokenizer: the ids of the text, read with the tokenizer in that folder now, so
// that a missing or broken tokenizer stops the lesson before any output.
static bool load_given_text(Loader *L, const Node *key, const GivenKeys *k, LessonGiven *g) {
    const NodePair *others[] = {k->values, k->shape, k->init,   k->distribution, k->scale, k->seed,
                                k->rows,   k->cols,  k->file, k->tensor,       k->slice};
    for (size_t i = 0; i < ARRAY_LEN(others); i++)
        if (others[i])
            return lesson_fail(L, others[i]->key, "the ids and their labels come from the text; remove this line",
                        "%s: does not go with text:", others[i]->key->text);
    if (!k->text || !k->tokenizer)
        return lesson_fail(L, key, "write both, as {text: \"The cat sat\", tokenizer: gpt2/}",
                    "given '%s' has %s but no %s", g->name, k->text ? "text:" : "tokenizer:",
                    k->text ? "tokenizer:" : "text:");
    const char *text = NULL, *folder = NULL;
    if (!lesson_parse_text(L, "text", k->text->value, &text) ||
        !lesson_parse_text(L, "tokenizer", k->tokenizer->value, &folder))
        return false;
    if (k->text->value->text_len == 0)
        return lesson_fail(L, k->text->value, "write the sentence to be turned into tokens",
                    "text: is empty: it has no tokens");
    g->text_node = k->text->value;
    g->tokenizer_node = k->tokenizer->value;
    if (!open_tokenizer(L, &g->text, folder, g->tokenizer_node))
        return false;
    if (load_given_ids(L, k, g, text))
        return true;
    g->text = (GivenText){0};  // the next given is loaded into this one's place
    g->text_node = NULL;
    return false;
}

// Whether node is {i} or {i-1} unquoted, which YAML reads as a mapping of i to nothing, where
// the lesson meant the copy's number that times: writes there.
static bool bare_copy_number(const Node *node) {
    return node->kind == NODE_MAPPING && node->n_pairs == 1 && lesson_is_null(node->pairs[0].value) &&
           (strcmp(node->pairs[0].key->text, "i") == 0 || strcmp(node->pairs[0].key->text, "i-1") == 0);
}

// ---------------------------------------------------------------- trained:

// The error of a lesson named by trained: whose givens take theirs from a third (no chain of
// lessons can loop): the lesson that names it says so in its own words.
static const char TRAINED_CHAIN[] = "its givens take theirs from another lesson";

// The lesson at `name` (beside this one, or as written when absolute), loaded once for all the
// givens that name it; NULL with the error at node.
static Lesson *model_lesson(Loader *L, const Node *node) {
    const char *name = node->text, *slash = strrchr(L->lesson->path, '/');
    int folder = name[0] != '/' && slash ? (int)(slash - L->lesson->path) + 1 : 0;
    const char *path = arena_printf(L->lesson->arena, "%.*s%s", folder, L->lesson->path, name);
    if (!path) {
        diag_no_memory(L->diag);
        return NULL;
    }
    for (size_t i = 0; i < L->lesson->n_models; i++)
        if (strcmp(L->lesson->models[i]->path, path) == 0)
            return L->lesson->models[i];
    Lesson **grown = arena_array(L->lesson->arena, L->lesson->n_models + 1, sizeof(Lesson *));
    Diag *sub = util_malloc(sizeof(Diag));
    if (!grown || !sub) {
        util_free(sub);
        diag_no_memory(L->diag);
        return NULL;
    }
    diag_init(sub);
    Lesson *m = lesson_load_model(path, sub);
    if (!m) {
        if (sub->out_of_memory)
            diag_no_memory(L->diag);
        else if (strncmp(sub->message, TRAINED_CHAIN, sizeof(TRAINED_CHAIN) - 1) == 0)
            lesson_fail(L, node, "name the lesson that trains these givens, as that lesson does",
                        "trained: names '%s', but %s (%s)", name, sub->message, sub->path);
        else
            lesson_fail(L, node, arena_printf(L->lesson->arena, "trace it on its own to see its errors: tracer %s", path),
                        "trained: names '%s', which cannot be used: %s%s%s", name, sub->path[0] ? sub->path : "",
                        sub->path[0] ? ": " : "", sub->message);
        util_free(sub);
        return NULL;
    }
    util_free(sub);
    if (L->lesson->n_models)
        memcpy(grown, L->lesson->models, L->lesson->n_models * sizeof(Lesson *));
    grown[L->lesson->n_models++] = m;
    L->lesson->models = grown;
    return m;
}

// trained: LESSON: the given of that name in that lesson, as its training leaves it: its shape
// now, its values once the run has trained that lesson (or read the training back).
static bool load_given_trained(Loader *L, const GivenKeys *k, LessonGiven *g) {
    const NodePair *others[] = {k->values, k->shape, k->init, k->distribution, k->scale, k->seed,
                                k->file,   k->tensor, k->slice, k->document,    k->ids_of};
    for (size_t i = 0; i < ARRAY_LEN(others); i++)
        if (others[i])
            return lesson_fail(L, others[i]->key, "leave it out: the given is the other lesson's, values and shape",
                               "%s: does not go with trained:", others[i]->key->text);
    const Node *node = k->trained->value;
    const char *hint = "trained: names the lesson that trains this given, like trained: 23_induction_head.yaml";
    if (node->kind != NODE_SCALAR || node->text_len == 0)
        return lesson_fail(L, node, hint, "trained: must name a lesson file, but this is %s", lesson_describe(L, node));
    if (L->as_model)  // said in the words of the lesson that names this one (model_lesson)
        return lesson_fail(L, node, NULL, "%s: '%s' names %s", TRAINED_CHAIN, g->name, node->text);
    const Lesson *m = model_lesson(L, node);
    if (!m)
        return false;
    const LessonGiven *src = NULL;
    for (size_t i = 0; i < m->n_givens && !src; i++)
        if (strcmp(m->givens[i].name, g->name) == 0)
            src = &m->givens[i];
    if (!src) {
        const char **names = arena_array(L->lesson->arena, m->n_givens + 1, sizeof(char *));
        if (!names)
            return diag_no_memory(L->diag);
        for (size_t i = 0; i < m->n_givens; i++)
            names[i] = m->givens[i].name;
        return lesson_fail(L, L->copy ? node : g->key,
                           lesson_suggest(L, g->name, names, m->n_givens,
                                          "name the given as that lesson does: its givens are listed under its given:"),
                           "'%s' has no given named '%s'", node->text, g->name);
    }
    g->model = m;
    g->init = src->init;
    g->shape = src->shape;
    g->values = src->values;
    g->distribution = src->distribution;
    g->scale = src->scale;
    g->seed = src->seed;
    g->file = src->file;
    return true;
}

static bool load_given_mapping(Loader *L, const Node *key, const Node *node, LessonGiven *g) {
    GivenKeys k = {0};
    const NodePair **slots[] = {&k.values, &k.about, &k.rows,         &k.cols,  &k.document,
                                &k.shape,  &k.init,  &k.distribution, &k.scale, &k.seed,
                                &k.file,   &k.tensor, &k.slice,  &k.text,         &k.tokenizer, &k.times,
                                &k.ids_of, &k.show, &k.trained};
    _Static_assert(ARRAY_LEN(slots) == ARRAY_LEN(GIVEN_KEYS), "one slot per given key");
    for (size_t i = 0; i < node->n_pairs; i++) {
        const NodePair *pair = &node->pairs[i];
        size_t at = lesson_find_name(pair->key->text, GIVEN_KEYS, ARRAY_LEN(GIVEN_KEYS));
        if (at == ARRAY_LEN(GIVEN_KEYS))
            return lesson_fail(L, pair->key,
                               lesson_suggest(L, pair->key->text, GIVEN_KEYS, ARRAY_LEN(GIVEN_KEYS),
                                       "a given takes values:, about:, rows:, cols:, ids_of:, show:, "
                                       "document:, shape: with init:, distribution:, scale:, seed:, "
                                       "file: with tensor:, slice:, times:, text: with tokenizer:, "
                                       "or trained:"),
                               "unknown key '%s' in given '%s'", pair->key->text, g->name);
        if (bare_copy_number(pair->value)) {
            const char *name = pair->key->text, *copy = pair->value->pairs[0].key->text;
            const char *hint = arena_printf(L->lesson->arena,
                                            "write it in quotes, %s: \"{%s}\": times: then writes each copy's "
                                            "number there, and \"1{i}\" gives 11, 12, ...", name, copy);
            return lesson_fail(L, pair->value, hint ? hint : "write it in quotes",
                               "%s: {%s} without quotes is a mapping to YAML, not the copy's number", name, copy);
        }
        *slots[at] = pair;
    }
    g->show_node = k.show ? k.show->value : NULL;
    if (k.show && !lesson_parse_show(L, g->show_node, &g->show, &g->view))
        return false;
    if (k.text || k.tokenizer)
        return load_given_text(L, key, &k, g);
    if (k.trained) {
        if (!load_given_trained(L, &k, g))
            return false;
    } else if (k.file) {
        if (!load_given_file(L, &k, g))
            return false;
    } else if (k.tensor || k.slice) {
        const NodePair *later = k.tensor && (!k.slice || k.tensor > k.slice) ? k.tensor : k.slice;
        return lesson_fail(L, later->key, "add file: with the .npy or .safetensors file it is taken from",
                           "%s: goes with file:", later->key->text);
    } else if (k.values && k.shape) {
        const NodePair *later = k.values < k.shape ? k.shape : k.values;  // pairs in file order
        return lesson_fail(L, later->key, "values: lists the numbers; shape: alone only gives the size",
                           "given '%s' has both values: and shape:; write one of them", g->name);
    } else if (!k.values && !k.shape) {
        return lesson_fail(L, key, "write values: [...] or shape: [...]",
                           "given '%s' has neither values: nor shape:", g->name);
    } else if (k.values) {
        const NodePair *shape_keys[] = {k.init, k.distribution, k.scale, k.seed};
        for (size_t i = 0; i < ARRAY_LEN(shape_keys); i++)
            if (shape_keys[i])
                return lesson_fail(L, shape_keys[i]->key, "use shape: instead of values:",
                                   "%s: goes with shape:, not with values:", shape_keys[i]->key->text);
        if (k.values->value->kind == NODE_MAPPING)
            return lesson_fail(L, k.values->value, LESSON_NUMBER_HINT,
                               "values: must be a number or a list of numbers, but this is a mapping");
        Values v;
        if (!lesson_parse_values(L, k.values->value, false, &v))
            return false;
        g->init = GIVEN_VALUES;
        g->shape = v.shape;
        g->values = v.values;
        g->value_nodes = v.nodes;
    } else if (!load_given_shape(L, &k, g)) {
        return false;
    }
    if (k.about && !lesson_parse_text(L, "about", k.about->value, &g->about))
        return false;
    g->about_node = k.about ? k.about->value : NULL;
    if (k.rows) {
        g->rows_node = k.rows->value;
        if (!lesson_parse_label_ref(L, "rows", g->rows_node, &g->rows))
            return false;
    }
    if (k.cols) {
        g->cols_node = k.cols->value;
        if (!lesson_parse_label_ref(L, "cols", g->cols_node, &g->cols))
            return false;
    }
    if (!check_given_labels(L, g) || (k.ids_of && !load_given_ids_of(L, k.ids_of->value, g)))
        return false;
    return !k.document || lesson_parse_document(L, k.document->value, &g->document);
}

static bool load_given(Loader *L, const NodePair *pair, LessonGiven *g) {
    g->name = pair->key->text;
    g->key = pair->key;
    g->value = pair->value;
    if (!lesson_check_name(L, pair->key))
        return false;
    const Node *node = pair->value;
    if (node->kind == NODE_MAPPING)
        return load_given_mapping(L, pair->key, node, g);
    if (lesson_is_null(node))
        return lesson_fail(L, pair->key,
                           "write a number, a list like [1, 2], or a mapping with values: or shape:",
                           "given '%s' has no value", g->name);
    Values v;
    if (!lesson_parse_values(L, node, false, &v))
        return false;
    g->init = GIVEN_VALUES;
    g->shape = v.shape;
    g->values = v.values;
    g->value_nodes = v.nodes;
    return true;
}

bool lesson_given_number(const Lesson *lesson, const char *name, double *out) {
    for (size_t i = 0; i < lesson->n_givens; i++) {
        const LessonGiven *g = &lesson->givens[i];
        if (strcmp(g->name, name) != 0)
            continue;
        if (g->init == GIVEN_VALUES && g->shape.rank == 0)
            *out = g->values[0];
        else if (g->init == GIVEN_FILE && !g->file.tensor)  // a number of a config.json
            *out = g->file.number;
        else
            return false;
        return true;
    }
    return false;
}

// ---------------------------------------------------------------- one given per layer

// text with {i} made k and {i-1} made k - 1, in the arena; NULL when out of memory.
static const char *number_text(Arena *arena, const char *text, uint64_t k) {
    StrBuf out;
    strbuf_init(&out);
    for (const char *p = text; *p;) {
        if (strncmp(p, "{i}", 3) == 0) {
            strbuf_printf(&out, "%llu", (unsigned long long)k);
            p += 3;
        } else if (strncmp(p, "{i-1}", 5) == 0) {
            strbuf_printf(&out, "%llu", (unsigned long long)(k - 1));
            p += 5;
        } else {
            strbuf_putc(&out, *p++);
        }
    }
    const char *copy = out.failed ? NULL : arena_strndup(arena, out.data ? out.data : "", out.len);
    strbuf_finish(&out);
    return copy;
}

static Node *number_node(Arena *arena, const Node *node, uint64_t k) {
    Node *copy = arena_alloc(arena, sizeof(Node));
    if (!copy)
        return NULL;
    *copy = *node;
    if (node->kind == NODE_SCALAR && !(copy->text = number_text(arena, node->text, k)))
        return NULL;
    if (copy->text)
        copy->text_len = strlen(copy->text);
    // `seed: "{i}"` is quoted only because YAML reads a bare {i} as a mapping: once numbered,
    // the text is what the lesson would have written without quotes, so it reads as a number.
    if (node->kind == NODE_SCALAR && strcmp(copy->text, node->text) != 0)
        copy->style = SCALAR_PLAIN;
    return copy;
}

// Whether a given called name is written in the given: mapping before pair.
static bool written_before(const Node *givens, const NodePair *pair, const char *name) {
    for (size_t i = 0; givens && i < givens->n_pairs && &givens->pairs[i] != pair; i++)
        if (strcmp(givens->pairs[i].key->text, name) == 0)
            return true;
    return false;
}

// The times: of a given (NULL when it has none), and how many givens it makes: a whole number,
// or a given number (n_layer from config.json).
static const NodePair *given_times(Loader *L, const NodePair *pair, uint64_t *n, bool *ok) {
    const Node *value = pair->value;
    *n = 1;
    *ok = true;
    const NodePair *times = NULL;
    for (size_t i = 0; value->kind == NODE_MAPPING && i < value->n_pairs; i++)
        if (strcmp(value->pairs[i].key->text, "times") == 0)
            times = &value->pairs[i];
    if (!times)
        return NULL;
    const Node *t = times->value;
    const char *hint = "times: n_layer makes one given per layer: name{i} is name1, name2, ..., and "
                       "{i-1} in tensor: or file: counts the layers from 0, as h.{i-1}.ln_1.weight";
    double v;
    if (t->kind == NODE_SCALAR && lesson_is_identifier(t->text)) {
        if (!lesson_given_number(L->lesson, t->text, &v) && L->failed && written_before(L->givens, pair, t->text))
            *ok = false;  // the given it names failed, and said why: nothing to add
        else if (!lesson_given_number(L->lesson, t->text, &v))
            *ok = lesson_fail(L, t, hint, "times: names '%s', which is not a number given before it", t->text);
        else if (!(v >= 1 && v <= GIVEN_MAX_TIMES && v == floor(v)))
            *ok = lesson_fail(L, t, hint, "times: '%s' is %g; a given is made 1 to %d times", t->text, v,
                              GIVEN_MAX_TIMES);
        *n = *ok ? (uint64_t)v : 0;
    } else if (!lesson_whole_number(t, n) || *n < 1 || *n > GIVEN_MAX_TIMES) {
        *ok = lesson_fail(L, t, hint, "times: must be a whole number from 1 to %d, or a given number, but this is %s",
                          GIVEN_MAX_TIMES, lesson_describe(L, t));
    } else if (!strstr(pair->key->text, "{i}")) {
        *ok = lesson_fail(L, pair->key, hint, "given '%s' is made %llu times, so its name needs {i}", pair->key->text,
                          (unsigned long long)*n);
    }
    return times;
}

// Given k of a given with times:, its name and its scalars numbered, times: left out.
static NodePair *numbered_given(Arena *arena, const NodePair *pair, const NodePair *times, uint64_t k) {
    NodePair *copy = arena_alloc(arena, sizeof(NodePair));
    const Node *value = pair->value;
    Node *mapping = arena_alloc(arena, sizeof(Node));
    NodePair *pairs = arena_array(arena, value->n_pairs, sizeof(NodePair));
    if (!copy || !mapping || !pairs || !(copy->key = number_node(arena, pair->key, k)))
        return NULL;
    *mapping = *value;
    mapping->pairs = pairs;
    mapping->n_pairs = 0;
    for (size_t i = 0; i < value->n_pairs; i++) {
        if (&value->pairs[i] == times)
            continue;
        NodePair *p = &pairs[mapping->n_pairs++];
        p->key = value->pairs[i].key;
        p->value = value->pairs[i].value;
        if (p->value->kind == NODE_SCALAR && !(p->value = number_node(arena, p->value, k)))
            return NULL;
    }
    copy->value = mapping;
    return copy;
}

// report: false for a copy of a given with times: after one that failed, whose error would
// be printed again; it is loaded (its name is defined) and fails the lesson all the same.
static bool load_one_given(Loader *L, const NodePair *pair, bool report) {
    Lesson *lesson = L->lesson;
    if (lesson->n_givens == L->givens_cap) {
        size_t cap = 2 * L->givens_cap;
        LessonGiven *grown = arena_array(lesson->arena, cap, sizeof(LessonGiven));
        if (!grown)
            return diag_no_memory(L->diag);
        memcpy(grown, lesson->givens, lesson->n_givens * sizeof(LessonGiven));
        lesson->givens = grown;
        L->givens_cap = cap;
    }
    Diag *diag = lesson_item_start(L);
    L->quiet = false;
    bool ok = load_given(L, pair, &lesson->givens[lesson->n_givens]);
    if (!ok && (!report || L->quiet) && L->item->status == STATUS_LESSON_ERROR && !L->item->out_of_memory) {
        L->diag = diag;
        L->failed = true;
        return true;
    }
    if (!lesson_item_done(L, diag, ok, true))
        return false;
    lesson->n_givens += ok;
    return true;
}

bool lesson_load_givens(Loader *L, const Node *node) {
    Lesson *lesson = L->lesson;
    if (lesson_is_null(node))
        return true;
    if (node->kind != NODE_MAPPING)
        return lesson_fail(L, node, "write one given a line, like `X: [[1, 0], [0, 1]]`",
                           "given: must be a mapping of names to values, but this is %s",
                           yamldoc_kind_name(node->kind));
    L->givens = node;
    L->givens_cap = node->n_pairs ? node->n_pairs : 1;
    lesson->givens = arena_array(lesson->arena, L->givens_cap, sizeof(LessonGiven));
    if (!lesson->givens)
        return diag_no_memory(L->diag);
    for (size_t i = 0; i < node->n_pairs; i++) {
        uint64_t n;
        bool ok;
        const NodePair *times = given_times(L, &node->pairs[i], &n, &ok);
        if (!ok) {
            if (L->failed || L->diag->status)
                return false;
            continue;
        }
        if (!times) {
            if (!load_one_given(L, &node->pairs[i], true))
                return false;
            continue;
        }
        bool reported = false;
        for (uint64_t k = 1; k <= n; k++) {
            const NodePair *given = numbered_given(lesson->arena, &node->pairs[i], times, k);
            L->copy = given ? arena_printf(lesson->arena, "%s, copy %llu of %llu", given->key->text,
                                           (unsigned long long)k, (unsigned long long)n)
                            : NULL;
            if (!L->copy)
                return diag_no_memory(L->diag);
            size_t before = lesson->n_givens;
            bool loaded = load_one_given(L, given, !reported);
            L->copy = NULL;
            if (!loaded)
                return false;
            reported = reported || lesson->n_givens == before;
        }
    }
    return true;
}
