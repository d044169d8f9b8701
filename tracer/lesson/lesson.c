// lesson: the YAML tree given the meaning of spec.md, every error located at the node that
// causes it. This file reads the file and the lesson's top-level keys; lesson_given,
// lesson_step and lesson_values read what is under them, sharing the Loader (lesson_loader.h).
#include "lesson.h"

#include <errno.h>
#include <string.h>

#include "files.h"
#include "given_file.h"
#include "lesson_block.h"
#include "lesson_download.h"
#include "lesson_given.h"
#include "lesson_loader.h"
#include "lesson_train.h"
#include "lesson_step.h"
#include "lesson_values.h"

static const char *const TOP_KEYS[] = {"title", "source", "intro",  "outro",    "digits", "labels",
                                       "given", "blocks", "steps", "claims", "download", "train"};

// ---------------------------------------------------------------- documents

// A document prints a few decimals. A document: number with more than the lesson prints was
// most likely copied from a trace, and would be judged to its last digit.
static void warn_document_decimals(Loader *L, const char *name, const DocValues *dv) {
    if (!dv)
        return;
    int digits = L->lesson->digits >= 0 ? L->lesson->digits : LESSON_DEFAULT_DIGITS;
    size_t n = 0;
    shape_size(&dv->shape, &n);
    for (size_t k = 0; k < n; k++) {
        if (dv->decimals[k] <= digits)
            continue;
        const Node *at = dv->nodes[k];
        diag_warning(L->diag, L->src->path, at->line, at->col,
                     "the document value %s for '%s' has %d decimals, more than the %d this lesson prints: a "
                     "document could not have printed it; it is judged to its last decimal",
                     at->text, name, dv->decimals[k], digits);
        return;  // one warning per document: the rest are likely copied the same way
    }
}

static void warn_documents(Loader *L) {
    const Lesson *lesson = L->lesson;
    for (size_t i = 0; i < lesson->n_givens; i++)
        warn_document_decimals(L, lesson->givens[i].name, lesson->givens[i].document);
    for (size_t i = 0; i < lesson->n_steps; i++)
        warn_document_decimals(L, lesson->steps[i].name, lesson->steps[i].document);
}

// ---------------------------------------------------------------- the lesson

// The root, its keys and title: (and that steps: is there): all --list needs of a lesson.
static bool load_title(Loader *L) {
    Lesson *lesson = L->lesson;
    const Node *root = lesson->doc->root;
    if (!root)
        return lesson_fail_top(L, "start with `title: ...`, then `steps:` and a list of steps",
                               "the lesson is empty; a lesson needs at least title: and steps:");
    if (root->kind != NODE_MAPPING)
        return lesson_fail(L, root, "start the file with `title: ...` at the left margin, then `steps:`",
                           "a lesson must be a mapping with keys like title: and steps:, but this is %s",
                           yamldoc_kind_name(root->kind));
    for (size_t i = 0; i < root->n_pairs; i++) {
        const Node *key = root->pairs[i].key;
        if (lesson_find_name(key->text, TOP_KEYS, ARRAY_LEN(TOP_KEYS)) == ARRAY_LEN(TOP_KEYS))
            return lesson_fail(L, key,
                               lesson_suggest(L, key->text, TOP_KEYS, ARRAY_LEN(TOP_KEYS),
                                       "the top-level keys are title, source, intro, outro, digits, "
                                       "labels, given, blocks, steps, claims, download and train"),
                               "unknown key '%s' at the top of the lesson", key->text);
    }
    const Node *title = yamldoc_get(root, "title");
    const NodePair *steps = NULL;
    for (size_t i = 0; i < root->n_pairs; i++)
        if (strcmp(root->pairs[i].key->text, "steps") == 0)
            steps = &root->pairs[i];
    if (!title || !steps)
        return lesson_fail_top(L, "every lesson needs title: and steps:", "the lesson has no %s",
                               !title && !steps ? "title: and no steps:" : !title ? "title:" : "steps:");
    if (!lesson_parse_text(L, "title", title, &lesson->title))
        return false;
    if (lesson->title[0] == '\0')
        return lesson_fail(L, title, "write the lesson's title after 'title:'", "title: is empty");
    return true;
}

