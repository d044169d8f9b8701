// Tests of lesson_outline: the names a lesson's YAML gives its givens and steps, as --list shows
// a lesson whose files are not downloaded. Each expected outline is written here by hand from
// the naming rules of doc/lesson-format.md (an application's stages under its as: or block
// name, {i} with times:, a block inside a block under both names); what is not written as the
// loader reads it is passed over, never guessed at.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "lesson_outline.h"

static void expect_outline(const char *yaml, const char *want) {
    Diag diag;
    diag_init(&diag);
    YamlDoc *doc = yamldoc_create("t.yaml", yaml, strlen(yaml), &diag);
    assert_non_null(doc);
    StrBuf out;
    strbuf_init(&out);
    assert_true(lesson_outline(doc, &out));
    assert_string_equal(strbuf_str(&out), want);
    strbuf_finish(&out);
    yamldoc_destroy(doc);
}

static void test_givens_steps_and_applications(void **state) {
    (void)state;
    expect_outline("given:\n"
                   "  W{i}: {file: m.safetensors, tensor: \"w.{i-1}\", times: n}\n"
                   "  n: {file: config.json}\n"
                   "  x: [1, 2]\n"
                   "blocks:\n"
                   "  f:\n"
                   "    steps:\n"
                   "      - y: x @ W\n"
                   "steps:\n"
                   "  - use: f\n"
                   "    times: n\n"
                   "    results: {last: y}\n"
                   "  - use: f\n"
                   "    as: once\n"
                   "    results: {z: y}\n"
                   "  - s: sum(last)\n",
                   "W{i}    given, from m.safetensors, {i} from 1 to n\n"
                   "n       given, from config.json\n"
                   "x       given\n"
                   "f{i}.y  x @ W\n"
                   "last    = f{n}.y\n"
                   "once.y  x @ W\n"
                   "z       = once.y\n"
                   "s       sum(last)\n");
}

// Steps and givens not written as a lesson writes them add nothing: a step that is a list or
// empty, a step whose expression is a mapping, an application of a block the lesson does not
// have or whose name is a list, blocks that are a list, results that are a list or name a
// list; a document that is not a mapping lists nothing.
static void test_what_is_not_a_lesson_is_passed_over(void **state) {
    (void)state;
    expect_outline("given:\n"
                   "  a: 1\n"
                   "steps:\n"
                   "  - [b, c]\n"
                   "  - {}\n"
                   "  - d: {e: 1}\n"
                   "  - use: nowhere\n"
                   "  - use: [f]\n"
                   "  - g: a + 1\n",
                   "a  given\n"
                   "g  a + 1\n");
    expect_outline("blocks: [f]\n"
                   "steps:\n"
                   "  - use: f\n"
                   "  - h: 2\n",
                   "h  2\n");
    expect_outline("blocks:\n"
                   "  f: [y]\n"
                   "  k:\n"
                   "    steps:\n"
                   "      - y: 1\n"
                   "steps:\n"
                   "  - use: f\n"
                   "  - use: k\n"
                   "    results: [y]\n"
                   "  - use: k\n"
                   "    as: m\n"
                   "    results: {p: [y], q: y}\n",
                   "k.y  1\n"
                   "m.y  1\n"
                   "q    = m.y\n");
    expect_outline("- a\n- b\n", "");
    expect_outline("given: [a]\nsteps: {a: 1}\n", "");
}

// A block applying itself is followed no deeper than the loader would nest blocks.
static void test_a_block_inside_itself_stops(void **state) {
    (void)state;
    expect_outline("blocks:\n"
                   "  f:\n"
                   "    steps:\n"
                   "      - y: 1\n"
                   "      - use: f\n"
                   "steps:\n"
                   "  - use: f\n",
                   "f.y                1\n"
                   "f.f.y              1\n"
                   "f.f.f.y            1\n"
                   "f.f.f.f.y          1\n"
                   "f.f.f.f.f.y        1\n"
                   "f.f.f.f.f.f.y      1\n"
                   "f.f.f.f.f.f.f.y    1\n"
                   "f.f.f.f.f.f.f.f.y  1\n");
}

// Each allocation of an outline failing in turn: false (the lines it could not make would be
// missing); with every allocation made, the whole outline.
static void test_each_allocation_failing(void **state) {
    (void)state;
    const char *yaml = "given:\n  W{i}: {file: m.safetensors, times: 2}\n"
                       "blocks:\n  f:\n    steps:\n      - y: W1\n"
                       "steps:\n  - use: f\n    times: 2\n    results: {last: y}\n";
    Diag diag;
    diag_init(&diag);
    YamlDoc *doc = yamldoc_create("t.yaml", yaml, strlen(yaml), &diag);
    assert_non_null(doc);
    util_fail_allocation(0);
    StrBuf out;
    strbuf_init(&out);
    assert_true(lesson_outline(doc, &out));
    strbuf_finish(&out);
    size_t made = util_fail_allocation(0);
    assert_true(made >= 3);  // the lines' own texts, and the outline
    for (size_t k = 1; k <= made; k++) {
        util_fail_allocation(k);
        strbuf_init(&out);
        assert_false(lesson_outline(doc, &out));
        strbuf_finish(&out);
    }
    util_fail_allocation(0);
    yamldoc_destroy(doc);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_givens_steps_and_applications),
        cmocka_unit_test(test_what_is_not_a_lesson_is_passed_over),
        cmocka_unit_test(test_a_block_inside_itself_stops),
        cmocka_unit_test(test_each_allocation_failing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
