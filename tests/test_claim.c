// Tests of claim.c through whole lesson runs: what a failing claim says, for each kind of truth
// value its operation gives (OpTruth). Worked by hand: y = 2x = [-2, -4, 6] for x = [-1, -2, 3];
// y > 0 is false at [0] and [1]; no value of y passes 10; y - x = [-1, -2, 3], furthest from
// close at [2], where |6 - 3| = 3.
#include "trace_fixture.h"

static const char *const LESSON = "title: t\n"
                                  "given:\n"
                                  "  x: [-1.0, -2.0, 3.0]\n"
                                  "steps:\n"
                                  "  - y: x * 2.0\n"
                                  "claims:\n"
                                  "  - compares: y > 0\n"
                                  "  - any: any(y > 10)\n"
                                  "  - all: all(y > 0)\n"
                                  "  - close: allclose(y, x)\n"
                                  "  - holds: all(y < 7)\n";

// What each claim says, one kind of truth value after another.
static void test_each_kind_of_truth_value(void **state) {
    Fixture *f = *state;
    static const char *const said[] = {
        // a comparison: the first place it is false, and how many more of all its values
        "claim: compares: fails: at [0] -2.0000 > 0 is false (and 1 more of 3)\n",
        // any: none of the values it reads is true
        "claim: any: fails: none of the 3 values of (y > 10) is true\n",
        // all: the first false value it reads, as that comparison says it, and how many more
        "claim: all: fails: at [0] -2.0000 > 0 is false (and 1 more)\n",
        // allclose: where the two are furthest apart, by how much, and how many are not close
        "claim: close: fails: at [2] 6.0000 != 3.0000 (largest difference 3.0000; 3 values are not close)\n",
        // 6 < 7, the largest of y: the claim holds, and says nothing more
        "claim: holds: holds\n",
    };
    assert_int_equal(fixture_run(f, LESSON, OUTPUT_TEXT, NULL, 0), STATUS_OK);
    for (size_t k = 0; k < sizeof(said) / sizeof(said[0]); k++)
        fixture_expect_output(f, said[k]);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_each_kind_of_truth_value, fixture_setup, fixture_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
