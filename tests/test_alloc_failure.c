// test_alloc_failure: run whole lessons through the pipeline with the Nth allocation failing,
// for every N from 1 until a run makes fewer than N allocations (then it must succeed). Every
// failing run must end in a clean error: status 2, "out of memory" in the message and no
// output. Under AddressSanitizer, a leak on any of those paths fails the run at exit.
//
//     test_alloc_failure lessons/02_the_cat_sat.yaml lessons/08_training_forward_pass.yaml
//
// Each lesson runs as text (with the work its explain: keys ask for), as JSON, as HTML and as
// the questions of --quiz. libyaml allocates with its own malloc and is not failed here; every
// allocation of the tracer goes through util_malloc. After --small-arenas, the lessons that
// follow also run with arenas that take a block for every allocation (so that each of those
// fails in turn too) and with the --explain requests given before them (--explain=REQUEST,
// as on the tracer's command line; each lesson takes those written since the one before):
//
//     test_alloc_failure --small-arenas --explain=Q --explain='S[0, 1]' lesson.yaml
//
// --only=STAGE runs the next lesson as text printing that stage alone as well, where values
// are freed once read and a block's heads are read in place.
//
// After --program ORIGINAL EDITED, the rest of what the command line does with a lesson fails
// the same way: --step's pages with --only, --from and --to, --save, --list with a lesson,
// --diff ORIGINAL EDITED, --quiz with its conversation, --watch's start, and the course of
// $TRACER_COURSE: --list and a lesson named by its number. --list=LESSON sweeps --list of a
// lesson (one whose downloaded files are missing lists its names from its YAML alone).
// --lint=LESSON sweeps --lint of a
// lesson whose report has stale numbers and an edit that does not run.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ask.h"
#include "course.h"
#include "fast_layer.h"
#include "pipeline.h"
#include "stale_narration.h"
#include "watch.h"

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *data = NULL;
    size_t cap = 0;
    *len = 0;
    for (;;) {
        if (*len == cap) {
            cap = cap ? 2 * cap : 65536;
            char *grown = realloc(data, cap);
            if (!grown) {
                free(data);
                fclose(f);
                return NULL;
            }
            data = grown;
        }
        size_t n = fread(data + *len, 1, cap - *len, f);
        if (n == 0)
            break;
        *len += n;
    }
    bool bad = ferror(f);
    fclose(f);
    if (bad) {
        free(data);
        return NULL;
    }
    return data;
}

typedef struct Run {
    int status;
    size_t allocations;  // made during the run
    size_t out_len;
    Diag diag;
} Run;

// One thing the tracer does, run with its output in out (or *made for what is not text).
typedef struct Job {
    const char *path, *bytes, *other;  // the lesson, its bytes, a second path (--diff, --save)
    size_t len;
    const PipelineOptions *opts;
    int (*run)(const struct Job *job, StrBuf *out, bool *made, Diag *diag);
    bool printed_on_success;  // main prints out only when the run succeeded (--list, --diff)
} Job;

static int run_bytes(const Job *job, StrBuf *out, bool *made, Diag *diag) {
    (void)made;
    return pipeline_run_bytes(job->path, job->bytes, job->len, job->opts, out, diag);
}

static int run_quiz(const Job *job, StrBuf *out, bool *made, Diag *diag) {
    (void)out;
    Quiz *quiz = NULL;
    int status = pipeline_quiz_file(job->path, job->opts, 1, &quiz, diag);
    *made = quiz != NULL;
    quiz_destroy(quiz);
    return status;
}

// The questions, then the conversation: a wrong answer, a word, a right-looking one, the end.
static int run_ask(const Job *job, StrBuf *out, bool *made, Diag *diag) {
    (void)out;
    (void)made;  // the conversation is written as it goes, like a terminal's
    Quiz *quiz = NULL;
    int status = pipeline_quiz_file(job->path, job->opts, 1, &quiz, diag);
    static char answers[] = "123\nword\n0.5\n";
    FILE *in = fmemopen(answers, strlen(answers), "r"), *sink = fopen("/dev/null", "w");
    if (status == STATUS_OK && in && sink)
        status = ask_quiz(quiz, in, sink, true, 80, true, diag);
    if (in)
        fclose(in);
    if (sink)
        fclose(sink);
    quiz_destroy(quiz);
    return status;
}

static int run_pages(const Job *job, StrBuf *out, bool *made, Diag *diag) {
    (void)made;
    Pages pages;
    int status = pipeline_run_file_pages(job->path, job->opts, out, &pages, diag);
    pipeline_pages_finish(&pages);
    return status;
}

