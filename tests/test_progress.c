// Unit tests of long work's progress: the reports' rate (progress.h) on a clock the test moves,
// the line a terminal shows (progress_line.h), and a whole training reported without a bit of
// its trace changing. Argument: a lesson that trains (tests/train/attention.yaml).
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "pipeline.h"
#include "plan.h"
#include "progress.h"
#include "progress_line.h"
#include "render.h"

static const char *training_lesson;

// ---------------------------------------------------------------- a sink that keeps its reports

#define KEPT_MAX 4096

typedef struct Kept {
    ProgressReport reports[KEPT_MAX];
    char detail[KEPT_MAX][64];
    size_t n, clears;
    size_t shown_since_clear;  // reports shown since the last clear
} Kept;

static Kept kept;
// The clock moves 1/16 s at each reading: exact in binary, so the delay (0.25 s) is four
// readings and the interval (0.1 s) two.
static double ticks;

static double test_clock(void) {
    ticks += 1.0 / 16;
    return ticks;
}

static void keep(void *ctx, const ProgressReport *r) {
    (void)ctx;
    assert_true(kept.n < KEPT_MAX);
    kept.reports[kept.n] = *r;
    snprintf(kept.detail[kept.n], sizeof(kept.detail[0]), "%s", r->detail ? r->detail : "");
    kept.reports[kept.n].detail = r->detail ? kept.detail[kept.n] : NULL;
    kept.n++;
    kept.shown_since_clear++;
}

static void cleared(void *ctx) {
    (void)ctx;
    assert_true(kept.shown_since_clear > 0);  // only what was shown is cleared
    kept.shown_since_clear = 0;
    kept.clears++;
}

static void install_test_sink(void) {
    memset(&kept, 0, sizeof(kept));
    ticks = 0;
    progress_install(&(ProgressSink){.show = keep, .clear = cleared, .clock = test_clock});
}

static int uninstall(void **state) {
    (void)state;
    progress_install(NULL);
    progress_part(NULL);
    return 0;
}

// ---------------------------------------------------------------- the rate of reports

static void test_no_sink_reads_no_clock(void **state) {
    (void)state;
    install_test_sink();
    progress_install(NULL);
    Progress p;
    progress_begin(&p, "training", "steps", 100, "loss");
    for (size_t s = 0; s < 100; s++)
        progress_update(&p, s + 1, 1.0, NULL);
    progress_end(&p);
    assert_int_equal(kept.n, 0);
    assert_int_equal(kept.clears, 0);
    assert_true(ticks == 0);  // the clock was never read
}

static void test_first_report_after_the_delay_then_each_interval(void **state) {
    (void)state;
    install_test_sink();
    progress_part("edited");
    Progress p;
    progress_begin(&p, "training", "steps", 20, "loss");  // reads the clock at 1/16
    for (size_t s = 0; s < 10; s++)
        progress_update(&p, s + 1, 0.5 * (double)s, NULL);  // the clock at (s + 2) / 16
    // Step 4 is the first at 0.25 s from the start (5/16 - 1/16), then every other step: 2/16
    // is past the interval of 0.1 s, 1/16 is not.
    assert_int_equal(kept.n, 4);
    size_t want_done[] = {4, 6, 8, 10};
    for (size_t k = 0; k < 4; k++) {
        const ProgressReport *r = &kept.reports[k];
        assert_int_equal(r->done, want_done[k]);
        assert_int_equal(r->total, 20);
        assert_string_equal(r->part, "edited");
        assert_string_equal(r->task, "training");
        assert_string_equal(r->unit, "steps");
        assert_string_equal(r->value_name, "loss");
        assert_true(r->value == 0.5 * (double)(want_done[k] - 1));
        assert_true(r->seconds == (double)want_done[k] / 16);
        assert_null(r->detail);
    }
    assert_int_equal(kept.clears, 0);
    progress_end(&p);
    assert_int_equal(kept.clears, 1);
    progress_end(&p);  // once taken away, not again
    assert_int_equal(kept.clears, 1);
}

