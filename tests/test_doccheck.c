// Tests of the document check (doccheck.c, with its verdicts as the text and JSON renderers
// print them): numbers a textbook printed agree when they are within one unit of their own
// last printed place; the chained verdict compares with the exact values, the local one with
// the same operation on the document's own printed inputs, its tolerance widened by what the
// rounding of those inputs can move (worked out by hand below). Then the real lessons: the
// hand analysis of "The cat sat" (which of the document's steps slip by themselves), and the
// softmax and LayerNorm lessons, where every printed number agrees.
//
// Usage: test_doccheck SOFTMAX_LESSON CAT_SAT_LESSON LAYERNORM_LESSON (meson passes the
// paths of lessons/01, 02 and 03).
#include <stdio.h>

#include "trace_fixture.h"

// Tolerances: the verdicts' numbers come from a handful of IEEE operations on values below 10
// (a product, a sum, a difference of two such), each rounding by at most ~1e-15.
#define FEW_FLOPS 1e-12

static const char *softmax_lesson, *cat_sat_lesson, *layernorm_lesson;

// ---------------------------------------------------------------- helpers

static const Trace *trace_yaml(Fixture *f, const char *yaml) {
    fixture_plan(f, "t.yaml", yaml);
    return fixture_trace(f, NULL, 0);
}

static const Trace *trace_file(Fixture *f, const char *path) {
    fixture_plan_file(f, path);
    return fixture_trace(f, NULL, 0);
}

static const TraceStage *stage(const Trace *t, const char *name) {
    for (size_t i = 0; i < t->n_stages; i++)
        if (strcmp(t->stages[i].name, name) == 0)
            return &t->stages[i];
    fail_msg("no stage called '%s'", name);
    return NULL;
}

static const TraceDocument *document(const Trace *t, const char *name) {
    const TraceStage *s = stage(t, name);
    if (!s->document)
        fail_msg("'%s' carries no document verdict", name);
    return s->document;
}

// The text (or JSON) of yaml, as main prints it; the status.
static int render(Fixture *f, const char *yaml, OutputFormat format) {
    return fixture_run(f, yaml, format, NULL, 0);
}

// The chained verdict on a value the lesson computes exactly (x + 0, the given itself) against one
// printed number: "value" and "printed" are YAML scalars.
static DocVerdict chained(Fixture *f, const char *value, const char *printed) {
    char yaml[512];
    snprintf(yaml, sizeof(yaml),
             "title: t\n"
             "given:\n"
             "  x: %s\n"
             "steps:\n"
             "  - y: x + 0\n"
             "    document: %s\n",
             value, printed);
    return document(trace_yaml(f, yaml), "y")->chained;
}

static void expect_agreement(void **state, const char *value, const char *printed, bool agrees) {
    DocVerdict v = chained(*state, value, printed);
    if (v.agrees != agrees)
        fail_msg("%s against a printed %s: %s, expected %s", value, printed, v.agrees ? "agrees" : "disagrees",
                 agrees ? "agrees" : "disagrees");
}

// ---------------------------------------------------------------- tolerance

// One unit of the last printed place: 0.399 agrees with 0.39844; 0.20 does not agree with 0.15.
static void test_one_unit_of_the_last_place(void **state) {
    expect_agreement(state, "0.39844", "0.399", true);
    expect_agreement(state, "0.15", "0.20", false);
    // The edge is inside: 0.20 covers 0.19 to 0.21, not 0.1899 or 0.2101.
    expect_agreement(state, "0.19", "0.20", true);
    expect_agreement(state, "0.21", "0.20", true);
    expect_agreement(state, "0.1899", "0.20", false);
    expect_agreement(state, "0.2101", "0.20", false);
    // A trailing zero is a printed place: 0.20 is stricter than 0.2.
    expect_agreement(state, "0.28", "0.2", true);
    expect_agreement(state, "0.28", "0.20", false);
    // Whole numbers, negatives and exponents.
    expect_agreement(state, "4.9", "4", true);
    expect_agreement(state, "5.1", "4", false);
    expect_agreement(state, "-1.3416", "-1.34", true);
    expect_agreement(state, "-1.3416", "-1.35", true);
    expect_agreement(state, "-1.3416", "-1.36", false);
    expect_agreement(state, "0.0015", "1e-3", true);
    expect_agreement(state, "0.0025", "1e-3", false);
    expect_agreement(state, "25.4", "2.5e1", true);  // 2.5e1 is printed to the units
}

