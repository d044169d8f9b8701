// Tests of yamldoc: the tree and its places, and every refusal with its exact place and words.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "yamldoc.h"

static YamlDoc *parse_bytes(const char *bytes, size_t len, Diag *diag) {
    diag_init(diag);
    return yamldoc_create("t.yaml", bytes, len, diag);
}

static YamlDoc *parse(const char *text, Diag *diag) {
    return parse_bytes(text, strlen(text), diag);
}

// The load fails with status 1 at line:col with this message (and hint, unless NULL).
static void expect_error_bytes(const char *bytes, size_t len, size_t line, size_t col,
                               const char *message, const char *hint) {
    Diag diag;
    YamlDoc *doc = parse_bytes(bytes, len, &diag);
    if (doc)
        print_error("expected '%s' but the document loaded\n", message);
    assert_null(doc);
    assert_int_equal(diag.status, STATUS_LESSON_ERROR);
    assert_string_equal(diag.message, message);
    assert_string_equal(diag.path, "t.yaml");
    assert_int_equal(diag.line, line);
    assert_int_equal(diag.col, col);
    if (hint)
        assert_string_equal(diag.hint, hint);
}

static void expect_error(const char *text, size_t line, size_t col, const char *message,
                         const char *hint) {
    expect_error_bytes(text, strlen(text), line, col, message, hint);
}

static void test_tree_and_places(void **state) {
    Diag diag;
    YamlDoc *doc = parse("title: Attention\n"
                         "given:\n"
                         "  X: [1, 'two', \"th\\tree\"]\n"
                         "text: |\n"
                         "  line\n",
                         &diag);
    assert_non_null(doc);
    const Node *root = doc->root;
    assert_int_equal(root->kind, NODE_MAPPING);
    assert_int_equal(root->n_pairs, 3);
    assert_string_equal(root->pairs[0].key->text, "title");
    const Node *title = yamldoc_get(root, "title");
    assert_string_equal(title->text, "Attention");
    assert_int_equal(title->style, SCALAR_PLAIN);
    assert_int_equal(title->line, 1);
    assert_int_equal(title->col, 8);
    assert_int_equal(title->end_line, 1);
    assert_int_equal(title->end_col, 17);
    assert_int_equal(yamldoc_node_width(title), 9);

    const Node *x = yamldoc_get(yamldoc_get(root, "given"), "X");
    assert_int_equal(x->kind, NODE_SEQUENCE);
    assert_int_equal(x->n_items, 3);
    assert_int_equal(x->line, 3);
    assert_int_equal(x->col, 6);
    assert_int_equal(x->end_col, 27);
    assert_int_equal(x->items[1]->style, SCALAR_SINGLE_QUOTED);
    assert_string_equal(x->items[1]->text, "two");
    assert_int_equal(x->items[2]->style, SCALAR_DOUBLE_QUOTED);
    assert_string_equal(x->items[2]->text, "th\tree");
    assert_int_equal(x->items[2]->col, 17);

    const Node *text = yamldoc_get(root, "text");
    assert_int_equal(text->style, SCALAR_LITERAL);
    assert_string_equal(text->text, "line\n");
    assert_int_equal(yamldoc_node_width(text), 1);  // spans two lines

    assert_null(yamldoc_get(root, "steps"));
    assert_null(yamldoc_get(title, "title"));
    assert_string_equal(yamldoc_kind_name(NODE_SCALAR), "a number or word");
    assert_string_equal(yamldoc_kind_name(NODE_SEQUENCE), "a list");
    assert_string_equal(yamldoc_kind_name(NODE_MAPPING), "a mapping");
    // The source is kept for quoting lines in errors.
    assert_string_equal(doc->source.path, "t.yaml");
    assert_int_equal(doc->source.len, strlen(doc->source.text));
    yamldoc_destroy(doc);
    yamldoc_destroy(NULL);
}

static void test_empty_files_have_no_root(void **state) {
    const char *empty[] = {"", "# only a comment\n\n# and another\n", "---\n", "--- # c\n...\n"};
    for (size_t i = 0; i < ARRAY_LEN(empty); i++) {
        Diag diag;
        YamlDoc *doc = parse(empty[i], &diag);
        assert_non_null(doc);
        assert_null(doc->root);
        yamldoc_destroy(doc);
    }
}

