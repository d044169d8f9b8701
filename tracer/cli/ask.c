// ask: --quiz's questions and answers, and the closing score.
#include "ask.h"

#include <errno.h>
#include <string.h>

#include "diag.h"
#include "safetext.h"
#include "textwrap.h"


static void put_line(StrBuf *sb, const char *s, size_t indent, size_t hang, size_t width) {
    textwrap_line(sb, s, strlen(s), indent, hang, width);
}

static void show_question(StrBuf *sb, const QuizQuestion *q, size_t k, size_t n, size_t width) {
    strbuf_printf(sb, "\nQuestion %zu of %zu\n", k + 1, n);
    put_line(sb, q->stage, 0, 4, width);
    if (q->formula)
        put_line(sb, q->formula, 4, 8, width);
    for (size_t i = 0; i < q->n_inputs; i++)
        put_line(sb, q->inputs[i], 4, 8, width);
}

static void show_work(StrBuf *sb, const QuizQuestion *q, size_t width) {
    strbuf_puts(sb, "    work:\n");
    for (size_t i = 0; i < q->n_work; i++)
        put_line(sb, q->work[i], 6, 10, width);
}

typedef enum AnswerRead {
    ANSWER_END,       // no more input
    ANSWER_LINE,      // a line, in the buffer
    ANSWER_TOO_LONG,  // a line longer than the buffer: read to its end, and not judged
} AnswerRead;

// One line of input without its newline (nor a CRLF's return), spaces before it skipped. A
// line whose characters past the buffer are not all spaces is too long. Read byte by byte, not
// with fgets: a line that holds a NUL byte must not make the next line look like its rest.
static AnswerRead read_answer(FILE *in, char *buf, size_t cap) {
    size_t len = 0;
    bool any = false, too_long = false;
    int c;
    while ((c = fgetc(in)) != EOF && c != '\n') {
        any = true;
        bool space = c == ' ' || c == '\t' || c == '\r';
        if (len + 1 < cap && (len || !space))
            buf[len++] = (char)c;
        else if (!space)
            too_long = true;
    }
    if (c == EOF && !any)
        return ANSWER_END;
    if (len && buf[len - 1] == '\r')  // a CRLF's return
        len--;
    buf[len] = '\0';
    return too_long ? ANSWER_TOO_LONG : ANSWER_LINE;
}

// An answer as typed, what a terminal would act on written as escapes (\x1B): echoed, it would
// act on the terminal (safetext.h).
static void put_answer(StrBuf *sb, const char *s) {
    safetext_escape(sb, s, strlen(s), false);
}

static bool is_quit(const char *s) {
    s += strspn(s, " \t");
    return (s[0] == 'q' || s[0] == 'Q') && s[1 + strspn(s + 1, " \t")] == '\0';
}

// Write what sb holds and start it again; false (and diag says why) when memory ran out while
// it was built or when out cannot be written.
static bool flush(StrBuf *sb, FILE *out, Diag *diag) {
    bool ok = false;
    if (sb->failed)
        diag_out_of_memory(diag);
    else if (fwrite(strbuf_str(sb), 1, sb->len, out) != sb->len || fflush(out) != 0)
        diag_error(diag, STATUS_USAGE_ERROR, NULL, 0, 0, 0, "cannot write the quiz: %s", strerror(errno));
    else
        ok = true;
    strbuf_finish(sb);
    strbuf_init(sb);
    return ok;
}

int ask_quiz(const Quiz *quiz, FILE *in, FILE *out, bool echo, size_t width, bool colour, Diag *diag) {
    const char *green = colour ? "\033[32m" : "", *red = colour ? "\033[31m" : "", *reset = colour ? "\033[0m" : "";
    StrBuf sb;
    strbuf_init(&sb);
    bool *wrong = util_calloc(quiz->n ? quiz->n : 1, sizeof(bool));
    if (!wrong)
        return diag_out_of_memory(diag);
    put_line(&sb, quiz->title, 0, 2, width);
    if (quiz->n == 0)
        put_line(&sb, "This lesson has no step small enough to work by hand; mark elements to ask with quiz: "
                      "[i, j] or quiz: row i on a step.", 0, 0, width);
    else
        strbuf_printf(&sb, "%zu question%s. Type the value and Enter; q stops.\n", quiz->n, quiz->n == 1 ? "" : "s");
    size_t asked = 0, right = 0;
    bool ok = true;
    for (size_t k = 0; k < quiz->n && ok; k++) {
        const QuizQuestion *q = &quiz->questions[k];
        show_question(&sb, q, k, quiz->n, width);
        char answer[QUIZ_ANSWER_MAX + 1];
        QuizVerdict v = {0};
        bool stop = false;
        for (;;) {
            strbuf_printf(&sb, "%s = ? ", q->asked);
            if (!(ok = flush(&sb, out, diag)))
                break;
            AnswerRead got = read_answer(in, answer, sizeof(answer));
            if (got == ANSWER_END || (got == ANSWER_LINE && is_quit(answer))) {
                stop = true;
                strbuf_putc(&sb, '\n');
                break;
            }
            if (echo) {
                put_answer(&sb, answer);
                strbuf_puts(&sb, got == ANSWER_TOO_LONG ? "...\n" : "\n");
            }
            if (got == ANSWER_TOO_LONG) {
                strbuf_printf(&sb, "    longer than %d characters: too long to be an answer; try again\n",
                              QUIZ_ANSWER_MAX);
                continue;
            }
            quiz_judge(q, answer, &v);
            if (v.number)
                break;
            strbuf_puts(&sb, "    not a number: try again\n");
        }
        if (stop || !ok)
            break;
        asked++;
        StrBuf said;
        strbuf_init(&said);
        if (v.right) {
            right++;
            strbuf_printf(&said, "%sright%s: %s = %s", green, reset, q->asked, q->value_text);
            if (v.note[0])
                strbuf_printf(&said, " (%s)", v.note);
        } else {
            wrong[k] = true;
            strbuf_printf(&said, "%snot quite%s: %s = %s", red, reset, q->asked, q->value_text);
        }
        put_line(&sb, strbuf_str(&said), 4, 6, width);
        sb.failed = sb.failed || said.failed;
        strbuf_finish(&said);
        if (!v.right)
            show_work(&sb, q, width);
    }
    if (ok) {
        strbuf_putc(&sb, '\n');
        if (asked < quiz->n)
            strbuf_printf(&sb, "Stopped after %zu of %zu questions. ", asked, quiz->n);
        strbuf_printf(&sb, "Score: %zu of %zu right.\n", right, asked);
        // Each operation once, in the order the questions met them.
        StrBuf ops;
        strbuf_init(&ops);
        for (size_t k = 0; k < quiz->n; k++) {
            bool seen = false;
            for (size_t j = 0; j < k && !seen; j++)
                seen = wrong[j] && strcmp(quiz->questions[j].op, quiz->questions[k].op) == 0;
            if (wrong[k] && !seen)
                strbuf_printf(&ops, "%s%s", ops.len ? ", " : "", quiz->questions[k].op);
        }
        if (ops.len)
            strbuf_printf(&sb, "To practise: %s (tracer --explain shows the work of any element).\n", strbuf_str(&ops));
        else if (asked)  // no operation to practise: every answer was right
            strbuf_puts(&sb, "Nothing to practise: every answer was right.\n");
        sb.failed = sb.failed || ops.failed;
        strbuf_finish(&ops);
        ok = flush(&sb, out, diag);
    }
    strbuf_finish(&sb);
    util_free(wrong);
    return ok ? STATUS_OK : diag->status;
}