static bool load_lesson(Loader *L, bool title_only) {
    if (!load_title(L))
        return false;
    if (title_only)
        return true;
    Lesson *lesson = L->lesson;
    const Node *root = lesson->doc->root;
    const NodePair *steps = NULL;
    for (size_t i = 0; i < root->n_pairs; i++)
        if (strcmp(root->pairs[i].key->text, "steps") == 0)
            steps = &root->pairs[i];
    const char **optional[] = {&lesson->source, &lesson->intro, &lesson->outro};
    const Node **nodes[] = {NULL, &lesson->intro_node, &lesson->outro_node};
    for (size_t i = 0; i < ARRAY_LEN(optional); i++) {
        const Node *node = yamldoc_get(root, TOP_KEYS[1 + i]);
        if (node && !lesson_is_null(node) &&
            !(i == 0 ? lesson_parse_text : lesson_parse_narration)(L, TOP_KEYS[1 + i], node, optional[i]))
            return false;
        if (node && !lesson_is_null(node) && nodes[i])
            *nodes[i] = node;
    }
    const Node *digits = yamldoc_get(root, "digits");
    const Node *labels = yamldoc_get(root, "labels"), *given = yamldoc_get(root, "given");
    lesson->digits = -1;
    if (digits && !lesson_parse_digits(L, digits, &L->lesson->digits))
        return false;
    if (!lesson_check_download(L, yamldoc_get(root, "download")))
        return false;
    if (labels && !lesson_load_labels(L, labels))
        return false;
    if (given && !lesson_load_givens(L, given))
        return false;
    const Node *blocks = yamldoc_get(root, "blocks");
    if (blocks && (!lesson_load_blocks(L, blocks) || L->failed))
        return false;  // an application of a broken block would only repeat its error
    const Node *train = yamldoc_get(root, "train");
    return lesson_load_steps(L, steps) && lesson_load_claims(L, yamldoc_get(root, "claims")) && !L->failed &&
           (!train || lesson_load_train(L, train));
}

static void destroy_models(Lesson *lesson) {
    for (size_t i = 0; i < lesson->n_models; i++)
        lesson_destroy(lesson->models[i]);
    lesson->n_models = 0;
}

static Lesson *create(const char *path, const char *bytes, size_t len, bool title_only, bool as_model, Diag *diag) {
    Lesson *result = NULL, *lesson = NULL;
    Arena *arena = NULL;
    Diag *item = NULL;  // one given's or step's errors at a time
    YamlDoc *doc = yamldoc_create(path, bytes, len, diag);
    if (!doc)
        goto done;
    arena = arena_create();
    lesson = arena ? arena_alloc(arena, sizeof(Lesson)) : NULL;
    if (!lesson) {
        diag_out_of_memory(diag);
        goto done;
    }
    lesson->arena = arena;
    lesson->doc = doc;
    lesson->path = doc->source.path;
    lesson->digits = -1;
    item = util_malloc(sizeof(Diag));
    if (!item) {
        diag_out_of_memory(diag);
        goto done;
    }
    Loader loader = {.lesson = lesson, .diag = diag, .src = &doc->source, .item = item, .as_model = as_model};
    if (!load_lesson(&loader, title_only))
        goto done;
    warn_documents(&loader);
    result = lesson;

done:
    util_free(item);
    if (!result) {
        if (lesson) {
            given_files_destroy(lesson->files);
            given_tokenizers_destroy(lesson->tokenizers);
            destroy_models(lesson);
        }
        yamldoc_destroy(doc);
        arena_destroy(arena);
    }
    return result;
}

