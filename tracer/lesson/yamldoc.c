// yamldoc: libyaml's event stream built into a tree of located nodes, refusing what a lesson
// never needs (anchors, aliases, tags, duplicate keys, a second document, deep nesting).
#include "yamldoc.h"

#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <yaml.h>

#include "format.h"
#include "safetext.h"

// ---------------------------------------------------------------- builder

// An open sequence or mapping: its children sit on the builder's stack from `first` up.
typedef struct Frame {
    Node *node;
    size_t first;
    size_t serial;  // tells mappings apart in the key set
} Frame;

// Every key of every mapping, so that a duplicate is found in constant time even in a hostile
// file with a million keys in one mapping.
typedef struct KeySlot {
    size_t serial;  // 0: empty
    const Node *key;
} KeySlot;

typedef struct Builder {
    YamlDoc *doc;
    Diag *diag;
    Frame frames[YAMLDOC_MAX_DEPTH];
    size_t depth;
    Node **stack;  // children of the open collections, innermost last
    size_t n_stack, cap_stack;
    KeySlot *keys;
    size_t n_keys, cap_keys;
    size_t next_serial;
    size_t n_documents;
} Builder;

static bool fail_at(Builder *b, size_t line, size_t col, size_t width, const char *hint,
                    const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static bool fail_at(Builder *b, size_t line, size_t col, size_t width, const char *hint,
                    const char *fmt, ...) {
    char message[sizeof(b->diag->message)];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof(message), fmt, ap);
    va_end(ap);
    if (diag_error(b->diag, STATUS_LESSON_ERROR, &b->doc->source, line, col, width, "%s",
                   message) == STATUS_LESSON_ERROR &&
        hint)
        diag_hint(b->diag, "%s", hint);
    return false;
}

// The caret covers a mark range that stays on one line.
static size_t mark_width(const yaml_mark_t *start, const yaml_mark_t *end) {
    return end->line == start->line && end->column > start->column ? end->column - start->column
                                                                   : 1;
}

static uint64_t hash_key(size_t serial, const Node *key) {
    uint64_t h = 14695981039346656037u ^ serial;  // FNV-1a
    for (size_t i = 0; i < key->text_len; i++)
        h = (h ^ (unsigned char)key->text[i]) * 1099511628211u;
    return h;
}

static bool same_key(const Node *a, const Node *b) {
    return a->text_len == b->text_len && memcmp(a->text, b->text, a->text_len) == 0;
}

// Grow the open-addressed key table to keep it at most half full. The old table stays in the
// arena: the waste is at most the size of the final table.
static bool keys_grow(Builder *b) {
    size_t cap = b->cap_keys ? 2 * b->cap_keys : 64;
    KeySlot *slots = arena_array(b->doc->arena, cap, sizeof(KeySlot));
    if (!slots)
        return false;
    for (size_t i = 0; i < b->cap_keys; i++) {
        if (!b->keys[i].serial)
            continue;
        size_t at = hash_key(b->keys[i].serial, b->keys[i].key) & (cap - 1);
        while (slots[at].serial)
            at = (at + 1) & (cap - 1);
        slots[at] = b->keys[i];
    }
    b->keys = slots;
    b->cap_keys = cap;
    return true;
}

// Record key in the mapping `serial`; *first is set to an earlier equal key, if any.
static bool keys_insert(Builder *b, size_t serial, const Node *key, const Node **first) {
    *first = NULL;
    if (2 * (b->n_keys + 1) > b->cap_keys && !keys_grow(b))
        return false;
    size_t at = hash_key(serial, key) & (b->cap_keys - 1);
    for (; b->keys[at].serial; at = (at + 1) & (b->cap_keys - 1)) {
        if (b->keys[at].serial == serial && same_key(b->keys[at].key, key)) {
            *first = b->keys[at].key;
            return true;
        }
    }
    b->keys[at] = (KeySlot){.serial = serial, .key = key};
    b->n_keys++;
    return true;
}

