// lesson_block: blocks: and their applications. An application loads the block's steps as
// ordinary steps named layer1.q, each with the scope that tells the checker which lesson name
// each of the block's names stands for; nothing after the loader knows blocks exist.
#include "lesson_block.h"

#include <string.h>

#include "lesson_given.h"
#include "lesson_step.h"
#include "lesson_values.h"

static const char *const BLOCK_KEYS[] = {"inputs", "results", "steps"};
static const char *const USE_KEYS[] = {"use", "as", "times", "inputs", "carry", "results", "replace"};

// Applications of one block in a row (times:), and steps all applications may make: a
// lesson of 12 layers of 30 steps is far below both.
#define BLOCK_MAX_TIMES 1000
#define BLOCK_MAX_STEPS 100000

// ---------------------------------------------------------------- blocks:

static size_t find_item(const Node *seq, const char *name) {
    for (size_t i = 0; seq && i < seq->n_items; i++)
        if (strcmp(seq->items[i]->text, name) == 0)
            return i;
    return SIZE_MAX;
}

static const char **item_texts(Loader *L, const Node *seq) {
    const char **texts = arena_array(L->lesson->arena, seq && seq->n_items ? seq->n_items : 1, sizeof(char *));
    for (size_t i = 0; texts && seq && i < seq->n_items; i++)
        texts[i] = seq->items[i]->text;
    return texts;
}

// inputs: or results: of a block: a list of names, each once.
static bool load_names(Loader *L, const LessonBlock *b, const char *key, const Node *seq) {
    if (seq->kind != NODE_SEQUENCE)
        return lesson_fail(L, seq, "write the names as a list, like [x, W]",
                           "%s: of block '%s' must be a list of names, but this is %s", key, b->name,
                           yamldoc_kind_name(seq->kind));
    for (size_t i = 0; i < seq->n_items; i++) {
        const Node *item = seq->items[i];
        if (item->kind != NODE_SCALAR || !lesson_is_identifier(item->text))
            return lesson_fail(L, item, "a name starts with a letter or _ and has only letters, digits and _",
                               "%s: of block '%s' holds %s, which is not a name", key, b->name,
                               lesson_describe(L, item));
        if (find_item(seq, item->text) < i)
            return lesson_fail(L, item, "each name is defined once; give this one another name",
                               "'%s' is twice in %s: of block '%s'", item->text, key, b->name);
    }
    return true;
}

// The names a block's step item defines: its result, or an application's results: keys.
static bool item_defines(const Node *item, const char *name) {
    if (item->kind != NODE_MAPPING)
        return false;
    const Node *results = yamldoc_get(item, "use") ? yamldoc_get(item, "results") : NULL;
    if (results)
        return results->kind == NODE_MAPPING && yamldoc_get(results, name) != NULL;
    const char *own = lesson_step_name(item);
    return own && strcmp(own, name) == 0;
}

