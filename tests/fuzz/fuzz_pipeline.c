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
//     build-fuzz/tests/fuzz/fuzz_pipeline -dict=tests/fuzz/lesson.dict -max_len=4096 \
//         -timeout=20 -rss_limit_mb=4096 build-fuzz/corpus
//
// Every input must end in a trace or a clean error: a crash, a sanitizer report, a leak or
// a timeout is a finding. Inputs that found one are kept in tests/fuzz/regressions/ and
// replayed by meson test.
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "pipeline.h"

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
    int status = pipeline_run_bytes("fuzz.yaml", (const char *)data, size, &opts, &out, &diag);
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
        status[k] = pipeline_run_bytes("fuzz.yaml", (const char *)data, size, &opts, &out[k], &diag[k]);
    }
    if (status[0] != status[1] || strcmp(strbuf_str(&out[0]), strbuf_str(&out[1])) != 0 ||
        strcmp(diag[0].message, diag[1].message) != 0)
        __builtin_trap();
    strbuf_finish(&out[0]);
    strbuf_finish(&out[1]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (trace(data, size, OUTPUT_TEXT) == STATUS_OK) {
        trace(data, size, OUTPUT_JSON);
        trace(data, size, OUTPUT_HTML);
        brief_both_ways(data, size);
    }
    return 0;
}