static bool stack_push(Builder *b, Node *node) {
    if (b->n_stack == b->cap_stack) {
        size_t cap = b->cap_stack ? 2 * b->cap_stack : 64;
        Node **stack = arena_array(b->doc->arena, cap, sizeof(Node *));
        if (!stack)
            return false;
        if (b->n_stack)
            memcpy(stack, b->stack, b->n_stack * sizeof(Node *));
        b->stack = stack;
        b->cap_stack = cap;
    }
    b->stack[b->n_stack++] = node;
    return true;
}

static Node *node_new(Builder *b, NodeKind kind, const yaml_event_t *e) {
    Node *node = arena_alloc(b->doc->arena, sizeof(Node));
    if (!node)
        return NULL;
    node->kind = kind;
    node->line = e->start_mark.line + 1;
    node->col = e->start_mark.column + 1;
    node->end_line = e->end_mark.line + 1;
    node->end_col = e->end_mark.column + 1;
    return node;
}

// Hang a new node under the innermost open collection (or make it the root).
static bool attach(Builder *b, Node *node) {
    if (b->depth == 0) {
        b->doc->root = node;
        return true;
    }
    const Frame *parent = &b->frames[b->depth - 1];
    bool is_key = parent->node->kind == NODE_MAPPING && (b->n_stack - parent->first) % 2 == 0;
    if (is_key && node->kind != NODE_SCALAR)
        return fail_at(b, node->line, node->col, 1,
                       "write the key as a plain name, like `tokens:`",
                       "a mapping key must be a name, not %s", yamldoc_kind_name(node->kind));
    if (is_key) {
        const Node *first;
        if (!keys_insert(b, parent->serial, node, &first))
            return diag_no_memory(b->diag);
        if (first)
            return fail_at(b, node->line, node->col, yamldoc_node_width(node),
                           "a mapping keeps one value per key: rename or remove one of them",
                           "the key '%s' appears twice in this mapping; it was first written "
                           "on line %zu",
                           node->text, first->line);
    }
    if (!stack_push(b, node))
        return diag_no_memory(b->diag);
    return true;
}

static const char *char_at_mark(const Source *src, const yaml_mark_t *mark, size_t *len);

// Columns covered by the tag that starts at mark, as written (!!float, not its long form).
static size_t tag_width(Builder *b, const yaml_mark_t *mark) {
    size_t len;
    const char *p = char_at_mark(&b->doc->source, mark, &len);
    const char *end = b->doc->source.text + b->doc->source.len;
    size_t n = 0;
    while (p + n < end && !strchr(" \t\r\n,[]{}", p[n]))
        n++;
    return n ? n : 1;
}

// Anchors, aliases and tags are refused wherever they stand.
static bool check_plain_node(Builder *b, const yaml_event_t *e, const yaml_char_t *anchor,
                             const yaml_char_t *tag) {
    size_t line = e->start_mark.line + 1, col = e->start_mark.column + 1;
    if (anchor)
        return fail_at(b, line, col, 1 + strlen((const char *)anchor),
                       "write the value out again where it is needed; anchors and aliases "
                       "(*name) can build endless or enormous documents",
                       "anchors (&%s) are not allowed in a lesson", (const char *)anchor);
    if (tag)
        return fail_at(b, line, col, tag_width(b, &e->start_mark),
                       "write the value plainly; put text in quotes if it must not be read as "
                       "a number",
                       "YAML tags (like !!str or !name) are not allowed in a lesson");
    return true;
}

static bool open_collection(Builder *b, const yaml_event_t *e, NodeKind kind) {
    if (b->depth == YAMLDOC_MAX_DEPTH)
        return fail_at(b, e->start_mark.line + 1, e->start_mark.column + 1, 1,
                       "the deepest part of a lesson, a rank-4 list of numbers inside given:, "
                       "is 7 levels deep",
                       "nesting deeper than %d levels; a lesson never needs this",
                       YAMLDOC_MAX_DEPTH);
    Node *node = node_new(b, kind, e);
    if (!node)
        return diag_no_memory(b->diag);
    if (!attach(b, node))
        return false;
    b->frames[b->depth++] = (Frame){.node = node, .first = b->n_stack, .serial = ++b->next_serial};
    return true;
}

