// cmd_trace: the plain trace; --check, the trace compared with the lesson's golden file; and
// --update-golden, the trace written to it.
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "files.h"
#include "text_diff.h"

// golden/NAME.txt in the folder beside the lesson's folder: lessons/x.yaml -> golden/x.txt,
// /course/lessons/x.yaml -> /course/golden/x.txt, x.yaml -> ../golden/x.txt.
static char *default_golden(const char *lesson) {
    const char *slash = strrchr(lesson, '/');
    const char *base = slash ? slash + 1 : lesson;
    size_t dir_len = slash ? (size_t)(slash - lesson) : 0;
    size_t base_len = strlen(base);
    if (base_len > 5 && strcmp(base + base_len - 5, ".yaml") == 0)
        base_len -= 5;
    else if (base_len > 4 && strcmp(base + base_len - 4, ".yml") == 0)
        base_len -= 4;
    // The parent of the lesson's folder, when its last part is a plain name (not . or ..).
    const char *dir_slash = NULL;
    for (size_t i = 0; i < dir_len; i++)
        if (lesson[i] == '/')
            dir_slash = lesson + i;
    const char *last = dir_slash ? dir_slash + 1 : lesson;
    size_t last_len = dir_len - (size_t)(last - lesson);
    bool plain = last_len && !(last_len == 1 && last[0] == '.') && !(last_len == 2 && !memcmp(last, "..", 2));
    StrBuf sb;
    strbuf_init(&sb);
    if (plain)
        strbuf_printf(&sb, "%.*sgolden/%.*s.txt", (int)(last - lesson), lesson, (int)base_len, base);
    else if (dir_len)
        strbuf_printf(&sb, "%.*s/../golden/%.*s.txt", (int)dir_len, lesson, (int)base_len, base);
    else
        strbuf_printf(&sb, "../golden/%.*s.txt", (int)base_len, base);
    if (sb.failed) {
        strbuf_finish(&sb);
        return NULL;
    }
    return sb.data;
}

static bool write_text(FILE *f, const void *what) {
    const StrBuf *sb = what;
    return fwrite(strbuf_str(sb), 1, sb->len, f) == sb->len;
}

static int check_golden(const char *lesson, const char *golden_arg, const char *trace, bool colour) {
    char *golden = golden_arg ? util_strdup(golden_arg) : default_golden(lesson);
    if (!golden) {
        fputs("tracer: out of memory\n", stderr);
        return STATUS_USAGE_ERROR;
    }
    char *expected;
    size_t len;
    int err = files_read(golden, 0, SIZE_MAX - 1, &expected, &len);
    if (err) {
        fprintf(stderr, "tracer: cannot read the golden file '%s': %s\n", golden, files_error_text(err));
        fprintf(stderr, "hint: %swrite it with: tracer --update-golden %s%s%s%s\n",
                files_not_regular(err) ? "remove it, then " : "", golden_arg ? "--golden " : "",
                golden_arg ? golden_arg : "", golden_arg ? " " : "", lesson);
        util_free(golden);
        return STATUS_USAGE_ERROR;
    }
    StrBuf diff;
    strbuf_init(&diff);
    char now[1024];
    snprintf(now, sizeof(now), "%s (traced now)", lesson);
    text_diff_stage_summary(expected, trace, golden, lesson, &diff);
    bool equal = text_diff_unified(expected, trace, golden, now, colour, &diff);
    int status = STATUS_OK;
    if (equal) {
        printf("%s matches %s\n", lesson, golden);
    } else {
        fputs(strbuf_str(&diff), stdout);
        fprintf(stderr, "tracer: %s differs from its golden file %s\n", lesson, golden);
        status = STATUS_LESSON_ERROR;
    }
    strbuf_finish(&diff);
    util_free(expected);
    util_free(golden);
    return status;
}

// The trace into the golden file, whole or not at all: written beside it, then renamed over it;
// never over the lesson or a file it reads, nor through a link.
static int write_golden(const char *lesson, const char *golden_arg, const StrBuf *trace) {
    char *golden = golden_arg ? util_strdup(golden_arg) : default_golden(lesson);
    if (!golden) {
        fputs("tracer: out of memory\n", stderr);
        return STATUS_USAGE_ERROR;
    }
    int err = files_write(golden, write_text, trace);
    if (err == ENOMEM) {
        fputs("tracer: out of memory\n", stderr);
    } else if (err) {
        fprintf(stderr, "tracer: cannot write the golden file '%s': %s\n", golden, files_error_text(err));
        if (err == FILES_IS_INPUT)
            fprintf(stderr, "hint: a golden file holds a trace; name a file of its own with --golden, like golden/NAME.txt\n");
    } else {
        printf("%s: wrote %s\n", lesson, golden);
    }
    util_free(golden);
    return err ? STATUS_USAGE_ERROR : STATUS_OK;
}

// Trace the lesson once: the trace on stdout, or (with --check) the diff from its golden file,
// or (with --update-golden) the golden file written.
int cmd_trace_with(const Command *cmd, const char *lesson, const PipelineOptions *opts) {
    bool check = cli_has(cmd, CLI_CHECK), update = cli_has(cmd, CLI_UPDATE_GOLDEN);
    Diag diag;
    diag_init(&diag);
    StrBuf out;
    strbuf_init(&out);
    PipelineOptions run = *opts;
    size_t claims_failed = 0;
    run.claims_failed = &claims_failed;
    // The trace streams to stdout as it is rendered; --check needs it whole, to compare.
    if (!check && !update)
        out.sink = stdout;
    int status = pipeline_run_file(lesson, &run, &out, &diag);
    if (status != STATUS_OK) {
        int write_errno = out.sink_errno;
        strbuf_finish(&out);
        // A full disk or a closed pipe must not pass for success.
        if (write_errno) {
            fprintf(stderr, "tracer: cannot write the trace: %s\n", strerror(write_errno));
            return STATUS_USAGE_ERROR;
        }
        cli_print_diagnostics(&diag, cli_colour_stderr());
        return status;
    }
    cli_print_diagnostics(&diag, cli_colour_stderr());  // the warnings of a lesson that ran
    if (check)
        status = check_golden(lesson, cmd->value[CLI_GOLDEN], strbuf_str(&out), cmd->terminal_colour);
    else if (update)
        status = write_golden(lesson, cmd->value[CLI_GOLDEN], &out);
    else
        fwrite(strbuf_str(&out), 1, out.len, stdout);
    strbuf_finish(&out);
    int written = cli_flush_stdout("the trace");
    if (written != STATUS_OK)
        return written;
    if (cli_has(cmd, CLI_STRICT) && claims_failed && status == STATUS_OK) {
        fprintf(stderr, "tracer: %zu of the lesson's claims %s (--strict)\n", claims_failed,
                claims_failed == 1 ? "fails" : "fail");
        return STATUS_LESSON_ERROR;
    }
    return status;
}

int cmd_update_golden(const Command *cmd) {
    return cmd_trace_with(cmd, cmd->lessons[0], &cmd->opts);
}

int cmd_trace(const Command *cmd) {
    return cmd_trace_with(cmd, cmd->lessons[0], &cmd->opts);
}
