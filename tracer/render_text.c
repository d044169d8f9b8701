// render_text: the trace as a student reads it: headers, shapes, narration and boxed,
// labelled matrices with aligned columns.
#include <string.h>

#include "format.h"
#include "render.h"

typedef struct TextStyle {
    const char *bold, *dim, *cyan, *reset;
} TextStyle;

// Display width of UTF-8 text, as a terminal shows it.
static size_t text_width(const char *s) {
    return format_display_width(s, strlen(s));
}

static void pad(StrBuf *out, size_t n) {
    for (size_t i = 0; i < n; i++)
        strbuf_putc(out, ' ');
}

static void repeat(StrBuf *out, const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        strbuf_puts(out, s);
}

// Paragraph text indented by `indent`, one output line per input line, no trailing blanks.
static void paragraph(StrBuf *out, const char *text, size_t indent) {
    const char *p = text;
    while (*p) {
        const char *end = strchr(p, '\n');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\r'))
            len--;
        if (len > 0)
            pad(out, indent);
        strbuf_append(out, p, len);
        strbuf_putc(out, '\n');
        if (!end)
            break;
        p = end + 1;
        if (!*p)
            break;
    }
}

// decimals: per-value places (numbers as a document printed them), or NULL for `digits`.
static void format_value(const Tensor *t, const int *decimals, size_t k, int digits, char *buf, size_t cap) {
    double v = t->data[k];
    if (decimals)
        format_fixed(v, decimals[k], buf, cap);
    else if (t->is_count)
        format_count(v, buf, cap);
    else
        format_fixed(v, digits, buf, cap);
}

static void index_label(const Labels *l, size_t i, char *buf, size_t cap) {
    if (l->items && i < l->n)
        snprintf(buf, cap, "%s", l->items[i]);
    else
        snprintf(buf, cap, "%zu", i);
}

// One matrix [rows, cols] at data, boxed, with row and column labels; a vector is one row
// without a row label.
// A matrix too big to read is shown by its corners, as numpy prints it: the first and last
// rows and columns, with a gap between them. Below these sizes every value is printed.
enum { SHOW_ROWS = 40, EDGE_ROWS = 10, SHOW_COLS = 20, EDGE_COLS = 6 };
#define GAP ((size_t)-1)

// The indices shown along an axis of n entries: all of them, or the first and last `edge`
// with GAP between. idx has room for limit + 1 entries.
static size_t shown(size_t n, size_t limit, size_t edge, size_t *idx) {
    size_t k = 0;
    if (n <= limit) {
        for (size_t i = 0; i < n; i++)
            idx[k++] = i;
        return k;
    }
    for (size_t i = 0; i < edge; i++)
        idx[k++] = i;
    idx[k++] = GAP;
    for (size_t i = n - edge; i < n; i++)
        idx[k++] = i;
    return k;
}