Lesson *lesson_create(const char *path, const char *bytes, size_t len, Diag *diag) {
    return create(path, bytes, len, false, false, diag);
}

static Lesson *load_file(const char *path, bool title_only, bool as_model, Diag *diag) {
    // One byte past the limit at most, so yamldoc can tell a file that is too large.
    char *bytes;
    size_t len;
    int err = files_read(path, FILES_STDIN_PIPE, YAMLDOC_MAX_BYTES, &bytes, &len);
    if (err == ENOMEM) {
        diag_out_of_memory(diag);
        return NULL;
    }
    if (err) {
        diag_error(diag, STATUS_USAGE_ERROR, NULL, 0, 0, 0, "cannot read lesson '%s': %s", path, files_error_text(err));
        if (files_not_regular(err))
            diag_hint(diag, "a lesson is a YAML file; a pipe is read as standard input: tracer /dev/stdin < lesson.yaml");
        return NULL;
    }
    Lesson *result = create(path, bytes, len, title_only, as_model, diag);
    util_free(bytes);
    return result;
}

Lesson *lesson_load_file(const char *path, Diag *diag) {
    return load_file(path, false, false, diag);
}

Lesson *lesson_load_model(const char *path, Diag *diag) {
    return load_file(path, false, true, diag);
}

Lesson *lesson_load_title(const char *path, Diag *diag) {
    return load_file(path, true, false, diag);
}

void lesson_destroy(Lesson *lesson) {
    if (!lesson)
        return;
    given_files_destroy(lesson->files);
    given_tokenizers_destroy(lesson->tokenizers);
    destroy_models(lesson);
    yamldoc_destroy(lesson->doc);
    arena_destroy(lesson->arena);  // the lesson itself lives in its arena
}
int lesson_replace_text(Lesson *lesson, const char *text, Diag *diag) {
    size_t len = strlen(text), replaced = 0;
    if (len == 0)
        return diag_error(diag, STATUS_USAGE_ERROR, NULL, 0, 0, 0, "--text is empty: it has no tokens");
    for (size_t i = 0; i < lesson->n_givens; i++) {
        LessonGiven *g = &lesson->givens[i];
        if (!g->text_node)
            continue;
        size_t bad;
        if (!given_text_encode(&g->text, text, len, lesson->arena, &bad, diag)) {
            if (bad == SIZE_MAX)
                return diag->status;
            diag_error(diag, STATUS_USAGE_ERROR, NULL, 0, 0, 0, "--text is not UTF-8 at byte %zu", bad);
            diag_hint(diag, "give the text as UTF-8, as a terminal types it");
            return STATUS_USAGE_ERROR;
        }
        if (!lesson_set_given_ids(lesson->arena, g, &g->text))
            return diag_out_of_memory(diag);
        replaced++;
    }
    if (replaced == 0) {
        diag_error(diag, STATUS_USAGE_ERROR, NULL, 0, 0, 0,
                   "--text: lesson '%s' has no text to replace", lesson->path);
        diag_hint(diag, "--text replaces the text: of a given like tokens: {text: \"The cat sat\", tokenizer: gpt2/}");
        return STATUS_USAGE_ERROR;
    }
    return STATUS_OK;
}


void lesson_expr_position(const LessonStep *step, size_t offset, size_t *line, size_t *col) {
    *line = step->expr_line;
    *col = step->expr_col;
    if (!step->expr_exact)
        return;
    // Columns count characters, as libyaml's marks and diag's caret do.
    for (size_t i = 0; i < offset && step->expr[i]; i++)
        if (((unsigned char)step->expr[i] & 0xC0) != 0x80)
            (*col)++;
}

// Characters (not bytes) in s[0, n): columns count characters.
static size_t characters(const char *s, size_t n) {
    size_t c = 0;
    for (size_t i = 0; i < n && s[i]; i++)
        c += ((unsigned char)s[i] & 0xC0) != 0x80;
    return c;
}