static bool close_collection(Builder *b, const yaml_event_t *e) {
    ASSERT(b->depth > 0);
    Frame *frame = &b->frames[--b->depth];
    Node *node = frame->node;
    size_t n = b->n_stack - frame->first;
    Node **children = n ? b->stack + frame->first : NULL;  // no stack yet under an empty root
    node->end_line = e->end_mark.line + 1;
    node->end_col = e->end_mark.column + 1;
    if (node->kind == NODE_SEQUENCE && n > 0) {
        node->items = arena_array(b->doc->arena, n, sizeof(Node *));
        if (!node->items)
            return diag_no_memory(b->diag);
        memcpy(node->items, children, n * sizeof(Node *));
        node->n_items = n;
    } else if (node->kind == NODE_MAPPING && n > 0) {
        ASSERT(n % 2 == 0);
        node->pairs = arena_array(b->doc->arena, n / 2, sizeof(NodePair));
        if (!node->pairs)
            return diag_no_memory(b->diag);
        for (size_t i = 0; i < n / 2; i++)
            node->pairs[i] = (NodePair){.key = children[2 * i], .value = children[2 * i + 1]};
        node->n_pairs = n / 2;
    }
    b->n_stack = frame->first;
    return true;
}

static bool take_scalar(Builder *b, const yaml_event_t *e) {
    const char *value = (const char *)e->data.scalar.value;
    size_t len = e->data.scalar.length;
    if (memchr(value, '\0', len))
        return fail_at(b, e->start_mark.line + 1, e->start_mark.column + 1, 1,
                       "remove the \\0 (or \\x00, \\u0000) escape",
                       "a NUL character is not allowed in a lesson's text");
    // libyaml refuses raw control characters, but a double-quoted escape (\e, \x1b, \u009b)
    // makes them. The trace prints text as written, so one would act on the learner's terminal
    // (colours, the window title, worse); an override or an isolate (U+202E, U+2066), raw or
    // escaped, would show the text around it in another order than it is written. The same
    // filter (safetext.h) escapes what other files hold.
    for (size_t i = 0; i < len;) {
        uint32_t code;
        SafetextKind kind;
        i += safetext_find(value + i, len - i, &code, &kind);
        if (i == len)
            break;
        // a line may end in \r\n, as a Windows file's do; a return anywhere else moves the
        // terminal back over text already written
        if (code == '\r' && i + 1 < len && value[i + 1] == '\n') {
            i += 2;
            continue;
        }
        size_t width = mark_width(&e->start_mark, &e->end_mark);
        if (code == '\r')
            return fail_at(b, e->start_mark.line + 1, e->start_mark.column + 1, width,
                           "remove the \\r: a new line is \\n, or a line of its own in a block (|)",
                           "this text holds a carriage return (\\r) that ends no line: the terminal would "
                           "write what follows over the line");
        if (kind == SAFETEXT_BIDI)
            return fail_at(b, e->start_mark.line + 1, e->start_mark.column + 1, width,
                           "remove it: the trace prints text as written, and the terminal would show the text "
                           "around it in another order than it runs",
                           "this text holds the invisible character U+%04X, which changes the direction text "
                           "is shown in (an override or an isolate)",
                           (unsigned)code);
        if (kind == SAFETEXT_INVALID)  // libyaml checks the UTF-8 it reads and makes
            return fail_at(b, e->start_mark.line + 1, e->start_mark.column + 1, width,
                           "save the lesson as UTF-8 (it may have been saved as Latin-1 or Windows-1252)",
                           "the text here is not valid UTF-8");
        return fail_at(b, e->start_mark.line + 1, e->start_mark.column + 1, width,
                       "remove the escape: the trace prints text as written, and a control "
                       "character would act on the learner's terminal",
                       "this text holds the invisible control character U+%04X (an escape "
                       "such as \\e, \\x1b or \\u001b)",
                       (unsigned)code);
    }
    Node *node = node_new(b, NODE_SCALAR, e);
    if (!node)
        return diag_no_memory(b->diag);
    node->text = arena_strndup(b->doc->arena, value, len);
    if (!node->text)
        return diag_no_memory(b->diag);
    node->text_len = len;
    switch (e->data.scalar.style) {
    case YAML_SINGLE_QUOTED_SCALAR_STYLE: node->style = SCALAR_SINGLE_QUOTED; break;
    case YAML_DOUBLE_QUOTED_SCALAR_STYLE: node->style = SCALAR_DOUBLE_QUOTED; break;
    case YAML_LITERAL_SCALAR_STYLE: node->style = SCALAR_LITERAL; break;
    case YAML_FOLDED_SCALAR_STYLE: node->style = SCALAR_FOLDED; break;
    default: node->style = SCALAR_PLAIN; break;
    }
    return attach(b, node);
}