// One matrix [rows, cols] from t at offset, boxed, with row and column labels; a vector is one
// row without a row label.
static void matrix(StrBuf *out, const Trace *tr, const Tensor *t, const int *decimals, size_t offset, size_t rows,
                   size_t cols, const Labels *row_labels, const Labels *col_labels, bool vector, size_t indent,
                   const TextStyle *st) {
    char buf[64];
    size_t ri[SHOW_ROWS + 1], ci[SHOW_COLS + 1];
    size_t nr = shown(rows, SHOW_ROWS, EDGE_ROWS, ri), nc = shown(cols, SHOW_COLS, EDGE_COLS, ci);
    size_t label_w = 0;
    if (!vector)
        for (size_t r = 0; r < nr; r++) {
            if (ri[r] == GAP)
                continue;
            index_label(row_labels, ri[r], buf, sizeof(buf));
            if (text_width(buf) > label_w)
                label_w = text_width(buf);
        }
    size_t width[SHOW_COLS + 1];
    for (size_t c = 0; c < nc; c++) {
        width[c] = 1;  // a gap column holds one "…"
        if (ci[c] == GAP)
            continue;
        index_label(col_labels, ci[c], buf, sizeof(buf));
        width[c] = text_width(buf);
        for (size_t r = 0; r < nr; r++) {
            if (ri[r] == GAP)
                continue;
            format_value(t, decimals, offset + ri[r] * cols + ci[c], tr->digits, buf, sizeof(buf));
            if (strlen(buf) > width[c])
                width[c] = strlen(buf);
        }
    }
    size_t inner = 1;
    for (size_t c = 0; c < nc; c++)
        inner += width[c] + 2;
    size_t left = indent + (vector ? 0 : label_w + 1);
    // Column labels, right-aligned over their numbers (the '│' takes one column).
    pad(out, left + 1);
    strbuf_puts(out, st->dim);
    for (size_t c = 0; c < nc; c++) {
        const char *label = "…";
        if (ci[c] != GAP) {
            index_label(col_labels, ci[c], buf, sizeof(buf));
            label = buf;
        }
        pad(out, 2 + width[c] - text_width(label));
        strbuf_puts(out, label);
    }
    strbuf_puts(out, st->reset);
    strbuf_putc(out, '\n');
    pad(out, left);
    strbuf_puts(out, "┌");
    repeat(out, "─", inner);
    strbuf_puts(out, "┐\n");
    for (size_t r = 0; r < nr; r++) {
        pad(out, indent);
        if (!vector) {
            const char *label = "⋮";
            if (ri[r] != GAP) {
                index_label(row_labels, ri[r], buf, sizeof(buf));
                label = buf;
            }
            strbuf_puts(out, st->dim);
            pad(out, label_w - text_width(label));
            strbuf_puts(out, label);
            strbuf_puts(out, st->reset);
            pad(out, 1);
        }
        strbuf_puts(out, "│");
        for (size_t c = 0; c < nc; c++) {
            const char *cell = ri[r] == GAP ? "⋮" : "…";
            if (ri[r] != GAP && ci[c] != GAP) {
                format_value(t, decimals, offset + ri[r] * cols + ci[c], tr->digits, buf, sizeof(buf));
                cell = buf;
            }
            pad(out, 2 + width[c] - text_width(cell));
            strbuf_puts(out, cell);
        }
        strbuf_puts(out, " │\n");
    }
    pad(out, left);
    strbuf_puts(out, "└");
    repeat(out, "─", inner);
    strbuf_puts(out, "┘\n");
    if (rows > SHOW_ROWS || cols > SHOW_COLS) {
        pad(out, indent);
        if (vector)
            strbuf_printf(out, "(only the first and last of %zu values are shown; --format json has every one)\n",
                          cols);
        else
            strbuf_printf(out, "(only the corners of %zu x %zu values are shown; --format json has every one)\n",
                          rows, cols);
    }
}

enum { SIDE_BY_SIDE_GAP = 4, SIDE_BY_SIDE_WIDTH = 110 };

// Width of text as a terminal shows it, colour escapes taking no room.
static size_t visible_width(const char *s, size_t len) {
    return format_display_width(s, len);
}

static size_t block_width(const char *text) {
    size_t w = 0;
    for (const char *p = text; *p;) {
        const char *end = strchr(p, '\n');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        size_t lw = visible_width(p, len);
        if (lw > w)
            w = lw;
        p += len + (end ? 1 : 0);
    }
    return w;
}

// Lay blocks of lines next to each other, each padded to its own width.
static void side_by_side(StrBuf *out, const StrBuf *blocks, size_t n, size_t indent) {
    const char *at[TENSOR_MAX_RANK * 64];
    size_t widths[TENSOR_MAX_RANK * 64];
    if (n > ARRAY_LEN(at))
        n = ARRAY_LEN(at);
    for (size_t k = 0; k < n; k++) {
        at[k] = strbuf_str(&blocks[k]);
        widths[k] = block_width(at[k]);
    }
    for (;;) {
        bool any = false;
        for (size_t k = 0; k < n; k++)
            any = any || *at[k];
        if (!any)
            break;
        StrBuf line;
        strbuf_init(&line);
        pad(&line, indent);
        for (size_t k = 0; k < n; k++) {
            const char *end = strchr(at[k], '\n');
            size_t len = end ? (size_t)(end - at[k]) : strlen(at[k]);
            strbuf_append(&line, at[k], len);
            if (k + 1 < n)
                pad(&line, widths[k] - visible_width(at[k], len) + SIDE_BY_SIDE_GAP);
            at[k] += len + (end ? 1 : 0);
        }
        // No trailing spaces: a golden file should not depend on them.
        while (line.len && line.data[line.len - 1] == ' ')
            line.data[--line.len] = '\0';
        strbuf_append(out, strbuf_str(&line), line.len);
        strbuf_putc(out, '\n');
        out->failed = out->failed || line.failed;
        strbuf_finish(&line);
    }
}

