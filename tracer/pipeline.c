// pipeline: load, check, run and render one lesson.
#include "pipeline.h"

#include "lesson.h"
#include "plan.h"
#include "render.h"
#include "trace.h"

#define DEFAULT_DIGITS 4

static int run_lesson(Lesson *lesson, const PipelineOptions *opts, StrBuf *out, Diag *diag) {
    int status = STATUS_OK;
    Plan *plan = NULL;
    Trace *trace = NULL;
    StrBuf text;
    strbuf_init(&text);
    plan = plan_create(lesson, diag);
    if (!plan)
        goto done;
    int digits = opts->digits >= 0 ? opts->digits : lesson->digits >= 0 ? lesson->digits : DEFAULT_DIGITS;
    trace = trace_create(plan, digits, diag);
    if (!trace)
        goto done;
    if (opts->format == OUTPUT_JSON) {
        render_json(trace, &text);
    } else {
        RenderOptions ro = {.colour = opts->colour};
        render_text(trace, &ro, &text);
    }
    if (text.failed) {
        diag_out_of_memory(diag);
        goto done;
    }
    strbuf_append(out, text.data ? text.data : "", text.len);
    if (out->failed)
        diag_out_of_memory(diag);
done:
    status = diag->status;
    strbuf_finish(&text);
    trace_destroy(trace);
    plan_destroy(plan);
    lesson_destroy(lesson);
    return status;
}

int pipeline_run_file(const char *path, const PipelineOptions *opts, StrBuf *out, Diag *diag) {
    Lesson *lesson = lesson_load_file(path, diag);
    if (!lesson)
        return diag->status ? diag->status : diag_out_of_memory(diag);
    return run_lesson(lesson, opts, out, diag);
}

int pipeline_run_bytes(const char *path, const char *bytes, size_t len, const PipelineOptions *opts,
                       StrBuf *out, Diag *diag) {
    Lesson *lesson = lesson_create(path, bytes, len, diag);
    if (!lesson)
        return diag->status ? diag->status : diag_out_of_memory(diag);
    return run_lesson(lesson, opts, out, diag);
}