static void test_bom_and_crlf(void **state) {
    Diag diag;
    YamlDoc *doc = parse("\xEF\xBB\xBFtitle: x\r\nsteps:\r\n  - a: 1 + 2\r\n", &diag);
    assert_non_null(doc);
    const Node *title = yamldoc_get(doc->root, "title");
    assert_string_equal(title->text, "x");
    assert_int_equal(doc->root->pairs[0].key->col, 1);  // the BOM takes no column
    assert_int_equal(title->col, 8);
    const Node *step = yamldoc_get(doc->root, "steps")->items[0];
    assert_string_equal(yamldoc_get(step, "a")->text, "1 + 2");
    assert_int_equal(step->pairs[0].value->line, 3);
    assert_int_equal(step->pairs[0].value->col, 8);
    yamldoc_destroy(doc);

    // Errors after a BOM and CRLF line ends still point at the right character.
    expect_error("\xEF\xBB\xBFtitle: x\r\nsteps: &s [a: 1]\r\n", 2, 8,
                 "anchors (&s) are not allowed in a lesson", NULL);
}

static void test_depth_limit_answers_fast(void **state) {
    // 2000 nested flow lists: libyaml alone would take seconds; the limit stops it at once.
    char deep[4100];
    memcpy(deep, "x: ", 3);
    memset(deep + 3, '[', 2000);
    memset(deep + 2003, ']', 2000);
    deep[4003] = '\0';
    clock_t start = clock();
    expect_error(deep, 1, 4 + YAMLDOC_MAX_DEPTH - 1,
                 "nesting deeper than 32 levels; a lesson never needs this", NULL);

    // 100,000 brackets take libyaml's document loader about a minute.
    size_t n = 100000;
    char *huge = malloc(2 * n + 1);
    assert_non_null(huge);
    memset(huge, '[', n);
    memset(huge + n, ']', n);
    huge[2 * n] = '\0';
    expect_error(huge, 1, YAMLDOC_MAX_DEPTH + 1,
                 "nesting deeper than 32 levels; a lesson never needs this", NULL);
    free(huge);

    // Block mappings nested 2000 deep: key k32 opens the 33rd level on line 33.
    char *block = malloc(2000 * (2 * 2000 + 8));
    assert_non_null(block);
    size_t len = 0;
    for (int i = 0; i < 2000; i++)
        len += (size_t)sprintf(block + len, "%*sk%d:\n", 2 * i, "", i);
    expect_error(block, 33, 65, "nesting deeper than 32 levels; a lesson never needs this",
                 NULL);
    free(block);
    double seconds = (double)(clock() - start) / CLOCKS_PER_SEC;
    assert_true(seconds < 5);  // a few milliseconds; generous for sanitizer builds

    // 32 levels are fine.
    char ok[80];
    memset(ok, '[', 32);
    memset(ok + 32, ']', 32);
    ok[64] = '\0';
    Diag diag;
    YamlDoc *doc = parse(ok, &diag);
    assert_non_null(doc);
    yamldoc_destroy(doc);
}

static void test_tab_indentation(void **state) {
    expect_error("steps:\n\t- a: 1\n", 2, 1, "found a tab character where YAML expects spaces",
                 "YAML indentation must use spaces, not tabs");
    expect_error("a: 1\n\tb: 2\n", 2, 1, "found a tab character where YAML expects spaces",
                 "YAML indentation must use spaces, not tabs");
}

static void test_nul_byte_is_placed(void **state) {
    static const char text[] = "title: x\nsteps:\n  - a: b\0c\n";
    expect_error_bytes(text, sizeof(text) - 1, 3, 9, "a NUL byte is not allowed in a lesson",
                       "the file may be binary or saved as UTF-16; save the lesson as UTF-8 text");
    // Columns count characters, not bytes: 'é' is two bytes but one column.
    static const char accented[] = "t: \xC3\xA9\0\n";
    expect_error_bytes(accented, sizeof(accented) - 1, 1, 5,
                       "a NUL byte is not allowed in a lesson", NULL);
    expect_error("a: 1\nb: \x01\n", 2, 4,
                 "the invisible character U+0001 is not allowed in a lesson",
                 "delete it: most editors do not even show it");
}