static void values(StrBuf *out, const Trace *tr, const TraceStage *s, const Tensor *t, const int *decimals,
                   size_t indent, const TextStyle *st) {
    const Shape *sh = &t->shape;
    char buf[64];
    if (!t->data) {
        char n[64], bytes[64];
        format_count((double)t->size, n, sizeof(n));
        format_count((double)t->size * 8.0, bytes, sizeof(bytes));
        pad(out, indent);
        strbuf_printf(out, "(shape only: %s values, %s bytes as doubles; not stored)\n", n, bytes);
        return;
    }
    if (sh->rank == 0) {
        format_value(t, decimals, 0, tr->digits, buf, sizeof(buf));
        pad(out, indent);
        strbuf_printf(out, "= %s%s%s\n", st->bold, buf, st->reset);
        return;
    }
    if (sh->rank == 1) {
        matrix(out, tr, t, decimals, 0, 1, sh->dim[0], NULL, &s->labels[0], true, indent, st);
        return;
    }
    // Rank 2 is one matrix; rank 3 and 4 print one labelled matrix per leading index, side by
    // side while they fit in a terminal (each head's weights next to the other's), else stacked.
    size_t rows = sh->dim[sh->rank - 2], cols = sh->dim[sh->rank - 1];
    size_t per = rows * cols, slices = per ? t->size / per : 0;
    if (sh->rank == 2 || per == 0) {
        if (per)
            matrix(out, tr, t, decimals, 0, rows, cols, &s->labels[0], &s->labels[1], false, indent, st);
        return;
    }
    // Many slices show as the first and last few, like rows of a big matrix.
    enum { SHOW_SLICES = 16, EDGE_SLICES = 3 };
    size_t si[SHOW_SLICES + 1];
    size_t ns = shown(slices, SHOW_SLICES, EDGE_SLICES, si);
    StrBuf *blocks = util_calloc(ns, sizeof(StrBuf));
    if (!blocks) {
        out->failed = true;
        return;
    }
    size_t total_width = 0;
    for (size_t j = 0; j < ns; j++) {
        StrBuf *b = &blocks[j];
        size_t k = si[j];
        if (k == GAP) {
            strbuf_printf(b, "⋮ (%zu more slices)\n", slices - 2 * EDGE_SLICES);
            continue;
        }
        strbuf_puts(b, st->bold);
        strbuf_puts(b, "[");
        size_t rest = k;
        size_t idx[TENSOR_MAX_RANK] = {0};
        for (size_t a = sh->rank - 2; a-- > 0;) {
            idx[a] = rest % sh->dim[a];
            rest /= sh->dim[a];
        }
        for (size_t a = 0; a + 2 < sh->rank; a++) {
            index_label(&s->labels[a], idx[a], buf, sizeof(buf));
            strbuf_printf(b, "%s%s", a ? ", " : "", buf);
        }
        strbuf_puts(b, ", :, :]");
        strbuf_puts(b, st->reset);
        strbuf_putc(b, '\n');
        matrix(b, tr, t, decimals, k * per, rows, cols, &s->labels[sh->rank - 2], &s->labels[sh->rank - 1], false, 0,
               st);
        total_width += block_width(strbuf_str(b)) + SIDE_BY_SIDE_GAP;
        out->failed = out->failed || b->failed;
    }
    if (ns == slices && indent + total_width <= SIDE_BY_SIDE_WIDTH)
        side_by_side(out, blocks, ns, indent);
    else
        for (size_t j = 0; j < ns; j++)
            paragraph(out, strbuf_str(&blocks[j]), indent);
    for (size_t j = 0; j < ns; j++)
        strbuf_finish(&blocks[j]);
    util_free(blocks);
}

static void at_text(char *buf, size_t cap, const size_t *at, size_t rank) {
    size_t used = (size_t)snprintf(buf, cap, "[");
    for (size_t i = 0; i < rank && used < cap; i++)
        used += (size_t)snprintf(buf + used, cap - used, "%s%zu", i ? ", " : "", at[i]);
    if (used < cap)
        snprintf(buf + used, cap - used, "]");
}

