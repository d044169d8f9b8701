// fuzz_pipeline: libFuzzer target for the whole path a lesson takes, from bytes to rendered
// trace: load (YAML and lesson structure), check (names, shapes, sizes), run (the kernel),
// render (text with colour, then JSON and HTML), and the printing of the error when a stage refuses.
// A lesson that traces is also traced with --brief both with its unprinted values freed (and
// read in place) and with all of them kept: any difference in the bytes is a finding.
//
//     CC=clang meson setup build-fuzz -Dfuzz=true -Db_sanitize=address,undefined \
//         -Db_lundef=false -Dc_args=-fno-sanitize-recover=all
//     ninja -C build-fuzz
//     sh tests/fuzz/seed.sh build-fuzz/corpus
//     build-fuzz/tests/fuzz/fuzz_pipeline -dict=build-fuzz/tests/fuzz/lesson.dict -max_len=4096 \
//         -timeout=20 -rss_limit_mb=4096 build-fuzz/corpus
//
// Then the other modes of the command line on the same bytes: --save into a folder of its own,
// --check's comparison of the trace with a golden text, --diff of two lessons both ways, and
// --quiz with the input's own lines typed as answers. An input holding a line "#---" is two
// texts: the lesson before it, and after it the edited lesson of --diff and the golden
// text of --check.
//
// Givens read from files and text: the lesson is named as if it sat in tests/errors/, so that
// `tokenizer: ../tokenizer/tiny/` and the broken tokenizers of tests/errors/tokenizers/ are
// found as in the error cases, and an even-sized input runs with --weights at the weight files
// write_weights.py writes into the build (good.npy, good.safetensors, config.json, ...), an
// odd-sized one without (its files are looked for beside the lesson, and not found). A line
// "#text: SENTENCE" in the lesson (a YAML comment) runs it once more with --text SENTENCE.
//
// Every input must end in a trace or a clean error: a crash, a sanitizer report, a leak or
// a timeout is a finding. Inputs that found one are kept in tests/fuzz/regressions/ and
// replayed by meson test.
#define _DEFAULT_SOURCE  // mkdtemp, fmemopen
#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ask.h"
#include "given_file.h"
#include "pipeline.h"
#include "text_diff.h"

// Where a lesson of the fuzzer is said to be (FUZZ_SOURCE and FUZZ_WEIGHTS come from meson).
#define LESSON FUZZ_SOURCE "/tests/errors/fuzz.yaml"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

// The error is printed like main prints it, to a sink, so the quoting and caret code runs.
static FILE *sink(void) {
    static FILE *f;
    if (!f)
        f = fopen("/dev/null", "w");
    return f;
}

static int trace(const uint8_t *data, size_t size, OutputFormat format) {
    // An odd-sized input runs with 256 KiB of memory, so that the refusal of a lesson too big
    // for it is explored too (the fuzz build holds a lesson to 2^16 values, 512 KiB).
    PipelineOptions opts = {.format = format, .digits = -1, .colour = format == OUTPUT_TEXT,
                            .memory = size % 2 ? 256 * 1024 : 0, .memory_from = PIPELINE_MEMORY_SETTING};
    Diag diag;
    diag_init(&diag);
    StrBuf out;
    strbuf_init(&out);
    int status = pipeline_run_bytes(LESSON, (const char *)data, size, &opts, &out, &diag);
    // A failed run leaves the output empty: a broken lesson never prints half a trace.
    if (status != STATUS_OK && out.len != 0)
        __builtin_trap();
    if (status != STATUS_OK && diag.status == STATUS_OK)
        __builtin_trap();  // a failure must say why
    if (status != STATUS_OK && sink())
        diag_print(&diag, sink(), true);
    if (sink())
        diag_print_warnings(&diag, sink(), true);
    // Whatever the lesson says, its web page has one script, the page's own: the lesson's text
    // is escaped, so no "<script" of its own can appear.
    if (status == STATUS_OK && format == OUTPUT_HTML) {
        const char *first = strstr(strbuf_str(&out), "<script");
        if (!first || strstr(first + 1, "<script"))
            __builtin_trap();
    }
    strbuf_finish(&out);
    return status;
}