static bool load_block(Loader *L, const NodePair *pair, LessonBlock *b) {
    b->name = pair->key->text;
    b->key = pair->key;
    const Node *node = pair->value;
    if (!lesson_is_identifier(b->name))
        return !lesson_invisible_in_name(L, pair->key, "this block's name") &&
               lesson_fail(L, pair->key, "a name starts with a letter or _ and has only letters, digits and _",
                           "'%s' is not a valid name for a block", b->name);
    if (node->kind != NODE_MAPPING)
        return lesson_fail(L, node, "a block has inputs:, results: and steps:",
                           "block '%s' must be a mapping with inputs:, results: and steps:, but this is %s",
                           b->name, yamldoc_kind_name(node->kind));
    for (size_t i = 0; i < node->n_pairs; i++) {
        const Node *key = node->pairs[i].key;
        if (lesson_find_name(key->text, BLOCK_KEYS, ARRAY_LEN(BLOCK_KEYS)) == ARRAY_LEN(BLOCK_KEYS))
            return lesson_fail(L, key,
                               lesson_suggest(L, key->text, BLOCK_KEYS, ARRAY_LEN(BLOCK_KEYS),
                                              "a block has inputs:, results: and steps:"),
                               "unknown key '%s' in block '%s'", key->text, b->name);
    }
    b->inputs = yamldoc_get(node, "inputs");
    b->results = yamldoc_get(node, "results");
    b->steps = yamldoc_get(node, "steps");
    if (!b->steps || b->steps->kind != NODE_SEQUENCE || b->steps->n_items == 0)
        return lesson_fail(L, b->steps ? b->steps : pair->key, "write the block's steps as a lesson's: `- name: expression`",
                           "block '%s' needs steps:, a list of at least one step", b->name);
    if ((b->inputs && !load_names(L, b, "inputs", b->inputs)) ||
        (b->results && !load_names(L, b, "results", b->results)))
        return false;
    for (size_t i = 0; i < b->steps->n_items; i++) {
        const char *own = lesson_step_name(b->steps->items[i]);
        if (own && find_item(b->inputs, own) != SIZE_MAX)
            return lesson_fail(L, b->steps->items[i], "a step of a block names a new value; give it another name",
                               "the step '%s' of block '%s' has the name of one of its inputs", own, b->name);
    }
    for (size_t r = 0; b->results && r < b->results->n_items; r++) {
        const Node *result = b->results->items[r];
        bool found = false;
        for (size_t i = 0; i < b->steps->n_items && !found; i++)
            found = item_defines(b->steps->items[i], result->text);
        if (!found)
            return lesson_fail(L, result, "a result is the name of one of the block's steps",
                               "block '%s' has no step named '%s' to give out as a result", b->name, result->text);
    }
    return true;
}

bool lesson_load_blocks(Loader *L, const Node *node) {
    if (lesson_is_null(node))
        return true;
    if (node->kind != NODE_MAPPING)
        return lesson_fail(L, node, "write each block as `name:` with inputs:, results: and steps: under it",
                           "blocks: must be a mapping of blocks by name, but this is %s", yamldoc_kind_name(node->kind));
    L->blocks = arena_array(L->lesson->arena, node->n_pairs ? node->n_pairs : 1, sizeof(LessonBlock));
    if (!L->blocks)
        return diag_no_memory(L->diag);
    for (size_t i = 0; i < node->n_pairs; i++) {
        Diag *diag = lesson_item_start(L);
        bool ok = load_block(L, &node->pairs[i], &L->blocks[L->n_blocks]);
        if (!lesson_item_done(L, diag, ok, i + 1 < node->n_pairs))
            return false;
        L->n_blocks += ok;
    }
    return true;
}

// ---------------------------------------------------------------- scopes

// A stage an application's replace: names (target: ablated.layer1.A), the expression that
// stands in for it, and how that expression's names read: as where the application is
// written, with the key's own name (layer1.A) for the stage as the block computed it.
typedef struct Replacement {
    const char *application;        // ablated: its stages' names start with it and a dot
    size_t first_step;              // the application's first step in lesson->steps
    const char *target, *original;  // original: target.original, once the stage is loaded
    const Node *key, *value;
    LessonScope *scope;
    bool pending;  // the stage was just loaded: its replacement comes next
    bool found;
} Replacement;


static bool scope_add(Loader *L, LessonScope *scope, const char *from, const char *to) {
    if (scope->n == scope->cap) {
        size_t cap = scope->cap ? 2 * scope->cap : 8;
        const char **f = arena_array(L->lesson->arena, cap, sizeof(char *));
        const char **t = arena_array(L->lesson->arena, cap, sizeof(char *));
        if (!f || !t)
            return diag_no_memory(L->diag);
        if (scope->n) {
            memcpy(f, scope->from, scope->n * sizeof(char *));
            memcpy(t, scope->to, scope->n * sizeof(char *));
        }
        scope->from = f;
        scope->to = t;
        scope->cap = cap;
    }
    scope->from[scope->n] = from;
    scope->to[scope->n++] = to;
    return true;
}

// What `name` stands for in scope (the latest definition wins), or name itself.
static const char *scope_find(const LessonScope *scope, const char *name) {
    for (size_t i = scope ? scope->n : 0; i-- > 0;)
        if (strcmp(scope->from[i], name) == 0)
            return scope->to[i];
    return name;
}