// Decimals are counted for each printed number: 0.125 has 3, 0.5 has 1, 0.20 has 2.
static void test_decimals_per_number(void **state) {
    const Trace *t = trace_yaml(*state, "title: t\n"
                                        "given:\n"
                                        "  x: [0.58, 0.1262, 0.2, 3.0, 0.00042, 25.0]\n"
                                        "steps:\n"
                                        "  - y: x + 0\n"
                                        "    document: [0.5, 0.125, 0.20, 3, 4.2e-4, 2.5e1]\n");
    const TraceDocument *d = document(t, "y");
    const int want[] = {1, 3, 2, 0, 5, 0};
    for (size_t i = 0; i < 6; i++)
        if (d->decimals[i] != want[i])
            fail_msg("number %zu was printed with %d decimals, expected %d", i, d->decimals[i], want[i]);
    // 0.58 against 0.5 is the largest gap (0.08) but agrees (within 0.1); 0.1262 against
    // 0.125 is a smaller gap (0.0012) that disagrees (beyond 0.001): the verdict points there.
    const DocVerdict *v = &d->chained;
    assert_false(v->agrees);
    assert_true(v->worst_is_disagreement);
    assert_int_equal(v->at[0], 1);
    assert_double_equal(v->ours, 0.1262, 0);
    assert_double_equal(v->printed, 0.125, 0);
    assert_double_equal(v->gap, 0.0012, FEW_FLOPS);
    assert_double_equal(v->tolerance, 0.001, FEW_FLOPS);
    assert_double_equal(v->max_abs_diff, 0.08, FEW_FLOPS);
    // The text tells the gap where it points, not the largest gap elsewhere.
    assert_int_equal(render(*state, "title: t\n"
                                    "given:\n"
                                    "  x: [0.58, 0.1262]\n"
                                    "steps:\n"
                                    "  - y: x + 0\n"
                                    "    document: [0.5, 0.125]\n",
                            OUTPUT_TEXT),
                     STATUS_OK);
    fixture_expect_output(*state, "document: disagrees: at [1] the exact value is 0.1262 but the document printed 0.125 "
                             "(off by 0.0012; within 0.001 would agree)\n");
}

// ---------------------------------------------------------------- the verdict's numbers

static void test_verdict_fields(void **state) {
    Fixture *f = *state;
    // Every number agrees: the largest gap, where it is, and both numbers there.
    const Trace *t = trace_yaml(f, "title: t\n"
                                   "given:\n"
                                   "  x: [[0.39844, 0.2], [0.15, 1.0]]\n"
                                   "steps:\n"
                                   "  - y: x + 0\n"
                                   "    document: [[0.399, 0.20], [0.15, 1.00]]\n");
    const DocVerdict *v = &document(t, "y")->chained;
    assert_true(v->agrees);
    assert_false(v->worst_is_disagreement);
    assert_double_equal(v->max_abs_diff, 0.00056, FEW_FLOPS);
    assert_int_equal(v->at[0], 0);
    assert_int_equal(v->at[1], 0);
    assert_double_equal(v->ours, 0.39844, 0);
    assert_double_equal(v->printed, 0.399, 0);
    assert_double_equal(v->tolerance, 0.001, FEW_FLOPS);
    assert_int_equal(t->doc_printed, 1);
    assert_int_equal(t->doc_agree, 1);
    assert_int_equal(t->doc_first_slip, -1);
    // Two disagreements: the verdict points at the one furthest beyond its tolerance
    // ([1, 0]: 0.5 past 0.1), not the first ([0, 1]: 0.09 past 0.01).
    t = trace_yaml(f, "title: t\n"
                      "given:\n"
                      "  x: [[0.1, 0.3], [1.5, 1.0]]\n"
                      "steps:\n"
                      "  - y: x + 0\n"
                      "    document: [[0.1, 0.20], [1.0, 1.0]]\n");
    v = &document(t, "y")->chained;
    assert_false(v->agrees);
    assert_int_equal(v->at[0], 1);
    assert_int_equal(v->at[1], 0);
    assert_double_equal(v->ours, 1.5, 0);
    assert_double_equal(v->printed, 1.0, 0);
    assert_double_equal(v->gap, 0.5, 0);
    assert_double_equal(v->max_abs_diff, 0.5, 0);
    assert_double_equal(v->tolerance, 0.1, FEW_FLOPS);
    assert_int_equal(t->doc_agree, 0);
}

// JSON: "document": {"values", "agrees", "max_abs_diff", "at", "ours", "printed",
// "tolerance", "local": null or {...}}, and the summary.
static void test_json(void **state) {
    Fixture *f = *state;
    assert_int_equal(render(f,
                            "title: t\n"
                            "given:\n"
                            "  x: [0.15, 0.5]\n"
                            "steps:\n"
                            "  - y: x * 2\n"
                            "    document: [0.30, 1.25]\n",
                            OUTPUT_JSON),
                     STATUS_OK);
    fixture_expect_output(f, "\"document\": {\"verdict\": \"own_slip\", \"edited\": [], \"values\": [0.29999999999999999, 1.25], \"agrees\": false, "
                        "\"max_abs_diff\": 0.25, \"at\": [1], \"ours\": 1, \"printed\": 1.25, "
                        "\"tolerance\": 0.01, \"local\": {\"agrees\": false, \"max_abs_diff\": 0.25, "
                        "\"at\": [1], \"ours\": 1, \"printed\": 1.25, \"tolerance\": 0.01, \"widened_by\": 0}}");
    fixture_expect_output(f, "\"document_summary\": {\"printed\": 1, \"agree\": 0, \"first_own_slip\": \"y\", "
                             "\"edited\": [], \"follows_edit\": [], \"set_aside\": [], "
                             "\"inherits\": [], \"own_slips\": [\"y\"]}");
    // A given's printed numbers have no local verdict; stages without any carry null.
    assert_int_equal(render(f,
                            "title: t\n"
                            "given:\n"
                            "  x: {values: [0.15], document: [0.2]}\n"
                            "steps:\n"
                            "  - y: x * 2\n",
                            OUTPUT_JSON),
                     STATUS_OK);
    fixture_expect_output(f, "\"tolerance\": 0.10000000000000001, \"local\": null}");
    fixture_expect_output(f, "\"document\": null");
    fixture_expect_output(f, "\"document_summary\": {\"printed\": 1, \"agree\": 1, \"first_own_slip\": null, "
                             "\"edited\": [], \"follows_edit\": [], \"set_aside\": [], "
                             "\"inherits\": [], \"own_slips\": []}");
}

