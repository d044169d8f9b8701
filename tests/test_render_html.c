// Tests of the web page on a trace built by hand (the renderer reads nothing else): which
// values the page shows of a tensor too large to show whole. The expected values come from
// the formula the test fills the tensor with, never from the page itself.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"
#include "render_train.h"

enum { HEADS = 20, ROWS = 41, COLS = 3 };

// The value the test puts at [h, r, c]: its index can be read off its digits.
static double value_at(size_t h, size_t r, size_t c) {
    return 1000.0 * (double)h + 10.0 * (double)r + (double)c;
}

// The exact values (the cells' tooltips) of the table under the caption "[h, :, :]", in page
// order, into got; returns how many, or SIZE_MAX when the page has no such slice.
static size_t slice_cells(const char *page, size_t h, double *got, size_t cap) {
    char caption[64];
    snprintf(caption, sizeof(caption), "<figcaption>[%zu, :, :]</figcaption>", h);
    const char *at = strstr(page, caption);
    if (!at)
        return SIZE_MAX;
    const char *body = strstr(at, "<tbody>");
    const char *end = body ? strstr(body, "</tbody>") : NULL;
    assert_non_null(end);
    size_t n = 0;
    for (const char *p = strstr(body, "<td title=\""); p && p < end; p = strstr(p, "<td title=\"")) {
        p += strlen("<td title=\"");
        assert_true(n < cap);
        got[n++] = strtod(p, NULL);
    }
    return n;
}

// The page of one stage built by hand; free it with free().
static char *page_of(TraceStage *stage) {
    Trace tr = {.title = "T", .file_name = "t.yaml", .digits = 4, .stages = stage, .n_stages = 1,
                .doc_first_slip = -1};
    StrBuf out;
    strbuf_init(&out);
    render_html(&tr, &out);
    assert_false(out.failed);
    char *page = strdup(strbuf_str(&out));
    strbuf_finish(&out);
    return page;
}

// A given of shape [20, 41, 3]: more slices than a page shows (16) and more rows than a table
// shows (40). As numpy prints it, the page shows slices 0, 1, 2, a gap of 14, then 17, 18,
// 19; and in each the rows 0 to 9 and 31 to 40, every column. Each table must hold its own
// slice's values: slice 19's rows start at 19,000, not at slice 0's.
static void test_corners_of_many_slices(void **state) {
    (void)state;
    static double values[HEADS * ROWS * COLS];
    for (size_t h = 0; h < HEADS; h++)
        for (size_t r = 0; r < ROWS; r++)
            for (size_t c = 0; c < COLS; c++)
                values[(h * ROWS + r) * COLS + c] = value_at(h, r, c);
    Tensor t = {.shape = {3, {HEADS, ROWS, COLS}}, .size = HEADS * ROWS * COLS, .data = values};
    TraceStage stage = {.kind = STAGE_GIVEN, .name = "heads", .number = "", .value = &t};
    char *page = page_of(&stage);
    assert_non_null(strstr(page, "<p class=\"gap\">⋮ 14 more slices</p>"));

    const size_t shown_rows[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40};
    const size_t n_rows = sizeof(shown_rows) / sizeof(shown_rows[0]);
    double got[ROWS * COLS];
    for (size_t h = 0; h < HEADS; h++) {
        size_t n = slice_cells(page, h, got, ROWS * COLS);
        if (h >= 3 && h < 17) {
            assert_int_equal(n, SIZE_MAX);  // in the gap
            continue;
        }
        assert_int_equal(n, n_rows * COLS);
        for (size_t i = 0; i < n_rows; i++)
            for (size_t c = 0; c < COLS; c++)
                if (got[i * COLS + c] != value_at(h, shown_rows[i], c))
                    fail_msg("slice %zu, row %zu, column %zu: the page shows %g, the tensor holds %g", h,
                             shown_rows[i], c, got[i * COLS + c], value_at(h, shown_rows[i], c));
    }
    free(page);
}

// A causal mask of 0 and -inf is drawn as allowed and blocked cells, with a legend that says
// so; on a colour scale both would be white.
static void test_a_mask_is_allowed_and_blocked(void **state) {
    (void)state;
    double values[] = {0, -INFINITY, 0, 0};
    Tensor t = {.shape = {2, {2, 2}}, .size = 4, .data = values};
    TraceStage stage = {.kind = STAGE_STEP, .name = "mask", .number = "1", .expr = "e", .value = &t};
    char *page = page_of(&stage);
    assert_non_null(strstr(page, "<td title=\"0\" class=\"allowed\">0.0000</td>"
                                 "<td title=\"-inf\" class=\"blocked\">-inf</td>"));
    assert_non_null(strstr(page, "-inf: blocked (softmax gives it weight 0)</p>"));
    assert_null(strstr(page, "colour: darker is larger"));
    free(page);
    // A -inf among other values is no mask: it stays on the scale.
    double scores[] = {0, -INFINITY, 0.5, 0};
    t.data = scores;
    page = page_of(&stage);
    assert_null(strstr(page, "class=\"blocked\""));
    assert_non_null(strstr(page, "colour: darker is larger"));
    free(page);
}