// One event of the stream; false with diag filled to stop.
static bool take_event(Builder *b, const yaml_event_t *e) {
    switch (e->type) {
    case YAML_DOCUMENT_START_EVENT:
        if (++b->n_documents > 1)
            return fail_at(b, e->start_mark.line + 1, e->start_mark.column + 1,
                           mark_width(&e->start_mark, &e->end_mark),
                           "remove the '---' line, or put this part in a lesson file of its own",
                           "a lesson is one YAML document, but a second one starts here");
        return true;
    case YAML_ALIAS_EVENT:
        return fail_at(b, e->start_mark.line + 1, e->start_mark.column + 1,
                       mark_width(&e->start_mark, &e->end_mark),
                       "write the value out again where it is needed; aliases can build "
                       "endless or enormous documents",
                       "aliases (*%s) are not allowed in a lesson",
                       (const char *)e->data.alias.anchor);
    case YAML_SCALAR_EVENT:
        return check_plain_node(b, e, e->data.scalar.anchor, e->data.scalar.tag) &&
               take_scalar(b, e);
    case YAML_SEQUENCE_START_EVENT:
        return check_plain_node(b, e, e->data.sequence_start.anchor,
                                e->data.sequence_start.tag) &&
               open_collection(b, e, NODE_SEQUENCE);
    case YAML_MAPPING_START_EVENT:
        return check_plain_node(b, e, e->data.mapping_start.anchor,
                                e->data.mapping_start.tag) &&
               open_collection(b, e, NODE_MAPPING);
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        return close_collection(b, e);
    default:  // stream start and end, document end
        return true;
    }
}

// ---------------------------------------------------------------- libyaml's errors

static size_t bom_length(const char *text, size_t len) {
    return len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
}

static bool is_utf8_continuation(char c) {
    return ((unsigned char)c & 0xC0) == 0x80;
}

// Reader errors carry a byte offset only: count lines and characters up to it.
static void place_of_offset(const Source *src, size_t offset, size_t *line, size_t *col) {
    size_t start = bom_length(src->text, src->len);
    *line = 1;
    *col = 1;
    if (offset > src->len)
        offset = src->len;
    for (size_t i = start; i < offset; i++) {
        if (src->text[i] == '\n') {
            (*line)++;
            *col = 1;
        } else if (!is_utf8_continuation(src->text[i])) {
            (*col)++;
        }
    }
}

// The bytes of the character at a mark (libyaml's index counts characters after the BOM).
static const char *char_at_mark(const Source *src, const yaml_mark_t *mark, size_t *len) {
    size_t i = bom_length(src->text, src->len), chars = 0;
    while (i < src->len && chars < mark->index) {
        i++;
        while (i < src->len && is_utf8_continuation(src->text[i]))
            i++;
        chars++;
    }
    size_t end = i < src->len ? i + 1 : i;
    while (end < src->len && is_utf8_continuation(src->text[end]))
        end++;
    *len = end - i;
    return src->text + i;
}

static bool starts_with(const char *s, const char *prefix) {
    return s && strncmp(s, prefix, strlen(prefix)) == 0;
}

#define TAB_HINT "YAML indentation must use spaces, not tabs"