// ---------------------------------------------------------------- nan, inf and scalars

static void test_nan_and_inf(void **state) {
    Fixture *f = *state;
    // nan agrees with no printed number, and is infinitely far from it.
    const Trace *t = trace_yaml(f, "title: t\n"
                                   "given:\n"
                                   "  x: [1.0, 2.0]\n"
                                   "steps:\n"
                                   "  - y: (x - x) / (x - x)\n"
                                   "    document: [1.0, 2.0]\n");
    const DocVerdict *v = &document(t, "y")->chained;
    assert_false(v->agrees);
    assert_true(isinf(v->max_abs_diff));
    assert_true(isinf(v->gap));
    assert_true(isnan(v->ours));
    assert_int_equal(v->at[0], 0);
    // inf agrees with a printed .inf of the same sign only.
    static const struct {
        const char *x, *printed;
        bool agrees;
    } cases[] = {
        {"1.0", ".inf", true}, {"1.0", "-.inf", false}, {"1.0", "5.0", false},
        {"-1.0", "-.inf", true}, {"-1.0", ".inf", false},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        char yaml[256];
        snprintf(yaml, sizeof(yaml), "title: t\ngiven:\n  x: %s\nsteps:\n  - y: x / 0\n    document: %s\n",
                 cases[i].x, cases[i].printed);
        v = &document(trace_yaml(f, yaml), "y")->chained;
        if (v->agrees != cases[i].agrees)
            fail_msg("%s / 0 against %s: %s", cases[i].x, cases[i].printed, v->agrees ? "agrees" : "disagrees");
        assert_true(v->agrees ? v->max_abs_diff == 0 : isinf(v->max_abs_diff));
    }
    // A finite value against a printed .inf is infinitely far too.
    DocVerdict finite = chained(f, "1.0", ".inf");
    assert_false(finite.agrees);
    assert_true(isinf(finite.max_abs_diff));
    // The text says why no gap can be measured to nan (JSON keeps the infinite gap), and the
    // note says which operation made the nan.
    assert_int_equal(render(f, "title: t\ngiven:\n  x: 1.0\nsteps:\n  - y: (x - x) / 0\n    document: 0.5\n",
                            OUTPUT_TEXT),
                     STATUS_OK);
    fixture_expect_output(f, "document: disagrees: the exact value is nan but the document printed 0.5 (nan is not a "
                             "number, so no printed number agrees with it)\n");
    fixture_expect_output(f, "note: y is nan: 0 / 0 has no value, so IEEE arithmetic gives nan\n");
    assert_int_equal(render(f, "title: t\ngiven:\n  x: 1.0\nsteps:\n  - y: (x - x) / 0\n    document: 0.5\n",
                            OUTPUT_JSON),
                     STATUS_OK);
    fixture_expect_output(f, "\"agrees\": false, \"max_abs_diff\": \"inf\", \"at\": [], \"ours\": \"nan\", \"printed\": 0.5");
}

// A scalar: no index in the verdict or its text.
static void test_scalar_document(void **state) {
    Fixture *f = *state;
    // 0.5 + 0.25 + 0.125 = 0.875, printed 0.88 (a gap of 0.005) or 0.86 (0.015).
    const char *agrees = "title: t\n"
                         "given:\n"
                         "  x: [0.5, 0.25, 0.125]\n"
                         "steps:\n"
                         "  - total: sum(x)\n"
                         "    document: 0.88\n";
    const TraceDocument *d = document(trace_yaml(f, agrees), "total");
    assert_int_equal(d->values->shape.rank, 0);
    assert_true(d->chained.agrees);
    assert_double_equal(d->chained.max_abs_diff, 0.005, FEW_FLOPS);
    assert_int_equal(render(f, agrees, OUTPUT_TEXT), STATUS_OK);
    fixture_expect_output(f, "    as the document printed it:\n"
                        "    = 0.88\n"
                        "    document: agrees: every printed number is within one unit of its last place "
                        "(largest difference 0.0050)\n");
    const char *disagrees = "title: t\n"
                            "given:\n"
                            "  x: [0.5, 0.25, 0.125]\n"
                            "steps:\n"
                            "  - total: sum(x)\n"
                            "    document: 0.86\n";
    assert_false(document(trace_yaml(f, disagrees), "total")->chained.agrees);
    assert_int_equal(render(f, disagrees, OUTPUT_TEXT), STATUS_OK);
    fixture_expect_output(f, "    document: disagrees: the exact value is 0.8750 but the document printed 0.86 (off by "
                        "0.0150; within 0.01 would agree)\n");
    assert_int_equal(render(f, disagrees, OUTPUT_JSON), STATUS_OK);
    fixture_expect_output(f, "\"agrees\": false, \"max_abs_diff\": 0.015000000000000013, \"at\": [], \"ours\": 0.875, "
                        "\"printed\": 0.85999999999999999");
}