const char *lesson_block_name(Loader *L, const Node *key) {
    if (!lesson_is_identifier(key->text)) {
        lesson_check_name(L, key);  // the error a step's name gets
        return NULL;
    }
    const char *name = arena_printf(L->lesson->arena, "%s.%s", L->prefix, key->text);
    if (!name) {
        diag_no_memory(L->diag);
        return NULL;
    }
    // A stage that replace: names: the block's step is NAME.original, and the block's later
    // steps read NAME, the value that stands in for it (lesson_block_replace loads it next).
    const char *own = name;
    for (size_t i = 0; i < L->n_replacements; i++) {
        Replacement *r = &L->replacements[i];
        if (strcmp(r->target, name) != 0)
            continue;
        own = r->original = arena_printf(L->lesson->arena, "%s.original", name);
        if (!own) {
            diag_no_memory(L->diag);
            return NULL;
        }
        r->pending = true;
    }
    if (!lesson_define_name(L, own, L->scope_at, L->scope_at) || !scope_add(L, L->scope, key->text, name))
        return NULL;
    return own;
}

// ---------------------------------------------------------------- replace:

// replace: {layer1.A: 0} of application `name`: each key a stage's name inside it, each value
// an expression.
static bool push_replacements(Loader *L, const Node *replace, const char *name, const LessonScope *outer,
                              const Node *use) {
    for (size_t i = 0; i < replace->n_pairs; i++) {
        const Node *key = replace->pairs[i].key, *value = replace->pairs[i].value;
        bool dotted = key->kind == NODE_SCALAR && key->text_len > 0;
        for (const char *part = key->text; dotted && part;) {
            const char *dot = strchr(part, '.');
            char word[128];
            size_t len = dot ? (size_t)(dot - part) : strlen(part);
            dotted = len > 0 && len < sizeof(word);
            if (dotted) {
                memcpy(word, part, len);
                word[len] = '\0';
                dotted = lesson_is_identifier(word);
            }
            part = dot ? dot + 1 : NULL;
        }
        if (!dotted)
            return lesson_fail(L, key, "name a stage of the application as the trace does without its first part: "
                               "layer1.A for ablated.layer1.A",
                               "replace: names the stage it replaces, but this is %s", lesson_describe(L, key));
        const char *hint = "write what stands in for the stage, like `layer1.A: 0` or `layer1.out: clean.layer1.out`";
        if (lesson_is_null(value) || (value->kind == NODE_SCALAR && value->text[strspn(value->text, " \t\r\n")] == '\0'))
            return lesson_fail(L, value, hint, "replace: gives '%s' no value", key->text);
        if (value->kind != NODE_SCALAR)
            return lesson_fail(L, value, hint, "replace: gives '%s' %s, but it needs an expression", key->text,
                               lesson_describe(L, value));
        if (L->n_replacements == L->cap_replacements) {
            size_t cap = L->cap_replacements ? 2 * L->cap_replacements : 8;
            Replacement *grown = arena_array(L->lesson->arena, cap, sizeof(Replacement));
            if (!grown)
                return diag_no_memory(L->diag);
            if (L->n_replacements)
                memcpy(grown, L->replacements, L->n_replacements * sizeof(Replacement));
            L->replacements = grown;
            L->cap_replacements = cap;
        }
        Replacement *r = &L->replacements[L->n_replacements];
        memset(r, 0, sizeof(*r));
        r->application = name;
        r->first_step = L->lesson->n_steps;
        r->key = key;
        r->value = value;
        r->target = arena_printf(L->lesson->arena, "%s.%s", name, key->text);
        r->scope = arena_array(L->lesson->arena, 1, sizeof(LessonScope));
        if (!r->target || !r->scope ||
            !(r->scope->where = arena_printf(L->lesson->arena, "in replace: of %s, applied on line %zu", name, use->line)))
            return diag_no_memory(L->diag);
        for (size_t j = 0; outer && j < outer->n; j++)
            if (!scope_add(L, r->scope, outer->from[j], outer->to[j]))
                return false;
        L->n_replacements++;
    }
    return true;
}

