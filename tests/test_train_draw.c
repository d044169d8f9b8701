// Tests of train_draw: the batch each training step sees. The ids drawn at random were worked
// out apart from the tracer, by splitmix64 written again in Python (tokens() of
// tests/train_torch.py); the copies were then made by hand from the definitions in
// doc/training.md.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "train_draw.h"

// The batch of `step` for d, compared with `want`, row by row.
static void check_batch(const LessonTrainData *d, size_t step, size_t rows, size_t n, const double *want) {
    Shape s = {.rank = 2, .dim = {rows, n}};
    Tensor *out = tensor_create(&s);
    assert_non_null(out);
    train_draw_batch(out, d, step);
    for (size_t i = 0; i < rows * n; i++) {
        if (out->data[i] != want[i])
            fail_msg("step %zu, row %zu, position %zu: %g here, %g wanted", step, i / n, i % n, out->data[i],
                     want[i]);
    }
    tensor_destroy(out);
}

// vocab 4 from seed 5: step 0 draws the rows [1 3 0 0 0 1], [3 2 1 2 1 0], [3 1 3 3 3 1],
// step 1 (seed 6) [2 1 0 0 2 3], [0 0 0 3 0 1], [0 3 1 0 2 2]. Shifts 2 to 4 come in turn, row
// after row, starting one further at each step: 2, 3, 4 at step 0 and 3, 4, 2 at step 1; a row
// keeps its first `shift` ids and repeats them.
static void test_shifted(void **state) {
    (void)state;
    LessonTrainData d = {.draw = TRAIN_DRAW_SHIFTED, .vocab = 4, .seed = 5, .shift_lo = 2, .shift_hi = 4};
    const double step0[] = {1, 3, 1, 3, 1, 3,  // shift 2
                            3, 2, 1, 3, 2, 1,  // shift 3
                            3, 1, 3, 3, 3, 1}; // shift 4: [3 1 3 3] then its first two again
    check_batch(&d, 0, 3, 6, step0);
    const double step1[] = {2, 1, 0, 2, 1, 0,  // shift 3
                            0, 0, 0, 3, 0, 0,  // shift 4
                            0, 3, 0, 3, 0, 3}; // shift 2
    check_batch(&d, 1, 3, 6, step1);
}

// One shift only: every row is its first `shift` ids over and over, at every step.
static void test_shifted_one_shift(void **state) {
    (void)state;
    LessonTrainData d = {.draw = TRAIN_DRAW_SHIFTED, .vocab = 4, .seed = 5, .shift_lo = 5, .shift_hi = 5};
    const double step0[] = {1, 3, 0, 0, 0, 1, 3, 2, 1, 2, 1, 3};  // the draws' first 5, then the first again
    check_batch(&d, 0, 2, 6, step0);
}

// vocab 10 from seed 9 + 2 draws [3 2 6 5], [1 5 1 7]; repeat copies each first half.
static void test_repeat(void **state) {
    (void)state;
    LessonTrainData d = {.draw = TRAIN_DRAW_REPEAT, .vocab = 10, .seed = 9};
    const double want[] = {3, 2, 3, 2, 1, 5, 1, 5};
    check_batch(&d, 2, 2, 4, want);
}

// A text's windows: the places of step s are ids drawn as above, from 0 to len - n, so from
// seed 5 with 4 places (len 8, n 5) step 0 starts its rows at 1, 3 and 0, step 1 (seed 6) at
// 2, 1 and 0; each row is the text's bytes from there.
static void test_text(void **state) {
    (void)state;
    const unsigned char text[] = "abcdefgh";
    LessonTrainData d = {.draw = TRAIN_DRAW_TEXT, .text = text, .text_len = 8, .seed = 5};
    const double step0[] = {'b', 'c', 'd', 'e', 'f', 'd', 'e', 'f', 'g', 'h', 'a', 'b', 'c', 'd', 'e'};
    check_batch(&d, 0, 3, 5, step0);
    d.seed = 6;
    const double step1[] = {'c', 'd', 'e', 'f', 'g', 'b', 'c', 'd', 'e', 'f', 'a', 'b', 'c', 'd', 'e'};
    check_batch(&d, 0, 3, 5, step1);
}