// ---------------------------------------------------------------- the local check

// x is exact. The document's a is wrong by itself ([0] should be 0.2); its b is right for its
// own a (0.30 + 1 = 1.30) but disagrees with the exact 1.2; its c is wrong on its own b at
// [1] (1.40 x 10 = 14.0, not 15.0).
#define CHAIN                                                                                 \
    "title: chain\n"                                                                          \
    "given:\n"                                                                                \
    "  x: [0.1, 0.2]\n"                                                                       \
    "steps:\n"                                                                                \
    "  - a: x * 2\n"                                                                          \
    "    document: [0.30, 0.40]\n"                                                            \
    "  - b: a + 1\n"                                                                          \
    "    document: [1.30, 1.40]\n"                                                            \
    "  - c: (b * 20) / 2\n"                                                                   \
    "    document: [13.0, 15.0]\n"

static void test_local_check(void **state) {
    Fixture *f = *state;
    const Trace *t = trace_yaml(f, CHAIN);
    // a: wrong by itself; its input is exact, so nothing is widened.
    const TraceDocument *a = document(t, "a");
    assert_false(a->chained.agrees);
    assert_true(a->has_local);
    assert_false(a->local.agrees);
    assert_int_equal(a->local.at[0], 0);
    assert_double_equal(a->local.ours, 0.2, 0);
    assert_double_equal(a->local.printed, 0.30, 0);
    assert_double_equal(a->widened_by, 0, 0);
    assert_double_equal(a->local.tolerance, 0.01, FEW_FLOPS);
    // b: only inherits. On the printed a it is 1.30 and 1.40; each printed a moves it by half
    // a unit of a's last place: 0.005.
    const TraceDocument *b = document(t, "b");
    assert_false(b->chained.agrees);
    assert_int_equal(b->chained.at[0], 0);
    assert_double_equal(b->chained.ours, 1.2, FEW_FLOPS);
    assert_true(b->has_local);
    assert_true(b->local.agrees);
    assert_double_equal(b->widened_by, 0.005, FEW_FLOPS);
    assert_double_equal(b->local.max_abs_diff, 0, FEW_FLOPS);
    // c: wrong by itself at [1], even with the widening 10 x 0.005 = 0.05 (through the
    // intermediate b * 20, evaluated on the printed b too).
    const TraceDocument *c = document(t, "c");
    assert_false(c->chained.agrees);
    assert_false(c->local.agrees);
    assert_int_equal(c->local.at[0], 1);
    assert_double_equal(c->local.ours, 14.0, FEW_FLOPS);
    assert_double_equal(c->local.printed, 15.0, 0);
    assert_double_equal(c->widened_by, 0.05, FEW_FLOPS);
    assert_double_equal(c->local.widened, 0.05, FEW_FLOPS);
    assert_double_equal(c->local.tolerance, 0.15, FEW_FLOPS);
    // The summary: three printed, none agree, the first own slip is a.
    assert_int_equal(t->doc_printed, 3);
    assert_int_equal(t->doc_agree, 0);
    assert_true(t->doc_first_slip >= 0);
    assert_string_equal(t->stages[t->doc_first_slip].name, "a");
    // As the text says it.
    assert_int_equal(render(f, CHAIN, OUTPUT_TEXT), STATUS_OK);
    fixture_expect_output(f, "    on its own printed inputs: disagrees: the same operation on the document's own inputs "
                        "gives 0.2000 at [0], not 0.30 (within 0.01; its inputs are exact, so nothing was widened): "
                        "the document goes wrong here by itself\n");
    fixture_expect_output(f, "    on its own printed inputs: agrees (within 0.01, widened by up to 0.0050 for the rounding "
                        "of its printed inputs): this step is right; it is off only through numbers carried from earlier steps\n");
    fixture_expect_output(f, "    on its own printed inputs: disagrees: the same operation on the document's own inputs "
                        "gives 14.0000 at [1], not 15.0 (within 0.1, widened by up to 0.0500 for the rounding of its "
                        "printed inputs): the document goes wrong here by itself\n");
    fixture_expect_output(f, "The document printed 3 of these stages; 0 agree with the exact values.\n"
                        "Wrong by themselves, on the document's own printed inputs: a (step 1), c (step 3).\n"
                        "Right on their own printed inputs, off only through numbers carried from earlier steps: b (step 2).\n"
                        "The document first goes wrong by itself at step 1: a = x * 2.\n");
}

// The widening, by hand: the document printed a = 0.12 and b = 0.35 and then a * b. Moving a
// by half a unit (0.005) moves a * b by |b| x 0.005 = 0.00175; moving b, by |a| x 0.005 =
// 0.0006: the local tolerance is 0.001 + 0.00235.
#define PRODUCT(printed)                                                                      \
    "title: product\n"                                                                        \
    "given:\n"                                                                                \
    "  a: {values: 0.123, document: 0.12}\n"                                                  \
    "  b: {values: 0.349, document: 0.35}\n"                                                  \
    "steps:\n"                                                                                \
    "  - p: a * b\n"                                                                          \
    "    document: " printed "\n"