// A verdict: the gap, where it is, and against what tolerance.
static void verdict(StrBuf *out, const Trace *tr, const TraceStage *s, const DocVerdict *v, bool local,
                    double widened, size_t indent, const TextStyle *st) {
    const TraceDocument *doc = s->document;
    size_t rank = s->value->shape.rank;
    char at[96], ours[64], printed[64], diff[64], tol[64], wid[64];
    at_text(at, sizeof(at), v->at, rank);
    // "at [1, 0] " before a value, or nothing for a scalar.
    char where[128] = "";
    if (rank)
        snprintf(where, sizeof(where), "at %s ", at);
    format_fixed(v->ours, tr->digits, ours, sizeof(ours));
    size_t k = 0;
    for (size_t i = 0; i < rank; i++)
        k = k * s->value->shape.dim[i] + v->at[i];
    format_fixed(v->printed, doc->decimals[k], printed, sizeof(printed));
    // The gap and the tolerance where the verdict points, which need not be where the largest
    // gap is when numbers were printed with different decimals.
    format_fixed(v->agrees ? v->max_abs_diff : v->gap, tr->digits, diff, sizeof(diff));
    format_fixed(v->tolerance - v->widened, doc->decimals[k], tol, sizeof(tol));
    format_fixed(widened, tr->digits, wid, sizeof(wid));
    pad(out, indent);
    if (!local) {
        if (v->agrees)
            strbuf_printf(out, "%sdocument: agrees%s: every printed number is within one unit of its last place "
                               "(largest difference %s%s%s)\n", st->cyan, st->reset, diff, rank ? " at " : "",
                          rank ? at : "");
        else
            strbuf_printf(out, "%sdocument: disagrees%s: %sthe exact value is %s but the document printed %s "
                               "(off by %s; within %s would agree)\n", st->bold, st->reset, where, ours, printed, diff,
                          tol);
        return;
    }
    // How the tolerance was widened: by the rounding of printed inputs, or not at all when the
    // step reads only the lesson's exact givens.
    char how[256];
    if (doc->printed_inputs == 0)
        snprintf(how, sizeof(how), "within %s; its inputs are exact, so nothing was widened", tol);
    else if (doc->widening_skipped)
        snprintf(how, sizeof(how), "within %s; not widened: its %zu printed input values are too many to try one "
                                   "by one", tol, doc->printed_inputs);
    else
        snprintf(how, sizeof(how), "within %s, widened by up to %s for the rounding of its printed inputs", tol, wid);
    if (v->agrees)
        strbuf_printf(out, "%son its own printed inputs: agrees%s (%s)%s\n", st->cyan, st->reset, how,
                      doc->chained.agrees ? "" : ": this step is right; it is off only through numbers carried from earlier steps");
    else
        strbuf_printf(out, "%son its own printed inputs: disagrees%s: the same operation on the document's own "
                           "inputs gives %s%s%s, not %s (%s): the document goes wrong here by itself\n",
                      st->bold, st->reset, ours, rank ? " at " : "", rank ? at : "", printed, how);
}

static void document(StrBuf *out, const Trace *tr, const TraceStage *s, size_t indent, const TextStyle *st) {
    const TraceDocument *doc = s->document;
    pad(out, indent);
    strbuf_puts(out, "as the document printed it:\n");
    values(out, tr, s, doc->values, doc->decimals, indent, st);
    verdict(out, tr, s, &doc->chained, false, 0, indent, st);
    if (doc->has_local)
        verdict(out, tr, s, &doc->local, true, doc->widened_by, indent, st);
}

