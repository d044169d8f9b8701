// Tests of train_baseline: the Witten-Bell bigram and trigram scores of a held-out tail, worked
// out by hand from the counts and evaluated with numpy (np.log on the same quotients).
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cmocka_double.h"

#include "train_baseline.h"
#include "util.h"

// "abcabcab" then the tail "cabd". Counted on the first 8 bytes: a 3, b 3, c 2 times, so
// P1 = 4/264, 4/264, 3/264 and d 1/264; the pairs ab 3, bc 2, ca 2 (each context followed by
// one byte only: T = 1); the triples abc, bca, cab twice each (T = 1). The tail's bytes and
// their contexts (the first read from the training part):
//   bigram:  c after b (2 + 3/264)/3, a after c (2 + 4/264)/3, b after a (3 + 4/264)/4,
//            d after b (0 + 1/264)/3
//   trigram: c after ab (2 + P2(c|b))/3, a after bc (2 + P2(a|c))/3, b after ca
//            (2 + P2(b|a))/3, d after ab (0 + P2(d|b))/3
// numpy: -sum(log(bigram)) / 4 = 1.9387307358203794, -sum(log(trigram)) / 4 = 2.022765767817486
static void test_small_text(void **state) {
    (void)state;
    const unsigned char text[] = "abcabcabcabd";
    TrainBaseline b;
    assert_true(train_baseline(text, 12, 4, &b));
    assert_double_equal(b.bigram, 1.9387307358203794, 1e-14);
    assert_double_equal(b.trigram, 2.022765767817486, 1e-14);
}

// A byte never seen in training still has its share: the scores stay finite. Training "aa",
// tail "z": P1(z) = 1/258; the pair aa once (T = 1), so P2(z | a) = (0 + 1/258)/2 = 1/516; the
// context aa is never followed in training (its only triple would need a third byte), so
// P3(z | aa) = P2(z | a) = 1/516.
static void test_unseen(void **state) {
    (void)state;
    const unsigned char text[] = "aaz";
    TrainBaseline b;
    assert_true(train_baseline(text, 3, 1, &b));
    assert_double_equal(b.bigram, log(516.0), 1e-14);
    assert_double_equal(b.trigram, log(516.0), 1e-14);
}

// Each of its allocations failing in turn: false, with out as it was (and, under
// AddressSanitizer, nothing leaked); then every allocation made: the scores of test_small_text.
static void test_each_allocation_failing(void **state) {
    (void)state;
    const unsigned char text[] = "abcabcabcabd";
    TrainBaseline b = {.bigram = -1, .trigram = -1};
    util_fail_allocation(0);
    assert_true(train_baseline(text, 12, 4, &b));
    size_t made = util_fail_allocation(0);
    assert_true(made >= 8);  // the counts: bytes, pairs, rows and the trigram rows
    for (size_t k = 1; k <= made; k++) {
        TrainBaseline kept = {.bigram = -1, .trigram = -1};
        util_fail_allocation(k);
        assert_false(train_baseline(text, 12, 4, &kept));
        assert_true(kept.bigram == -1 && kept.trigram == -1);
    }
    util_fail_allocation(0);
    assert_true(train_baseline(text, 12, 4, &b));
    assert_double_equal(b.bigram, 1.9387307358203794, 1e-14);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_text),
        cmocka_unit_test(test_unseen),
        cmocka_unit_test(test_each_allocation_failing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