static void test_widening_by_hand(void **state) {
    Fixture *f = *state;
    const TraceDocument *d = document(trace_yaml(f, PRODUCT("0.042")), "p");
    assert_true(d->has_local);
    assert_double_equal(d->widened_by, 0.35 * 0.005 + 0.12 * 0.005, FEW_FLOPS);
    assert_double_equal(d->local.widened, 0.00235, FEW_FLOPS);
    assert_double_equal(d->local.tolerance, 0.00335, FEW_FLOPS);
    assert_double_equal(d->local.ours, 0.042, FEW_FLOPS);  // 0.12 x 0.35
    assert_true(d->local.agrees);
    // 0.123 x 0.349 = 0.042927: within 0.001 of 0.042.
    assert_true(d->chained.agrees);
    // 0.045 is 0.003 from 0.042: beyond one unit, within the widening. Chained, 0.002073 from
    // the exact value: beyond one unit.
    d = document(trace_yaml(f, PRODUCT("0.045")), "p");
    assert_true(d->local.agrees);
    assert_false(d->chained.agrees);
    // 0.046 is 0.004 from 0.042: beyond the widened tolerance too.
    d = document(trace_yaml(f, PRODUCT("0.046")), "p");
    assert_false(d->local.agrees);
    assert_double_equal(d->local.gap, 0.004, FEW_FLOPS);
    // The givens agree (0.123 is within 0.01 of 0.12), and nothing slips by itself, but p
    // disagrees: the summary does not claim that every number agrees.
    const Trace *t = trace_yaml(f, PRODUCT("0.045"));
    assert_int_equal(t->doc_printed, 3);
    assert_int_equal(t->doc_agree, 2);
    assert_int_equal(t->doc_first_slip, -1);
    assert_int_equal(render(f, PRODUCT("0.045"), OUTPUT_TEXT), STATUS_OK);
    fixture_expect_output(f, "The document printed 3 of these stages; 2 agree with the exact values.\n"
                        "Right on their own printed inputs, off only through numbers carried from earlier steps: p (step 1).\n"
                        "No step goes wrong by itself: each disagreement comes from rounded numbers the document "
                        "carried forward.\n");
    if (strstr(strbuf_str(&f->out), "Every number the document printed agrees"))
        fail_msg("the summary claims every number agrees:\n%s", strbuf_str(&f->out));
}

// Each number has its own widening; the text's "within" is the unit where the verdict
// points, and "widened by up to" the largest widening. a was printed rounded (0.1204 as
// 0.12), so its prints are widened: here [0] moves by 1 x 0.005 and [1]
// by 3 x 0.005.
static void test_widening_per_number(void **state) {
    Fixture *f = *state;
    const char *yaml = "title: t\n"
                       "given:\n"
                       "  a: {values: [0.1204, 100.1204], document: [0.12, 100.12]}\n"
                       "  k: [1.0, 3.0]\n"
                       "steps:\n"
                       "  - y: a * k\n"
                       "    document: [0.20, 300.36]\n";
    const TraceDocument *d = document(trace_yaml(f, yaml), "y");
    assert_false(d->local.agrees);
    assert_int_equal(d->local.at[0], 0);
    assert_double_equal(d->local.widened, 0.005, FEW_FLOPS);
    assert_double_equal(d->local.tolerance, 0.015, FEW_FLOPS);
    assert_double_equal(d->widened_by, 0.015, FEW_FLOPS);
    assert_int_equal(render(f, yaml, OUTPUT_TEXT), STATUS_OK);
    fixture_expect_output(f, "gives 0.1200 at [0], not 0.20 (within 0.01, widened by up to 0.0150 for the rounding of its "
                        "printed inputs): the document goes wrong here by itself\n");
}

