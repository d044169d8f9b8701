// Tests of the JSON renderer on a trace built by hand (the renderer reads nothing else):
// strings escaped, numbers to 17 significant digits, inf and nan as strings, -0 as -0.0,
// shape-only values as null, labels, counts, notes, work, a document verdict (with the edited
// givens it depends on), the summary and the lesson's claims.
// The expected text is written out by hand from the format in render_json.c; the numbers
// are C's %.17g of each value (0.1 -> 0.10000000000000001).
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "render.h"

// Equal texts, or a failure that shows where they first differ (cmocka cuts long strings).
static void expect_text(const char *got, const char *want) {
    size_t i = 0;
    while (got[i] && got[i] == want[i])
        i++;
    if (got[i] == want[i])
        return;
    size_t from = i > 60 ? i - 60 : 0;
    fail_msg("the JSON differs at byte %zu:\n  got  ...%.120s\n  want ...%.120s", i, got + from, want + from);
}

static void test_trace(void **state) {
    (void)state;
    // Stage 0: the given x [2] = [0.1, -inf], columns labelled a and b.
    double x_values[] = {0.1, -INFINITY};
    Tensor x = {.shape = {1, {2}}, .size = 2, .data = x_values};
    const char *const cols[] = {"a", "b"};
    // Stage 1: the step y = x * 2, here [0.2, nan], with a note, two lines of work, the
    // document's [0.25, 1] judged a slip of its own, and show: heatmap.
    double y_values[] = {0.2, NAN};
    Tensor y = {.shape = {1, {2}}, .size = 2, .data = y_values};
    const char *notes[] = {"a \"note\""};
    const char *work[] = {"y[0] = 0.2", "y[1] = nan"};
    double printed[] = {0.25, 1};
    Tensor doc_values = {.shape = {1, {2}}, .size = 2, .data = printed};
    const char *edited[] = {"x"};
    TraceDocument doc = {
        .verdict = DOC_OWN_SLIP,
        .edited = edited,
        .n_edited = 1,
        .values = &doc_values,
        .chained = {.agrees = false, .max_abs_diff = 0.05, .at = {0}, .ours = 0.2, .printed = 0.25, .tolerance = 0.01},
        .has_local = true,
        .local = {.agrees = false, .max_abs_diff = 0.05, .at = {0}, .ours = 0.2, .printed = 0.25, .tolerance = 0.015},
        .widened_by = 0.005,
    };
    // Stage 2: an intermediate of shape [2, 3] with no values (shape-only), rows labelled: a
    // distribution, but with nothing to draw, a table.
    Tensor big = {.shape = {2, {2, 3}}, .size = 6, .data = NULL};
    const char *const rows[] = {"r0", "r1"};
    // Stage 3: a count, -0 as -0.0 (which reads back as -0, where 0 would not) beside it in a
    // vector of counts, marked a distribution:
    // a vector, so drawn as bars.
    double n_values[] = {124439808, -0.0};
    Tensor n = {.shape = {1, {2}}, .size = 2, .data = n_values, .is_count = true};
    TraceStage stages[4] = {
        {.kind = STAGE_GIVEN, .name = "x", .number = "", .about = "inputs", .value = &x},
        {.kind = STAGE_STEP, .name = "y", .number = "1", .expr = "x * 2", .op = "multiply",
         .op_line = "[2] * [] -> [2]", .say = "double\tit", .value = &y, .notes = notes, .n_notes = 1, .work = work,
         .n_work = 2, .document = &doc, .show = PICTURE_HEATMAP},
        {.kind = STAGE_INTERMEDIATE, .name = "z.1", .number = "2a", .expr = "W @ W", .value = &big,
         .distribution = true},
        {.kind = STAGE_STEP, .name = "z", .number = "2", .value = &n, .distribution = true},
    };
    stages[0].labels[0] = (Labels){cols, 2};
    stages[2].labels[0] = (Labels){rows, 2};
    // Two claims under stage y: one holds (no detail), one fails with where and by how much.
    TraceClaim claims[] = {{.text = "rows sum to 1", .expr = "allclose(sum(y), 1)", .holds = true, .stage = 1},
                           {.text = "y is small", .expr = "all(y < 0.1)", .holds = false,
                            .detail = "at [0] 0.2 >= 0.1", .stage = 1}};
    Trace t = {.title = "T \"q\" \\ \x01", .claims = claims, .n_claims = 2, .file = "dir/t.yaml", .digits = 4, .intro = "line\nnext\r", .stages = stages,
               .n_stages = 4, .doc_printed = 1, .doc_agree = 0, .doc_first_slip = 1};
    StrBuf out;
    strbuf_init(&out);
    render_json(&t, NULL, &out);
    assert_false(out.failed);
    const char *want =
        "{\"title\": \"T \\\"q\\\" \\\\ \\u0001\", \"source\": null, \"file\": \"dir/t.yaml\", \"digits\": 4, "
        "\"intro\": \"line\\nnext\\r\", \"outro\": null,\n"
        " \"stages\": [\n"
        "  {\"name\": \"x\", \"number\": \"\", \"kind\": \"given\", \"expr\": null, \"op\": null, \"op_line\": null, "
        "\"say\": null, \"about\": \"inputs\", \"shape\": [2], \"count\": false, "
        "\"values\": [0.10000000000000001, \"-inf\"], \"rows\": null, \"cols\": [\"a\", \"b\"], \"show\": null, "
        "\"picture\": \"table\", \"notes\": [], "
        "\"document\": null, \"work\": []},\n"
        "  {\"name\": \"y\", \"number\": \"1\", \"kind\": \"step\", \"expr\": \"x * 2\", \"op\": \"multiply\", "
        "\"op_line\": \"[2] * [] -> [2]\", \"say\": \"double\\tit\", \"about\": null, \"shape\": [2], "
        "\"count\": false, \"values\": [0.20000000000000001, \"nan\"], \"rows\": null, \"cols\": null, "
        "\"show\": \"heatmap\", \"picture\": \"heatmap\", \"notes\": [\"a \\\"note\\\"\"], "
        "\"document\": {\"verdict\": \"own_slip\", \"edited\": [\"x\"], \"values\": [0.25, 1], \"agrees\": false, "
        "\"max_abs_diff\": 0.050000000000000003, \"at\": [0], \"ours\": 0.20000000000000001, \"printed\": 0.25, "
        "\"tolerance\": 0.01, \"local\": {\"agrees\": false, \"max_abs_diff\": 0.050000000000000003, \"at\": [0], "
        "\"ours\": 0.20000000000000001, \"printed\": 0.25, \"tolerance\": 0.014999999999999999, "
        "\"widened_by\": 0.0050000000000000001}}, "
        "\"work\": [\"y[0] = 0.2\", \"y[1] = nan\"]},\n"
        "  {\"name\": \"z.1\", \"number\": \"2a\", \"kind\": \"intermediate\", \"expr\": \"W @ W\", \"op\": null, "
        "\"op_line\": null, \"say\": null, \"about\": null, \"shape\": [2, 3], \"count\": false, \"values\": null, "
        "\"rows\": [\"r0\", \"r1\"], \"cols\": null, \"show\": null, \"picture\": \"table\", \"notes\": [], "
        "\"document\": null, \"work\": []},\n"
        "  {\"name\": \"z\", \"number\": \"2\", \"kind\": \"step\", \"expr\": null, \"op\": null, \"op_line\": null, "
        "\"say\": null, \"about\": null, \"shape\": [2], \"count\": true, \"values\": [124439808, -0.0], "
        "\"rows\": null, \"cols\": null, \"show\": null, \"picture\": \"bars\", \"notes\": [], \"document\": null, "
        "\"work\": []}\n"
        "],\n"
        " \"document_summary\": {\"printed\": 1, \"agree\": 0, \"first_own_slip\": \"y\", \"edited\": [], "
        "\"follows_edit\": [], \"set_aside\": [], \"inherits\": [], \"own_slips\": [\"y\"]},\n"
        " \"claims\": [\n"
        "  {\"text\": \"rows sum to 1\", \"expr\": \"allclose(sum(y), 1)\", \"holds\": true, \"detail\": null, "
        "\"stage\": \"y\"},\n"
        "  {\"text\": \"y is small\", \"expr\": \"all(y < 0.1)\", \"holds\": false, "
        "\"detail\": \"at [0] 0.2 >= 0.1\", \"stage\": \"y\"}\n"
        " ]}\n";
    expect_text(strbuf_str(&out), want);
    strbuf_finish(&out);
}

