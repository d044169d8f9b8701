// Tests of the finite-difference check's shortcuts (gradcheck.c): a node whose values come out
// as they were stops the pass there, and a one-input elementwise node is computed only where
// its input moved. Both must leave every difference with the bits of the whole computation:
// checked on a lesson whose answer is known by hand, and on every gradient stage of every
// lesson given on the command line. Then the note where an element cannot be checked (x or
// its difference not finite) and where the gradient itself is not finite.
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
    assert_true(gradcheck_differences(f->plan, f->trace, dE, t->tensors, elements, 6, GRADCHECK_SHORTCUTS, fast, &taken, &f->diag));
    assert_true(gradcheck_differences(f->plan, f->trace, dE, t->tensors, elements, 6, GRADCHECK_WHOLE, slow, &none, &f->diag));
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
    assert_true(gradcheck_differences(f->plan, f->trace, dx, t->tensors, elements, 2, GRADCHECK_SHORTCUTS, fast, &taken, &f->diag));
    assert_true(gradcheck_differences(f->plan, f->trace, dx, t->tensors, elements, 2, GRADCHECK_WHOLE, slow, NULL, &f->diag));
    assert_memory_equal(fast, slow, sizeof(fast));
    assert_true(isnan(fast[0]));
    assert_double_equal(fast[1], exp(0.5), 1e-8 * exp(0.5));
    assert_int_equal(taken.in_part, 4);  // exp at one element of two, or at none (x[0] down)
}

// The note under dy/dx of the lesson "given x, y = <y>, dx = grad(y, x)", as the run writes
// it, and the work it took off the budget.
static const char *note_spent(Fixture *f, const char *x, const char *y, size_t *spent) {
    static char note[OP_MESSAGE_MAX];
    char yaml[256];
    snprintf(yaml, sizeof(yaml), "title: t\ngiven:\n  x: %s\nsteps:\n  - y: %s\n  - dx: grad(y, x)\n", x, y);
    fixture_plan(f, "t.yaml", yaml);
    const Trace *t = fixture_trace(f, NULL, 0);
    size_t budget = BACKWARD_CHECK_LESSON_WORK;
    assert_true(gradcheck_note(f->plan, f->trace, gradient_of(f->plan, "x"), t->tensors, &budget, &f->diag, note,
                               sizeof(note)));
    *spent = BACKWARD_CHECK_LESSON_WORK - budget;
    return note;
}

static const char *note_of(Fixture *f, const char *x, const char *y) {
    size_t spent;
    return note_spent(f, x, y, &spent);
}

static void expect_in(const char *note, const char *text) {
    if (!strstr(note, text))
        fail_msg("the note lacks\n  %s\nnote:\n  %s", text, note);
}

// At x = -inf a step is inf and y moved by it is nan: element 0 cannot be checked. The other
// two are, where dy/dx = exp(x) and the differences agree with it.
static void test_an_infinite_x_is_left_out(void **state) {
    Fixture *f = *state;
    const char *note = note_of(f, "[-.inf, 0.5, 1.0]", "sum(exp(x))");
    expect_in(note, "finite differences agree: largest relative difference ");
    expect_in(note, " (2 of 3 elements; element 0 left out, where x is -inf and a difference is not a number)");
    // two left out, of three: the one left is still compared, where dy/dx = -2x exp(-x^2)
    note = note_of(f, "[-.inf, 0.5, .inf]", "sum(exp(-x * x))");
    expect_in(note, "finite differences agree: largest relative difference ");
    expect_in(note, " (1 of 3 elements; 2 left out, where x or the difference is not finite: first element 0, where "
                    "x is -inf)");
}

// The passes of an element left out for its x are not run, nor counted: two elements of three
// take two thirds of the work of three.
static void test_no_passes_where_x_is_not_finite(void **state) {
    Fixture *f = *state;
    size_t all, two;
    note_spent(f, "[0.25, 0.5, 1.0]", "sum(exp(x))", &all);
    note_spent(f, "[-.inf, 0.5, 1.0]", "sum(exp(x))", &two);
    assert_true(all > 0);
    assert_int_equal(3 * two, 2 * all);
}

// sqrt(x) at x = 0 is 0, and a step below 0 is nan: the difference there is nan, and the
// element is left out; at x = 4 it is 1 / (2 sqrt(4)) = 0.25 both ways.
static void test_a_difference_that_is_not_finite_is_left_out(void **state) {
    Fixture *f = *state;
    const char *note = note_of(f, "[0.0, 4.0]", "sum(sqrt(x))");
    expect_in(note, "finite differences agree: largest relative difference ");
    expect_in(note, " (1 of 2 elements; element 0 left out, where x is 0 and the difference is nan)");
}

// exp(-inf) = 0, so y = 0 is finite, but no element of x is: nothing can be compared.
static void test_no_element_to_check(void **state) {
    Fixture *f = *state;
    const char *note = note_of(f, "[-.inf, -.inf]", "sum(exp(x))");
    assert_string_equal(note, "finite differences not checked: x or the difference is not finite at all 2 "
                              "elements (first element 0, where x is -inf)");
}