static void report_reader_error(Builder *b, const yaml_parser_t *parser) {
    size_t line, col, offset = parser->problem_offset;
    const Source *src = &b->doc->source;
    // libyaml gives the offset of a bad trailing byte; the caret belongs on the character it
    // was meant to continue, so step back to that character's first byte.
    if (starts_with(parser->problem, "invalid trailing") && offset <= src->len) {
        while (offset > 0 && is_utf8_continuation(src->text[offset - 1]))
            offset--;
        if (offset > 0)
            offset--;
    }
    place_of_offset(src, offset, &line, &col);
    bool control = starts_with(parser->problem, "control characters");
    // A NUL byte near the start is what tools such as git and grep take as the mark of a binary
    // file: an image, an archive, a program. Saying so beats talking about text encodings or
    // invisible characters. (A stray NUL that is itself the problem gets its own message.)
    if (!(control && parser->problem_value == 0) &&
        memchr(src->text, '\0', src->len < 8000 ? src->len : 8000)) {
        fail_at(b, line, col, 1,
                "a lesson is a YAML text file; check the file name (is it an image, an archive "
                "or a program?)",
                "this file is not text: it looks like a binary file");
        return;
    }
    if (control) {
        if (parser->problem_value == 0)
            fail_at(b, line, col, 1,
                    "the file may be binary or saved as UTF-16; save the lesson as UTF-8 text",
                    "a NUL byte is not allowed in a lesson");
        else
            fail_at(b, line, col, 1, "delete it: most editors do not even show it",
                    "the invisible character U+%04X is not allowed in a lesson",
                    (unsigned)parser->problem_value);
        return;
    }
    fail_at(b, line, col, 1,
            "save the lesson as UTF-8 (it may have been saved as Latin-1 or Windows-1252)",
            "the text here is not valid UTF-8");
}

// libyaml's scanner and parser problems, in the words of someone writing a lesson.
typedef struct Problem {
    const char *problem;  // how libyaml's problem text starts
    const char *context;  // how its context starts, or NULL for any
    bool at_context;      // point where the broken part starts, not where libyaml gave up
    const char *message;
    const char *hint;
    const char *opens;    // when set, the hint says where this (a list, a mapping) opens
} Problem;

static const char *const INDENT_HINT = "check the indentation: the keys of one mapping and the "
                                       "items of one list start in the same column, with spaces";

static const Problem PROBLEMS[] = {
    {"found a tab character", NULL, false, "found a tab character where YAML expects spaces",
     TAB_HINT, NULL},
    {"found unexpected end of stream", "while scanning a quoted scalar", true,
     "this quoted text is never closed", "end it with the same quote it starts with", NULL},
    {"could not find expected ':'", NULL, true,
     "this line is not `key: value`, and not part of the value above it",
     "add the ':' after the key, or indent the line to continue the value above", NULL},
    {"mapping values are not allowed", NULL, false,
     "unexpected ':' here: YAML reads ': ' as the start of a `key: value`",
     "if the ':' is part of the text, put the whole text in quotes: \"...\"", NULL},
    {"block sequence entries are not allowed", NULL, false,
     "a list item ('- ') cannot start here",
     "put the list on the next lines, indented under its key, or write it inline as [a, b]",
     NULL},
    {"did not find expected key", NULL, false,
     "expected a `key: value` line here, lined up with the keys above it", INDENT_HINT, NULL},
    {"did not find expected '-' indicator", NULL, false,
     "expected a list item ('- ...') here, lined up with the items above it", INDENT_HINT,
     NULL},
    {"did not find expected node content", NULL, false, "expected a value here", INDENT_HINT,
     NULL},
    {"did not find expected ',' or ']'", NULL, false,
     "this list is missing a ',' or its closing ']'", NULL, "list"},
    {"did not find expected ',' or '}'", NULL, false,
     "this mapping is missing a ',' or its closing '}'", NULL, "mapping"},
    {"found unknown escape character", NULL, false,
     "unknown escape sequence in double-quoted text",
     "write \\\\ for a backslash, or use single quotes, where \\ is plain text", NULL},
    {"did not find expected comment or line break", "while scanning a block scalar", false,
     "a block of text starts on the line after its '|' or '>'",
     "move the text to the next line, indented under the key", NULL},
    {"found undefined tag handle", NULL, false,
     "YAML tags (like !!str or !name) are not allowed in a lesson", "write the value plainly",
     NULL},
};