static void document_summary(StrBuf *out, const Trace *tr, const TextStyle *st) {
    if (tr->doc_printed == 0)
        return;
    strbuf_printf(out, "\n%sDocument check%s\n--------------\n", st->bold, st->reset);
    strbuf_printf(out, "The document printed %zu of these stages; %zu agree with the exact values.\n",
                  tr->doc_printed, tr->doc_agree);
    StrBuf own, inherited;
    strbuf_init(&own);
    strbuf_init(&inherited);
    for (size_t i = 0; i < tr->n_stages; i++) {
        const TraceStage *s = &tr->stages[i];
        const TraceDocument *doc = s->document;
        if (!doc)
            continue;
        StrBuf *list = doc->verdict == DOC_OWN_SLIP ? &own : doc->verdict == DOC_INHERITS ? &inherited : NULL;
        if (!list)
            continue;
        strbuf_printf(list, "%s%s", list->len ? ", " : "", s->name);
        if (s->number[0])
            strbuf_printf(list, " (step %s)", s->number);
    }
    if (own.len)
        strbuf_printf(out, "Wrong by themselves, on the document's own printed inputs: %s.\n", strbuf_str(&own));
    if (inherited.len)
        strbuf_printf(out, "Right on their own printed inputs, off only through numbers carried from earlier steps: %s.\n",
                      strbuf_str(&inherited));
    if (tr->doc_first_slip >= 0) {
        const TraceStage *s = &tr->stages[tr->doc_first_slip];
        if (s->kind == STAGE_GIVEN)
            strbuf_printf(out, "The document first goes wrong by itself in the given %s.\n", s->name);
        else
            strbuf_printf(out, "The document first goes wrong by itself at step %s: %s = %s.\n", s->number, s->name,
                          s->expr);
    } else if (tr->doc_agree == tr->doc_printed) {
        strbuf_puts(out, "Every number the document printed agrees.\n");
    } else {
        // Disagreements without a slip: the document computed on from its own rounded numbers.
        strbuf_puts(out, "No step goes wrong by itself: each disagreement comes from rounded numbers the document "
                         "carried forward.\n");
    }
    if (own.failed || inherited.failed)
        out->failed = true;
    strbuf_finish(&own);
    strbuf_finish(&inherited);
}

static void stage(StrBuf *out, const Trace *tr, const TraceStage *s, const TextStyle *st) {
    char shape[64];
    shape_format(&s->value->shape, shape, sizeof(shape));
    const size_t indent = 4;
    strbuf_putc(out, '\n');
    strbuf_puts(out, st->bold);
    switch (s->kind) {
    case STAGE_GIVEN:
        strbuf_printf(out, "Given %s  %s", s->name, shape);
        strbuf_puts(out, st->reset);
        if (s->about)
            strbuf_printf(out, "  %s", s->about);
        strbuf_putc(out, '\n');
        break;
    case STAGE_STEP:
        strbuf_printf(out, "Step %s  %s = %s", s->number, s->name, s->expr);
        strbuf_puts(out, st->reset);
        strbuf_putc(out, '\n');
        break;
    case STAGE_INTERMEDIATE:
    case STAGE_GRADIENT:
        strbuf_printf(out, "Step %s  %s = %s", s->number, s->name, s->expr);
        strbuf_puts(out, st->reset);
        strbuf_putc(out, '\n');
        break;
    }
    if (s->op_line) {
        pad(out, indent);
        strbuf_printf(out, "%s%s%s   %s\n", st->cyan, s->op_line, st->reset, s->op_about ? s->op_about : "");
    } else if (s->kind != STAGE_GIVEN) {
        pad(out, indent);
        strbuf_printf(out, "%s%s%s\n", st->cyan, shape, st->reset);
    }
    if (s->say)
        paragraph(out, s->say, indent);
    values(out, tr, s, s->value, NULL, indent, st);
    for (size_t i = 0; i < s->n_notes; i++) {
        pad(out, indent);
        strbuf_printf(out, "%snote:%s %s\n", st->cyan, st->reset, s->notes[i]);
    }
    if (s->document)
        document(out, tr, s, indent, st);
    if (s->n_work) {
        pad(out, indent);
        strbuf_printf(out, "%swork:%s\n", st->cyan, st->reset);
        for (size_t i = 0; i < s->n_work; i++) {
            pad(out, indent + 2);
            strbuf_printf(out, "%s\n", s->work[i]);
        }
    }
}

void render_text(const Trace *tr, const RenderOptions *opts, StrBuf *out) {
    TextStyle st = {"", "", "", ""};
    if (opts && opts->colour)
        st = (TextStyle){"\033[1m", "\033[2m", "\033[36m", "\033[0m"};
    strbuf_printf(out, "%s%s%s\n", st.bold, tr->title, st.reset);
    repeat(out, "=", text_width(tr->title));
    strbuf_putc(out, '\n');
    if (tr->source)
        strbuf_printf(out, "Source: %s\n", tr->source);
    strbuf_printf(out, "Lesson: %s\n", tr->file_name);
    if (tr->intro) {
        strbuf_putc(out, '\n');
        paragraph(out, tr->intro, 0);
    }
    for (size_t i = 0; i < tr->n_stages; i++)
        stage(out, tr, &tr->stages[i], &st);
    if (tr->outro) {
        strbuf_putc(out, '\n');
        paragraph(out, tr->outro, 0);
    }
    document_summary(out, tr, &st);
}