// A trace with no stages and nothing printed by a document: empty lists and no slip.
static void test_empty_trace(void **state) {
    (void)state;
    Trace t = {.title = "empty", .source = "a book", .file = "e.yaml", .digits = 0, .outro = "bye",
               .doc_first_slip = -1};
    StrBuf out;
    strbuf_init(&out);
    render_json(&t, NULL, &out);
    expect_text(strbuf_str(&out),
                "{\"title\": \"empty\", \"source\": \"a book\", \"file\": \"e.yaml\", \"digits\": 0, "
                "\"intro\": null, \"outro\": \"bye\",\n"
                " \"stages\": [\n"
                "],\n"
                " \"document_summary\": {\"printed\": 0, \"agree\": 0, \"first_own_slip\": null, \"edited\": [], "
                "\"follows_edit\": [], \"set_aside\": [], \"inherits\": [], \"own_slips\": []},\n"
                " \"claims\": []}\n");
    strbuf_finish(&out);
}

// A stage that follows two edited givens names both, in the order the trace gives them: the
// verdict, the edited list as a JSON array of two strings, then the printed values.
static void test_two_edited_givens(void **state) {
    (void)state;
    double y_values[] = {3};
    Tensor y = {.shape = {0, {0}}, .size = 1, .data = y_values};
    double printed[] = {2};
    Tensor doc_values = {.shape = {0, {0}}, .size = 1, .data = printed};
    const char *edited[] = {"x", "w"};
    TraceDocument doc = {.verdict = DOC_FOLLOWS_EDIT, .edited = edited, .n_edited = 2, .values = &doc_values};
    TraceStage stage = {.kind = STAGE_STEP, .name = "y", .number = "1", .expr = "x + w", .value = &y,
                        .document = &doc};
    Trace t = {.title = "T", .file = "t.yaml", .digits = 4, .stages = &stage, .n_stages = 1, .doc_first_slip = -1};
    StrBuf out;
    strbuf_init(&out);
    render_json(&t, NULL, &out);
    assert_false(out.failed);
    const char *want = "\"document\": {\"verdict\": \"follows_edit\", \"edited\": [\"x\", \"w\"], \"values\": 2, ";
    if (!strstr(strbuf_str(&out), want))
        fail_msg("the JSON lacks\n  %s\nJSON:\n%s", want, strbuf_str(&out));
    strbuf_finish(&out);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trace),
        cmocka_unit_test(test_empty_trace),
        cmocka_unit_test(test_two_edited_givens),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