// YAML reads a key written plainly (a "simple key") only when it is at most this many
// characters long; past it, the ':' after it is a syntax error that reads as something else.
#define YAML_MAX_KEY 1024

// Whether line `line` (0-based) of src holds a key, up to ': ' or a ':' that ends the line,
// longer than YAML_MAX_KEY characters; its column (1-based) and length in characters.
static bool long_key_on(const Source *src, size_t line, size_t *col, size_t *chars) {
    size_t i = bom_length(src->text, src->len);
    for (size_t l = 0; l < line && i < src->len; i++)
        if (src->text[i] == '\n')
            l++;
    size_t start = i;
    while (i < src->len && (src->text[i] == ' ' || (src->text[i] == '-' && i + 1 < src->len && src->text[i + 1] == ' ')))
        i++;
    *col = i - start + 1;  // spaces and dashes are one byte each
    *chars = 0;
    for (; i < src->len && src->text[i] != '\n'; i++) {
        if (src->text[i] == ':' && (i + 1 == src->len || strchr(" \r\n", src->text[i + 1])))
            return *chars > YAML_MAX_KEY;
        *chars += !is_utf8_continuation(src->text[i]);
    }
    return false;
}

static void report_syntax_error(Builder *b, const yaml_parser_t *parser) {
    const yaml_mark_t *at = &parser->problem_mark;
    const char *problem = parser->problem ? parser->problem : "unknown problem";
    size_t cl = parser->context_mark.line + 1, cc = parser->context_mark.column + 1;
    char hint[256];

    // A key too long for YAML makes its ':' "not allowed" or "not found": say what it is.
    size_t key_col, key_chars;
    if (starts_with(problem, "mapping values are not allowed") || starts_with(problem, "could not find expected ':'")) {
        const yaml_mark_t *marks[] = {&parser->problem_mark, &parser->context_mark};
        for (size_t m = 0; m < ARRAY_LEN(marks); m++)
            if (long_key_on(&b->doc->source, marks[m]->line, &key_col, &key_chars)) {
                char most[32], count[32];
                format_count((double)YAML_MAX_KEY, most, sizeof(most));
                format_count((double)key_chars, count, sizeof(count));
                fail_at(b, marks[m]->line + 1, key_col, 1,
                        "a key is a name of a word or two; what is longer goes in a value, after the ':'",
                        "this key is %s characters long; YAML reads a key of at most %s", count, most);
                return;
            }
    }

    if (starts_with(problem, "found character that cannot start any token")) {
        size_t len;
        const char *c = char_at_mark(&b->doc->source, at, &len);
        if (len == 1 && *c == '\t')
            fail_at(b, at->line + 1, at->column + 1, 1, TAB_HINT,
                    "found a tab character where YAML expects spaces");
        else
            fail_at(b, at->line + 1, at->column + 1, 1,
                    "put the whole text in quotes: \"like this\"",
                    "a YAML value cannot start with '%.*s'", (int)len, c);
        return;
    }
    for (size_t i = 0; i < ARRAY_LEN(PROBLEMS); i++) {
        const Problem *p = &PROBLEMS[i];
        if (!starts_with(problem, p->problem) || (p->context && !starts_with(parser->context,
                                                                             p->context)))
            continue;
        if (p->at_context)
            at = &parser->context_mark;
        if (p->opens)
            snprintf(hint, sizeof(hint), "the %s opens at line %zu, column %zu", p->opens, cl, cc);
        fail_at(b, at->line + 1, at->column + 1, 1, p->opens ? hint : p->hint, "%s", p->message);
        return;
    }
    if (parser->context)
        snprintf(hint, sizeof(hint),
                 "YAML says: %s, %s (line %zu, column %zu); check the indentation and the quotes",
                 problem, parser->context, cl, cc);
    else
        snprintf(hint, sizeof(hint), "YAML says: %s; check the indentation and the quotes",
                 problem);
    fail_at(b, at->line + 1, at->column + 1, 1, hint, "YAML cannot read the lesson here");
}

static void report_libyaml_error(Builder *b, const yaml_parser_t *parser) {
    switch (parser->error) {
    case YAML_MEMORY_ERROR: diag_out_of_memory(b->diag); break;
    case YAML_READER_ERROR: report_reader_error(b, parser); break;
    default: report_syntax_error(b, parser); break;
    }
}

