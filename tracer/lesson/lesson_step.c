// lesson_step: the steps and the claims: each expression with its place in the file, and what
// a step asks besides (say:, rows:, cols:, document:, explain:, quiz:, show:, claim:).
#include "lesson_step.h"

#include <string.h>

#include "lesson_block.h"
#include "lesson_given.h"
#include "lesson_values.h"

static const char *const STEP_RESERVED[] = {"say",  "rows",  "cols", "document", "explain",
                                            "show", "claim", "quiz", "digits"};
static const char *const SHOW_NAMES[] = {"table", "numbers", "heatmap", "bars", "picture", "percent", "corners",
                                         "quiet", "result"};

// ---------------------------------------------------------------- steps

// Byte offset of the character at line:col, or SIZE_MAX when the file has no such place.
// False when memory runs out.
static bool offset_of(Loader *L, size_t line, size_t col, size_t *offset) {
    const Source *src = L->src;
    *offset = SIZE_MAX;
    if (!L->line_starts) {
        size_t start = src->len >= 3 && memcmp(src->text, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
        size_t n = 1;
        for (size_t i = start; i < src->len; i++)
            n += src->text[i] == '\n';
        L->line_starts = arena_array(L->lesson->arena, n, sizeof(size_t));
        if (!L->line_starts)
            return diag_no_memory(L->diag);
        L->line_starts[0] = start;
        for (size_t i = start, l = 1; i < src->len; i++)
            if (src->text[i] == '\n')
                L->line_starts[l++] = i + 1;
        L->n_lines = n;
    }
    if (line == 0 || line > L->n_lines)
        return true;
    size_t at = L->line_starts[line - 1];
    for (size_t c = 1; c < col && at < src->len && src->text[at] != '\n'; c++) {
        at++;
        while (at < src->len && ((unsigned char)src->text[at] & 0xC0) == 0x80)
            at++;
    }
    *offset = at;
    return true;
}

// The expression is exact when its text stands in the file byte for byte: a plain or quoted
// scalar on one line without escapes. Checking against the file, not guessing from the style,
// keeps odd cases (a lone CR line end, '' or \ escapes) safely inexact. False when memory
// runs out.
static bool locate_expr(Loader *L, LessonStep *step, const Node *node) {
    step->expr_line = node->line;
    step->expr_col = node->col;
    step->expr_exact = false;
    size_t skip = lesson_is_quoted(node) ? 1 : 0;
    char quote = node->style == SCALAR_SINGLE_QUOTED ? '\'' : '"';
    if (node->line != node->end_line || (node->style != SCALAR_PLAIN && !skip) ||
        (skip && strchr(node->text, quote)) ||
        (node->style == SCALAR_DOUBLE_QUOTED && strchr(node->text, '\\')))
        return true;
    size_t at;
    if (!offset_of(L, node->line, node->col, &at))
        return false;
    const Source *src = L->src;
    if (at == SIZE_MAX || at + skip + node->text_len + skip > src->len ||
        memcmp(src->text + at + skip, node->text, node->text_len) != 0 ||
        (skip && src->text[at + skip + node->text_len] != quote))
        return true;
    step->expr_col = node->col + skip;
    step->expr_exact = true;
    return true;
}

// explain: [0, 1] | row 0 | all, and quiz: [0, 1] | row 0 (key says which; only explain: takes all)
static bool parse_explain(Loader *L, const char *key, const Node *node, ExplainSpec *ex) {
    bool explain = strcmp(key, "explain") == 0;
    const char *hint = explain ? "explain: takes [i, j] (one element), row i (one row), or all"
                               : "quiz: takes [i, j] (one element), row i (one row), or all (a single number)";
    ex->node = node;
    if (node->kind == NODE_SEQUENCE) {
        if (node->n_items == 0 || node->n_items > TENSOR_MAX_RANK)
            return lesson_fail(L, node, hint, "%s: needs 1 to %d indices, but this list has %zu",
                               key, TENSOR_MAX_RANK, node->n_items);
        for (size_t i = 0; i < node->n_items; i++) {
            const Node *item = node->items[i];
            if (item->kind != NODE_SCALAR || lesson_is_quoted(item) ||
                !lesson_signed_whole(item->text, &ex->index[i])) {
                // lesson_signed_whole refuses past 10 digits: no tensor a lesson can hold has such an axis.
                if (item->kind == NODE_SCALAR && !lesson_is_quoted(item) && item->text_len > 9 &&
                    strspn(item->text + (item->text[0] == '-'), "0123456789") ==
                        item->text_len - (item->text[0] == '-'))
                    return lesson_fail(L, item, hint, "the index %s is far outside any tensor a lesson can hold",
                                       item->text);
                return lesson_fail(L, item, hint, "an index must be a whole number, but this is %s",
                                   lesson_describe(L, item));
            }
        }
        ex->kind = EXPLAIN_ELEMENT;
        ex->n_index = node->n_items;
        return true;
    }
    // quiz: all asks a single number whole; the checker refuses it on a tensor of several.
    if (node->kind == NODE_SCALAR && strcmp(node->text, "all") == 0) {
        ex->kind = EXPLAIN_ALL;
        return true;
    }
    if (node->kind == NODE_SCALAR && strncmp(node->text, "row ", 4) == 0) {
        const char *p = node->text + 4;
        while (*p == ' ')
            p++;
        if (lesson_signed_whole(p, &ex->index[0])) {
            ex->kind = EXPLAIN_ROW;
            ex->n_index = 1;
            return true;
        }
    }
    return lesson_fail(L, node, hint, "%s: cannot read %s", key, lesson_describe(L, node));
}

// show: heatmap | bars | table (numbers) | picture | percent | corners | result | quiet;
// whether it fits the step's shape is checked with the shapes.
bool lesson_parse_show(Loader *L, const Node *node, PictureKind *show, StageView *view) {
    size_t n = ARRAY_LEN(SHOW_NAMES);
    size_t i = node->kind == NODE_SCALAR ? lesson_find_name(node->text, SHOW_NAMES, n) : n;
    if (i == n)
        return lesson_fail(L, node,
                           lesson_suggest(L, node->kind == NODE_SCALAR ? node->text : "", SHOW_NAMES, n,
                                   "show: is heatmap, bars, table (or numbers), picture, percent, corners, "
                                   "result or quiet"),
                           "unknown show: %s", lesson_describe(L, node));
    static const PictureKind kinds[] = {PICTURE_TABLE,   PICTURE_TABLE,   PICTURE_HEATMAP, PICTURE_BARS,
                                        PICTURE_HEATMAP, PICTURE_DEFAULT, PICTURE_DEFAULT, PICTURE_DEFAULT,
                                        PICTURE_DEFAULT};
    static const StageView views[] = {VIEW_FULL,    VIEW_FULL,    VIEW_FULL,    VIEW_FULL, VIEW_PICTURE,
                                      VIEW_PERCENT, VIEW_CORNERS, VIEW_QUIET, VIEW_RESULT};
    _Static_assert(ARRAY_LEN(kinds) == ARRAY_LEN(SHOW_NAMES) && ARRAY_LEN(views) == ARRAY_LEN(SHOW_NAMES),
                   "a picture and a view for each word of show:");
    *show = kinds[i];
    *view = views[i];
    return true;
}

static bool load_step_expr(Loader *L, const NodePair *pair, LessonStep *step) {
    const Node *value = pair->value;
    step->name = pair->key->text;
    step->key = pair->key;
    step->expr_node = value;
    if (L->scope) {  // a block's step: layer1.q, and q reads as layer1.q in this application
        step->name = lesson_block_name(L, pair->key);
        if (!step->name)
            return false;
        step->scope = L->scope;
    } else if (!lesson_check_name(L, pair->key)) {
        return false;
    }
    if (value->kind != NODE_SCALAR)
        return lesson_fail(L, value, "an expression is text; to write a list literal, quote it: \"[1, 2]\"",
                           "the expression for '%s' must be text, like X @ W_Q, but this is %s",
                           step->name, yamldoc_kind_name(value->kind));
    if (value->text[strspn(value->text, " \t\r\n")] == '\0')
        return lesson_fail(L, value->text_len ? value : pair->key,
                           "write what it computes after the ':', like `Q: X @ W_Q`",
                           "the expression for '%s' is empty", step->name);
    step->expr = value->text;
    return locate_expr(L, step, value);
}

const char *lesson_step_name(const Node *item) {
    for (size_t i = 0; item->kind == NODE_MAPPING && i < item->n_pairs; i++)
        if (lesson_find_name(item->pairs[i].key->text, STEP_RESERVED, ARRAY_LEN(STEP_RESERVED)) ==
            ARRAY_LEN(STEP_RESERVED))
            return item->pairs[i].key->text;
    return NULL;
}

static bool load_step(Loader *L, const Node *item, LessonStep *step) {
    if (item->kind != NODE_MAPPING)
        return lesson_fail(L, item, "write a step as `- name: expression`, like `- Q: X @ W_Q`",
                           "a step must be `name: expression`, but this is %s",
                           yamldoc_kind_name(item->kind));
    const NodePair *name = NULL;
    for (size_t i = 0; i < item->n_pairs; i++) {
        const NodePair *pair = &item->pairs[i];
        if (lesson_find_name(pair->key->text, STEP_RESERVED, ARRAY_LEN(STEP_RESERVED)) <
            ARRAY_LEN(STEP_RESERVED))
            continue;
        // Two result names: most often one is a key misspelt (says: for say:).
        const char *meant = name ? diag_closest(pair->key->text, STEP_RESERVED, ARRAY_LEN(STEP_RESERVED)) : NULL;
        const NodePair *odd = meant ? pair : NULL, *result = name;
        if (name && !meant && (meant = diag_closest(name->key->text, STEP_RESERVED, ARRAY_LEN(STEP_RESERVED)))) {
            odd = name;
            result = pair;
        }
        if (odd)
            return lesson_fail(L, odd->key, arena_printf(L->lesson->arena, "did you mean '%s'?", meant),
                               "unknown key '%s' in step '%s'", odd->key->text, result->key->text);
        if (name)
            return lesson_fail(L, pair->key,
                               "a step computes one result; besides it, a step may have say:, rows:, "
                               "cols:, document:, explain:, show:, digits:, claim: and quiz:",
                               "this step names two results, '%s' and '%s'; split it into two steps",
                               name->key->text, pair->key->text);
        name = pair;
    }
    if (!name && item->n_pairs == 1)  // `- rows: X @ W`: a key a step carries, taken for a name
        return lesson_fail(L, item->pairs[0].key,
                           "a step looks like `- Q: X @ W_Q`; to name a result after one of these keys, "
                           "add to the name (row_sums, not rows)",
                           "this step has no result name: '%s' is one of the keys a step may carry (say:, "
                           "rows:, cols:, document:, explain:, show:, digits:, claim:, quiz:), so it cannot "
                           "name a result",
                           item->pairs[0].key->text);
    if (!name)
        return lesson_fail(L, item, "a step looks like `- Q: X @ W_Q`",
                           "this step has no result name; write `- name: expression`");
    if (!load_step_expr(L, name, step))
        return false;
    const Node *say = yamldoc_get(item, "say"), *explain = yamldoc_get(item, "explain");
    const Node *document = yamldoc_get(item, "document");
    step->rows_node = yamldoc_get(item, "rows");
    step->cols_node = yamldoc_get(item, "cols");
    step->show_node = yamldoc_get(item, "show");
    if (say && !lesson_parse_narration(L, "say", say, &step->say))
        return false;
    step->say_node = say;
    if (step->rows_node && !lesson_parse_label_ref(L, "rows", step->rows_node, &step->rows))
        return false;
    if (step->cols_node && !lesson_parse_label_ref(L, "cols", step->cols_node, &step->cols))
        return false;
    if (document && !lesson_parse_document(L, document, &step->document))
        return false;
    if (explain && !parse_explain(L, "explain", explain, &step->explain))
        return false;
    const Node *quiz = yamldoc_get(item, "quiz");
    if (quiz && !parse_explain(L, "quiz", quiz, &step->quiz))
        return false;
    step->claim_node = yamldoc_get(item, "claim");
    step->digits = -1;
    step->digits_node = yamldoc_get(item, "digits");
    if (step->digits_node && !lesson_parse_digits(L, step->digits_node, &step->digits))
        return false;
    return !step->show_node || lesson_parse_show(L, step->show_node, &step->show, &step->view);
}

// ---------------------------------------------------------------- claims

static bool load_claim_expr(Loader *L, const Node *key, const Node *value, LessonClaim *claim) {
    LessonStep *w = &claim->where;
    w->name = claim->text;
    w->key = key;
    w->expr_node = value;
    if (value->kind != NODE_SCALAR)
        return lesson_fail(L, value, "write the claim as an expression, like allclose(sum(weights, axis=-1), 1)",
                           "a claim must be an expression, but this is %s", yamldoc_kind_name(value->kind));
    if (value->text[strspn(value->text, " \t\r\n")] == '\0')
        return lesson_fail(L, value->text_len ? value : key,
                           "write what must hold after the ':', like `- rows sum to 1: allclose(sum(w, axis=-1), 1)`",
                           "the claim '%s' has no expression", claim->text);
    w->expr = value->text;
    locate_expr(L, w, value);
    return true;
}

// `- text: expression` (a claims: item, or a step's claim: written with its text).
static bool load_claim_pair(Loader *L, const Node *node, LessonClaim *claim) {
    const char *hint = "write a claim as `- what holds: expression`, like `- rows sum to 1: allclose(sum(w, axis=-1), 1)`";
    if (node->kind != NODE_MAPPING || node->n_pairs != 1)
        return lesson_fail(L, node, hint, "a claim must be one `text: expression` pair, but this is %s",
                           node->kind == NODE_MAPPING ? "a mapping of several keys" : yamldoc_kind_name(node->kind));
    const NodePair *pair = &node->pairs[0];
    claim->text = pair->key->text;
    return load_claim_expr(L, pair->key, pair->value, claim);
}

// `claim: "rows sum to 1: allclose(...)"`, quoted as YAML's hint says: the text before the
// first ': ' outside brackets, and the expression after it (an expression has ':' only inside
// brackets). False when it is an expression alone, or memory runs out (with an error).
static bool split_claim(Loader *L, const Node *c, LessonClaim *claim, bool *split) {
    *split = false;
    const char *s = c->text;
    int depth = 0;
    size_t at = 0;
    for (; s[at] && !(depth == 0 && s[at] == ':' && s[at + 1] == ' '); at++)
        depth += (s[at] == '(' || s[at] == '[') - (s[at] == ')' || s[at] == ']');
    if (!s[at] || at == 0)
        return true;
    size_t end = at;
    while (end > 0 && s[end - 1] == ' ')
        end--;
    claim->text = arena_strndup(L->lesson->arena, s, end);
    if (!claim->text)
        return diag_no_memory(L->diag);
    at += 2;
    while (s[at] == ' ')
        at++;
    LessonStep *w = &claim->where;
    w->name = claim->text;
    w->expr = s + at;
    if (w->expr_exact)  // columns count characters, not bytes
        for (size_t i = 0; i < at; i++)
            w->expr_col += ((unsigned char)s[i] & 0xC0) != 0x80;
    *split = true;
    return true;
}

bool lesson_load_claims(Loader *L, const Node *node) {
    Lesson *lesson = L->lesson;
    size_t n = 0;
    for (size_t i = 0; i < lesson->n_steps; i++)
        n += lesson->steps[i].claim_node != NULL;
    if (node && !lesson_is_null(node) && node->kind != NODE_SEQUENCE)
        return lesson_fail(L, node, "write each claim on its own line as `- what holds: expression`",
                           "claims: must be a list of claims, but this is %s", yamldoc_kind_name(node->kind));
    size_t n_top = node && node->kind == NODE_SEQUENCE ? node->n_items : 0;
    if (n + n_top == 0)
        return true;
    lesson->claims = arena_array(lesson->arena, n + n_top, sizeof(LessonClaim));
    if (!lesson->claims)
        return diag_no_memory(L->diag);
    // Each claim is loaded on its own, as givens and steps are: every broken one is reported.
    for (size_t k = 0, i = 0; k < n + n_top; k++) {
        while (k < n && !lesson->steps[i].claim_node)
            i++;
        LessonClaim *claim = &lesson->claims[lesson->n_claims];
        Diag *diag = lesson_item_start(L);
        bool ok;
        if (k < n) {
            const Node *c = lesson->steps[i].claim_node;
            claim->step = &lesson->steps[i++];
            claim->where.scope = claim->step->scope;
            if (c->kind == NODE_MAPPING) {
                ok = load_claim_pair(L, c, claim);
            } else {
                claim->text = c->kind == NODE_SCALAR ? c->text : "";
                bool split = false;
                ok = load_claim_expr(L, c, c, claim) && (c->kind != NODE_SCALAR || split_claim(L, c, claim, &split));
                if (ok && split && claim->where.expr[0] == '\0')
                    ok = lesson_fail(L, c, "write what must hold after the ':', like `claim: \"rows sum to 1: "
                                     "allclose(sum(w, axis=-1), 1)\"`", "the claim '%s' has no expression", claim->text);
            }
        } else {
            ok = load_claim_pair(L, node->items[k - n], claim);
        }
        if (!lesson_item_done(L, diag, ok, k + 1 < n + n_top))
            return false;
        lesson->n_claims += ok;
    }
    return true;
}

// A place for one more step at the end of lesson->steps, which grows as blocks are applied.
LessonStep *lesson_next_step(Loader *L) {
    Lesson *lesson = L->lesson;
    if (lesson->n_steps == L->cap_steps) {
        size_t cap = L->cap_steps ? 2 * L->cap_steps : 16;
        LessonStep *steps = arena_array(lesson->arena, cap, sizeof(LessonStep));
        if (!steps) {
            diag_no_memory(L->diag);
            return NULL;
        }
        if (lesson->n_steps)
            memcpy(steps, lesson->steps, lesson->n_steps * sizeof(LessonStep));
        lesson->steps = steps;
        L->cap_steps = cap;
    }
    LessonStep *step = &lesson->steps[lesson->n_steps];
    memset(step, 0, sizeof(*step));
    return step;
}

bool lesson_load_replacement(Loader *L, const Node *key, const Node *value, const char *name, const char *original,
                             const LessonScope *scope) {
    LessonStep *step = lesson_next_step(L);
    if (!step)
        return false;
    // shown as the stage it replaces is (show:, digits:, rows: and cols:), just before it
    const LessonStep *stage = &L->lesson->steps[L->lesson->n_steps - 1];
    step->show = stage->show;
    step->view = stage->view;
    step->show_node = stage->show_node;
    step->rows = stage->rows;
    step->cols = stage->cols;
    step->rows_node = stage->rows_node;
    step->cols_node = stage->cols_node;
    step->digits = stage->digits;
    step->digits_node = stage->digits_node;
    step->name = name;
    step->key = key;
    step->expr = value->text;
    step->expr_node = value;
    step->scope = scope;
    step->replaces = original;
    step->say = arena_printf(L->lesson->arena,
                             "An intervention (replace:): this stands in for %s, the value the block computed; "
                             "the steps after it read this one.",
                             original);
    if (!step->say)
        return diag_no_memory(L->diag);
    if (!locate_expr(L, step, value) || !lesson_define_name(L, name, key, key))
        return false;
    L->lesson->n_steps++;
    return true;
}

bool lesson_load_step(Loader *L, const Node *item) {
    if (lesson_block_is_use(L, item))
        return lesson_apply_block(L, item);
    LessonStep *step = lesson_next_step(L);
    if (!step || !load_step(L, item, step))
        return false;
    L->lesson->n_steps++;
    return !L->n_replacements || lesson_block_replace(L);
}

bool lesson_load_steps(Loader *L, const NodePair *pair) {
    const Node *node = pair->value;
    const char *hint = "write each step on its own line as `- name: expression`";
    if (lesson_is_null(node) || (node->kind == NODE_SEQUENCE && node->n_items == 0))
        return lesson_fail(L, lesson_is_null(node) ? pair->key : node, hint,
                           "steps: is empty; a lesson needs at least one step");
    if (node->kind != NODE_SEQUENCE)
        return lesson_fail(L, node, hint, "steps: must be a list of steps, but this is %s",
                           yamldoc_kind_name(node->kind));
    for (size_t i = 0; i < node->n_items; i++) {
        Diag *diag = lesson_item_start(L);
        bool ok = lesson_load_step(L, node->items[i]);
        if (!lesson_item_done(L, diag, ok, i + 1 < node->n_items))
            return false;
    }
    return true;
}