// The replacements of application `name` (those from `base` on) are done: each must have
// found its stage.
static bool check_replacements(Loader *L, size_t base, const char *name) {
    for (size_t i = base; i < L->n_replacements; i++) {
        const Replacement *r = &L->replacements[i];
        if (r->found)
            continue;
        size_t len = strlen(name), count = 0;
        const char **stages = arena_array(L->lesson->arena, L->lesson->n_steps + 1, sizeof(char *));
        if (!stages)
            return diag_no_memory(L->diag);
        for (size_t k = 0; k < L->lesson->n_steps; k++) {
            const char *s = L->lesson->steps[k].name;
            if (strncmp(s, name, len) == 0 && s[len] == '.' && !L->lesson->steps[k].replaces)
                stages[count++] = s + len + 1;
        }
        const char *list = count ? arena_printf(L->lesson->arena, "its stages are %s%s%s", stages[0],
                                                count > 1 ? " to " : "", count > 1 ? stages[count - 1] : "")
                                 : "name one of its stages";
        if (!list)
            return diag_no_memory(L->diag);
        return lesson_fail(L, r->key, lesson_suggest(L, r->key->text, stages, count, list),
                           "replace: names '%s', but %s has no stage of that name", r->key->text, name);
    }
    return true;
}

bool lesson_block_replace(Loader *L) {
    for (size_t i = 0; i < L->n_replacements; i++) {
        Replacement *r = &L->replacements[i];
        if (!r->pending)
            continue;
        r->pending = false;
        r->found = true;
        // The application's stages so far read by the names the keys use (layer1.z for
        // ablated.layer1.z), the key's own name the stage as computed: layer1.out in
        // `where(at, clean.layer1.out, layer1.out)`.
        size_t len = strlen(r->application);
        for (size_t k = r->first_step; k < L->lesson->n_steps; k++) {
            const char *stage = L->lesson->steps[k].name;
            if (strncmp(stage, r->application, len) == 0 && stage[len] == '.' &&
                !scope_add(L, r->scope, stage + len + 1, stage))
                return false;
        }
        return scope_add(L, r->scope, r->key->text, r->original) &&
               lesson_load_replacement(L, r->key, r->value, r->target, r->original, r->scope);
    }
    return true;
}

// ---------------------------------------------------------------- applications

bool lesson_block_is_use(const Loader *L, const Node *item) {
    if (item->kind != NODE_MAPPING || !yamldoc_get(item, "use"))
        return false;
    if (L->n_blocks)
        return true;
    for (size_t i = 1; i < ARRAY_LEN(USE_KEYS); i++)
        if (yamldoc_get(item, USE_KEYS[i]))
            return true;
    return false;
}

// times: a whole number, or the name of a given whole number (n_layer).
static bool load_times(Loader *L, const Node *node, uint64_t *times) {
    const char *hint = "times: is a whole number, like 2, or the name of a given number, like n_layer";
    if (node->kind == NODE_SCALAR && lesson_is_identifier(node->text)) {
        const LessonGiven *g = NULL;
        for (size_t i = 0; i < L->lesson->n_givens && !g; i++)
            if (strcmp(L->lesson->givens[i].name, node->text) == 0)
                g = &L->lesson->givens[i];
        double v;
        if (!g)
            return lesson_fail(L, node, hint, "times: names '%s', but no given has that name", node->text);
        if (!lesson_given_number(L->lesson, node->text, &v))
            return lesson_fail(L, node, hint, "times: names '%s', which is not a single number", node->text);
        if (!(v >= 1 && v <= BLOCK_MAX_TIMES && v == (double)(uint64_t)v))
            return lesson_fail(L, node, hint, "times: '%s' is %g; a block is applied 1 to %d times", node->text, v,
                               BLOCK_MAX_TIMES);
        *times = (uint64_t)v;
        return true;
    }
    if (!lesson_whole_number(node, times) || *times < 1 || *times > BLOCK_MAX_TIMES)
        return lesson_fail(L, node, hint, "times: must be a whole number from 1 to %d, but this is %s",
                           BLOCK_MAX_TIMES, lesson_describe(L, node));
    return true;
}

