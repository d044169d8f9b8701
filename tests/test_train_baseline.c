// Tests of train_baseline: the add-one bigram and trigram scores of a held-out tail, worked
// out by hand from the counts and evaluated with numpy (np.log on the same quotients).
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cmocka_double.h"

#include "train_baseline.h"

// "abcabcab" then the tail "cabd". Counted on the first 8 bytes: the pairs ab 3, bc 2, ca 2
// (a is followed 3 times, b and c twice each); the triples abc, bca, cab twice each, after the
// contexts ab, bc, ca twice each. The tail's bytes and their contexts (the first read from the
// training part):
//   bigram:  c after b (2+1)/(2+256), a after c (2+1)/(2+256), b after a (3+1)/(3+256),
//            d after b (0+1)/(2+256)
//   trigram: c after ab 3/258, a after bc 3/258, b after ca 3/258, d after ab 1/258
// numpy: -(2 log(3/258) + log(4/259) + log(1/258)) / 4 = 4.658046969502069
//        -(3 log(3/258) + log(1/258)) / 4             = 4.729000368420535
static void test_small_text(void **state) {
    (void)state;
    const unsigned char text[] = "abcabcabcabd";
    TrainBaseline b;
    assert_true(train_baseline(text, 12, 4, &b));
    assert_double_equal(b.bigram, 4.658046969502069, 1e-14);
    assert_double_equal(b.trigram, 4.729000368420535, 1e-14);
}

// A byte never seen in training still has its one count in 256 + the context's: the scores
// stay finite. Training "aa", tail "z": the pair aa once, so P(z | a) = 1/257, and the context
// aa is never followed in training (its only triple would need a third byte): P(z | aa) = 1/256.
static void test_unseen(void **state) {
    (void)state;
    const unsigned char text[] = "aaz";
    TrainBaseline b;
    assert_true(train_baseline(text, 3, 1, &b));
    assert_double_equal(b.bigram, log(257.0), 1e-14);
    assert_double_equal(b.trigram, log(256.0), 1e-14);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_text),
        cmocka_unit_test(test_unseen),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
