// Tests of the finite-difference check's shortcuts (gradcheck.c): a node whose values come out
// as they were stops the pass there, and a one-input elementwise node is computed only where
// its input moved. Both must leave every difference with the bits of the whole computation:
// checked on a lesson whose answer is known by hand, and on every gradient stage of every
// lesson given on the command line.
#include "trace_fixture.h"

#include <stdio.h>
#include <stdlib.h>

#include "gradcheck.h"

static char **lesson_paths;
static size_t n_lesson_paths;

// y = sum(exp(E[ids])) reads rows 0 and 2 of E, so dy/dE[r, c] is exp(E[r, c]) there and 0 in
// row 1, which no id picks.
static const char *const ROWS = "title: t\n"
                                "given:\n"
                                "  E: [[0.5, -1.0], [2.0, 3.0], [0.25, 1.5]]\n"
                                "  ids: [0, 2]\n"
                                "steps:\n"
                                "  - X: E[ids]\n"
                                "  - y: sum(exp(X))\n"
                                "  - dE: grad(y, E)\n";

// The gradient stage of y with respect to the node called wrt.
static size_t gradient_of(const Plan *plan, const char *wrt) {
    for (size_t i = 0; i < plan->n_nodes; i++) {
        const PlanNode *n = &plan->nodes[i];
        if (n->kind == PLAN_GRAD && n->is_stage && strcmp(plan->nodes[n->grad_wrt].name, wrt) == 0)
            return i;
    }
    fail_msg("no gradient with respect to '%s'", wrt);
    return 0;
}

static void test_an_unread_row_moves_nothing(void **state) {
    Fixture *f = *state;
    fixture_plan(f, "t.yaml", ROWS);
    const Trace *t = fixture_trace(f, NULL, 0);
    size_t dE = gradient_of(f->plan, "E");
    const size_t elements[6] = {0, 1, 2, 3, 4, 5};
    double fast[6], slow[6];
    GradcheckShortcuts taken = {0}, none = {0};
    assert_true(gradcheck_differences(f->plan, f->trace, dE, t->tensors, elements, 6, true, fast, &taken, &f->diag));
    assert_true(gradcheck_differences(f->plan, f->trace, dE, t->tensors, elements, 6, false, slow, &none, &f->diag));
    assert_memory_equal(fast, slow, sizeof(fast));
    // the row no id reads: y does not move at all, to the last bit
    assert_true(fast[2] == 0.0 && fast[3] == 0.0);
    // the rows read: the derivative of exp, by hand
    const double e[6] = {0.5, -1.0, 0, 0, 0.25, 1.5};
    for (size_t k = 0; k < 6; k++)
        if (k != 2 && k != 3)
            assert_double_equal(fast[k], exp(e[k]), 1e-8 * exp(e[k]));
    // row 1's four passes stop at X; the other eight compute exp at one element of four
    assert_int_equal(taken.unmoved, 4);
    assert_int_equal(taken.in_part, 8);
    assert_int_equal(none.unmoved, 0);
    assert_int_equal(none.in_part, 0);
}

// At -inf the step is inf: moved up, x[0] is nan (-inf + inf), and so is y; moved down, it is
// still -inf, so exp's input moves at no element. Both passes, and x[1]'s, keep the bits.
static void test_an_infinite_element_moves_nothing(void **state) {
    Fixture *f = *state;
    fixture_plan(f, "t.yaml",
                 "title: t\n"
                 "given:\n"
                 "  x: [-.inf, 0.5]\n"
                 "steps:\n"
                 "  - y: sum(exp(x))\n"
                 "  - dx: grad(y, x)\n");
    const Trace *t = fixture_trace(f, NULL, 0);
    size_t dx = gradient_of(f->plan, "x");
    const size_t elements[2] = {0, 1};
    double fast[2], slow[2];
    GradcheckShortcuts taken = {0};
    assert_true(gradcheck_differences(f->plan, f->trace, dx, t->tensors, elements, 2, true, fast, &taken, &f->diag));
    assert_true(gradcheck_differences(f->plan, f->trace, dx, t->tensors, elements, 2, false, slow, NULL, &f->diag));
    assert_memory_equal(fast, slow, sizeof(fast));
    assert_true(isnan(fast[0]));
    assert_double_equal(fast[1], exp(0.5), 1e-8 * exp(0.5));
    assert_int_equal(taken.in_part, 4);  // exp at one element of two, or at none (x[0] down)
}

// Every gradient stage of every lesson given, at up to BACKWARD_CHECK_ALL of its elements:
// the same bits with the shortcuts as without them.
static void test_every_lesson_the_same_bits_either_way(void **state) {
    Fixture *f = *state;
    GradcheckShortcuts taken = {0};
    size_t stages = 0, differences = 0;
    for (size_t l = 0; l < n_lesson_paths; l++) {
        fixture_plan_file(f, lesson_paths[l]);
        const Trace *t = fixture_trace(f, NULL, 0);
        for (size_t i = 0; i < f->plan->n_nodes; i++) {
            const PlanNode *n = &f->plan->nodes[i];
            if (n->kind != PLAN_GRAD || !n->is_stage || !t->tensors[n->grad_of] || !isfinite(t->tensors[n->grad_of]->data[0]))
                continue;
            size_t count = t->tensors[n->grad_wrt]->size;
            count = count < BACKWARD_CHECK_ALL ? count : BACKWARD_CHECK_ALL;
            size_t elements[BACKWARD_CHECK_ALL];
            double fast[BACKWARD_CHECK_ALL], slow[BACKWARD_CHECK_ALL];
            for (size_t k = 0; k < count; k++)
                elements[k] = k;
            assert_true(gradcheck_differences(f->plan, f->trace, i, t->tensors, elements, count, true, fast, &taken,
                                              &f->diag));
            assert_true(gradcheck_differences(f->plan, f->trace, i, t->tensors, elements, count, false, slow, NULL,
                                              &f->diag));
            if (memcmp(fast, slow, count * sizeof(double)) != 0)
                fail_msg("%s, stage %s: the shortcuts change a finite difference", lesson_paths[l], n->name);
            stages++;
            differences += count;
        }
    }
    print_message("%zu gradient stages, %zu differences the same both ways; %zu nodes found unmoved, %zu computed "
                  "in part\n",
                  stages, differences, taken.unmoved, taken.in_part);
    assert_true(stages > 0);
    assert_true(taken.unmoved > 0 && taken.in_part > 0);
}

int main(int argc, char **argv) {
    lesson_paths = argv + 1;
    n_lesson_paths = argc > 1 ? (size_t)(argc - 1) : 0;
    if (n_lesson_paths == 0) {
        fprintf(stderr, "usage: %s LESSON.yaml...\n", argv[0]);
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_an_unread_row_moves_nothing, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_an_infinite_element_moves_nothing, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_every_lesson_the_same_bits_either_way, fixture_setup, fixture_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
