// trace_fixture: what a cmocka test of whole lesson runs keeps (the lesson, its plan and
// trace, the error, the rendered output), released after each test, pass or fail.
//
//     cmocka_unit_test_setup_teardown(test_x, fixture_setup, fixture_teardown)
//     ...
//     Fixture *f = *state;
//     fixture_plan(f, "t.yaml", yaml);          // or fixture_plan_file(f, path)
//     const Trace *t = fixture_trace(f, NULL, 0);
//     assert_int_equal(fixture_run(f, yaml, OUTPUT_TEXT, NULL, 0), STATUS_OK);
//     fixture_expect_output(f, "Document check\n");
#pragma once

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cmocka_double.h"

#include <math.h>
#include <string.h>

#include "check.h"
#include "doccheck.h"
#include "lesson.h"
#include "pipeline.h"
#include "plan.h"
#include "render.h"
#include "run.h"
#include "trace.h"


typedef struct Fixture {
    Lesson *lesson;
    Plan *plan;
    Trace *trace;
    Diag diag;
    StrBuf out;  // what fixture_run rendered
} Fixture;

// Everything the last run made, so a test can run several lessons one after another.
static inline void fixture_release(Fixture *f) {
    trace_destroy(f->trace);
    plan_destroy(f->plan);
    lesson_destroy(f->lesson);
    strbuf_finish(&f->out);
    f->trace = NULL;
    f->plan = NULL;
    f->lesson = NULL;
    strbuf_init(&f->out);
    diag_init(&f->diag);
}

static inline int fixture_setup(void **state) {
    static Fixture f;
    memset(&f, 0, sizeof(f));
    strbuf_init(&f.out);
    *state = &f;
    return 0;
}

static inline int fixture_teardown(void **state) {
    fixture_release(*state);
    return 0;
}

static inline void fixture_check(Fixture *f) {
    if (!f->lesson)
        fail_msg("the lesson did not load: %s:%zu:%zu: %s", f->diag.path, f->diag.line, f->diag.col,
                 f->diag.message);
    f->plan = check_lesson(f->lesson, &f->diag);
    if (!f->plan)
        fail_msg("the lesson was refused: %zu:%zu: %s", f->diag.line, f->diag.col, f->diag.message);
}

// Load and check a lesson that must be fine (a failed test otherwise).
static inline const Plan *fixture_plan(Fixture *f, const char *path, const char *yaml) {
    fixture_release(f);
    f->lesson = lesson_create(path, yaml, strlen(yaml), &f->diag);
    fixture_check(f);
    return f->plan;
}

static inline const Plan *fixture_plan_file(Fixture *f, const char *path) {
    fixture_release(f);
    f->lesson = lesson_load_file(path, &f->diag);
    fixture_check(f);
    return f->plan;
}

// Run the checked lesson in its own digits (4 when it names none), with explain requests, and
// check the document's numbers, as the pipeline does.
static inline const Trace *fixture_trace(Fixture *f, const ExplainTarget *extra, size_t n_extra) {
    f->trace = run_plan(f->plan, f->lesson->digits >= 0 ? f->lesson->digits : 4, extra, n_extra, NULL, &f->diag);
    if (!f->trace || !doccheck_trace(f->plan, f->trace, &f->diag))
        fail_msg("the lesson did not run: %s", f->diag.message);
    return f->trace;
}

// The whole path as main takes it, into f->out and f->diag; the status.
static inline int fixture_run(Fixture *f, const char *yaml, OutputFormat format, const char *const *explain,
                              size_t n_explain) {
    fixture_release(f);
    // As wide as the text trace goes, so that a line a test looks for is never wrapped.
    PipelineOptions opts = {
        .format = format, .digits = -1, .explain = explain, .n_explain = n_explain, .width = RENDER_MAX_WIDTH};
    return pipeline_run_bytes("t.yaml", yaml, strlen(yaml), &opts, &f->out, &f->diag);
}

static inline int fixture_run_file(Fixture *f, const char *path, OutputFormat format) {
    fixture_release(f);
    PipelineOptions opts = {.format = format, .digits = -1, .width = RENDER_MAX_WIDTH};
    return pipeline_run_file(path, &opts, &f->out, &f->diag);
}

static inline void fixture_expect_output(const Fixture *f, const char *text) {
    if (!strstr(strbuf_str(&f->out), text))
        fail_msg("the output lacks\n  %s\noutput:\n%s", text, strbuf_str(&f->out));
}