static void test_invalid_utf8(void **state) {
    // A Latin-1 'é' (0xE9) followed by a plain letter: the caret is on the broken character.
    expect_error("title: x\nsteps:\n  - a: caf\xE9s\n", 3, 11,
                 "the text here is not valid UTF-8",
                 "save the lesson as UTF-8 (it may have been saved as Latin-1 or Windows-1252)");
    expect_error("a: b\xC3\x28\n", 1, 5, "the text here is not valid UTF-8", NULL);
    expect_error("a: \xFF\n", 1, 4, "the text here is not valid UTF-8", NULL);
    expect_error("\xFF\xFEt\0i\0", 0, 0, "this lesson is saved as UTF-16; the tracer reads UTF-8",
                 "save the lesson as UTF-8 text");
}

static void test_duplicate_keys(void **state) {
    expect_error("title: a\nsteps: []\ntitle: b\n", 3, 1,
                 "the key 'title' appears twice in this mapping; it was first written on line 1",
                 "a mapping keeps one value per key: rename or remove one of them");
    // The same key in two different mappings is fine.
    Diag diag;
    YamlDoc *doc = parse("a: {x: 1}\nb: {x: 2}\n", &diag);
    assert_non_null(doc);
    yamldoc_destroy(doc);
    // Quoting does not make a key different.
    expect_error("given: {X: 1, 'X': 2}\n", 1, 15,
                 "the key 'X' appears twice in this mapping; it was first written on line 1",
                 NULL);

    // Thousands of keys: the duplicate at the end is still found (and found quickly).
    char *many = malloc(5000 * 16);
    assert_non_null(many);
    size_t len = 0;
    for (int i = 0; i < 5000; i++)
        len += (size_t)sprintf(many + len, "k%d: %d\n", i, i);
    sprintf(many + len, "k17: again\n");
    expect_error(many, 5001, 1,
                 "the key 'k17' appears twice in this mapping; it was first written on line 18",
                 NULL);
    free(many);
}

static void test_anchors_and_aliases(void **state) {
    expect_error("a: &x [1, 2]\nb: *x\n", 1, 4, "anchors (&x) are not allowed in a lesson",
                 "write the value out again where it is needed; anchors and aliases (*name) can "
                 "build endless or enormous documents");
    expect_error("a: [1]\nb: *x\n", 2, 4, "aliases (*x) are not allowed in a lesson",
                 "write the value out again where it is needed; aliases can build endless or "
                 "enormous documents");
    // The "billion laughs" shape stops at its first anchor.
    expect_error("a: &a [\"lol\", \"lol\"]\nb: &b [*a, *a]\n", 1, 4,
                 "anchors (&a) are not allowed in a lesson", NULL);
}

static void test_tags(void **state) {
    const char *message = "YAML tags (like !!str or !name) are not allowed in a lesson";
    expect_error("a: !!str 1\n", 1, 4, message,
                 "write the value plainly; put text in quotes if it must not be read as a "
                 "number");
    expect_error("a: !foo x\n", 1, 4, message, NULL);
    expect_error("a: !!seq [1]\n", 1, 4, message, NULL);
    expect_error("a: !x!y z\n", 1, 4, message, "write the value plainly");
    // Plain scalars carry only implicit tags: they are fine.
    Diag diag;
    YamlDoc *doc = parse("a: 1\nb: true\nc: ~\n", &diag);
    assert_non_null(doc);
    yamldoc_destroy(doc);
}

static void test_second_document(void **state) {
    expect_error("title: x\n---\ntitle: y\n", 2, 1,
                 "a lesson is one YAML document, but a second one starts here",
                 "remove the '---' line, or put this part in a lesson file of its own");
    // One document with explicit markers is fine.
    Diag diag;
    YamlDoc *doc = parse("---\ntitle: x\n...\n", &diag);
    assert_non_null(doc);
    assert_string_equal(yamldoc_get(doc->root, "title")->text, "x");
    yamldoc_destroy(doc);
}

static void test_non_scalar_keys(void **state) {
    expect_error("[a, b]: 1\n", 1, 1, "a mapping key must be a name, not a list",
                 "write the key as a plain name, like `tokens:`");
    expect_error("x:\n  ? {a: 1}\n  : 2\n", 2, 5, "a mapping key must be a name, not a mapping",
                 NULL);
}

