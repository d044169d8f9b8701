// yamldiff: two YAML trees compared key by key, each change named by its path.
#include "yamldiff.h"

#include <string.h>

#include "format.h"

typedef struct Walk {
    YamlDiff *d;
    bool failed;  // out of memory
} Walk;

static bool same_text(const Node *a, const Node *b) {
    return a->text_len == b->text_len && memcmp(a->text, b->text, a->text_len) == 0;
}

// The value of the key with b's text in mapping m, from pair `from` on; NULL when it has none.
static const Node *value_of(const Node *m, const Node *key, size_t from) {
    for (size_t i = from; i < m->n_pairs; i++)
        if (same_text(m->pairs[i].key, key))
            return m->pairs[i].value;
    return NULL;
}

// The same content: a mapping's keys in any order.
static bool same_node(const Node *a, const Node *b) {
    if (a->kind != b->kind)
        return false;
    if (a->kind == NODE_SCALAR)
        return same_text(a, b);
    if (a->kind == NODE_SEQUENCE) {
        if (a->n_items != b->n_items)
            return false;
        for (size_t i = 0; i < a->n_items; i++)
            if (!same_node(a->items[i], b->items[i]))
                return false;
        return true;
    }
    if (a->n_pairs != b->n_pairs)
        return false;
    for (size_t i = 0; i < b->n_pairs; i++) {
        const Node *v = value_of(a, b->pairs[i].key, 0);
        if (!v || !same_node(v, b->pairs[i].value))
            return false;
    }
    return true;
}

// ---------------------------------------------------------------- values as text

// n in YAML's flow style into sb; false past YAMLDIFF_SHOWN_MAX bytes or for a text of lines.
static bool flow(StrBuf *sb, const Node *n) {
    if (sb->len > YAMLDIFF_SHOWN_MAX)
        return false;
    if (n->kind == NODE_SCALAR) {
        if (memchr(n->text, '\n', n->text_len))
            return false;
        strbuf_append(sb, n->text, n->text_len);
        return sb->len <= YAMLDIFF_SHOWN_MAX;
    }
    bool list = n->kind == NODE_SEQUENCE;
    strbuf_putc(sb, list ? '[' : '{');
    size_t count = list ? n->n_items : n->n_pairs;
    for (size_t i = 0; i < count; i++) {
        if (i)
            strbuf_puts(sb, ", ");
        if (!list) {
            strbuf_append(sb, n->pairs[i].key->text, n->pairs[i].key->text_len);
            strbuf_puts(sb, ": ");
        }
        if (!flow(sb, list ? n->items[i] : n->pairs[i].value))
            return false;
    }
    strbuf_putc(sb, list ? ']' : '}');
    return sb->len <= YAMLDIFF_SHOWN_MAX;
}

// n as it is shown, in the diff's arena; NULL when it is absent or too long to show.
static const char *shown(Walk *w, const Node *n) {
    if (!n)
        return NULL;
    StrBuf sb;
    strbuf_init(&sb);
    bool fits = flow(&sb, n) && format_display_width(strbuf_str(&sb), sb.len) <= YAMLDIFF_SHOWN_MAX;
    w->failed = w->failed || sb.failed;
    const char *s = fits && !sb.failed ? arena_strdup(w->d->arena, strbuf_str(&sb)) : NULL;
    w->failed = w->failed || (fits && !sb.failed && !s);
    strbuf_finish(&sb);
    return s;
}

static void add(Walk *w, YamlChangeKind kind, const char *path, const Node *a, const Node *b) {
    YamlDiff *d = w->d;
    if (!path || w->failed) {
        w->failed = true;
        return;
    }
    if (d->n == d->cap) {
        size_t cap = d->cap ? 2 * d->cap : 16;
        YamlChange *grown = util_realloc(d->changes, cap * sizeof(YamlChange));
        if (!grown) {
            w->failed = true;
            return;
        }
        d->changes = grown;
        d->cap = cap;
    }
    d->changes[d->n++] = (YamlChange){.kind = kind, .path = path, .before = shown(w, a), .after = shown(w, b)};
}

// ---------------------------------------------------------------- paths

static const char *key_path(Walk *w, const char *path, const Node *key) {
    return arena_printf(w->d->arena, "%s%s%.*s", path, path[0] ? "." : "", (int)key->text_len, key->text);
}

static const char *index_path(Walk *w, const char *path, size_t i) {
    return arena_printf(w->d->arena, "%s[%zu]", path, i);
}

// ---------------------------------------------------------------- the walk

static void diff_node(Walk *w, const char *path, const Node *a, const Node *b);

