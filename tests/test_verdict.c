// Tests of the verdict sentences on stages built by hand: the tone, the head, what joins it
// to the body, and the body word for word, for each kind of judgement. The expected numbers
// are worked out by hand from the values below (1.16 printed as 1.00: off by 0.16).
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "verdict.h"

// Names as a renderer marking them up would: <X>.
static void bracket(StrBuf *out, const char *name) {
    strbuf_printf(out, "<%s>", name);
}

typedef struct Fixture {
    double ours[2], printed[2];
    int decimals[2];
    Tensor value, document_values;
    TraceDocument doc;
    TraceStage stage;
    Trace trace;
} Fixture;

// A stage y = [1.16, 0.5] whose document printed [1.00, 0.5] (2 and 1 decimals).
static void fixture(Fixture *f, DocClass verdict) {
    memset(f, 0, sizeof(*f));
    f->ours[0] = 1.16, f->ours[1] = 0.5;
    f->printed[0] = 1.0, f->printed[1] = 0.5;
    f->decimals[0] = 2, f->decimals[1] = 1;
    f->value = (Tensor){.shape = {1, {2}}, .size = 2, .data = f->ours};
    f->document_values = (Tensor){.shape = {1, {2}}, .size = 2, .data = f->printed};
    f->doc = (TraceDocument){.verdict = verdict, .values = &f->document_values, .decimals = f->decimals};
    // The chained verdict: off at [0] by 0.16, where 0.005 (half a unit of 2 decimals) would agree.
    f->doc.chained = (DocVerdict){.agrees = false, .max_abs_diff = 0.16, .at = {0}, .ours = 1.16, .printed = 1.0,
                                  .gap = 0.16, .tolerance = 0.005};
    f->stage = (TraceStage){.kind = STAGE_STEP, .name = "y", .number = "2", .value = &f->value,
                            .document = &f->doc};
    f->trace = (Trace){.digits = 4, .stages = &f->stage, .n_stages = 1};
}

static void expect_words(VerdictWords *w, VerdictTone tone, const char *head, const char *sep, const char *body) {
    assert_false(verdict_words_failed(w));
    assert_int_equal(w->tone, tone);
    assert_string_equal(strbuf_str(&w->head), head);
    assert_string_equal(w->sep, sep);
    assert_string_equal(strbuf_str(&w->body), body);
    verdict_words_finish(w);
}

static void test_chained(void **state) {
    (void)state;
    Fixture f;
    fixture(&f, DOC_OWN_SLIP);
    VerdictWords w;
    verdict_words(&w, &f.trace, &f.stage, &f.doc.chained, false, bracket);
    expect_words(&w, VERDICT_DISAGREES, "document: disagrees", ": ",
                 "at [0] the exact value is 1.1600 but the document printed 1.00 (off by 0.1600; within 0.01 "
                 "would agree)");
    // A document that is off only through earlier steps: the same words, in yellow.
    f.doc.verdict = DOC_INHERITS;
    verdict_words(&w, &f.trace, &f.stage, &f.doc.chained, false, bracket);
    assert_int_equal(w.tone, VERDICT_INHERITS);
    verdict_words_finish(&w);
    // Agreeing: the largest difference and where it is.
    f.doc.verdict = DOC_AGREES;
    f.doc.chained = (DocVerdict){.agrees = true, .max_abs_diff = 0.004, .at = {1}, .ours = 0.5, .printed = 0.5};
    verdict_words(&w, &f.trace, &f.stage, &f.doc.chained, false, bracket);
    expect_words(&w, VERDICT_AGREES, "document: agrees", ": ",
                 "every printed number is within one unit of its last place (largest difference 0.0040 at [1])");
    // nan cannot be off by anything: the sentence says why instead.
    f.doc.verdict = DOC_OWN_SLIP;
    f.doc.chained = (DocVerdict){.at = {0}, .ours = NAN, .printed = 1.0, .gap = INFINITY, .tolerance = 0.005};
    verdict_words(&w, &f.trace, &f.stage, &f.doc.chained, false, bracket);
    expect_words(&w, VERDICT_DISAGREES, "document: disagrees", ": ",
                 "at [0] the exact value is nan but the document printed 1.00 (nan is not a number, so no printed "
                 "number agrees with it)");
}