// y = sum(sqrt(x ** 2)) = |0| + |2|. At x = 0 the chain rule multiplies 0.5 / sqrt(0) = inf by
// 2 * 0 = 0: the gradient is nan, while the difference is (sqrt(h^2) - sqrt((-h)^2)) / 2h = 0
// exactly. At x = 2 both are 1 (0.5 / 2 * 2 * 2). The nan is the worst, and the element after
// it, which agrees, does not take its place.
static void test_a_gradient_that_is_not_finite_disagrees(void **state) {
    Fixture *f = *state;
    const char *note = note_of(f, "[0.0, 2.0]", "sum(sqrt(x ** 2))");
    assert_string_equal(note, "finite differences DISAGREE: the gradient is nan at element 0, where the finite "
                              "difference is 0 (all 2 elements)");
}

// y = sum(x * 1e-200) + 1: the gradient is 1e-200 everywhere, but y rounds by about
// 1e3 * 2.2e-16 = 2.2e-13 (the allowance for a y near 1), which over a step of 1e-5 is 2.2e-8:
// a relative difference of 2.2e-8 / 1e-200 = 2e+192 would pass. Nothing is measured, and the
// note says so instead of saying the differences agree.
static void test_a_gradient_too_small_to_measure(void **state) {
    Fixture *f = *state;
    const char *note = note_of(f, "[1.0, 2.0]", "sum(x * 1e-200) + 1");
    assert_string_equal(note, "finite differences cannot check this: beside a gradient of at most 1e-200, the "
                              "rounding of y allows a relative difference of 2e+192 (all 2 elements)");
}

// An empty stage on the way to y (a slice of no rows) has a gradient of no elements: there is
// nothing to move, and the note says so instead of dividing the check's time among none.
static void test_an_empty_stage_is_not_checked(void **state) {
    Fixture *f = *state;
    fixture_plan(f, "t.yaml",
                 "title: t\n"
                 "given:\n"
                 "  A: [[1.0, 2.0], [3.0, 4.0]]\n"
                 "steps:\n"
                 "  - e: A[0:0] * 2.0\n"
                 "  - y: sum(e) + sum(A * A)\n"
                 "  - dA: grad(y, A)\n");
    const Trace *t = fixture_trace(f, NULL, 0);
    char note[OP_MESSAGE_MAX];
    size_t budget = BACKWARD_CHECK_LESSON_WORK;
    assert_true(gradcheck_note(f->plan, f->trace, gradient_of(f->plan, "e"), t->tensors, &budget, &f->diag, note,
                               sizeof(note)));
    assert_string_equal(note, "finite differences not checked: e has no elements to move");
    assert_int_equal(budget, BACKWARD_CHECK_LESSON_WORK);
    // A itself, all 4 elements: d(sum(A * A))/dA = 2A
    assert_true(gradcheck_note(f->plan, f->trace, gradient_of(f->plan, "A"), t->tensors, &budget, &f->diag, note,
                               sizeof(note)));
    expect_in(note, "finite differences agree");
    expect_in(note, "(all 4 elements)");
}

// Every gradient stage of every lesson given, at up to BACKWARD_CHECK_ALL of its elements:
// the same bits with the shortcuts as without them, and with all the passes run at once.
static void test_every_lesson_the_same_bits_either_way(void **state) {
    Fixture *f = *state;
    GradcheckShortcuts taken = {0}, together = {0};
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
            double fast[BACKWARD_CHECK_ALL], slow[BACKWARD_CHECK_ALL], stacked[BACKWARD_CHECK_ALL];
            for (size_t k = 0; k < count; k++)
                elements[k] = k;
            assert_true(gradcheck_differences(f->plan, f->trace, i, t->tensors, elements, count, GRADCHECK_SHORTCUTS,
                                              fast, &taken, &f->diag));
            assert_true(gradcheck_differences(f->plan, f->trace, i, t->tensors, elements, count, GRADCHECK_WHOLE, slow,
                                              NULL, &f->diag));
            assert_true(gradcheck_differences(f->plan, f->trace, i, t->tensors, elements, count, GRADCHECK_STACKED,
                                              stacked, &together, &f->diag));
            if (memcmp(fast, slow, count * sizeof(double)) != 0)
                fail_msg("%s, stage %s: the shortcuts change a finite difference", lesson_paths[l], n->name);
            for (size_t k = 0; k < count; k++)
                if (memcmp(&stacked[k], &slow[k], sizeof(double)) != 0)
                    fail_msg("%s, stage %s, element %zu: %.17g all passes at once, %.17g one at a time",
                             lesson_paths[l], n->name, k, stacked[k], slow[k]);
            stages++;
            differences += count;
        }
    }
    print_message("%zu gradient stages, %zu differences the same all three ways; one pass at a time, %zu nodes found "
                  "unmoved and %zu computed in part; all at once, %zu nodes computed for every pass together, %zu "
                  "in part, %zu found unmoved\n",
                  stages, differences, taken.unmoved, taken.in_part, together.stacked, together.in_part,
                  together.unmoved);
    assert_true(stages > 0);
    assert_true(taken.unmoved > 0 && taken.in_part > 0);
    assert_true(together.stacked > 0 && together.in_part > 0 && together.unmoved > 0);
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
        cmocka_unit_test_setup_teardown(test_an_infinite_x_is_left_out, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_a_gradient_too_small_to_measure, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_no_passes_where_x_is_not_finite, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_a_difference_that_is_not_finite_is_left_out, fixture_setup,
                                        fixture_teardown),
        cmocka_unit_test_setup_teardown(test_no_element_to_check, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_a_gradient_that_is_not_finite_disagrees, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_an_empty_stage_is_not_checked, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_every_lesson_the_same_bits_either_way, fixture_setup, fixture_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