// A given whose values differ from what the document printed was changed by the student:
// the trace says where, and what depends on it follows the edit; the document is not blamed.
// y's local check still runs on the document's own x (0.1, 0.4): 0.2, 0.8 agree there.
static void test_given_edited(void **state) {
    Fixture *f = *state;
    const char *yaml = "title: t\n"
                       "given:\n"
                       "  x: {values: [0.1, 0.2], document: [0.1, 0.4]}\n"
                       "steps:\n"
                       "  - y: x * 2\n"
                       "    document: [0.2, 0.8]\n";
    const Trace *t = trace_yaml(f, yaml);
    const TraceDocument *x = document(t, "x");
    assert_false(x->has_local);
    assert_int_equal(x->verdict, DOC_EDITED);
    assert_int_equal(x->values_changed, 1);
    assert_int_equal(x->first_changed, 1);
    const TraceDocument *y = document(t, "y");
    assert_int_equal(y->verdict, DOC_FOLLOWS_EDIT);
    assert_int_equal(y->n_edited, 1);
    assert_string_equal(y->edited[0], "x");
    assert_true(y->local.agrees);
    assert_false(y->chained.agrees);
    assert_int_equal(t->doc_first_slip, -1);
    assert_int_equal(render(f, yaml, OUTPUT_TEXT), STATUS_OK);
    fixture_expect_output(f, "    you changed x[1]: the document has 0.4, this lesson 0.2; what depends on it follows "
                             "your edit\n");
    // y = 2x: 0.4 at [1], printed 0.8.
    fixture_expect_output(f, "    document: follows your edit: at [1] the exact value is 0.4000, the document printed "
                             "0.8 (off by 0.4000): the difference comes from your change to x, not from the document\n");
    // The document's x is its definition, not a rounding: nothing is widened for it.
    fixture_expect_output(f, "    on the document's own printed inputs, without your edit: agrees (within 0.1; its "
                             "inputs are exact, so nothing was widened)\n");
    fixture_expect_output(f, "Document check\n--------------\n"
                             "You changed x: the document's numbers are not yours there.\n"
                             "Off only because of your edit (the document is not to blame): y (step 1).\n"
                             "The document printed 2 of these stages; 0 agree with the exact values, 1 follow your "
                             "edit.\n"
                             "No step of the document goes wrong by itself.\n");
    if (strstr(strbuf_str(&f->out), "goes wrong by itself at") || strstr(strbuf_str(&f->out), "goes wrong here"))
        fail_msg("the trace blames the document for an edit:\n%s", strbuf_str(&f->out));
    assert_int_equal(render(f, yaml, OUTPUT_JSON), STATUS_OK);
    fixture_expect_output(f, "\"document\": {\"verdict\": \"edited\", \"edited\": [\"x\"]");
    fixture_expect_output(f, "\"document\": {\"verdict\": \"follows_edit\", \"edited\": [\"x\"]");
    fixture_expect_output(f, "\"edited\": [\"x\"], \"follows_edit\": [\"y\"], \"set_aside\": []");
}

// An edit that hides a slip of the document's own: y = 2x printed [0.2, 1.0] is wrong on the
// document's own x (0.1, 0.4 give 0.2, 0.8; 1.0 is 0.2 off, past one unit of its last place),
// and with x edited every difference also follows the edit. The summary says the document
// still goes wrong by itself at y. A step whose check reads an edited value the document did
// not print (z = y + w, w unprinted and edited through x) makes no such check.
static void test_edit_hides_a_slip(void **state) {
    Fixture *f = *state;
    const char *yaml = "title: t\n"
                       "given:\n"
                       "  x: {values: [0.1, 0.2], document: [0.1, 0.4]}\n"
                       "steps:\n"
                       "  - y: x * 2\n"
                       "    document: [0.2, 1.0]\n"
                       "  - w: x + 1\n"
                       "  - z: y + w\n"
                       "    document: [1.3, 2.1]\n";
    const Trace *t = trace_yaml(f, yaml);
    const TraceDocument *y = document(t, "y");
    assert_int_equal(y->verdict, DOC_FOLLOWS_EDIT);
    assert_true(y->has_local);
    assert_false(y->local.agrees);
    assert_int_equal(t->doc_first_slip, -1);
    assert_string_equal(t->stages[t->doc_first_hidden_slip].name, "y");
    // z reads w = x + 1 = [1.1, 1.2], edited and never printed: no check on the document's own.
    const TraceDocument *z = document(t, "z");
    assert_int_equal(z->verdict, DOC_FOLLOWS_EDIT);
    assert_false(z->has_local);
    assert_int_equal(render(f, yaml, OUTPUT_TEXT), STATUS_OK);
    fixture_expect_output(f, "Your edit aside, the document also goes wrong by itself, on its own printed inputs, "
                             "first at step 1: y = x * 2.\n");
}

// A given's value is the student's own once it is more than half a unit of the printed place
// from the number the document printed (times 1 + 1e-9, for the rounding of the unit), and
// the document's rounding up to that. 0.123 printed 0.12 is 0.003 off, within 0.005; 0.27
// printed 0.2 is 0.07 off, past 0.05 (but within a whole unit, 0.1). 3.5000000005 printed 3 is
// exactly half of 1 + 1e-9 off: the double nearest 1.000000001 is 1 + 4503600 * 2^-52, half of
// it 0.5 + 4503600 * 2^-53, and 3 plus that is a double (4503600 is a multiple of 4, and
// doubles in [2, 4) step by 2^-51), which strtod reads from 3.5000000005 and from which
// subtracting 3 is exact: at the edge, still the document's.
static const TraceDocument *given_x(Fixture *f, const char *x) {
    char yaml[256];
    snprintf(yaml, sizeof(yaml), "title: t\ngiven:\n  x: %s\nsteps:\n  - y: x * 2\n", x);
    return document(trace_yaml(f, yaml), "x");
}

static void test_given_edited_past_half_a_unit(void **state) {
    const TraceDocument *x = given_x(*state, "{values: [3.5000000005, 0.27, 0.123], document: [3, 0.2, 0.12]}");
    assert_int_equal(x->verdict, DOC_EDITED);
    assert_int_equal(x->values_changed, 1);
    assert_int_equal(x->first_changed, 1);
    // Without 0.27, x is the document's: a rounding of it, which agrees within its unit.
    x = given_x(*state, "{values: [3.5000000005, 0.123], document: [3, 0.12]}");
    assert_int_equal(x->verdict, DOC_AGREES);
    assert_int_equal(x->values_changed, 0);
}