typedef struct Application {
    const LessonBlock *block;
    const Node *use, *as, *inputs, *carry, *results, *replace;
    const char *base;
    uint64_t times;
    const Node **bound;       // the binding of each input (inputs: value), NULL before checked
    const char **carried;     // the result each input takes from the application before, or NULL
    const char **given_out;   // each result's name in the application before
} Application;

static bool check_mapping(Loader *L, const Application *a, const char *key, const Node *node) {
    if (node->kind == NODE_MAPPING)
        return true;
    return lesson_fail(L, node, "write it as a mapping, like {x: X}",
                       "%s: of an application of block '%s' must be a mapping, but this is %s", key, a->block->name,
                       yamldoc_kind_name(node->kind));
}

// Whether key names one of the block's inputs (or results); else a located error.
static bool known(Loader *L, const Application *a, const Node *key, const char *what, const Node *names) {
    if (key->kind == NODE_SCALAR && find_item(names, key->text) != SIZE_MAX)
        return true;
    const char **texts = item_texts(L, names);
    size_t n = names ? names->n_items : 0;
    char *list = arena_printf(L->lesson->arena, "block '%s' has no %ss", a->block->name, what);
    for (size_t i = 0; texts && list && i < n; i++)
        list = i == 0 ? arena_printf(L->lesson->arena, "the %s%s of block '%s' %s %s", what, n > 1 ? "s" : "",
                                     a->block->name, n > 1 ? "are" : "is", texts[i])
                      : arena_printf(L->lesson->arena, "%s%s%s", list, i + 1 < n ? ", " : " and ", texts[i]);
    if (!texts || !list)
        return diag_no_memory(L->diag);
    if (key->kind != NODE_SCALAR)
        return lesson_fail(L, key, list, "a %s of block '%s' is named by a word, but this is %s", what,
                           a->block->name, yamldoc_kind_name(key->kind));
    const char *hint = lesson_suggest(L, key->text, texts, n, list);
    return lesson_fail(L, key, hint, "block '%s' has no %s '%s'", a->block->name, what, key->text);
}

