// pipeline: the whole path from a lesson to rendered output, for main, the fuzz target and
// the tests: load -> check -> run -> render. Nothing is written to out unless every stage
// succeeded, so a broken lesson never leaves a half-printed trace.
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "diag.h"
#include "quiz.h"
#include "util.h"

typedef enum OutputFormat {
    OUTPUT_TEXT,
    OUTPUT_JSON,
    OUTPUT_HTML,
} OutputFormat;

// Where the memory a run may use was learned, for the message that refuses a lesson too big
// for it.
typedef enum PipelineMemory {
    PIPELINE_MEMORY_MACHINE,    // the machine's physical memory
    PIPELINE_MEMORY_CONTAINER,  // the limit of its container (a cgroup's memory.max)
    PIPELINE_MEMORY_SETTING,    // TRACER_MEMORY
} PipelineMemory;

// A run may fill this share of its memory with values; the rest is for the program itself,
// the trace's text and the operations' scratch.
#define PIPELINE_MEMORY_SHARE 0.9
// The check may fill this share with the lesson's plan (its nodes, names and formulas), which
// the run keeps beside the values, and at least PIPELINE_CHECK_FLOOR bytes, what a lesson
// written by hand needs whatever the setting.
#define PIPELINE_CHECK_SHARE (1 - PIPELINE_MEMORY_SHARE)
#define PIPELINE_CHECK_FLOOR (1024.0 * 1024.0)

typedef struct PipelineOptions {
    OutputFormat format;
    int digits;  // -1: the lesson's digits, or 4
    bool colour;
    // The text trace: see RenderOptions.
    bool truecolour, heatmap, brief;
    size_t width;  // 0: RENDER_DEFAULT_WIDTH
    // Print only these stages: "Q,weights" (--only), and from one stage to another (--from, --to).
    const char *only, *from, *to;
    // --explain requests: "scores[0,1]" (an element), "scores[0]" (a row), "scores" (all).
    const char *const *explain;
    size_t n_explain;
    // When not NULL, receives how many of the lesson's claims fail (--strict turns that into
    // the exit status; the trace itself is the same).
    size_t *claims_failed;
    size_t threads;        // threads of the kernels; 0: one per online CPU
    const char *save_dir;  // --save: write every stage as .npy there first; NULL: no
    const char *text;      // --text: the text of the lesson's text: givens; NULL: the lesson's
    // Keep every stage's values to the end, even those the text trace does not print (a test
    // shows that freeing them changes nothing printed).
    bool keep_every_stage;
    // The memory a run may use, in bytes (0: no limit). A lesson that would hold more values
    // at once than PIPELINE_MEMORY_SHARE of it is refused before it runs, at the step where it
    // would pass it (counting what the text trace frees as it goes); memory_from says whose
    // limit it is. A lesson whose plan would take more than PIPELINE_CHECK_SHARE of it is
    // refused while it is checked.
    double memory;
    PipelineMemory memory_from;
    // Where trainings are kept, to be read instead of training again (run/train_cache.h);
    // NULL: train every time.
    const char *train_cache;
} PipelineOptions;

// Read and trace the lesson at path. Returns a STATUS_* code; on failure diag says why.
// The trace is rendered into out only once every stage has run; when out has a sink
// (StrBuf.sink) it streams there, and a failed write is a usage error with out->sink_errno set.
int pipeline_run_file(const char *path, const PipelineOptions *opts, StrBuf *out, Diag *diag);
// The text trace in pages for stepping through it (render_text_pages): ends[k] is where page
// k ends in out, and number[k] and name[k] say which stage page k shows: its number as the
// trace prints it ("3", "3a"; "" for a given) and its name (both NULL for the header and the
// close). steps is how many steps the lesson has, shown or not, so that "step 3 of 7" counts
// as the lesson does. Filled only on success; free it with pipeline_pages_finish.
typedef struct Pages {
    size_t *ends;
    size_t n;
    const char **number, **name;
    size_t steps;
    Arena *arena;  // holds all of the above
} Pages;
void pipeline_pages_finish(Pages *pages);  // accepts an empty Pages
int pipeline_run_file_pages(const char *path, const PipelineOptions *opts, StrBuf *out, Pages *pages, Diag *diag);
// The same from bytes already in memory (path only names them in messages).
int pipeline_run_bytes(const char *path, const char *bytes, size_t len, const PipelineOptions *opts,
                       StrBuf *out, Diag *diag);
// Trace two lessons and compare them stage by stage into out (see lesson_diff.h); *same says
// whether the traces are the same. A STATUS_* code: on trouble (either lesson cannot be read
// or traced) diag says why.
int pipeline_diff_files(const char *original, const char *edited, const PipelineOptions *opts, bool *same,
                        StrBuf *out, Diag *diag);
// The questions --quiz asks of the lesson at path (see quiz.h): the lesson's quiz: marks, or a
// choice drawn with seed. *quiz is set only on success; free it with quiz_destroy.
int pipeline_quiz_file(const char *path, const PipelineOptions *opts, uint64_t seed, Quiz **quiz, Diag *diag);

// Check and run a lesson loaded by the caller, every value kept and its narration written, as
// the plain trace does before it renders (--lint traces a lesson and its edits this way). On
// success the caller destroys *plan and *trace, then the lesson; on failure diag says why.
int pipeline_trace_lesson(Lesson *lesson, const PipelineOptions *opts, Plan **plan, Trace **trace, Diag *diag);

// The stages of the lesson at path, one a line, in the order the trace prints them: the names
// --explain takes, each with its shape and the expression that computes it.
//     scores.1  [4, 3]  K.T
int pipeline_list_stages(const char *path, StrBuf *out, Diag *diag);
