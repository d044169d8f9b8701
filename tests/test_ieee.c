// Tests of ieee.c through whole lesson runs: the note a stage carries when IEEE arithmetic
// leaves the page. Every operand and result below is worked out by hand: 1e200 * 1e200 = 1e400
// is past the largest double (about 1.8e308); exp(800) = 10^347.4 too; inf - inf, 0 * inf,
// inf / inf and 0 / 0 have no value; log(0) = -inf; log(-2) and sqrt(-4) have no real value.
#include "trace_fixture.h"

// The notes of stage `name`, one per line.
static const char *notes_of(Fixture *f, const char *yaml, const char *name) {
    static char text[4096];
    fixture_plan(f, "t.yaml", yaml);
    const Trace *t = fixture_trace(f, NULL, 0);
    for (size_t i = 0; i < t->n_stages; i++) {
        const TraceStage *s = &t->stages[i];
        if (strcmp(s->name, name) != 0)
            continue;
        text[0] = '\0';
        for (size_t k = 0; k < s->n_notes; k++) {
            strncat(text, s->notes[k], sizeof(text) - strlen(text) - 2);
            strcat(text, "\n");
        }
        return text;
    }
    fail_msg("no stage %s", name);
    return NULL;
}

#define STEPS(given, steps) "title: t\ngiven:\n" given "steps:\n" steps

static void expect_note(void **state, const char *yaml, const char *stage, const char *note) {
    const char *got = notes_of(*state, yaml, stage);
    if (!strstr(got, note))
        fail_msg("stage %s: expected the note\n  %s\nbut its notes are\n  %s", stage, note, got);
}

static void expect_no_note(void **state, const char *yaml, const char *stage) {
    const char *got = notes_of(*state, yaml, stage);
    if (got[0])
        fail_msg("stage %s: expected no note, but it says\n  %s", stage, got);
}

// One stage of a lesson and the note it must carry.
typedef struct NoteCase {
    const char *yaml, *stage, *note;
} NoteCase;

static void expect_notes(void **state, const NoteCase *cases, size_t n) {
    for (size_t i = 0; i < n; i++)
        expect_note(state, cases[i].yaml, cases[i].stage, cases[i].note);
}

static void test_overflow_names_its_operands(void **state) {
    const NoteCase cases[] = {
        {STEPS("  x: [100, 800]\n", "  - e: exp(x)\n"), "e",
         "exp(800) overflows: the largest double is about 1.8e308, so it is inf (softmax() subtracts the row's "
         "largest value first, so its exps never pass 1)"},
        {STEPS("  x: [1e200, 2]\n", "  - p: x * 1e200\n"), "p",
         "1e+200 * 1e+200 overflows: the largest double is about 1.8e308, so it is inf"},
        {STEPS("  x: [1e308, 1e308]\n", "  - total: sum(x)\n"), "total",
         "total overflows to inf: the sum passes the largest double, about 1.8e308"},
        {STEPS("  x: [1, -2]\n", "  - q: x / 0\n"), "q",
         "1 / 0 is a division by zero: IEEE arithmetic gives inf with the sign of the quotient"},
        {STEPS("  x: [1, 0]\n", "  - l: log(x)\n"), "l",
         "log(0) is -inf: the logarithm falls without end as its argument goes to 0"},
        {STEPS("  x: [0, 2]\n", "  - p: x ** -1\n"), "p",
         "0 ** -1 divides by zero (a negative power of 0): IEEE arithmetic gives inf"},
        // 1e300 / 1e-10 = 1e310 and 10 ** 400 = 1e400: past the largest double, no zero in sight
        {STEPS("  x: [1e300, 1]\n", "  - q: x / 1e-10\n"), "q",
         "1e+300 / 1e-10 overflows: the largest double is about 1.8e308, so it is inf"},
        {STEPS("  x: [2, 400]\n", "  - p: 10 ** x\n"), "p",
         "10 ** 400 overflows: the largest double is about 1.8e308, so it is inf"},
        // -1e200 * 1e200 = -1e400 and -1e308 + -1e308 = -2e308: negative, so -inf
        {STEPS("  x: [-1e200, 2]\n", "  - p: x * 1e200\n"), "p",
         "-1e+200 * 1e+200 overflows: the largest double is about 1.8e308, so it is -inf"},
        {STEPS("  x: [-1e308, -1e308]\n", "  - total: sum(x)\n"), "total",
         "total overflows to -inf: the sum passes the largest double, about 1.8e308"},
    };
    expect_notes(state, cases, ARRAY_LEN(cases));
}

static void test_nan_names_the_operation(void **state) {
    const NoteCase cases[] = {
        {STEPS("  x: [1, .inf]\n", "  - d: x - x\n"), "d",
         "d[1] is nan: inf - inf has no value, so IEEE arithmetic gives nan"},
        {STEPS("  x: [0, 1]\n  y: [.inf, 1]\n", "  - m: x * y\n"), "m",
         "m[0] is nan: 0 * inf has no value, so IEEE arithmetic gives nan"},
        {STEPS("  x: [.inf, 1]\n", "  - r: x / x\n"), "r",
         "r[0] is nan: inf / inf has no value, so IEEE arithmetic gives nan"},
        {STEPS("  x: [4, -2]\n", "  - l: log(x)\n"), "l",
         "l[1] is nan: log(-2) has no value: a negative number has no real logarithm"},
        {STEPS("  x: [-4, 4]\n", "  - s: sqrt(x)\n"), "s",
         "s[0] is nan: sqrt(-4) has no value: a negative number has no real square root"},
        // bracketed, since -8 ** 0.5 means -(8 ** 0.5), which is a number
        {STEPS("  x: [-8, 4]\n", "  - r: x ** 0.5\n"), "r",
         "r[0] is nan: (-8) ** 0.5 has no value: a negative number has no real power with a fraction"},
        // Inside a matrix product: 0 * inf in the sum.
        {STEPS("  a: [[.inf, 1]]\n  b: [[0], [1]]\n", "  - p: a @ b\n"), "p",
         "p[0, 0] is nan: the matmul meets an inf it cannot resolve (inf - inf or 0 * inf inside it)"},
    };
    expect_notes(state, cases, ARRAY_LEN(cases));
}

static void test_inherited_nan_is_told_once(void **state) {
    const char *yaml = STEPS("  x: [1, .inf]\n", "  - d: x - x\n  - e: d * 2\n  - f: e + 1\n");
    expect_note(state, yaml, "e",
                "the nan comes from d: any operation on a nan gives nan, so it spreads to every later result it "
                "touches (and nothing more is said of it)");
    expect_no_note(state, yaml, "f");
}

static void test_meant_infinities_say_nothing(void **state) {
    // A mask is built from nothing; adding it only carries its -inf on; softmax of the masked
    // row has finite weights.
    const char *yaml = STEPS("  s: [[1, 2], [3, 4]]\n", "  - m: causal_mask(2)\n  - masked: s + m\n"
                                                         "  - w: softmax(masked)\n");
    if (strstr(notes_of(*state, yaml, "m"), "overflow"))
        fail_msg("the mask's -inf is meant, not an overflow");
    expect_no_note(state, yaml, "masked");
    // An ordinary stage: nothing.
    expect_no_note(state, STEPS("  x: [1, 2]\n", "  - e: exp(x)\n"), "e");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_overflow_names_its_operands, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_nan_names_the_operation, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_inherited_nan_is_told_once, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_meant_infinities_say_nothing, fixture_setup, fixture_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
