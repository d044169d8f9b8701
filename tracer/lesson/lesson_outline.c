// lesson_outline: the names of a lesson's givens and steps read from its YAML alone.
#include "lesson_outline.h"

#include <string.h>

// How deep block applications inside blocks are followed (the loader refuses deeper nesting).
#define OUTLINE_MAX_DEPTH 8
// A line's last column, as --list's: what is past it is cut, "..." marking the cut.
#define OUTLINE_WIDTH 79

typedef struct Outline {
    const Node *blocks;  // the lesson's blocks: mapping, or NULL
    StrBuf *out;
    bool no_memory;  // a line could not be made: the outline would lack it
    size_t width;  // of the name column
    bool pass;     // false: measuring the names' width; true: writing
} Outline;

static bool is_scalar(const Node *n) {
    return n && n->kind == NODE_SCALAR;
}

// One line: the name (prefix, then name), then what it is.
static void line(Outline *o, const char *prefix, const char *name, size_t name_len, const char *what,
                 size_t what_len) {
    size_t len = strlen(prefix) + name_len;
    if (!o->pass) {
        if (len > o->width)
            o->width = len;
        return;
    }
    size_t room = o->width + 2 < OUTLINE_WIDTH ? OUTLINE_WIDTH - o->width - 2 : 0;
    bool cut = what_len > room && room > 20;
    strbuf_printf(o->out, "%s%.*s%*s  %.*s%s\n", prefix, (int)name_len, name, (int)(o->width - len), "",
                  cut ? (int)(room - 3) : (int)what_len, what, cut ? "..." : "");
}

static void steps(Outline *o, const Node *list, const char *prefix, size_t depth);

// A step applying a block (use:): each of the block's steps under the application's name, with
// {i} for its number when it is applied several times; then, for an application of the lesson's
// own steps, the names its results: give.
static void application(Outline *o, const Node *step, const char *prefix, size_t depth) {
    const Node *use = yamldoc_get(step, "use"), *as = yamldoc_get(step, "as");
    const Node *times = yamldoc_get(step, "times");
    const Node *block = is_scalar(use) && o->blocks && o->blocks->kind == NODE_MAPPING
                            ? yamldoc_get(o->blocks, use->text)
                            : NULL;
    const Node *name = is_scalar(as) ? as : use;
    if (!block || block->kind != NODE_MAPPING || !is_scalar(name) || depth >= OUTLINE_MAX_DEPTH)
        return;
    StrBuf inner;
    strbuf_init(&inner);
    strbuf_printf(&inner, "%s%s%s.", prefix, name->text, times ? "{i}" : "");
    o->no_memory |= inner.failed;
    if (!inner.failed)
        steps(o, yamldoc_get(block, "steps"), strbuf_str(&inner), depth + 1);
    // The names results: gives the lesson's later steps (a block's own are its steps' business).
    const Node *results = depth == 0 ? yamldoc_get(step, "results") : NULL;
    for (size_t k = 0; results && results->kind == NODE_MAPPING && k < results->n_pairs; k++) {
        const NodePair *p = &results->pairs[k];
        if (!is_scalar(p->value) || inner.failed)
            continue;
        StrBuf what;
        strbuf_init(&what);
        if (is_scalar(times))  // the last application's: layer{n_layer}.out
            strbuf_printf(&what, "= %s%s{%s}.%s", prefix, name->text, times->text, p->value->text);
        else
            strbuf_printf(&what, "= %s%s.%s", prefix, name->text, p->value->text);
        o->no_memory |= what.failed;
        if (!what.failed)
            line(o, prefix, p->key->text, p->key->text_len, strbuf_str(&what), strlen(strbuf_str(&what)));
        strbuf_finish(&what);
    }
    strbuf_finish(&inner);
}

// Each step of a list: `- NAME: EXPR` (with its other keys beside it), or an application.
static void steps(Outline *o, const Node *list, const char *prefix, size_t depth) {
    for (size_t i = 0; list && list->kind == NODE_SEQUENCE && i < list->n_items; i++) {
        const Node *step = list->items[i];
        if (!step || step->kind != NODE_MAPPING || step->n_pairs == 0)
            continue;
        if (yamldoc_get(step, "use")) {
            application(o, step, prefix, depth);
            continue;
        }
        const NodePair *first = &step->pairs[0];
        if (is_scalar(first->value))
            line(o, prefix, first->key->text, first->key->text_len, first->value->text, first->value->text_len);
    }
}

// Each given: its name (with {i} when times: makes copies), and where its values come from.
static void givens(Outline *o, const Node *map) {
    for (size_t i = 0; map && map->kind == NODE_MAPPING && i < map->n_pairs; i++) {
        const NodePair *p = &map->pairs[i];
        const Node *file = p->value && p->value->kind == NODE_MAPPING ? yamldoc_get(p->value, "file") : NULL;
        const Node *times = p->value && p->value->kind == NODE_MAPPING ? yamldoc_get(p->value, "times") : NULL;
        StrBuf what;
        strbuf_init(&what);
        strbuf_puts(&what, "given");
        if (is_scalar(file))
            strbuf_printf(&what, ", from %s", file->text);
        if (is_scalar(times))
            strbuf_printf(&what, ", {i} from 1 to %s", times->text);
        o->no_memory |= what.failed;
        if (!what.failed)
            line(o, "", p->key->text, p->key->text_len, strbuf_str(&what), strlen(strbuf_str(&what)));
        strbuf_finish(&what);
    }
}

bool lesson_outline(const YamlDoc *doc, StrBuf *out) {
    const Node *root = doc->root;
    if (!root || root->kind != NODE_MAPPING)
        return true;  // nothing to list (the loader refuses such a lesson before its files)
    Outline o = {.blocks = yamldoc_get(root, "blocks"), .out = out};
    for (int pass = 0; pass < 2; pass++) {
        o.pass = pass == 1;
        givens(&o, yamldoc_get(root, "given"));
        steps(&o, yamldoc_get(root, "steps"), "", 0);
    }
    return !o.no_memory && !out->failed;
}
