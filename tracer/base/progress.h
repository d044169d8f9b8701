// progress: long work says how far it has come, to a sink the program installs; the library
// never prints (only main does). Without a sink a report is one test of a pointer and reads no
// clock, so a run that shows nothing costs nothing. With one, a task's reports reach it at most
// once every PROGRESS_INTERVAL seconds, and only once the task has run PROGRESS_DELAY seconds:
// work that ends sooner shows nothing. Reporting reads what the work computed and changes none
// of it.
//
//     Progress p;
//     progress_begin(&p, "training", "steps", steps, "loss");
//     for (size_t s = 0; s < steps; s++) {
//         ... one step, its loss ...
//         progress_update(&p, s + 1, loss, NULL);
//     }
//     progress_end(&p);   // the sink takes away what it showed
#pragma once

#include <stdbool.h>
#include <stddef.h>

// Seconds a task runs before its first report, and the least time between two reports.
#define PROGRESS_DELAY 0.25
#define PROGRESS_INTERVAL 0.1

// One report, as the sink receives it.
typedef struct ProgressReport {
    const char *part;        // the part of the command's work (progress_part), or NULL
    const char *task;        // "training"
    const char *unit;        // what is counted, for a rate: "steps"; NULL: no rate
    size_t done, total;      // done of total
    const char *value_name;  // "loss", with value; NULL: none
    double value;
    const char *detail;      // what is being done now ("layer3.weights"), or NULL
    double seconds;          // since the task began
} ProgressReport;

typedef struct ProgressSink {
    void (*show)(void *ctx, const ProgressReport *report);  // in place of the report shown before
    void (*clear)(void *ctx);                               // the task ended: take away what was shown
    double (*clock)(void);  // seconds on a clock that never goes back; NULL: CLOCK_MONOTONIC
    void *ctx;
} ProgressSink;

// The sink every task reports to from now on (copied), or NULL for none.
void progress_install(const ProgressSink *sink);
// Names the part of the command's work that the tasks after it belong to ("edited", for the
// second lesson of a comparison), or NULL for none. part must outlive those tasks.
void progress_part(const char *part);

// A task, owned by the caller.
typedef struct Progress {
    const char *task, *unit, *value_name;
    size_t total;
    double start, last;  // when it began, and when it was last shown
    bool active;         // a sink was installed when it began
    bool shown;          // the sink has shown it
} Progress;

// task, unit and value_name (as in ProgressReport) must outlive the task.
void progress_begin(Progress *p, const char *task, const char *unit, size_t total, const char *value_name);
// done of total so far, with its value (ignored without a value_name) and detail (or NULL).
void progress_update(Progress *p, size_t done, double value, const char *detail);
void progress_end(Progress *p);
