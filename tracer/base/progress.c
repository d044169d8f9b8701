// progress: reports of long work, passed on to the program's sink at a bounded rate.
#include "progress.h"

#include <time.h>

static ProgressSink installed;
static bool have_sink;
static const char *current_part;

static double monotonic_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double now(void) {
    return installed.clock ? installed.clock() : monotonic_seconds();
}

void progress_install(const ProgressSink *sink) {
    have_sink = sink != NULL;
    installed = sink ? *sink : (ProgressSink){0};
}

void progress_part(const char *part) {
    current_part = part;
}

void progress_begin(Progress *p, const char *task, const char *unit, size_t total, const char *value_name) {
    *p = (Progress){.task = task, .unit = unit, .total = total, .value_name = value_name, .active = have_sink};
    if (p->active)
        p->start = now();
}

void progress_update(Progress *p, size_t done, double value, const char *detail) {
    if (!p->active)
        return;
    double t = now();
    if (t - p->start < PROGRESS_DELAY || (p->shown && t - p->last < PROGRESS_INTERVAL))
        return;
    ProgressReport r = {.part = current_part, .task = p->task, .unit = p->unit, .done = done, .total = p->total,
                        .value_name = p->value_name, .value = value, .detail = detail, .seconds = t - p->start};
    p->last = t;
    p->shown = true;
    installed.show(installed.ctx, &r);
}

void progress_end(Progress *p) {
    if (p->active && p->shown && have_sink)
        installed.clear(installed.ctx);
    p->shown = false;
}