// The pairs of two mappings from pair `from` on: b's in order, then those only a has.
static void diff_pairs(Walk *w, const char *path, const Node *a, const Node *b, size_t from) {
    for (size_t i = from; i < b->n_pairs && !w->failed; i++) {
        const Node *av = value_of(a, b->pairs[i].key, from);
        const char *p = key_path(w, path, b->pairs[i].key);
        if (av)
            diff_node(w, p, av, b->pairs[i].value);
        else
            add(w, YAML_ADDED, p, NULL, b->pairs[i].value);
    }
    for (size_t i = from; i < a->n_pairs && !w->failed; i++)
        if (!value_of(b, a->pairs[i].key, from))
            add(w, YAML_REMOVED, key_path(w, path, a->pairs[i].key), a->pairs[i].value, NULL);
}

// Every item a mapping named by its first key, no name twice: a list of steps or claims.
static bool named_items(const Node *list) {
    for (size_t i = 0; i < list->n_items; i++) {
        const Node *item = list->items[i];
        if (item->kind != NODE_MAPPING || item->n_pairs == 0)
            return false;
        for (size_t j = 0; j < i; j++)
            if (same_text(list->items[j]->pairs[0].key, item->pairs[0].key))
                return false;
    }
    return true;
}

// The item of a named list whose name is key's, or NULL.
static const Node *item_named(const Node *list, const Node *key) {
    for (size_t i = 0; i < list->n_items; i++)
        if (same_text(list->items[i]->pairs[0].key, key))
            return list->items[i];
    return NULL;
}

// Named lists: an item is path.name; its first key's value is the item's own (steps.A1 is the
// step's expression), its other keys under it (steps.A1.say).
static void diff_named(Walk *w, const char *path, const Node *a, const Node *b) {
    for (size_t i = 0; i < b->n_items && !w->failed; i++) {
        const Node *bi = b->items[i], *ai = item_named(a, bi->pairs[0].key);
        const char *p = key_path(w, path, bi->pairs[0].key);
        if (!ai) {
            add(w, YAML_ADDED, p, NULL, bi->pairs[0].value);
            continue;
        }
        diff_node(w, p, ai->pairs[0].value, bi->pairs[0].value);
        if (!w->failed && p)
            diff_pairs(w, p, ai, bi, 1);
    }
    for (size_t i = 0; i < a->n_items && !w->failed; i++)
        if (!item_named(b, a->items[i]->pairs[0].key))
            add(w, YAML_REMOVED, key_path(w, path, a->items[i]->pairs[0].key), a->items[i]->pairs[0].value, NULL);
}

// Lists by place: the same length item by item; otherwise whole when both are short, else the
// items both have, then those only one has.
static void diff_items(Walk *w, const char *path, const Node *a, const Node *b) {
    if (a->n_items != b->n_items) {
        const char *sa = shown(w, a), *sb = shown(w, b);
        if (sa && sb) {
            add(w, YAML_CHANGED, path, a, b);
            return;
        }
    }
    size_t both = a->n_items < b->n_items ? a->n_items : b->n_items;
    for (size_t i = 0; i < both && !w->failed; i++)
        diff_node(w, index_path(w, path, i), a->items[i], b->items[i]);
    for (size_t i = both; i < b->n_items && !w->failed; i++)
        add(w, YAML_ADDED, index_path(w, path, i), NULL, b->items[i]);
    for (size_t i = both; i < a->n_items && !w->failed; i++)
        add(w, YAML_REMOVED, index_path(w, path, i), a->items[i], NULL);
}

static void diff_node(Walk *w, const char *path, const Node *a, const Node *b) {
    if (!path) {
        w->failed = true;
        return;
    }
    if (w->failed || same_node(a, b))
        return;
    if (a->kind != b->kind || a->kind == NODE_SCALAR)
        add(w, YAML_CHANGED, path, a, b);
    else if (a->kind == NODE_MAPPING)
        diff_pairs(w, path, a, b, 0);
    else if (named_items(a) && named_items(b))
        diff_named(w, path, a, b);
    else
        diff_items(w, path, a, b);
}

YamlDiff *yamldiff_create(const Node *a, const Node *b) {
    YamlDiff *d = util_calloc(1, sizeof(YamlDiff));
    if (!d || !(d->arena = arena_create())) {
        util_free(d);
        return NULL;
    }
    Walk w = {.d = d};
    if (a && b)
        diff_node(&w, "", a, b);
    else if (a || b)
        add(&w, a ? YAML_REMOVED : YAML_ADDED, "(the whole lesson)", a, b);
    if (w.failed) {
        yamldiff_destroy(d);
        return NULL;
    }
    return d;
}

void yamldiff_destroy(YamlDiff *d) {
    if (!d)
        return;
    util_free(d->changes);
    arena_destroy(d->arena);
    util_free(d);
}