static void test_syntax_errors_in_learner_words(void **state) {
    expect_error("title: \"Attention\nsteps: []\n", 1, 8, "this quoted text is never closed",
                 "end it with the same quote it starts with");
    expect_error("title: Attention: all you need\n", 1, 17,
                 "unexpected ':' here: YAML reads ': ' as the start of a `key: value`",
                 "if the ':' is part of the text, put the whole text in quotes: \"...\"");
    expect_error("title: x\noops\nsteps: []\n", 2, 1,
                 "this line is not `key: value`, and not part of the value above it", NULL);
    expect_error("a:\n  b: 1\n c: 2\n", 3, 2,
                 "expected a `key: value` line here, lined up with the keys above it",
                 "check the indentation: the keys of one mapping and the items of one list "
                 "start in the same column, with spaces");
    expect_error("a: [1, 2\nb: 3\n", 2, 2, "this list is missing a ',' or its closing ']'",
                 "the list opens at line 1, column 4");
    expect_error("a: {x: 1\n", 2, 1, "this mapping is missing a ',' or its closing '}'",
                 "the mapping opens at line 1, column 4");
    expect_error("a: - b\n", 1, 4, "a list item ('- ') cannot start here", NULL);
    expect_error("a: @x\n", 1, 4, "a YAML value cannot start with '@'",
                 "put the whole text in quotes: \"like this\"");
    expect_error("a: \"\\q\"\n", 1, 5, "unknown escape sequence in double-quoted text", NULL);
    // Problems without words of their own still say what libyaml saw, and where.
    expect_error("%YAML 1.1\n%YAML 1.1\n---\na: 1\n", 2, 1, "YAML cannot read the lesson here",
                 "YAML says: found duplicate %YAML directive; check the indentation and the "
                 "quotes");
    expect_error("a: \"x\\0y\"\n", 1, 4, "a NUL character is not allowed in a lesson's text",
                 NULL);
}

static void test_too_large(void **state) {
    size_t len = YAMLDOC_MAX_BYTES + 1;
    char *big = malloc(len);
    assert_non_null(big);
    memset(big, '#', len);
    Diag diag;
    assert_null(parse_bytes(big, len, &diag));
    assert_int_equal(diag.status, STATUS_USAGE_ERROR);
    assert_string_equal(diag.message, "cannot read lesson 't.yaml': it is larger than 4 MiB");
    assert_int_equal(diag.line, 0);
    free(big);
}

// Fail each allocation in turn: every run either loads or reports running out of memory.
// Thousands of nodes and hundreds of keys make the arena, the child stack and the key table grow often.
static void test_out_of_memory(void **state) {
    char *text = malloc(400 * 48);
    assert_non_null(text);
    size_t len = 0;
    for (int i = 0; i < 400; i++)
        len += (size_t)sprintf(text + len, "k%d: [[1, 2], {a: %d, b: [x, y]}]\n", i, i);
    Diag diag;
    util_fail_allocation(0);
    YamlDoc *doc = parse(text, &diag);
    size_t count = util_fail_allocation(0);
    assert_non_null(doc);
    yamldoc_destroy(doc);
    assert_true(count > 20);
    for (size_t n = 1; n <= count; n++) {
        util_fail_allocation(n);
        doc = parse(text, &diag);
        util_fail_allocation(0);
        if (doc) {
            yamldoc_destroy(doc);
            continue;
        }
        assert_int_equal(diag.status, STATUS_USAGE_ERROR);
        assert_string_equal(diag.message,
                            "out of memory (the tracer could not allocate what this lesson needs)");
    }
    free(text);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tree_and_places),
        cmocka_unit_test(test_empty_files_have_no_root),
        cmocka_unit_test(test_bom_and_crlf),
        cmocka_unit_test(test_depth_limit_answers_fast),
        cmocka_unit_test(test_tab_indentation),
        cmocka_unit_test(test_nul_byte_is_placed),
        cmocka_unit_test(test_invalid_utf8),
        cmocka_unit_test(test_duplicate_keys),
        cmocka_unit_test(test_anchors_and_aliases),
        cmocka_unit_test(test_tags),
        cmocka_unit_test(test_second_document),
        cmocka_unit_test(test_non_scalar_keys),
        cmocka_unit_test(test_syntax_errors_in_learner_words),
        cmocka_unit_test(test_too_large),
        cmocka_unit_test(test_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
