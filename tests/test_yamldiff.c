// Unit tests of yamldiff: what an edit changed in a lesson's YAML, by path, with the values
// written out by hand.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "yamldiff.h"

typedef struct Pair {
    YamlDoc *a, *b;
    YamlDiff *d;
} Pair;

static Pair pair;

static const YamlDiff *diff(const char *a, const char *b) {
    Diag diag;
    diag_init(&diag);
    pair.a = yamldoc_create("a.yaml", a, strlen(a), &diag);
    pair.b = yamldoc_create("b.yaml", b, strlen(b), &diag);
    assert_non_null(pair.a);
    assert_non_null(pair.b);
    pair.d = yamldiff_create(pair.a->root, pair.b->root);
    assert_non_null(pair.d);
    return pair.d;
}

static int release(void **state) {
    (void)state;
    yamldiff_destroy(pair.d);
    yamldoc_destroy(pair.a);
    yamldoc_destroy(pair.b);
    memset(&pair, 0, sizeof(pair));
    return 0;
}

// One change: its kind, path and values (NULL: not shown).
static void expect(const YamlChange *c, YamlChangeKind kind, const char *path, const char *before,
                   const char *after) {
    assert_int_equal(c->kind, kind);
    assert_string_equal(c->path, path);
    if (before)
        assert_string_equal(c->before, before);
    else
        assert_null(c->before);
    if (after)
        assert_string_equal(c->after, after);
    else
        assert_null(c->after);
}

static const char LESSON[] = "title: t\n"
                             "given:\n"
                             "  Q: {values: [1.0, 0.0, 0.5], seed: 3}\n"
                             "steps:\n"
                             "  - A: softmax(Q)\n"
                             "    say: |\n"
                             "      The weights.\n"
                             "  - B: A * 2\n"
                             "train:\n"
                             "  lr: 0.01\n"
                             "  show: [0, 50]\n";

static void test_the_same_lesson_has_no_change(void **state) {
    (void)state;
    // Keys in another order say the same thing.
    const YamlDiff *d = diff(LESSON, "given:\n"
                                     "  Q: {seed: 3, values: [1.0, 0.0, 0.5]}\n"
                                     "title: t\n"
                                     "steps:\n"
                                     "  - A: softmax(Q)\n"
                                     "    say: |\n"
                                     "      The weights.\n"
                                     "  - B: A * 2\n"
                                     "train: {show: [0, 50], lr: 0.01}\n");
    assert_int_equal(d->n, 0);
}

// LESSON with each `from` replaced by its `to` (each found once), in buf.
static const char *edited(char *buf, size_t cap, size_t n, const char *const *from, const char *const *to) {
    snprintf(buf, cap, "%s", LESSON);
    for (size_t k = 0; k < n; k++) {
        char *at = strstr(buf, from[k]);
        assert_non_null(at);
        char rest[1024];
        snprintf(rest, sizeof(rest), "%s", at + strlen(from[k]));
        snprintf(at, cap - (size_t)(at - buf), "%s%s", to[k], rest);
    }
    return buf;
}

static void test_a_setting_and_a_value_by_path(void **state) {
    (void)state;
    char buf[1024];
    const char *from[] = {"0.5]", "lr: 0.01"}, *to[] = {"0.9]", "lr: 0.001"};
    const YamlDiff *d = diff(LESSON, edited(buf, sizeof(buf), 2, from, to));
    assert_int_equal(d->n, 2);
    expect(&d->changes[0], YAML_CHANGED, "given.Q.values[2]", "0.5", "0.9");
    expect(&d->changes[1], YAML_CHANGED, "train.lr", "0.01", "0.001");
}

static void test_steps_matched_by_name(void **state) {
    (void)state;
    // A step inserted before B, B's expression and A's narration changed, show: lengthened.
    const char *edited = "title: t\n"
                         "given:\n"
                         "  Q: {values: [1.0, 0.0, 0.5], seed: 3}\n"
                         "steps:\n"
                         "  - A: softmax(Q)\n"
                         "    say: |\n"
                         "      The weights, which sum to one in every row of the table.\n"
                         "      Each row is a query.\n"
                         "  - C: A + 1\n"
                         "  - B: A * 3\n"
                         "train:\n"
                         "  lr: 0.01\n"
                         "  show: [0, 50, 100]\n"
                         "  clip: 1.0\n";
    const YamlDiff *d = diff(LESSON, edited);
    assert_int_equal(d->n, 5);
    expect(&d->changes[0], YAML_CHANGED, "steps.A.say", NULL, NULL);  // a text of lines: named only
    expect(&d->changes[1], YAML_ADDED, "steps.C", NULL, "A + 1");
    expect(&d->changes[2], YAML_CHANGED, "steps.B", "A * 2", "A * 3");
    expect(&d->changes[3], YAML_CHANGED, "train.show", "[0, 50]", "[0, 50, 100]");
    expect(&d->changes[4], YAML_ADDED, "train.clip", NULL, "1.0");
}

static void test_removed_and_too_long_to_show(void **state) {
    (void)state;
    // train: gone; a list of 30 numbers grown to 31 is too long to show whole: by place.
    char a[1024] = "title: t\nids: [", b[1024] = "title: t\nids: [";
    for (int i = 0; i < 30; i++) {
        snprintf(a + strlen(a), sizeof(a) - strlen(a), "%s%d", i ? ", " : "", i);
        snprintf(b + strlen(b), sizeof(b) - strlen(b), "%s%d", i ? ", " : "", i);
    }
    strcat(a, "]\ntrain: {lr: 0.01}\n");
    strcat(b, ", 30]\n");
    const YamlDiff *d = diff(a, b);
    assert_int_equal(d->n, 2);
    expect(&d->changes[0], YAML_ADDED, "ids[30]", NULL, "30");
    expect(&d->changes[1], YAML_REMOVED, "train", "{lr: 0.01}", NULL);
}

static void test_a_kind_that_changed(void **state) {
    (void)state;
    const YamlDiff *d = diff("given:\n  x: [1.0, 2.0]\n", "given:\n  x: {shape: [2], init: zeros}\n");
    assert_int_equal(d->n, 1);
    expect(&d->changes[0], YAML_CHANGED, "given.x", "[1.0, 2.0]", "{shape: [2], init: zeros}");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_the_same_lesson_has_no_change, release),
        cmocka_unit_test_teardown(test_a_setting_and_a_value_by_path, release),
        cmocka_unit_test_teardown(test_steps_matched_by_name, release),
        cmocka_unit_test_teardown(test_removed_and_too_long_to_show, release),
        cmocka_unit_test_teardown(test_a_kind_that_changed, release),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
