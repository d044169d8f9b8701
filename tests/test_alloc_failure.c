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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline.h"

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

// One pipeline run with allocation fail_at failing (0: none); quiz: the questions of --quiz
// (read from path), whose "output" is the quiz made.
static Run run_once(const char *path, const char *bytes, size_t len, const PipelineOptions *opts,
                    size_t fail_at, bool quiz) {
    Run r;
    diag_init(&r.diag);
    StrBuf out;
    strbuf_init(&out);
    Quiz *questions = NULL;
    util_fail_allocation(fail_at);
    if (quiz)
        r.status = pipeline_quiz_file(path, opts, 1, &questions, &r.diag);
    else
        r.status = pipeline_run_bytes(path, bytes, len, opts, &out, &r.diag);
    r.allocations = util_fail_allocation(0);
    r.out_len = quiz ? questions != NULL : out.len;
    quiz_destroy(questions);
    strbuf_finish(&out);
    return r;
}

// Fail each allocation of one configuration in turn; returns the number of failures found.
static int sweep(const char *path, const char *bytes, size_t len, const PipelineOptions *opts,
                 const char *what) {
    bool quiz = strcmp(what, "quiz") == 0;
    Run clean = run_once(path, bytes, len, opts, 0, quiz);
    if (clean.status != STATUS_OK) {
        fprintf(stderr, "FAIL %s (%s): the lesson does not run even without failures: %s\n", path, what,
                clean.diag.message);
        return 1;
    }
    int failures = 0;
    size_t n = 1;
    for (;; n++) {
        Run r = run_once(path, bytes, len, opts, n, quiz);
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

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: test_alloc_failure LESSON.yaml...\n");
        return 2;
    }
    int failures = 0;
    bool small_arenas = false;
    const char *explain[16];
    size_t n_explain = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--small-arenas") == 0) {
            small_arenas = true;
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
        failures += sweep(argv[i], bytes, len, &text, "text");
        failures += sweep(argv[i], bytes, len, &json, "json");
        failures += sweep(argv[i], bytes, len, &html, "html");
        failures += sweep(argv[i], bytes, len, &text, "quiz");
        if (small_arenas) {
            text.explain = explain;
            text.n_explain = n_explain;
            util_arena_block_size(1);
            failures += sweep(argv[i], bytes, len, &text, "text, an arena block per allocation, --explain");
            failures += sweep(argv[i], bytes, len, &json, "json, an arena block per allocation");
            util_arena_block_size(0);
        }
        free(bytes);
        n_explain = 0;
    }
    return failures ? 1 : 0;
}