// The lesson with --brief twice: values freed once nothing reads them and .T stages read in
// place, then every value kept. The two must print the same bytes and fail the same way.
static void brief_both_ways(const uint8_t *data, size_t size) {
    StrBuf out[2];
    Diag diag[2];
    int status[2];
    for (int k = 0; k < 2; k++) {
        PipelineOptions opts = {.format = OUTPUT_TEXT, .digits = -1, .brief = true, .keep_every_stage = k == 1};
        diag_init(&diag[k]);
        strbuf_init(&out[k]);
        status[k] = pipeline_run_bytes(LESSON, (const char *)data, size, &opts, &out[k], &diag[k]);
    }
    if (status[0] != status[1] || strcmp(strbuf_str(&out[0]), strbuf_str(&out[1])) != 0 ||
        strcmp(diag[0].message, diag[1].message) != 0)
        __builtin_trap();
    strbuf_finish(&out[0]);
    strbuf_finish(&out[1]);
}

static void empty_scratch(void);
static char scratch_dir[] = "/tmp/fuzz_pipeline.XXXXXX";

static void remove_scratch(void) {
    empty_scratch();
    rmdir(scratch_dir);
}

// A folder of this process's own for --save and the lessons of --diff and --quiz, emptied
// after each input and removed at exit.
static const char *scratch(void) {
    static bool made;
    if (!made && (!mkdtemp(scratch_dir) || atexit(remove_scratch) != 0))
        __builtin_trap();
    made = true;
    return scratch_dir;
}

static void empty_scratch(void) {
    DIR *d = opendir(scratch());
    if (!d)
        return;
    char path[512];
    for (struct dirent *e; (e = readdir(d));) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof(path), "%s/%s", scratch(), e->d_name);
        unlink(path);
    }
    closedir(d);
}

// bytes into scratch()/name, whose path goes into path.
static void write_scratch(const char *name, const uint8_t *bytes, size_t len, char *path, size_t cap) {
    snprintf(path, cap, "%s/%s", scratch(), name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(bytes, 1, len, f) != len || fclose(f) != 0)
        __builtin_trap();
}

// A run that fails must say why and print nothing.
static void expect_clean(int status, const StrBuf *out, const Diag *diag) {
    if (status != STATUS_OK && (out->len != 0 || diag->status == STATUS_OK))
        __builtin_trap();
}

// --save: every stage as .npy in the scratch folder, then the trace.
static void save(const uint8_t *data, size_t size) {
    PipelineOptions opts = {.format = OUTPUT_TEXT, .digits = -1, .save_dir = scratch()};
    Diag diag;
    diag_init(&diag);
    StrBuf out;
    strbuf_init(&out);
    expect_clean(pipeline_run_bytes(LESSON, (const char *)data, size, &opts, &out, &diag), &out, &diag);
    strbuf_finish(&out);
}

// --text: the sentence of the lesson's line "#text: SENTENCE" in place of its text: givens.
static void retext(const uint8_t *data, size_t size) {
    static const char mark[] = "#text: ";
    const uint8_t *at = NULL;
    for (size_t i = 0; !at && i + sizeof(mark) - 1 <= size; i++)
        if ((i == 0 || data[i - 1] == '\n') && memcmp(data + i, mark, sizeof(mark) - 1) == 0)
            at = data + i + sizeof(mark) - 1;
    if (!at)
        return;
    const uint8_t *end = memchr(at, '\n', size - (size_t)(at - data));
    char *text = strndup((const char *)at, end ? (size_t)(end - at) : size - (size_t)(at - data));
    if (!text)
        __builtin_trap();
    PipelineOptions opts = {.format = OUTPUT_TEXT, .digits = -1, .text = text};
    Diag diag;
    diag_init(&diag);
    StrBuf out;
    strbuf_init(&out);
    expect_clean(pipeline_run_bytes(LESSON, (const char *)data, size, &opts, &out, &diag), &out, &diag);
    strbuf_finish(&out);
    free(text);
}

