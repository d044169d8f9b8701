// render_train: the training record as text (the web page draws the same curve as SVG).
#include "render_train.h"

#include <math.h>
#include <string.h>

#include "format.h"
#include "textwrap.h"

static const char *const EIGHTHS[] = {"", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};

size_t render_train_column_step(size_t k, size_t columns, size_t steps) {
    return columns >= steps ? k : (size_t)((double)k * (double)steps / (double)columns);
}

static void line(StrBuf *out, size_t indent, size_t width, const char *text) {
    textwrap_line(out, text, strlen(text), indent, indent + 2, width);
}

// The curve: one column per step (or per evenly spaced step when they do not fit), its height
// in eighths of a row from the smallest loss shown (one eighth) to the largest (every row).
static void chart(const TraceTraining *t, int digits, size_t indent, size_t width, StrBuf *out) {
    double lo = INFINITY, hi = -INFINITY;
    for (size_t s = 0; s < t->steps_done; s++) {
        lo = fmin(lo, t->losses[s]);
        hi = fmax(hi, t->losses[s]);
    }
    render_train_chart(t->losses, t->steps_done, lo, hi, digits, indent, width, out);
}

void render_train_chart(const double *losses, size_t done, double lo, double hi, int digits, size_t indent,
                        size_t width, StrBuf *out) {
    char top[FORMAT_NUMBER_CAP], bottom[FORMAT_NUMBER_CAP];
    format_number(hi, digits, top, sizeof(top));
    format_number(lo, digits, bottom, sizeof(bottom));
    size_t label = strlen(top) > strlen(bottom) ? strlen(top) : strlen(bottom);
    size_t room = width > indent + label + 3 ? width - indent - label - 3 : 1;
    size_t columns = done < room ? done : room;
    const size_t levels = RENDER_TRAIN_CHART_ROWS * 8;
    if (label < 4)
        label = 4;  // room for "step" under the numbers
    for (size_t row = RENDER_TRAIN_CHART_ROWS; row-- > 0;) {
        strbuf_repeat(out, " ", indent);
        const char *axis = row == RENDER_TRAIN_CHART_ROWS - 1 ? top : row == 0 ? bottom : "";
        strbuf_repeat(out, " ", label - strlen(axis));
        strbuf_printf(out, "%s %s", axis, axis[0] ? "┤" : "│");
        size_t blanks = 0;  // spaces held back: a line does not end in them
        for (size_t k = 0; k < columns; k++) {
            double v = losses[render_train_column_step(k, columns, done)];
            size_t level = hi > lo ? 1 + (size_t)((v - lo) / (hi - lo) * (double)(levels - 1)) : levels / 2;
            size_t below = row * 8, eighths = level <= below ? 0 : level - below >= 8 ? 8 : level - below;
            if (eighths == 0) {
                blanks++;
                continue;
            }
            strbuf_repeat(out, " ", blanks);
            blanks = 0;
            strbuf_puts(out, EIGHTHS[eighths]);
        }
        strbuf_putc(out, '\n');
    }
    strbuf_repeat(out, " ", indent + label + 1);
    strbuf_puts(out, "└");
    strbuf_repeat(out, "─", columns);
    strbuf_putc(out, '\n');
    char last[32];
    snprintf(last, sizeof(last), "%zu", done - 1);
    strbuf_repeat(out, " ", indent + label - 4);
    strbuf_puts(out, "step  0");
    if (columns > 1 + strlen(last)) {
        strbuf_repeat(out, " ", columns - 1 - strlen(last));
        strbuf_puts(out, last);
    }
    strbuf_putc(out, '\n');
}

static void train_text(const TraceTraining *t, int digits, size_t indent, size_t width, bool with_chart,
                       StrBuf *out);

void render_train_text(const TraceTraining *t, int digits, size_t indent, size_t width, StrBuf *out) {
    train_text(t, digits, indent, width, true, out);
}

void render_train_text_without_chart(const TraceTraining *t, int digits, size_t indent, size_t width,
                                     StrBuf *out) {
    train_text(t, digits, indent, width, false, out);
}