static int run_list(const Job *job, StrBuf *out, bool *made, Diag *diag) {
    (void)made;
    return pipeline_list_stages(job->path, out, diag);
}

static int run_diff(const Job *job, StrBuf *out, bool *made, Diag *diag) {
    (void)made;
    bool same;
    return pipeline_diff_files(job->path, job->other, job->opts, &same, out, diag);
}

// --lint: a report with stale numbers is a report made, as the command line prints it.
static int run_lint(const Job *job, StrBuf *out, bool *made, Diag *diag) {
    StaleReport report;
    (void)out;
    int status = stale_lint_file(job->path, job->opts, &report, diag);
    *made = status == STATUS_OK || (status == STATUS_LESSON_ERROR && report.stale > 0);
    stale_report_finish(&report);
    return *made ? STATUS_OK : status;
}

static int run_course_list(const Job *job, StrBuf *out, bool *made, Diag *diag) {
    (void)job;
    (void)made;
    return course_list(out, diag);
}

static int run_course_path(const Job *job, StrBuf *out, bool *made, Diag *diag) {
    (void)out;
    char *path = NULL;
    int status = course_lesson_path(job->other, &path, diag);
    *made = path != NULL;
    util_free(path);
    return status;
}

static int run_watch(const Job *job, StrBuf *out, bool *made, Diag *diag) {
    (void)out;
    Watch *w = watch_create(job->path, diag);
    *made = w != NULL;
    watch_destroy(w);
    return w ? STATUS_OK : diag->status;
}

// One run with allocation fail_at failing (0: none).
static Run run_once(const Job *job, size_t fail_at) {
    Run r;
    diag_init(&r.diag);
    StrBuf out;
    strbuf_init(&out);
    bool made = false;
    util_fail_allocation(fail_at);
    r.status = job->run(job, &out, &made, &r.diag);
    r.allocations = util_fail_allocation(0);
    r.out_len = (job->printed_on_success && r.status != STATUS_OK ? 0 : out.len) + made;
    strbuf_finish(&out);
    return r;
}

// Fail each allocation of one configuration in turn; returns the number of failures found.
static int sweep(const Job *job, const char *what) {
    const char *path = job->path;
    Run clean = run_once(job, 0);
    if (clean.status != STATUS_OK) {
        fprintf(stderr, "FAIL %s (%s): the lesson does not run even without failures: %s\n", path, what,
                clean.diag.message);
        return 1;
    }
    int failures = 0;
    size_t n = 1;
    for (;; n++) {
        Run r = run_once(job, n);
        if (r.allocations < n) {
            // The run ended before allocation n: nothing failed, so it must have succeeded.
            if (r.status != STATUS_OK) {
                fprintf(stderr, "FAIL %s (%s): no allocation failed, yet status %d: %s\n", path, what, r.status,
                        r.diag.message);
                failures++;
            }
            break;
        }
        const char *problem = NULL;
        if (r.status == STATUS_OK)
            problem = "the run succeeded although an allocation failed";
        else if (r.status != STATUS_USAGE_ERROR)
            problem = "the status is not 2";
        else if (!strstr(r.diag.message, "out of memory"))
            problem = "the message does not say 'out of memory'";
        else if (r.out_len != 0)
            problem = "output was produced";
        if (problem) {
            fprintf(stderr, "FAIL %s (%s), allocation %zu of %zu failing: %s (status %d, message '%s')\n", path,
                    what, n, clean.allocations, problem, r.status, r.diag.message);
            if (++failures == 10) {
                fprintf(stderr, "  (stopping after 10 failures)\n");
                break;
            }
        }
    }
    printf("%s (%s): %zu allocations, each failed in turn: %s\n", path, what, clean.allocations,
           failures ? "FAILED" : "ok, a clean out-of-memory error every time");
    return failures;
}