// A disagreement is information, not an error: the status is 0 and the trace is printed.
static void test_disagreement_is_not_an_error(void **state) {
    Fixture *f = *state;
    assert_int_equal(render(f, CHAIN, OUTPUT_TEXT), STATUS_OK);
    assert_int_equal(f->diag.status, STATUS_OK);
    assert_true(f->out.len > 0);
}

// Printed numbers in another shape than the stage's (a student's edit changed it) are set
// aside with a note, not refused: the lesson runs.
static void expect_set_aside(void **state, const char *yaml, const char *note) {
    Fixture *f = *state;
    assert_int_equal(render(f, yaml, OUTPUT_TEXT), STATUS_OK);
    fixture_expect_output(f, note);
}

static void test_shape_mismatch(void **state) {
    expect_set_aside(state,
                     "title: t\n"
                     "given:\n"
                     "  x: [0.1, 0.2]\n"
                     "steps:\n"
                     "  - y: x * 2\n"
                     "    document: [[0.2, 0.4]]\n",
                     "    document: not compared: the document's values for y are [1, 2]; this lesson's y is [2]\n"
                     "\nDocument check\n--------------\n"
                     "The document printed 1 of these stages; 0 agree with the exact values.\n"
                     "Not compared, because their shape is no longer the document's: y (step 1).\n");
    // A given in another shape than its document was changed: what follows it is the edit's.
    expect_set_aside(state,
                     "title: t\n"
                     "given:\n"
                     "  x:\n"
                     "    values: [[0.1, 0.2], [0.3, 0.4]]\n"
                     "    document: [0.1, 0.2, 0.3, 0.4]\n"
                     "steps:\n"
                     "  - y: x * 2\n"
                     "    document: [[0.2, 0.4], [0.6, 1.0]]\n",
                     "    document: not compared: the document's values for x are [4]; this lesson's x is [2, 2]\n");
    Fixture *f = *state;
    fixture_expect_output(f, "document: follows your edit: at [1, 1] the exact value is 0.8000, the document printed 1.0");
    expect_set_aside(state,
                     "title: t\n"
                     "given:\n"
                     "  x: [0.1, 0.2]\n"
                     "steps:\n"
                     "  - total: sum(x)\n"
                     "    document: [0.3]\n",
                     "    document: not compared: the document's values for total are [1]; this lesson's total is []\n");
}

// ---------------------------------------------------------------- the real lessons

// The hand analysis of "The cat sat" (written into the lesson's introduction):
// - Q, K, V do not follow from the document's X and weights: Q[0, 0] = 0.1x0.1 + 0.2x0.3 +
//   0.3x0.0 + 0.4x0.2 = 0.15, printed 0.20; Q[1, 0] = 0.05 + 0.18 + 0 + 0.16 = 0.39, printed
//   0.52. X and the weights are exact, so these slips are their own.
// - scores are not Q @ K.T of the printed Q and K (row cat: about 0.24, 0.57, 0.25, printed
//   0.26, 0.64, 0.25).
// - scaled is right: every printed scaled score is the printed score / 2, within rounding.
// - weights are not the softmax of the printed scaled scores: softmax(0.05, 0.125, 0.05) =
//   0.325, 0.350, 0.325, printed 0.31, 0.38, 0.31.
// - output is right for the printed weights and V, within their rounding.
static void test_the_cat_sat(void **state) {
    Fixture *f = *state;
    const Trace *t = trace_file(f, cat_sat_lesson);
    static const char *const own_slips[] = {"Q", "K", "V", "scores", "weights"};
    static const char *const inherit[] = {"scaled", "output"};
    for (size_t i = 0; i < ARRAY_LEN(own_slips); i++) {
        const TraceDocument *d = document(t, own_slips[i]);
        if (!d->has_local || d->local.agrees || d->chained.agrees)
            fail_msg("%s: chained %s, local %s; expected both to disagree", own_slips[i],
                     d->chained.agrees ? "agrees" : "disagrees",
                     !d->has_local ? "missing" : d->local.agrees ? "agrees" : "disagrees");
    }
    for (size_t i = 0; i < ARRAY_LEN(inherit); i++) {
        const TraceDocument *d = document(t, inherit[i]);
        if (!d->has_local || !d->local.agrees || d->chained.agrees)
            fail_msg("%s: chained %s, local %s; expected it to only inherit", inherit[i],
                     d->chained.agrees ? "agrees" : "disagrees",
                     !d->has_local ? "missing" : d->local.agrees ? "agrees" : "disagrees");
    }
    // The 5 givens carry the document's own numbers and agree; none of the 7 steps does.
    assert_int_equal(t->doc_printed, 12);
    assert_int_equal(t->doc_agree, 5);
    assert_int_equal(t->doc_edited, 0);
    assert_true(t->doc_first_slip >= 0);
    assert_string_equal(t->stages[t->doc_first_slip].name, "Q");
    // Q's worst place is [1, 0]: 0.39 exactly, printed 0.52; its inputs are exact.
    const TraceDocument *q = document(t, "Q");
    assert_int_equal(q->chained.at[0], 1);
    assert_int_equal(q->chained.at[1], 0);
    assert_double_equal(q->chained.ours, 0.39, FEW_FLOPS);
    assert_double_equal(q->chained.printed, 0.52, 0);
    assert_double_equal(q->widened_by, 0, 0);
    assert_double_equal(stage(t, "Q")->value->data[0], 0.15, FEW_FLOPS);
    // scaled halves each printed score: the rounding of a score (0.005) moves it by 0.0025.
    assert_double_equal(document(t, "scaled")->widened_by, 0.0025, FEW_FLOPS);
    // The summary names the same steps.
    assert_int_equal(fixture_run_file(f, cat_sat_lesson, OUTPUT_TEXT), STATUS_OK);
    fixture_expect_output(f, "The document printed 12 of these stages; 5 agree with the exact values.\n"
                        "Wrong by themselves, on the document's own printed inputs: Q (step 1), K (step 2), V (step "
                        "3), scores (step 4), weights (step 6).\n"
                        "Right on their own printed inputs, off only through numbers carried from earlier steps: scaled (step 5), output "
                        "(step 7).\n"
                        "The document first goes wrong by itself at step 1: Q = X @ W_Q.\n");
    assert_int_equal(fixture_run_file(f, cat_sat_lesson, OUTPUT_JSON), STATUS_OK);
    fixture_expect_output(f, "\"document_summary\": {\"printed\": 12, \"agree\": 5, \"first_own_slip\": \"Q\", "
                             "\"edited\": [], \"follows_edit\": [], \"set_aside\": [], "
                             "\"inherits\": [\"scaled\", \"output\"], "
                             "\"own_slips\": [\"Q\", \"K\", \"V\", \"scores\", \"weights\"]}");
}