static void train_text(const TraceTraining *t, int digits, size_t indent, size_t width, bool with_chart,
                       StrBuf *out) {
    char buf[512];
    snprintf(buf, sizeof(buf), "loss: %s, lowered by %s", t->loss, t->optimizer);
    line(out, indent, width, buf);
    StrBuf names;
    strbuf_init(&names);
    for (size_t k = 0; k < t->n_trained; k++) {
        char shape[64];
        shape_format(&t->trained[k].before->shape, shape, sizeof(shape));
        strbuf_printf(&names, "%s%s %s", k ? ", " : "", t->trained[k].name, shape);
    }
    StrBuf tr;
    strbuf_init(&tr);
    strbuf_printf(&tr, "trained: %s", strbuf_str(&names));
    line(out, indent, width, strbuf_str(&tr));
    out->failed = out->failed || names.failed || tr.failed;
    strbuf_finish(&names);
    strbuf_finish(&tr);
    for (size_t k = 0; k < t->n_data; k++) {
        snprintf(buf, sizeof(buf), "data: %s", t->data[k]);
        line(out, indent, width, buf);
    }
    const TraceValidation *v = t->validation;
    if (v) {
        snprintf(buf, sizeof(buf), "validation: %s", v->about);
        line(out, indent, width, buf);
    }
    if (t->clip) {
        snprintf(buf, sizeof(buf), "clipping: %s", t->clip);
        line(out, indent, width, buf);
    }
    for (size_t k = 0; k < t->n_notes; k++) {
        snprintf(buf, sizeof(buf), "note: %s", t->notes[k]);
        line(out, indent, width, buf);
    }
    snprintf(buf, sizeof(buf), "steps: %zu of %zu", t->steps_done, t->steps);
    line(out, indent, width, buf);
    if (t->steps_done) {
        strbuf_putc(out, '\n');
        if (with_chart) {
            chart(t, digits, indent, width, out);
            strbuf_putc(out, '\n');
        }
        strbuf_repeat(out, " ", indent);
        strbuf_puts(out, v ? "  step  loss" : "  step  loss\n");
        size_t column = 4;  // the loss column's width, for the validation column beside it
        for (size_t k = 0; v && k < t->n_shown; k++) {
            char num[FORMAT_NUMBER_CAP];
            format_number(t->losses[t->shown[k]], digits, num, sizeof(num));
            column = strlen(num) > column ? strlen(num) : column;
        }
        if (v)
            strbuf_printf(out, "%*s  validation\n", (int)(column - 4), "");
        for (size_t k = 0; k < t->n_shown; k++) {
            char num[FORMAT_NUMBER_CAP];
            format_number(t->losses[t->shown[k]], digits, num, sizeof(num));
            strbuf_repeat(out, " ", indent);
            strbuf_printf(out, "%6zu  %s", t->shown[k], num);
            for (size_t i = 0; v && i < v->n; i++)
                if (v->steps[i] == t->shown[k]) {
                    char val[FORMAT_NUMBER_CAP];
                    format_number(v->losses[i], digits, val, sizeof(val));
                    strbuf_printf(out, "%*s  %s", (int)(column - strlen(num)), "", val);
                }
            strbuf_putc(out, '\n');
        }
    }
    if (v && t->steps_done) {
        char after[FORMAT_NUMBER_CAP], two[FORMAT_NUMBER_CAP], three[FORMAT_NUMBER_CAP];
        format_number(v->after, digits, after, sizeof(after));
        format_number(v->bigram, digits, two, sizeof(two));
        format_number(v->trigram, digits, three, sizeof(three));
        strbuf_putc(out, '\n');
        snprintf(buf, sizeof(buf), "validation after training: %s", after);
        line(out, indent, width, buf);
        snprintf(buf, sizeof(buf), "counting bytes, in nats per byte of the held-out tail: bigram %s, trigram %s "
                                   "(Witten-Bell smoothing down to add-one byte counts, counted on the bytes before the tail)",
                 two, three);
        line(out, indent, width, buf);
    }
    if (t->stopped) {
        snprintf(buf, sizeof(buf), "note: %s", t->stopped);
        line(out, indent, width, buf);
    }
    // Each update asked for (--explain W[i, j]@s): its arithmetic, a line each.
    for (size_t k = 0; k < t->n_updates; k++) {
        const TraceUpdate *u = &t->updates[k];
        strbuf_putc(out, '\n');
        if (u->not_reached) {
            snprintf(buf, sizeof(buf), "%s at training step %zu: not worked out, %s", u->element, u->step,
                     u->not_reached);
            line(out, indent, width, buf);
            continue;
        }
        line(out, indent, width, u->work[0]);
        for (size_t i = 1; i < u->n_work; i++) {
            // "  continued" lines go two further in
            size_t in = indent + 2 + (u->work[i][0] == ' ' ? 2 : 0);
            const char *text = u->work[i] + strspn(u->work[i], " ");
            textwrap_line(out, text, strlen(text), in, in + 4, width);
        }
    }
}