// Rows shorter than the batch is tall: the places are drawn into the batch itself, and no row
// overwrites a place before it is read. len 5, n 2: 4 places again, rows at 1, 3 and 0.
static void test_text_short_rows(void **state) {
    (void)state;
    const unsigned char text[] = "abcde";
    LessonTrainData d = {.draw = TRAIN_DRAW_TEXT, .text = text, .text_len = 5, .seed = 5};
    const double want[] = {'b', 'c', 'd', 'e', 'a', 'b'};
    check_batch(&d, 0, 3, 2, want);
}

// A text with its last 4 of 12 bytes held out draws its windows from the first 8 only: the
// places are those of test_text (0 to 8 - 5, 4 places), none reaching into the tail.
static void test_text_held_out(void **state) {
    (void)state;
    const unsigned char text[] = "abcdefghWXYZ";
    LessonTrainData d = {.draw = TRAIN_DRAW_TEXT, .text = text, .text_len = 12, .held = 4, .seed = 5};
    const double step0[] = {'b', 'c', 'd', 'e', 'f', 'd', 'e', 'f', 'g', 'h', 'a', 'b', 'c', 'd', 'e'};
    check_batch(&d, 0, 3, 5, step0);
}

// The validation batches of a tail of 30 bytes (after 10), rows of 4, 2 rows a batch: 30 / 4 / 2
// gives 3 batches, 6 windows, window i at 10 + floor(i x 26 / 5): 10, 15, 20, 25, 30, 36.
static void test_validation_windows(void **state) {
    (void)state;
    unsigned char text[40];
    for (size_t i = 0; i < sizeof(text); i++)
        text[i] = (unsigned char)i;
    LessonTrainData d = {.draw = TRAIN_DRAW_TEXT, .text = text, .text_len = 40, .held = 30};
    assert_int_equal(train_validation_batches(&d, 2, 4), 3);
    Shape s = {.rank = 2, .dim = {2, 4}};
    Tensor *out = tensor_create(&s);
    assert_non_null(out);
    const size_t starts[] = {10, 15, 20, 25, 30, 36};
    for (size_t b = 0; b < 3; b++) {
        train_validation_batch(out, &d, b, 3);
        for (size_t i = 0; i < 8; i++)
            assert_int_equal(out->data[i], starts[b * 2 + i / 4] + i % 4);
    }
    tensor_destroy(out);
    // A tail too short for a batch without overlap still gives one: 7 bytes, 2 rows of 4 at 33
    // and 36, the last ending at the text's end.
    d.held = 7;
    assert_int_equal(train_validation_batches(&d, 2, 4), 1);
    out = tensor_create(&s);
    assert_non_null(out);
    train_validation_batch(out, &d, 0, 1);
    assert_int_equal(out->data[0], 33);
    assert_int_equal(out->data[4], 36);
    assert_int_equal(out->data[7], 39);
    tensor_destroy(out);
    // A long tail: at most TRAIN_VALIDATION_MAX_BATCHES.
    d.held = 30;
    assert_int_equal(train_validation_batches(&d, 1, 1), TRAIN_VALIDATION_MAX_BATCHES);
}

// Rows written out are taken in turn: step 1 of batch 2 takes rows 2 and 0 of three.
static void test_sequences(void **state) {
    (void)state;
    double rows[] = {0, 1, 2, 3, 4, 5};
    LessonTrainData d = {.draw = TRAIN_DRAW_SEQUENCES, .rows = rows, .n_rows = 3, .length = 2};
    const double want[] = {4, 5, 0, 1};
    check_batch(&d, 1, 2, 2, want);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shifted),
        cmocka_unit_test(test_shifted_one_shift),
        cmocka_unit_test(test_repeat),
        cmocka_unit_test(test_sequences),
        cmocka_unit_test(test_text),
        cmocka_unit_test(test_text_short_rows),
        cmocka_unit_test(test_text_held_out),
        cmocka_unit_test(test_validation_windows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