static void test_follows_edit(void **state) {
    (void)state;
    Fixture f;
    fixture(&f, DOC_FOLLOWS_EDIT);
    const char *edited[] = {"X", "W_Q", "W_K"};
    f.doc.edited = edited;
    f.doc.n_edited = 3;
    VerdictWords w;
    verdict_words(&w, &f.trace, &f.stage, &f.doc.chained, false, bracket);
    expect_words(&w, VERDICT_EDIT, "document: follows your edit", ": ",
                 "at [0] the exact value is 1.1600, the document printed 1.00 (off by 0.1600): the difference "
                 "comes from your change to <X>, <W_Q> and <W_K>, not from the document");
    // On the document's own inputs the step agrees: green, joined by a space.
    f.doc.has_local = true;
    f.doc.local = (DocVerdict){.agrees = true, .at = {0}, .ours = 1.0, .printed = 1.0, .tolerance = 0.005};
    verdict_words(&w, &f.trace, &f.stage, &f.doc.local, true, bracket);
    expect_words(&w, VERDICT_AGREES, "on the document's own printed inputs, without your edit: agrees", " ",
                 "(within 0.01; its inputs are exact, so nothing was widened)");
}

static void test_local(void **state) {
    (void)state;
    Fixture f;
    fixture(&f, DOC_OWN_SLIP);
    f.doc.has_local = true;
    f.doc.printed_inputs = 6;
    f.doc.widened_by = 0.0025;
    // On its own printed inputs the operation gives 1.1 where the document printed 1.00; the
    // tolerance 0.0125 is 0.01 widened by 0.0025.
    f.doc.local = (DocVerdict){.at = {0}, .ours = 1.1, .printed = 1.0, .gap = 0.1, .tolerance = 0.0125,
                               .widened = 0.0025};
    VerdictWords w;
    verdict_words(&w, &f.trace, &f.stage, &f.doc.local, true, bracket);
    expect_words(&w, VERDICT_DISAGREES, "on its own printed inputs: disagrees", ": ",
                 "the same operation on the document's own inputs gives 1.1000 at [0], not 1.00 (within 0.01, "
                 "widened by up to 0.0025 for the rounding of its printed inputs): the document goes wrong here "
                 "by itself");
    // Too many printed inputs to try one by one: said, not widened.
    f.doc.verdict = DOC_INHERITS;
    f.doc.widening_skipped = true;
    f.doc.local = (DocVerdict){.agrees = true, .at = {0}, .ours = 1.0, .printed = 1.0, .tolerance = 0.005};
    verdict_words(&w, &f.trace, &f.stage, &f.doc.local, true, bracket);
    expect_words(&w, VERDICT_AGREES, "on its own printed inputs: agrees", " ",
                 "(within 0.01; not widened: its 6 printed input values are too many to try one by one): this "
                 "step is right; it is off only through numbers carried from earlier steps");
}

static void test_given_edited_set_aside_same(void **state) {
    (void)state;
    Fixture f;
    fixture(&f, DOC_EDITED);
    f.doc.first_changed = 0;
    f.doc.values_changed = 1;
    VerdictWords w;
    verdict_edited(&w, &f.stage, bracket);
    expect_words(&w, VERDICT_EDIT, "you changed <y[0]>", ": ",
                 "the document has 1.00, this lesson 1.16; what depends on it follows your edit");
    f.doc.values_changed = 2;
    verdict_edited(&w, &f.stage, bracket);
    expect_words(&w, VERDICT_EDIT, "you changed <y[0]>", ": ",
                 "the document has 1.00, this lesson 1.16 (2 of its 2 values differ); what depends on it follows "
                 "your edit");
    // The document printed three numbers; the stage now has two.
    double three[] = {1, 2, 3};
    f.document_values = (Tensor){.shape = {1, {3}}, .size = 3, .data = three};
    f.doc.verdict = DOC_SET_ASIDE;
    verdict_set_aside(&w, &f.stage, bracket);
    expect_words(&w, VERDICT_EDIT, "document: not compared", ": ",
                 "the document's values for <y> are [3]; this lesson's <y> is [2]");
    verdict_same(&w);
    expect_words(&w, VERDICT_AGREES, "document: the same numbers", ", ", "as the document printed them");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chained),
        cmocka_unit_test(test_follows_edit),
        cmocka_unit_test(test_local),
        cmocka_unit_test(test_given_edited_set_aside_same),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