// 600 by 220 units: the curve in a box from (60, 10) to (590, 190), the loss from its largest
// (top) to its smallest (bottom), the steps left to right.
void render_train_svg(const TraceTraining *t, int digits, StrBuf *out) {
    size_t done = t->steps_done;
    if (!done)
        return;
    double lo = INFINITY, hi = -INFINITY;
    for (size_t s = 0; s < done; s++) {
        lo = fmin(lo, t->losses[s]);
        hi = fmax(hi, t->losses[s]);
    }
    const TraceValidation *v = t->validation;
    for (size_t i = 0; v && i < v->n; i++)
        if (isfinite(v->losses[i])) {
            lo = fmin(lo, v->losses[i]);
            hi = fmax(hi, v->losses[i]);
        }
    char top[FORMAT_NUMBER_CAP], bottom[FORMAT_NUMBER_CAP];
    format_number(hi, digits, top, sizeof(top));
    format_number(lo, digits, bottom, sizeof(bottom));
    strbuf_puts(out, "<svg class=\"loss\" viewBox=\"0 0 600 220\" width=\"100%\" style=\"max-width:900px\" role=\"img\" "
                     "aria-label=\"the loss at every training step\">\n"
                     "<path d=\"M60 10 V190 H590\" fill=\"none\" stroke=\"#888\"/>\n");
    strbuf_printf(out, "<text x=\"55\" y=\"15\" text-anchor=\"end\" font-size=\"11\">%s</text>\n", top);
    strbuf_printf(out, "<text x=\"55\" y=\"190\" text-anchor=\"end\" font-size=\"11\">%s</text>\n", bottom);
    strbuf_printf(out, "<text x=\"60\" y=\"205\" font-size=\"11\">0</text>\n"
                       "<text x=\"590\" y=\"205\" text-anchor=\"end\" font-size=\"11\">%zu</text>\n"
                       "<text x=\"325\" y=\"217\" text-anchor=\"middle\" font-size=\"11\">step</text>\n"
                       "<text x=\"14\" y=\"100\" text-anchor=\"middle\" font-size=\"11\" "
                       "transform=\"rotate(-90 14 100)\">loss</text>\n",
                  done - 1);
    strbuf_puts(out, "<polyline fill=\"none\" stroke=\"#1f6feb\" stroke-width=\"1.5\" points=\"");
    for (size_t s = 0; s < done; s++) {
        double x = 60 + 530 * (done > 1 ? (double)s / (double)(done - 1) : 0.5);
        double y = hi > lo ? 10 + 180 * (hi - t->losses[s]) / (hi - lo) : 100;
        strbuf_printf(out, "%s%.1f,%.1f", s ? " " : "", x, y);
    }
    strbuf_puts(out, "\"/>\n");
    // The validation loss: a dot at each step it was measured at.
    for (size_t i = 0; v && i < v->n; i++) {
        if (!isfinite(v->losses[i]))
            continue;
        double x = 60 + 530 * (done > 1 ? (double)v->steps[i] / (double)(done - 1) : 0.5);
        double y = hi > lo ? 10 + 180 * (hi - v->losses[i]) / (hi - lo) : 100;
        char num[FORMAT_NUMBER_CAP];
        format_number(v->losses[i], digits, num, sizeof(num));
        strbuf_printf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"#d9480f\"><title>the validation loss at "
                           "step %zu: %s</title></circle>\n", x, y, v->steps[i], num);
    }
    strbuf_puts(out, "</svg>\n");
}

TraceStage render_train_before(const Trace *tr, const TraceTrainGiven *g) {
    TraceStage s = {.kind = STAGE_GIVEN, .name = g->name, .value = g->before, .digits = -1};
    for (size_t i = 0; i < tr->n_stages; i++)
        if (tr->stages[i].kind == STAGE_GIVEN && strcmp(tr->stages[i].name, g->name) == 0)
            memcpy(s.labels, tr->stages[i].labels, sizeof(s.labels));
    return s;
}