// The example of the document's own softmax slip, alone: the softmax of its scaled
// row 0.05 0.125 0.05 is 0.325 0.350 0.325 (numpy: 0.32489852 0.35020296 0.32489852), so
// its 0.38 is off by 0.03, beyond one unit.
static void test_the_cat_sat_softmax_row(void **state) {
    const Trace *t = trace_yaml(*state, "title: t\n"
                                        "given:\n"
                                        "  scaled: [[0.05, 0.125, 0.05]]\n"
                                        "steps:\n"
                                        "  - weights: softmax(scaled)\n"
                                        "    document: [[0.31, 0.38, 0.31]]\n");
    const TraceDocument *d = document(t, "weights");
    assert_false(d->local.agrees);
    assert_int_equal(d->local.at[1], 1);
    assert_double_equal(d->local.ours, 0.35020296, 1e-8);
    assert_double_equal(d->local.gap, 0.38 - 0.35020296, 1e-8);
}

// Every printed number of a lesson agrees, chained and locally, and the summary says so.
// Returns the lesson's trace, which stays until the test ends.
static const Trace *expect_all_agree(Fixture *f, const char *path) {
    assert_int_equal(fixture_run_file(f, path, OUTPUT_TEXT), STATUS_OK);
    fixture_expect_output(f, "Every number the document printed agrees.\n");
    const Trace *t = trace_file(f, path);
    assert_true(t->doc_printed > 0);
    for (size_t i = 0; i < t->n_stages; i++) {
        const TraceDocument *d = t->stages[i].document;
        if (!d)
            continue;
        if (!d->chained.agrees || (d->has_local && !d->local.agrees))
            fail_msg("%s: %s: chained %s, local %s", path, t->stages[i].name, d->chained.agrees ? "agrees" : "disagrees",
                     !d->has_local ? "none" : d->local.agrees ? "agrees" : "disagrees");
    }
    assert_int_equal(t->doc_agree, t->doc_printed);
    assert_int_equal(t->doc_first_slip, -1);
    return t;
}

static void test_softmax_lesson_agrees(void **state) {
    const Trace *t = expect_all_agree(*state, softmax_lesson);
    // Q_0, K, V, d_k; scores, scaled, exps, total, weights, output_0.
    assert_int_equal(t->doc_printed, 10);
    // The example: the document's 0.399 agrees with the exact weight 0.39844176.
    assert_double_equal(document(t, "weights")->values->data[1], 0.399, 0);
    assert_double_equal(stage(t, "weights")->value->data[1], 0.39844176, 1e-8);
}

static void test_layernorm_lesson_agrees(void **state) {
    const Trace *t = expect_all_agree(*state, layernorm_lesson);
    // x, gamma, beta; mean, variance, the normalised values, the scaled and shifted values.
    assert_int_equal(t->doc_printed, 7);
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s SOFTMAX_LESSON CAT_SAT_LESSON LAYERNORM_LESSON\n", argv[0]);
        return 2;
    }
    softmax_lesson = argv[1];
    cat_sat_lesson = argv[2];
    layernorm_lesson = argv[3];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_one_unit_of_the_last_place, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_decimals_per_number, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_verdict_fields, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_json, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_nan_and_inf, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_scalar_document, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_local_check, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_widening_by_hand, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_widening_per_number, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_edit_hides_a_slip, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_given_edited, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_given_edited_past_half_a_unit, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_disagreement_is_not_an_error, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_shape_mismatch, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_the_cat_sat, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_the_cat_sat_softmax_row, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_softmax_lesson_agrees, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_layernorm_lesson_agrees, fixture_setup, fixture_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