static void test_quick_work_shows_nothing(void **state) {
    (void)state;
    install_test_sink();
    Progress p;
    progress_begin(&p, "computing", NULL, 3, NULL);
    for (size_t i = 0; i < 3; i++)
        progress_update(&p, i + 1, 0, "weights");  // at most 3/16 s: under the delay
    progress_end(&p);
    assert_int_equal(kept.n, 0);
    assert_int_equal(kept.clears, 0);  // nothing shown, nothing to take away
}

// ---------------------------------------------------------------- the line on a terminal

static void test_line_of_a_training(void **state) {
    (void)state;
    char buf[PROGRESS_LINE_CAP];
    ProgressReport r = {.task = "training", .unit = "steps", .done = 400, .total = 800, .value_name = "loss",
                        .value = 1.320549, .seconds = 1.6};
    progress_line_format(&r, 79, buf, sizeof(buf));
    assert_string_equal(buf, "training 400/800  loss 1.3205  250 steps/s");
    r.part = "edited";
    r.done = 3;
    r.seconds = 2;  // 1.5 steps a second: one decimal below 10
    progress_line_format(&r, 79, buf, sizeof(buf));
    assert_string_equal(buf, "edited: training 3/800  loss 1.3205  1.5 steps/s");
    r.seconds = 0;  // no time yet: no rate
    progress_line_format(&r, 79, buf, sizeof(buf));
    assert_string_equal(buf, "edited: training 3/800  loss 1.3205");
}

static void test_line_of_a_run_and_cut_to_width(void **state) {
    (void)state;
    char buf[PROGRESS_LINE_CAP];
    ProgressReport r = {.task = "computing", .done = 12, .total = 300, .detail = "layer3.weights", .seconds = 2};
    progress_line_format(&r, 79, buf, sizeof(buf));
    assert_string_equal(buf, "computing 12/300  layer3.weights");
    progress_line_format(&r, 12, buf, sizeof(buf));
    assert_string_equal(buf, "computing 12");
    // Cut by characters, never inside one: "é" is two bytes and one column.
    r.part = "café";
    progress_line_format(&r, 6, buf, sizeof(buf));
    assert_string_equal(buf, "café: ");
    progress_line_format(&r, 4, buf, sizeof(buf));
    assert_string_equal(buf, "café");
    progress_line_format(&r, 3, buf, sizeof(buf));
    assert_string_equal(buf, "caf");
}

// The bytes drawn on the terminal: each report over the one before from the line's start, with
// spaces over what a longer line left; at the end, spaces over the line and the cursor back at
// its start, so the trace that follows starts on a clean line. A file has no width: 79 columns.
static void test_line_drawn_over_and_wiped(void **state) {
    (void)state;
    FILE *f = tmpfile();
    assert_non_null(f);
    ProgressSink sink = progress_line_sink(f);
    sink.clock = test_clock;
    ticks = 0;
    progress_install(&sink);
    Progress p;
    progress_begin(&p, "training", NULL, 100, "loss");  // the clock reads 1/16 s
    progress_update(&p, 40, 2.5, NULL);                  // 2/16: under the delay, not shown
    progress_update(&p, 50, 2.5, NULL);                  // 3/16
    progress_update(&p, 99, 1.25, NULL);                 // 4/16: 3/16 s after the start, not yet
    progress_update(&p, 100, 0.5, NULL);                 // 5/16: 1/4 s, shown
    progress_end(&p);
    progress_install(NULL);
    char got[256] = "";
    rewind(f);
    size_t n = fread(got, 1, sizeof(got) - 1, f);
    got[n] = '\0';
    fclose(f);
    // "training 100/100  loss 0.5000" is 29 columns
    assert_string_equal(got, "\rtraining 100/100  loss 0.5000"
                             "\r                             \r");

    // A longer line, then a shorter one over it: the shorter is padded to the longer's width.
    f = tmpfile();
    assert_non_null(f);
    sink = progress_line_sink(f);
    sink.clock = test_clock;
    ticks = 0;
    progress_install(&sink);
    progress_begin(&p, "computing", NULL, 12, NULL);
    for (int i = 0; i < 4; i++)
        progress_update(&p, 1, 0, "layer10.weights");  // the 4th, at 5/16 s, is shown
    progress_update(&p, 2, 0, "layer1.A");             // 6/16: 1/16 s later, within the interval
    progress_update(&p, 3, 0, "layer1.A");             // 7/16: 2/16 s later, shown
    progress_install(NULL);
    rewind(f);
    n = fread(got, 1, sizeof(got) - 1, f);
    got[n] = '\0';
    fclose(f);
    assert_string_equal(got, "\rcomputing 1/12  layer10.weights"
                             "\rcomputing 3/12  layer1.A       ");
}