static bool load_application(Loader *L, const Node *item, Application *a) {
    for (size_t i = 0; i < item->n_pairs; i++) {
        const Node *key = item->pairs[i].key;
        if (lesson_find_name(key->text, USE_KEYS, ARRAY_LEN(USE_KEYS)) == ARRAY_LEN(USE_KEYS))
            return lesson_fail(L, key,
                               lesson_suggest(L, key->text, USE_KEYS, ARRAY_LEN(USE_KEYS),
                                              "an application has use:, as:, times:, inputs:, carry:, results: and replace:"),
                               "unknown key '%s' in an application of a block", key->text);
    }
    a->use = yamldoc_get(item, "use");
    for (size_t i = 0; i < L->n_blocks && !a->block; i++)
        if (a->use->kind == NODE_SCALAR && strcmp(L->blocks[i].name, a->use->text) == 0)
            a->block = &L->blocks[i];
    if (!a->block) {
        const char **names = arena_array(L->lesson->arena, L->n_blocks + 1, sizeof(char *));
        if (!names)
            return diag_no_memory(L->diag);
        for (size_t i = 0; i < L->n_blocks; i++)
            names[i] = L->blocks[i].name;
        return lesson_fail(L, a->use,
                           lesson_suggest(L, a->use->kind == NODE_SCALAR ? a->use->text : "", names, L->n_blocks,
                                          "use: names a block defined under blocks:"),
                           "there is no block named %s", lesson_describe(L, a->use));
    }
    const LessonBlock *b = a->block;
    if (b->applying)
        return lesson_fail(L, a->use, "a block cannot apply itself, directly or through another block; "
                           "to apply it several times in a row, use times:",
                           "block '%s' applies itself: its steps would never end", b->name);
    a->as = yamldoc_get(item, "as");
    a->base = b->name;
    if (a->as && (a->as->kind != NODE_SCALAR || !lesson_is_identifier(a->as->text)))
        return lesson_fail(L, a->as, "as: is a name, like layer: the steps are then named layer1.q, layer2.q, ...",
                           "as: must be a name, but this is %s", lesson_describe(L, a->as));
    if (a->as)
        a->base = a->as->text;
    const Node *times = yamldoc_get(item, "times");
    a->times = 1;
    if (times && !load_times(L, times, &a->times))
        return false;
    a->inputs = yamldoc_get(item, "inputs");
    a->carry = yamldoc_get(item, "carry");
    a->results = yamldoc_get(item, "results");
    size_t n_in = b->inputs ? b->inputs->n_items : 0, n_out = b->results ? b->results->n_items : 0;
    a->bound = arena_array(L->lesson->arena, n_in + 1, sizeof(Node *));
    a->carried = arena_array(L->lesson->arena, n_in + 1, sizeof(char *));
    a->given_out = arena_array(L->lesson->arena, n_out + 1, sizeof(char *));
    if (!a->bound || !a->carried || !a->given_out)
        return diag_no_memory(L->diag);
    if (a->inputs) {
        if (!check_mapping(L, a, "inputs", a->inputs))
            return false;
        for (size_t i = 0; i < a->inputs->n_pairs; i++) {
            const NodePair *p = &a->inputs->pairs[i];
            if (!known(L, a, p->key, "input", b->inputs))
                return false;
            if (p->value->kind != NODE_SCALAR || p->value->text_len == 0)
                return lesson_fail(L, p->value, "bind an input to the name of a given or of an earlier step",
                                   "the input '%s' must be bound to a name, but this is %s", p->key->text,
                                   lesson_describe(L, p->value));
            a->bound[find_item(b->inputs, p->key->text)] = p->value;
        }
    }
    if (a->carry) {
        if (!check_mapping(L, a, "carry", a->carry))
            return false;
        for (size_t i = 0; i < a->carry->n_pairs; i++) {
            const NodePair *p = &a->carry->pairs[i];
            if (!known(L, a, p->key, "input", b->inputs) || !known(L, a, p->value, "result", b->results))
                return false;
            a->carried[find_item(b->inputs, p->key->text)] = p->value->text;
        }
    }
    for (size_t i = 0; i < n_in; i++)
        if (!a->bound[i])
            return lesson_fail(L, a->inputs ? a->inputs : a->use,
                               "give every input of the block under inputs:, as `inputs: {x: X}`",
                               "the input '%s' of block '%s' is not given", b->inputs->items[i]->text, b->name);
    a->replace = yamldoc_get(item, "replace");
    if (a->replace && !check_mapping(L, a, "replace", a->replace))
        return false;
    if (a->results) {
        if (!check_mapping(L, a, "results", a->results))
            return false;
        for (size_t i = 0; i < a->results->n_pairs; i++)
            if (!known(L, a, a->results->pairs[i].value, "result", b->results))
                return false;
    }
    return true;
}

// The binding of input i in application k: a name of the lesson, with {i} made k.
static const char *bind_input(Loader *L, const Application *a, size_t i, uint64_t k, LessonScope *outer) {
    if (k > 1 && a->carried[i])
        return a->given_out[find_item(a->block->results, a->carried[i])];
    const Node *value = a->bound[i];
    const char *text = value->text, *at;
    char *made = NULL;
    while ((at = strstr(text, "{i}")) != NULL) {
        made = arena_printf(L->lesson->arena, "%.*s%llu%s", (int)(at - text), text, (unsigned long long)k, at + 3);
        if (!made) {
            diag_no_memory(L->diag);
            return NULL;
        }
        text = made;
    }
    const char *name = scope_find(outer, text);
    if (!lesson_name_defined(L, name)) {
        lesson_fail(L, value, "bind an input to the name of a given or of a step before this one",
                    "the input '%s' is bound to '%s', which is not a given or an earlier step",
                    a->block->inputs->items[i]->text, text);
        return NULL;
    }
    return name;
}