// --check: the trace compared with a golden text, as main does (a summary, then a diff).
static void check(const uint8_t *data, size_t size, const uint8_t *golden, size_t golden_size) {
    PipelineOptions opts = {.format = OUTPUT_TEXT, .digits = -1};
    Diag diag;
    diag_init(&diag);
    StrBuf out, report;
    strbuf_init(&out);
    strbuf_init(&report);
    if (pipeline_run_bytes(LESSON, (const char *)data, size, &opts, &out, &diag) == STATUS_OK) {
        char *expected = strndup((const char *)golden, golden_size);  // the golden file's text, to its first NUL
        if (!expected)
            __builtin_trap();
        text_diff_stage_summary(expected, strbuf_str(&out), "golden.txt", "fuzz.yaml", &report);
        bool equal = text_diff_unified(expected, strbuf_str(&out), "golden.txt", "fuzz.yaml", size % 3 == 0, &report);
        // a trace is always the same as itself
        if (equal != (strcmp(expected, strbuf_str(&out)) == 0) ||
            !text_diff_unified(strbuf_str(&out), strbuf_str(&out), "a", "b", false, &report))
            __builtin_trap();
        free(expected);
    }
    strbuf_finish(&out);
    strbuf_finish(&report);
}

// --diff of a and b: a lesson is the same as itself, and two lessons differ one way as the other.
static void diff(const char *a, const char *b) {
    bool same[2];
    int status[2];
    for (int k = 0; k < 2; k++) {
        PipelineOptions opts = {.format = OUTPUT_TEXT, .digits = -1};
        Diag diag;
        diag_init(&diag);
        StrBuf out;
        strbuf_init(&out);
        same[k] = false;
        status[k] = pipeline_diff_files(k ? b : a, k ? a : b, &opts, &same[k], &out, &diag);
        expect_clean(status[k], &out, &diag);
        strbuf_finish(&out);
    }
    if ((status[0] == STATUS_OK) != (status[1] == STATUS_OK) ||
        (status[0] == STATUS_OK && same[0] != same[1]) || (status[0] == STATUS_OK && a == b && !same[0]))
        __builtin_trap();
}

// --quiz with the given bytes typed as answers, one a line.
static void quiz(const char *path, const uint8_t *answers, size_t answers_size, uint64_t seed) {
    PipelineOptions opts = {.format = OUTPUT_TEXT, .digits = -1};
    Diag diag;
    diag_init(&diag);
    Quiz *q = NULL;
    if (pipeline_quiz_file(path, &opts, seed, &q, &diag) == STATUS_OK) {
        FILE *in = fmemopen((void *)answers, answers_size ? answers_size : 1, "r");
        FILE *out = fopen("/dev/null", "w");
        if (!in || !out)
            __builtin_trap();
        ask_quiz(q, in, out, true, 80, seed % 2, &diag);
        fclose(in);
        fclose(out);
    }
    quiz_destroy(q);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    // the lesson, and after a line "#---" the second text
    const uint8_t *second = NULL;
    size_t lesson_size = size, second_size = 0;
    for (size_t i = 0; i + 5 <= size; i++)
        if ((i == 0 || data[i - 1] == '\n') && memcmp(data + i, "#---", 4) == 0 && data[i + 4] == '\n') {
            lesson_size = i;
            second = data + i + 5;
            second_size = size - i - 5;
            break;
        }
    given_files_set_folder(size % 2 == 0 ? FUZZ_WEIGHTS : NULL);
    retext(data, lesson_size);
    if (trace(data, lesson_size, OUTPUT_TEXT) == STATUS_OK) {
        trace(data, lesson_size, OUTPUT_JSON);
        trace(data, lesson_size, OUTPUT_HTML);
        brief_both_ways(data, lesson_size);
        save(data, lesson_size);
        empty_scratch();
        check(data, lesson_size, second ? second : data, second ? second_size : lesson_size);
    }
    char a[512], b[512];
    write_scratch("a.yaml", data, lesson_size, a, sizeof(a));
    if (second) {
        write_scratch("b.yaml", second, second_size, b, sizeof(b));
        diff(a, b);
    } else {
        diff(a, a);
    }
    quiz(a, second ? second : data, second ? second_size : size, size);
    empty_scratch();
    return 0;
}