// ---------------------------------------------------------------- a whole training

// The lesson traced into *lesson, *plan and *trace (the plan's names are the lesson's).
static void trace_text(const PipelineOptions *opts, Lesson **lesson, Plan **plan, Trace **trace, StrBuf *text) {
    Diag diag;
    diag_init(&diag);
    *lesson = lesson_load_file(training_lesson, &diag);
    assert_non_null(*lesson);
    assert_int_equal(pipeline_trace_lesson(*lesson, opts, plan, trace, &diag), STATUS_OK);
    render_text(*trace, &(RenderOptions){.width = 80}, text);
}

// Reported or not, a training computes the same bits; each report's loss is the loss of the
// step it reports, and the line is taken away when training ends.
static void test_training_reports_change_nothing(void **state) {
    (void)state;
    PipelineOptions opts = {.digits = -1, .threads = 1};
    Lesson *lesson[2];
    Plan *plan[2];
    Trace *trace[2];
    StrBuf text[2];
    strbuf_init(&text[0]);
    strbuf_init(&text[1]);
    progress_install(NULL);
    trace_text(&opts, &lesson[0], &plan[0], &trace[0], &text[0]);
    install_test_sink();
    trace_text(&opts, &lesson[1], &plan[1], &trace[1], &text[1]);
    assert_string_equal(strbuf_str(&text[0]), strbuf_str(&text[1]));
    const TraceTraining *t = trace[1]->training;
    size_t trained = 0, last = 0, computed = 0, last_node = 0;
    for (size_t k = 0; k < kept.n; k++) {
        const ProgressReport *r = &kept.reports[k];
        if (strcmp(r->task, "computing") == 0) {
            // The traced run after training, node by node, each named when it is a stage.
            computed++;
            assert_int_equal(r->total, plan[1]->n_nodes);
            assert_true(r->done > last_node && r->done <= r->total);
            const PlanNode *n = &plan[1]->nodes[r->done - 1];
            if (n->is_stage)
                assert_string_equal(r->detail, n->name);
            else
                assert_null(r->detail);
            last_node = r->done;
            continue;
        }
        assert_string_equal(r->task, "training");
        trained++;
        assert_int_equal(r->total, t->steps);
        assert_true(r->done > last && r->done <= t->steps_done);
        assert_memory_equal(&r->value, &t->losses[r->done - 1], sizeof(double));
        last = r->done;
    }
    assert_true(trained >= 10);  // 60 steps, every other one past the delay
    assert_true(computed >= 2);
    assert_true(kept.clears >= 1);
    assert_int_equal(kept.shown_since_clear, 0);  // nothing left on the screen
    for (size_t k = 0; k < 2; k++) {
        strbuf_finish(&text[k]);
        trace_destroy(trace[k]);
        plan_destroy(plan[k]);
        lesson_destroy(lesson[k]);
    }
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: test_progress LESSON_THAT_TRAINS\n");
        return 2;
    }
    training_lesson = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_no_sink_reads_no_clock, uninstall),
        cmocka_unit_test_teardown(test_first_report_after_the_delay_then_each_interval, uninstall),
        cmocka_unit_test_teardown(test_quick_work_shows_nothing, uninstall),
        cmocka_unit_test(test_line_of_a_training),
        cmocka_unit_test(test_line_of_a_run_and_cut_to_width),
        cmocka_unit_test_teardown(test_line_drawn_over_and_wiped, uninstall),
        cmocka_unit_test_teardown(test_training_reports_change_nothing, uninstall),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