// The bytes of line `line` (1-based) of src, or NULL; read on from line *from at *from_p (a
// line before it, or 0 and NULL for the first), which become line and its start.
static const char *source_line(const Source *src, size_t line, size_t *len, size_t *from, const char **from_p) {
    const char *p = *from_p, *end = src->text + src->len;
    size_t l = *from;
    if (!p || l > line) {
        p = src->text;
        l = 1;
        if (src->len >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0)
            p += 3;
    }
    for (; l < line; l++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl)
            return NULL;
        p = nl + 1;
    }
    *from = line;
    *from_p = p;
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    *len = (size_t)((nl ? nl : end) - p);
    if (*len && p[*len - 1] == '\r')
        (*len)--;
    return p;
}

// Whether the cursor's line of the text (a block's line k, or the whole one-line scalar)
// stands in the file as it is; if so, where it starts (cur->line, cur->col).
static bool text_line_exact(const Lesson *lesson, const Node *node, TextCursor *cur) {
    const Source *src = &lesson->doc->source;
    const char *text = node->text;
    size_t len;
    if (node->style == SCALAR_LITERAL) {
        // Line k of the text is line node->line + 1 + k of the file, after the block's indent.
        size_t text_len = strcspn(text + cur->start, "\n");
        const char *at = source_line(src, node->line + 1 + cur->k, &len, &cur->src_line, &cur->src_at);
        if (!at || len < text_len)
            return false;
        size_t indent = len - text_len;  // a block's lines keep no trailing spaces of their own
        for (size_t i = 0; i < indent; i++)
            if (at[i] != ' ')
                return false;
        if (memcmp(at + indent, text + cur->start, text_len) != 0)
            return false;
        cur->line = node->line + 1 + cur->k;
        cur->col = characters(at, indent) + 1;
        return true;
    }
    // A plain or quoted scalar on one line whose text stands in the file as it is.
    size_t skip = node->style == SCALAR_SINGLE_QUOTED || node->style == SCALAR_DOUBLE_QUOTED ? 1 : 0;
    if (node->line != node->end_line || (node->style != SCALAR_PLAIN && !skip))
        return false;
    const char *at = source_line(src, node->line, &len, &cur->src_line, &cur->src_at);
    size_t byte = 0;
    for (size_t c = 1; at && c < node->col && byte < len; c++) {
        byte++;
        while (byte < len && ((unsigned char)at[byte] & 0xC0) == 0x80)
            byte++;
    }
    if (!at || byte + skip + node->text_len > len || memcmp(at + byte + skip, text, node->text_len) != 0)
        return false;
    cur->line = node->line;
    cur->col = node->col + skip;
    return true;
}

bool lesson_text_place(const Lesson *lesson, const Node *node, size_t offset, TextCursor *cur, size_t *line,
                       size_t *col) {
    *line = node->line;
    *col = node->col;
    if (offset > node->text_len)
        return false;
    if (cur->node != node || offset < cur->offset)
        *cur = (TextCursor){.node = node};
    // Read on to offset: a block's newline starts a line of its own, to be found in the file.
    const char *text = node->text;
    for (; cur->offset < offset && text[cur->offset]; cur->offset++) {
        if (node->style == SCALAR_LITERAL && text[cur->offset] == '\n') {
            cur->k++;
            cur->start = cur->offset + 1;
            cur->chars = 0;
            cur->exact = 0;
        } else {
            cur->chars += ((unsigned char)text[cur->offset] & 0xC0) != 0x80;
        }
    }
    cur->offset = offset;
    if (!cur->exact)
        cur->exact = text_line_exact(lesson, node, cur) ? 1 : -1;
    if (cur->exact < 0)
        return false;
    *line = cur->line;
    *col = cur->col + cur->chars;
    return true;
}

bool lesson_text_position(const Lesson *lesson, const Node *node, size_t offset, size_t *line, size_t *col) {
    TextCursor cur = {0};
    return lesson_text_place(lesson, node, offset, &cur, line, col);
}
