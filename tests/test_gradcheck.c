// Tests of the finite-difference check (gradcheck.c): its differences are central differences
// with the step it says, worked out by hand on a cube, on an exp that reads some rows of a
// table and on an infinite element; every gradient stage of every lesson given on the command
// line agrees with its backward pass. Then the note, with its number worked out by hand and
// with numpy, where an element cannot be checked (x or its difference not finite) and where
// the gradient itself is not finite.
#include "trace_fixture.h"

#include <float.h>
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

// The differences of y at every element of x (at most 8) in the lesson "given x, y = <y>,
// dx = grad(y, x)".
static void differences_of(Fixture *f, const char *x, const char *y, double *fd, size_t count) {
    char yaml[256];
    snprintf(yaml, sizeof(yaml), "title: t\ngiven:\n  x: %s\nsteps:\n  - y: %s\n  - dx: grad(y, x)\n", x, y);
    fixture_plan(f, "t.yaml", yaml);
    const Trace *t = fixture_trace(f, NULL, 0);
    const size_t elements[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    assert_true(count <= 8);
    assert_true(gradcheck_differences(f->plan, f->trace, gradient_of(f->plan, "x"), t->tensors, elements, count, fd,
                                      &f->diag));
}

// (y(x + h) - y(x - h)) / 2h for y = x^3 is ((x + h)^3 - (x - h)^3) / 2h = 3x^2 + h^2 exactly:
// the h^2 tells the step. It is 1e-5 up to |x| = 1 and 1e-5 |x| beyond: at x = 0.5, 2 and 10,
// h^2 is 1e-10, 4e-10 and 1e-8 (a step of 1e-5 at 2 and 10 would give 1e-10, 3e-10 and 1e-8
// away). What is left is the rounding of y over 2h: numpy, with the same operations, is
// 7e-13, 1e-11 and 6e-10 from 3x^2 + h^2, well inside each tolerance.
static void test_a_central_difference_with_a_relative_step(void **state) {
    Fixture *f = *state;
    const double x[3] = {0.5, 2.0, 10.0}, tolerance[3] = {2e-12, 5e-11, 2e-9};
    const char *given[3] = {"[0.5]", "[2.0]", "[10.0]"};
    for (size_t k = 0; k < 3; k++) {
        double fd, h = 1e-5 * fmax(1.0, x[k]);
        differences_of(f, given[k], "sum(x * x * x)", &fd, 1);
        assert_double_equal(fd, 3 * x[k] * x[k] + h * h, tolerance[k]);
        fixture_release(f);
    }
}

// A row of E that no id picks: moved, y comes out with the same bits, so its differences are
// 0 exactly; elsewhere they are the derivative of exp, by hand.
static void test_an_unread_row_moves_nothing(void **state) {
    Fixture *f = *state;
    fixture_plan(f, "t.yaml", ROWS);
    const Trace *t = fixture_trace(f, NULL, 0);
    size_t dE = gradient_of(f->plan, "E");
    const size_t elements[6] = {0, 1, 2, 3, 4, 5};
    double fd[6];
    assert_true(gradcheck_differences(f->plan, f->trace, dE, t->tensors, elements, 6, fd, &f->diag));
    assert_true(fd[2] == 0.0 && fd[3] == 0.0);
    const double e[6] = {0.5, -1.0, 0, 0, 0.25, 1.5};
    for (size_t k = 0; k < 6; k++)
        if (k != 2 && k != 3)
            assert_double_equal(fd[k], exp(e[k]), 1e-8 * exp(e[k]));
}

// At -inf the step is inf: moved up, x[0] is nan (-inf + inf), and so is y. x[1] is an
// ordinary element, where dy/dx = exp(x).
static void test_an_infinite_element(void **state) {
    Fixture *f = *state;
    double fd[2];
    differences_of(f, "[-.inf, 0.5]", "sum(exp(x))", fd, 2);
    assert_true(isnan(fd[0]));
    assert_double_equal(fd[1], exp(0.5), 1e-8 * exp(0.5));
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

// The note's number: at x = 2 the gradient of x^3 is 12 (torch: 12 too), and the difference
// 12 + 4e-10 (above); numpy gives |difference - 12| / 12 = 3.2e-11.
static void test_the_note_gives_the_relative_difference(void **state) {
    Fixture *f = *state;
    assert_string_equal(note_of(f, "[2.0]", "sum(x * x * x)"),
                        "finite differences agree: largest relative difference 3e-11 (all 1 element)");
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
// where y and the difference are finite, the difference agrees with the gradient of the
// backward pass (itself compared with torch's by tests/crosscheck.py) to 1e-6 of the stage's
// largest, or to the rounding of y over the step when y is large, as the note requires.
static void test_every_lesson_agrees_with_its_backward_pass(void **state) {
    Fixture *f = *state;
    size_t stages = 0, differences = 0;
    for (size_t l = 0; l < n_lesson_paths; l++) {
        fixture_plan_file(f, lesson_paths[l]);
        const Trace *t = fixture_trace(f, NULL, 0);
        for (size_t i = 0; i < f->plan->n_nodes; i++) {
            const PlanNode *n = &f->plan->nodes[i];
            if (n->kind != PLAN_GRAD || !n->is_stage || !t->tensors[n->grad_of] || !isfinite(t->tensors[n->grad_of]->data[0]))
                continue;
            const Tensor *x = t->tensors[n->grad_wrt], *grad = t->tensors[i];
            size_t count = x->size < BACKWARD_CHECK_ALL ? x->size : BACKWARD_CHECK_ALL;
            size_t elements[BACKWARD_CHECK_ALL];
            double fd[BACKWARD_CHECK_ALL], scale = 0;
            for (size_t k = 0; k < count; k++)
                elements[k] = k;
            assert_true(gradcheck_differences(f->plan, f->trace, i, t->tensors, elements, count, fd, &f->diag));
            for (size_t k = 0; k < count; k++)
                if (isfinite(fd[k]) && isfinite(x->data[k]))
                    scale = fmax(scale, fmax(fabs(fd[k]), fabs(grad->data[k])));
            double y = fabs(t->tensors[n->grad_of]->data[0]);
            double tolerance = fmax(1e-6 * scale, 1e3 * DBL_EPSILON * fmax(1.0, y) / 1e-5);
            for (size_t k = 0; k < count; k++) {
                if (!isfinite(fd[k]) || !isfinite(x->data[k]))
                    continue;
                if (!(fabs(fd[k] - grad->data[k]) <= tolerance))
                    fail_msg("%s, stage %s, element %zu: finite difference %.17g, gradient %.17g", lesson_paths[l],
                             n->name, k, fd[k], grad->data[k]);
                differences++;
            }
            stages++;
        }
    }
    print_message("%zu gradient stages, %zu differences agree with the backward pass\n", stages, differences);
    assert_true(stages > 0 && differences > 0);
}

int main(int argc, char **argv) {
    lesson_paths = argv + 1;
    n_lesson_paths = argc > 1 ? (size_t)(argc - 1) : 0;
    if (n_lesson_paths == 0) {
        fprintf(stderr, "usage: %s LESSON.yaml...\n", argv[0]);
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_a_central_difference_with_a_relative_step, fixture_setup,
                                        fixture_teardown),
        cmocka_unit_test_setup_teardown(test_an_unread_row_moves_nothing, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_an_infinite_element, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_the_note_gives_the_relative_difference, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_an_infinite_x_is_left_out, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_no_passes_where_x_is_not_finite, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_a_difference_that_is_not_finite_is_left_out, fixture_setup,
                                        fixture_teardown),
        cmocka_unit_test_setup_teardown(test_no_element_to_check, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_a_gradient_that_is_not_finite_disagrees, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_an_empty_stage_is_not_checked, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_every_lesson_agrees_with_its_backward_pass, fixture_setup, fixture_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