// The step named `name` (or with it as another name), searched from the last.
static LessonStep *find_step(Lesson *lesson, const char *name) {
    for (size_t i = lesson->n_steps; i-- > 0;) {
        LessonStep *s = &lesson->steps[i];
        if (strcmp(s->name, name) == 0)
            return s;
        for (size_t j = 0; j < s->n_aliases; j++)
            if (strcmp(s->aliases[j], name) == 0)
                return s;
    }
    return NULL;
}

// results: {out: y}: out is another name of the last application's y.
static bool name_results(Loader *L, const Application *a, LessonScope *outer) {
    for (size_t i = 0; a->results && i < a->results->n_pairs; i++) {
        const NodePair *p = &a->results->pairs[i];
        LessonStep *s = find_step(L->lesson, a->given_out[find_item(a->block->results, p->value->text)]);
        const char *name = p->key->text;
        if (outer) {  // in a block: its own name there, as its steps' are
            if (!lesson_is_identifier(name))
                return lesson_check_name(L, p->key);
            name = arena_printf(L->lesson->arena, "%s.%s", L->prefix, name);
            if (!name)
                return diag_no_memory(L->diag);
            if (!lesson_define_name(L, name, L->scope_at, L->scope_at) || !scope_add(L, outer, p->key->text, name))
                return false;
        } else if (!lesson_check_name(L, p->key)) {
            return false;
        }
        const char **aliases = arena_array(L->lesson->arena, s->n_aliases + 1, sizeof(char *));
        if (!aliases)
            return diag_no_memory(L->diag);
        if (s->n_aliases)
            memcpy(aliases, s->aliases, s->n_aliases * sizeof(char *));
        aliases[s->n_aliases++] = name;
        s->aliases = aliases;
    }
    return true;
}

bool lesson_apply_block(Loader *L, const Node *item) {
    Application a = {0};
    if (!load_application(L, item, &a))
        return false;
    LessonBlock *b = (LessonBlock *)a.block;
    const char *prefix = L->prefix;
    LessonScope *outer = L->scope;
    const Node *outer_at = L->scope_at;
    bool numbered = yamldoc_get(item, "times") != NULL, ok = true;
    size_t n_in = b->inputs ? b->inputs->n_items : 0, n_out = b->results ? b->results->n_items : 0;
    for (uint64_t k = 1; ok && k <= a.times; k++) {
        if (L->lesson->n_steps + b->steps->n_items > BLOCK_MAX_STEPS)
            return lesson_fail(L, a.use, "apply blocks fewer times, or split the lesson",
                               "the blocks' applications make more than %d steps", BLOCK_MAX_STEPS);
        LessonScope *scope = arena_array(L->lesson->arena, 1, sizeof(LessonScope));
        char number[24] = "";
        if (numbered)
            snprintf(number, sizeof(number), "%llu", (unsigned long long)k);
        const char *name = prefix ? arena_printf(L->lesson->arena, "%s.%s%s", prefix, a.base, number)
                                  : arena_printf(L->lesson->arena, "%s%s", a.base, number);
        if (!scope || !name ||
            !(scope->where = arena_printf(L->lesson->arena, "in %s, block '%s' applied on line %zu", name, b->name,
                                          a.use->line)))
            return diag_no_memory(L->diag);
        for (size_t i = 0; i < n_in; i++) {
            const char *bound = bind_input(L, &a, i, k, outer);
            if (!bound || !scope_add(L, scope, b->inputs->items[i]->text, bound))
                return false;
        }
        size_t base = L->n_replacements;
        if (a.replace && !push_replacements(L, a.replace, name, outer, a.use)) {
            L->n_replacements = base;
            return false;
        }
        L->prefix = name;
        L->scope = scope;
        L->scope_at = a.as ? a.as : a.use;
        b->applying = true;
        for (size_t i = 0; ok && i < b->steps->n_items; i++)
            ok = lesson_load_step(L, b->steps->items[i]);
        b->applying = false;
        if (ok)
            ok = check_replacements(L, base, name);
        L->n_replacements = base;
        for (size_t r = 0; r < n_out; r++)
            a.given_out[r] = scope_find(scope, b->results->items[r]->text);
        L->prefix = prefix;
        L->scope = outer;
        L->scope_at = outer_at;
    }
    return ok && name_results(L, &a, outer);
}
