// fast: the fast layer's entries in the seams (backend.h, schedule.h, util.h's small blocks,
// weightfile.h's reader).
#include "fast.h"

#include "backend.h"
#include "freeing.h"
#include "gemm.h"
#include "in_place.h"
#include "parallel.h"
#include "pool.h"
#include "schedule.h"
#include "widen.h"

static const Backend fast_backend = {
    .name = "fast",
    .product = gemm_batched_to,
    .loop = parallel_for,
    .set_threads = parallel_set_threads,
};

// ---------------------------------------------------------------- the schedule of a run

struct ScheduleRun {
    const Plan *plan;
    InPlace in_place;
    Freeing freeing;
};

static void fast_finish(ScheduleRun *s) {
    if (!s)
        return;
    in_place_finish(&s->in_place, s->plan);
    freeing_finish(&s->freeing);
    util_free(s);
}

static ScheduleRun *fast_start(const Plan *plan, const bool *keep, const bool *explained) {
    ScheduleRun *s = util_calloc(1, sizeof(ScheduleRun));
    if (!s)
        return NULL;
    s->plan = plan;
    if (!in_place_init(&s->in_place, plan, keep, explained) ||
        !freeing_init(&s->freeing, plan, keep, s->in_place.mode)) {
        fast_finish(s);
        return NULL;
    }
    return s;
}

static Tensor *fast_value(ScheduleRun *s, const ScheduleNode *n, bool *made) {
    return in_place_value(&s->in_place, n, made);
}

static void fast_ran(ScheduleRun *s, Trace *trace, size_t i) {
    freeing_release(&s->freeing, trace, i);
}

static const Schedule fast_schedule = {
    .start = fast_start,
    .value = fast_value,
    .ran = fast_ran,
    .finish = fast_finish,
};

void fast_install(void) {
    pool_install();
    backend_install(&fast_backend);
    schedule_install(&fast_schedule);
    widen_install();
}