// ---------------------------------------------------------------- public

YamlDoc *yamldoc_create(const char *path, const char *bytes, size_t len, Diag *diag) {
    YamlDoc *result = NULL, *doc = NULL;
    Arena *arena = NULL;
    char *text = NULL, *path_copy = NULL;
    yaml_parser_t parser;
    bool parser_ready = false;
    Source raw = {.path = path, .text = bytes, .len = len};
    Builder b = {.diag = diag};

    if (len > YAMLDOC_MAX_BYTES) {
        diag_error(diag, STATUS_USAGE_ERROR, NULL, 0, 0, 0,
                   "cannot read lesson '%s': it is larger than %zu MiB", path ? path : "",
                   YAMLDOC_MAX_BYTES >> 20);
        diag_hint(diag, "a lesson is a page or two; split it into several lessons");
        goto done;
    }
    // libyaml would decode UTF-16, but then its marks would not match the bytes we quote.
    if (len >= 2 && (memcmp(bytes, "\xFF\xFE", 2) == 0 || memcmp(bytes, "\xFE\xFF", 2) == 0)) {
        diag_error(diag, STATUS_LESSON_ERROR, &raw, 0, 0, 0,
                   "this lesson is saved as UTF-16; the tracer reads UTF-8");
        diag_hint(diag, "save the lesson as UTF-8 text");
        goto done;
    }
    arena = arena_create();
    doc = arena ? arena_alloc(arena, sizeof(YamlDoc)) : NULL;
    text = doc ? arena_strndup(arena, len ? bytes : "", len) : NULL;
    path_copy = text && path ? arena_strdup(arena, path) : NULL;
    if (!text || (path && !path_copy)) {
        diag_out_of_memory(diag);
        goto done;
    }
    doc->arena = arena;
    doc->source = (Source){.path = path_copy, .text = text, .len = len};
    if (!yaml_parser_initialize(&parser)) {
        diag_out_of_memory(diag);
        goto done;
    }
    parser_ready = true;
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);

    b.doc = doc;
    for (;;) {
        yaml_event_t event;
        bool ok = yaml_parser_parse(&parser, &event);
        if (!ok)
            report_libyaml_error(&b, &parser);
        else
            ok = take_event(&b, &event);
        bool end = ok && event.type == YAML_STREAM_END_EVENT;
        yaml_event_delete(&event);  // zeroed by libyaml when parsing failed: safe to delete
        if (!ok)
            goto done;
        if (end)
            break;
    }
    // A document that is only '---' holds one empty plain scalar: it is as empty as no document.
    if (doc->root && doc->root->kind == NODE_SCALAR && doc->root->style == SCALAR_PLAIN &&
        doc->root->text_len == 0)
        doc->root = NULL;
    result = doc;

done:
    if (parser_ready)
        yaml_parser_delete(&parser);
    if (!result)
        arena_destroy(arena);
    return result;
}

void yamldoc_destroy(YamlDoc *doc) {
    if (doc)
        arena_destroy(doc->arena);  // the doc itself lives in its arena
}

const Node *yamldoc_get(const Node *mapping, const char *key) {
    if (!mapping || mapping->kind != NODE_MAPPING)
        return NULL;
    size_t len = strlen(key);
    for (size_t i = 0; i < mapping->n_pairs; i++) {
        const Node *k = mapping->pairs[i].key;
        if (k->text_len == len && memcmp(k->text, key, len) == 0)
            return mapping->pairs[i].value;
    }
    return NULL;
}

const char *yamldoc_kind_name(NodeKind kind) {
    static const char *const names[] = {
        [NODE_SCALAR] = "a number or word",
        [NODE_SEQUENCE] = "a list",
        [NODE_MAPPING] = "a mapping",
    };
    ASSERT((size_t)kind < ARRAY_LEN(names) && names[kind]);
    return names[kind];
}

size_t yamldoc_node_width(const Node *node) {
    if (!node || node->end_line != node->line || node->end_col <= node->col)
        return 1;
    return node->end_col - node->col;
}