// The colour scale of whole numbers is labelled with whole numbers: -5 to 5, not -5.0000.
static void test_integer_scale_is_labelled_whole(void **state) {
    (void)state;
    double values[] = {-5, 3, 0, 2};
    Tensor t = {.shape = {1, {4}}, .size = 4, .data = values, .is_count = true};
    TraceStage stage = {.kind = STAGE_STEP, .name = "positions", .number = "1", .expr = "e", .value = &t};
    char *page = page_of(&stage);
    assert_non_null(strstr(page, "<span class=\"end\">-5</span>"));
    assert_non_null(strstr(page, "<span class=\"end\">5</span>"));
    assert_null(strstr(page, "5.0000"));
    free(page);
}

// A step that only names a grad() has no operation line of its own (its backward pass is
// shown above it); any other step keeps its line.
static void test_a_step_naming_a_gradient_shows_no_copy(void **state) {
    (void)state;
    double values[] = {1, 2};
    Tensor t = {.shape = {1, {2}}, .size = 2, .data = values};
    TraceStage stage = {.kind = STAGE_STEP, .name = "g", .number = "2", .expr = "e", .value = &t, .op = "copy",
                        .op_line = "copy([2]) -> [2]", .op_about = "the same values under a new name",
                        .names_gradient = true};
    char *page = page_of(&stage);
    assert_null(strstr(page, "copy([2])"));
    free(page);
    stage.names_gradient = false;
    page = page_of(&stage);
    assert_non_null(strstr(page, "<code class=\"shapes\">copy([2]) -&gt; [2]</code>"));
    free(page);
}

// Heads side by side wrap onto new rows rather than hide behind a scroll bar.
static void test_slices_wrap(void **state) {
    (void)state;
    double values[8] = {0};
    Tensor t = {.shape = {3, {2, 2, 2}}, .size = 8, .data = values};
    TraceStage stage = {.kind = STAGE_STEP, .name = "heads", .number = "1", .expr = "e", .value = &t};
    char *page = page_of(&stage);
    assert_non_null(strstr(page, ".slices{display:flex;flex-wrap:wrap;"));
    free(page);
}

// Narration written with Windows line ends ("\r\n", kept by a double-quoted YAML string) and
// spaces at the ends of lines: each line loses them, so a line of only "\r" is blank and
// starts a new paragraph, and no '\r' reaches the page.
static void test_prose_drops_spaces_and_carriage_returns_at_line_ends(void **state) {
    (void)state;
    Trace tr = {.title = "T", .file_name = "t.yaml", .digits = 4, .doc_first_slip = -1,
                .intro = "One \r\ntwo\r\n\r\nThree\r"};
    StrBuf out;
    strbuf_init(&out);
    render_html(&tr, &out);
    assert_false(out.failed);
    const char *want = "<section class=\"intro\">\n<p class=\"prose\">One\ntwo</p>\n<p class=\"prose\">Three</p>\n"
                       "</section>\n";
    if (!strstr(strbuf_str(&out), want))
        fail_msg("the page lacks\n%s\npage:\n%s", want, strbuf_str(&out));
    assert_null(strchr(strbuf_str(&out), '\r'));
    strbuf_finish(&out);
}

// The loss curve's points: x from 60 (step 0) to 590 (the last step), y from 10 (the largest
// loss) to 190 (the smallest). Losses 2, 1, 1.5 over three steps: x = 60 + 530 s / 2 = 60,
// 325, 590; y = 10 + 180 (2 - loss) / (2 - 1) = 10, 190, 100. A single step sits in the
// middle, x = 60 + 530 / 2 = 325, and a flat loss at y = 100.
static void test_loss_curve_points(void **state) {
    (void)state;
    double losses[] = {2, 1, 1.5};
    TraceTraining t = {.steps = 3, .steps_done = 3, .losses = losses};
    StrBuf out;
    strbuf_init(&out);
    render_train_svg(&t, 4, &out);
    assert_false(out.failed);
    if (!strstr(strbuf_str(&out), " points=\"60.0,10.0 325.0,190.0 590.0,100.0\"/>"))
        fail_msg("the curve's points are wrong:\n%s", strbuf_str(&out));
    assert_non_null(strstr(strbuf_str(&out), ">2.0000</text>"));  // the largest loss, at the top
    assert_non_null(strstr(strbuf_str(&out), ">1.0000</text>"));
    strbuf_finish(&out);
    strbuf_init(&out);
    t.steps_done = 1;
    render_train_svg(&t, 4, &out);
    if (!strstr(strbuf_str(&out), " points=\"325.0,100.0\"/>"))
        fail_msg("one step is not in the middle:\n%s", strbuf_str(&out));
    strbuf_finish(&out);
}