// Every allocation of each of the command line's other uses of the lesson at path, failing
// in turn; edited is a copy of it with a change, for --diff.
static int sweep_program(const char *path, const char *edited) {
    PipelineOptions text = {.format = OUTPUT_TEXT, .digits = -1, .colour = true};
    PipelineOptions chosen = text;
    chosen.only = "weights";
    PipelineOptions range = text;
    range.from = "scores";
    range.to = "weights";
    char save_dir[] = "/tmp/tracer-alloc-XXXXXX";
    if (!mkdtemp(save_dir)) {
        fprintf(stderr, "FAIL cannot make a folder for --save\n");
        return 1;
    }
    PipelineOptions save = text;
    save.save_dir = save_dir;
    const char *course = getenv(COURSE_ENV);
    int failures = 0;
    failures += sweep(&(Job){.path = path, .opts = &chosen, .run = run_pages}, "--step pages, --only");
    failures += sweep(&(Job){.path = path, .opts = &range, .run = run_pages}, "--step pages, --from --to");
    failures += sweep(&(Job){.path = path, .opts = &save, .run = run_pages}, "--save");
    failures += sweep(&(Job){.path = path, .run = run_list, .printed_on_success = true}, "--list");
    failures += sweep(&(Job){.path = path, .other = edited, .opts = &text, .run = run_diff, .printed_on_success = true}, "--diff");
    failures += sweep(&(Job){.path = path, .opts = &text, .run = run_ask}, "--quiz, answered");
    failures += sweep(&(Job){.path = path, .run = run_watch}, "--watch");
    failures += sweep(&(Job){.path = path, .opts = &text, .run = run_lint}, "--lint");
    if (course && course[0]) {
        failures += sweep(&(Job){.path = course, .run = run_course_list, .printed_on_success = true}, "the course's --list");
        failures += sweep(&(Job){.path = course, .other = "01", .run = run_course_path}, "a lesson by number");
    } else {
        fprintf(stderr, "FAIL %s is not set: the course was not tried\n", COURSE_ENV);
        failures++;
    }
    // What --save wrote: the stages' files and the manifest.
    char command[128];
    snprintf(command, sizeof(command), "rm -rf '%s'", save_dir);
    if (system(command) != 0)
        fprintf(stderr, "note: could not remove %s\n", save_dir);
    return failures;
}

int main(int argc, char **argv) {
    test_install_fast_layer();
    if (argc < 2) {
        fprintf(stderr, "usage: test_alloc_failure [--only=STAGE] LESSON.yaml... [--list=LESSON] [--lint=LESSON] [--program ORIGINAL EDITED]\n");
        return 2;
    }
    int failures = 0;
    bool small_arenas = false;
    const char *explain[16];
    size_t n_explain = 0;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--only=", 7) == 0) {
            only = argv[i] + 7;
            continue;
        }
        if (strcmp(argv[i], "--small-arenas") == 0) {
            small_arenas = true;
            continue;
        }
        if (strncmp(argv[i], "--list=", 7) == 0) {
            failures += sweep(&(Job){.path = argv[i] + 7, .run = run_list, .printed_on_success = true}, "--list");
            continue;
        }
        if (strncmp(argv[i], "--lint=", 7) == 0) {
            PipelineOptions text = {.format = OUTPUT_TEXT, .digits = -1};
            failures += sweep(&(Job){.path = argv[i] + 7, .opts = &text, .run = run_lint}, "--lint");
            continue;
        }
        if (strcmp(argv[i], "--program") == 0 && i + 2 < argc) {
            failures += sweep_program(argv[i + 1], argv[i + 2]);
            i += 2;
            continue;
        }
        if (strncmp(argv[i], "--explain=", 10) == 0) {
            if (n_explain == sizeof(explain) / sizeof(explain[0])) {
                fprintf(stderr, "FAIL more --explain requests than the test keeps\n");
                return 1;
            }
            explain[n_explain++] = argv[i] + 10;
            continue;
        }
        size_t len;
        char *bytes = read_file(argv[i], &len);
        if (!bytes) {
            fprintf(stderr, "FAIL cannot read %s\n", argv[i]);
            failures++;
            continue;
        }
        PipelineOptions text = {.format = OUTPUT_TEXT, .digits = -1, .colour = true};
        PipelineOptions json = {.format = OUTPUT_JSON, .digits = -1};
        PipelineOptions html = {.format = OUTPUT_HTML, .digits = -1};
        Job job = {.path = argv[i], .bytes = bytes, .len = len, .opts = &text, .run = run_bytes};
        failures += sweep(&job, "text");
        job.opts = &json;
        failures += sweep(&job, "json");
        job.opts = &html;
        failures += sweep(&job, "html");
        if (only) {
            // a stage alone: the rest freed once read, and heads read in place
            PipelineOptions chosen = text;
            chosen.only = only;
            job.opts = &chosen;
            failures += sweep(&job, "text, --only");
        }
        Job quiz = {.path = argv[i], .opts = &text, .run = run_quiz};
        failures += sweep(&quiz, "quiz");
        if (small_arenas) {
            PipelineOptions explained = text;
            explained.explain = explain;
            explained.n_explain = n_explain;
            util_arena_block_size(1);
            job.opts = &explained;
            failures += sweep(&job, "text, an arena block per allocation, --explain");
            job.opts = &json;
            failures += sweep(&job, "json, an arena block per allocation");
            failures += sweep(&quiz, "quiz, an arena block per allocation");
            util_arena_block_size(0);
        }
        free(bytes);
        n_explain = 0;
        only = NULL;
    }
    return failures ? 1 : 0;
}