// Narration beside a claim that fails is marked, between the narration and the values, as the
// text trace marks it; beside a claim that holds, or under another stage, it is not.
static void test_narration_beside_a_failed_claim_is_marked(void **state) {
    (void)state;
    double values[] = {1, 2};
    Tensor t = {.shape = {1, {2}}, .size = 2, .data = values};
    TraceStage stage[2] = {
        {.kind = STAGE_STEP, .name = "w", .number = "1", .expr = "e", .value = &t, .say = "w grows."},
        {.kind = STAGE_STEP, .name = "v", .number = "2", .expr = "e", .value = &t, .say = "v is calm."},
    };
    TraceClaim claim = {.text = "w grows", .expr = "w[1] > w[0]", .holds = false, .detail = "1 <= 2", .stage = 0};
    Trace tr = {.title = "T", .file_name = "t.yaml", .digits = 4, .stages = stage, .n_stages = 2,
                .doc_first_slip = -1, .claims = &claim, .n_claims = 1, .n_claims_failed = 1};
    for (int holds = 0; holds < 2; holds++) {
        claim.holds = holds;
        tr.n_claims_failed = !holds;
        StrBuf out;
        strbuf_init(&out);
        render_html(&tr, &out);
        assert_false(out.failed);
        const char *page = strbuf_str(&out);
        const char *say = strstr(page, "w grows.");
        const char *careful = strstr(page, "the claim below fails on these numbers");
        const char *calm = strstr(page, "v is calm.");
        assert_non_null(say);
        assert_non_null(calm);
        if (holds) {
            assert_null(careful);
        } else {
            assert_non_null(careful);
            assert_true(say < careful && careful < calm);
            assert_null(strstr(careful + 1, "the claim below fails on these numbers"));  // once
        }
        strbuf_finish(&out);
    }
}

// The validation loss, a dot at each step it was measured at, on the same scale: losses 2, 1,
// 1.5 and a validation loss of 2.5 at step 0 and 1.25 at step 2 make the scale 1 to 2.5, so
// the curve's y = 10 + 180 (2.5 - loss) / 1.5: 70, 190, 130, and the dots (60, 10), (590, 160).
static void test_validation_dots(void **state) {
    (void)state;
    double losses[] = {2, 1, 1.5}, val[] = {2.5, 1.25};
    size_t steps[] = {0, 2};
    TraceValidation v = {.steps = steps, .losses = val, .n = 2};
    TraceTraining t = {.steps = 3, .steps_done = 3, .losses = losses, .validation = &v};
    StrBuf out;
    strbuf_init(&out);
    render_train_svg(&t, 4, &out);
    assert_false(out.failed);
    const char *want[] = {" points=\"60.0,70.0 325.0,190.0 590.0,130.0\"/>",
                          "<circle cx=\"60.0\" cy=\"10.0\" r=\"3\" fill=\"#d9480f\"><title>the validation loss at "
                          "step 0: 2.5000</title></circle>",
                          "<circle cx=\"590.0\" cy=\"160.0\" r=\"3\""};
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        if (!strstr(strbuf_str(&out), want[i]))
            fail_msg("the picture lacks\n%s\npicture:\n%s", want[i], strbuf_str(&out));
    strbuf_finish(&out);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_corners_of_many_slices),
        cmocka_unit_test(test_a_mask_is_allowed_and_blocked),
        cmocka_unit_test(test_integer_scale_is_labelled_whole),
        cmocka_unit_test(test_a_step_naming_a_gradient_shows_no_copy),
        cmocka_unit_test(test_slices_wrap),
        cmocka_unit_test(test_prose_drops_spaces_and_carriage_returns_at_line_ends),
        cmocka_unit_test(test_loss_curve_points),
        cmocka_unit_test(test_narration_beside_a_failed_claim_is_marked),
        cmocka_unit_test(test_validation_dots),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
