// render_html: the trace as one self-contained web page for a projector or a course site:
// tensors as labelled heatmap tables, a softmax's rows as bars, each head's matrix side by
// side, shown work and intermediate stages folded away, a table of contents and j/k to move
// stage by stage. Everything is inline (no font, script or image is fetched) and every text
// that comes from a lesson is escaped.
#include <math.h>
#include <string.h>

#include "corners.h"
#include "format.h"
#include "heatmap.h"
#include "notation.h"
#include "render_train.h"
#include "render.h"
#include "verdict.h"

// ---------------------------------------------------------------- text

// Lesson text as HTML text or an attribute value: nothing in it can open a tag.
static void esc(StrBuf *out, const char *s) {
    for (; *s; s++) {
        switch (*s) {
        case '&': strbuf_puts(out, "&amp;"); break;
        case '<': strbuf_puts(out, "&lt;"); break;
        case '>': strbuf_puts(out, "&gt;"); break;
        case '"': strbuf_puts(out, "&quot;"); break;
        case '\'': strbuf_puts(out, "&#39;"); break;
        default: strbuf_putc(out, *s);
        }
    }
}

static void esc_len(StrBuf *out, const char *s, size_t len) {
    char buf[256];
    while (len) {
        size_t n = len < sizeof(buf) - 1 ? len : sizeof(buf) - 1;
        memcpy(buf, s, n);
        buf[n] = '\0';
        esc(out, buf);
        s += n;
        len -= n;
    }
}

// Narration as the lesson wrote it: a blank line starts a new paragraph, and indented lines
// (a formula set apart, as in the RoPE lesson) keep their layout in a block of their own.
static void prose(StrBuf *out, const char *text, const char *cls) {
    enum { NONE, PARA, PRE };
    int open = NONE;
    const char *p = text;
    while (*p) {
        const char *end = strchr(p, '\n');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\r'))
            len--;
        int want = len == 0 ? NONE : (p[0] == ' ' || p[0] == '\t') ? PRE : PARA;
        if (want != open || want == NONE) {
            if (open != NONE)
                strbuf_puts(out, open == PRE ? "</pre>\n" : "</p>\n");
            if (want != NONE)
                strbuf_printf(out, want == PRE ? "<pre class=\"%s\">" : "<p class=\"%s\">", cls);
        } else {
            strbuf_putc(out, '\n');
        }
        open = want;
        esc_len(out, p, len);
        if (!end)
            break;
        p = end + 1;
    }
    if (open != NONE)
        strbuf_puts(out, open == PRE ? "</pre>\n" : "</p>\n");
}

// ---------------------------------------------------------------- tensors

static void label_text(StrBuf *out, const Labels *l, size_t i) {
    if (l && l->items && i < l->n)
        esc(out, l->items[i]);
    else
        strbuf_printf(out, "%zu", i);
}

static void hex(StrBuf *out, HeatRgb c) {
    strbuf_printf(out, "#%02x%02x%02x", c.r, c.g, c.b);
}

// "[head 0, :, :]": which slice of a rank-3 or rank-4 tensor a small table shows.
static void slice_caption(StrBuf *out, const Shape *sh, const Labels *labels, size_t k) {
    size_t idx[TENSOR_MAX_RANK] = {0};
    size_t rest = k;
    for (size_t a = sh->rank - 2; a-- > 0;) {
        idx[a] = rest % sh->dim[a];
        rest /= sh->dim[a];
    }
    strbuf_puts(out, "[");
    for (size_t a = 0; a + 2 < sh->rank; a++) {
        if (a)
            strbuf_puts(out, ", ");
        label_text(out, &labels[a], idx[a]);
    }
    strbuf_puts(out, ", :, :]");
}

// How one tensor is drawn: its colour scale (none when the lesson asks for a table only), and
// whether its entries get bars (a softmax's probabilities, or a vector the lesson asks bars for).
typedef struct Picture {
    const TraceStage *stage;
    const Tensor *t;
    const int *decimals;  // per-value places (numbers as a document printed them), or NULL
    int digits;
    FormatStyle style;    // else one notation for all the tensor's values, as the text trace has
    bool coloured;
    // A mask: every value 0 (allowed) or -inf (blocked), drawn as the two, not on a scale
    // where both would be white.
    bool mask;
    bool bars;
    Heatmap heat;
} Picture;

// The token an id stands for (the stage's ids_of), or NULL for a number or one out of range.
static const char *cell_token(const Picture *pic, size_t k) {
    const Labels *ids = &pic->stage->ids_of;
    double v = pic->t->data[k];
    if (!ids->items || pic->decimals || pic->t != pic->stage->value || !(v >= 0 && v < (double)ids->n) ||
        v != floor(v))
        return NULL;
    return ids->items[(size_t)v];
}

static void cell_number(const Picture *pic, size_t k, char *buf, size_t cap) {
    if (pic->decimals)
        format_places(pic->t->data[k], pic->decimals[k], buf, cap);
    else
        format_with(&pic->style, pic->t->data[k], buf, cap);
}

// One value's cell: the number always in it, its exact value in the tooltip, the heatmap's
// colour behind it and, for a probability, a bar as long as the probability.
static void cell(StrBuf *out, const Picture *pic, size_t k) {
    char num[64], exact[64];
    cell_number(pic, k, num, sizeof(num));
    format_exact(pic->t->data[k], exact, sizeof(exact));
    strbuf_printf(out, "<td title=\"%s\"", exact);
    if (pic->mask) {
        strbuf_puts(out, pic->t->data[k] == 0 ? " class=\"allowed\"" : " class=\"blocked\"");
    } else if (pic->coloured) {
        HeatRgb bg = heatmap_colour(&pic->heat, pic->t->data[k]);
        strbuf_puts(out, " style=\"background:");
        hex(out, bg);
        strbuf_puts(out, ";color:");
        hex(out, heatmap_ink(bg));
        strbuf_puts(out, "\"");
    }
    const char *token = cell_token(pic, k);
    if (token) {  // an id, as its token (its number in the tooltip)
        strbuf_putc(out, '>');
        esc(out, token);
    } else {
        strbuf_printf(out, ">%s", num);
    }
    if (pic->bars) {
        // A nan has no length: heatmap_position says -1 for it. On a diverging scale a bar is
        // as long as |value| (the number has the sign), as on the terminal.
        double p = heatmap_position(&pic->heat, pic->t->data[k]);
        if (p >= 0 && pic->heat.scale == HEAT_DIVERGING)
            p = fabs(2 * p - 1);
        char width[64];
        format_places(p < 0 ? 0 : p * 100, 1, width, sizeof(width));
        strbuf_printf(out, "<span class=\"bar\" style=\"width:%s%%\"></span>", width);
    }
    strbuf_puts(out, "</td>");
}

// A table named for a screen reader: "Q", "weights [head 0, :, :]", "Q as the document
// printed it"; slice is CORNERS_GAP for a tensor of rank 1 or 2.
static void table_open(StrBuf *out, const Picture *pic, const char *cls, size_t slice) {
    strbuf_printf(out, "<table class=\"%s\" aria-label=\"", cls);
    esc(out, pic->stage->name);
    if (slice != CORNERS_GAP) {
        strbuf_putc(out, ' ');
        slice_caption(out, &pic->t->shape, pic->stage->labels, slice);
    }
    if (pic->decimals)
        strbuf_puts(out, " as the document printed it");
    strbuf_puts(out, "\">\n");
}

// One matrix [rows, cols] of the picture, the slice-th of a rank-3 or rank-4 tensor (or the
// whole tensor, slice CORNERS_GAP), as a table with row and column headers; a vector is one
// row without a row header. A matrix too big to read shows its corners, as the text trace and
// numpy print it.
static void matrix(StrBuf *out, const Picture *pic, size_t slice, size_t rows, size_t cols, const Labels *row_labels,
                   const Labels *col_labels, bool vector) {
    size_t offset = slice == CORNERS_GAP ? 0 : slice * rows * cols;
    size_t ri[CORNERS_ROWS + 1], ci[CORNERS_COLS + 1];
    size_t nr = corners_shown(rows, CORNERS_ROWS, CORNERS_EDGE_ROWS, ri);
    size_t nc = corners_shown(cols, CORNERS_COLS, CORNERS_EDGE_COLS, ci);
    table_open(out, pic, pic->bars ? "tensor probabilities" : "tensor", slice);
    strbuf_puts(out, "<thead><tr>");
    if (!vector)
        strbuf_puts(out, "<td class=\"corner\"></td>");
    for (size_t c = 0; c < nc; c++) {
        if (ci[c] == CORNERS_GAP) {
            strbuf_puts(out, "<th scope=\"col\" class=\"gap\">…</th>");
            continue;
        }
        strbuf_puts(out, "<th scope=\"col\">");
        label_text(out, col_labels, ci[c]);
        strbuf_puts(out, "</th>");
    }
    strbuf_puts(out, "</tr></thead>\n<tbody>\n");
    for (size_t r = 0; r < nr; r++) {
        strbuf_puts(out, "<tr>");
        if (ri[r] == CORNERS_GAP) {
            strbuf_printf(out, "<th scope=\"row\" class=\"gap\">⋮</th><td class=\"gap\" colspan=\"%zu\">⋮</td></tr>\n",
                          nc);
            continue;
        }
        if (!vector) {
            strbuf_puts(out, "<th scope=\"row\">");
            label_text(out, row_labels, ri[r]);
            strbuf_puts(out, "</th>");
        }
        for (size_t c = 0; c < nc; c++) {
            if (ci[c] == CORNERS_GAP)
                strbuf_puts(out, "<td class=\"gap\">…</td>");
            else
                cell(out, pic, offset + ri[r] * cols + ci[c]);
        }
        strbuf_puts(out, "</tr>\n");
    }
    strbuf_puts(out, "</tbody>\n</table>\n");
    if (rows > CORNERS_ROWS || cols > CORNERS_COLS) {
        if (vector)
            strbuf_printf(out, "<p class=\"corners\">Only the first and last of %zu values are shown; "
                               "<code>--format json</code> has every one.</p>\n", cols);
        else
            strbuf_printf(out, "<p class=\"corners\">Only the corners of %zu × %zu values are shown; "
                               "<code>--format json</code> has every one.</p>\n", rows, cols);
    }
}

// A probability vector as bars, one row per entry: label, bar, number.
static void bars(StrBuf *out, const Picture *pic, const Labels *labels) {
    size_t n = pic->t->shape.dim[0];
    size_t idx[CORNERS_ROWS + 1];
    size_t ni = corners_shown(n, CORNERS_ROWS, CORNERS_EDGE_ROWS, idx);
    table_open(out, pic, "tensor probabilities column", CORNERS_GAP);
    strbuf_puts(out, "<tbody>\n");
    for (size_t i = 0; i < ni; i++) {
        if (idx[i] == CORNERS_GAP) {
            strbuf_puts(out, "<tr><th scope=\"row\" class=\"gap\">⋮</th><td class=\"gap\">⋮</td></tr>\n");
            continue;
        }
        strbuf_puts(out, "<tr><th scope=\"row\">");
        label_text(out, labels, idx[i]);
        strbuf_puts(out, "</th>");
        cell(out, pic, idx[i]);
        strbuf_puts(out, "</tr>\n");
    }
    strbuf_puts(out, "</tbody>\n</table>\n");
    if (n > CORNERS_ROWS)
        strbuf_printf(out, "<p class=\"corners\">Only the first and last of %zu values are shown; "
                           "<code>--format json</code> has every one.</p>\n", n);
}

// The colours' range under a picture, as a strip from lo to hi, so that a colour can be read
// back as a value.
static void legend(StrBuf *out, const Picture *pic) {
    const Heatmap *h = &pic->heat;
    if (pic->mask) {
        strbuf_puts(out, "<p class=\"legend\"><span class=\"swatch allowed\"></span> 0: allowed "
                         "<span class=\"swatch blocked\"></span> -inf: blocked (softmax gives it weight 0)</p>\n");
        return;
    }
    if (h->scale == HEAT_NONE || (!pic->coloured && !pic->bars))
        return;
    enum { STOPS = 9 };
    char lo[64], hi[64];
    // Counts and positions are whole numbers, and so are the ends of their scale.
    if (pic->t->is_count) {
        format_whole(h->lo, pic->digits, lo, sizeof(lo));
        format_whole(h->hi, pic->digits, hi, sizeof(hi));
    } else {
        format_number(h->lo, pic->digits, lo, sizeof(lo));
        format_number(h->hi, pic->digits, hi, sizeof(hi));
    }
    if (!pic->coloured) {
        strbuf_printf(out, "<p class=\"legend\">bars: a full bar is %s%s</p>\n", hi,
                      h->scale == HEAT_DIVERGING ? " in size (the numbers have the signs)" : "");
        return;
    }
    strbuf_puts(out, "<p class=\"legend\"><span class=\"end\">");
    strbuf_puts(out, lo);
    strbuf_puts(out, "</span><span class=\"ramp\" aria-hidden=\"true\" style=\"background:linear-gradient(to right");
    for (int k = 0; k < STOPS; k++) {
        strbuf_puts(out, ",");
        hex(out, heatmap_colour(h, h->lo + (h->hi - h->lo) * k / (STOPS - 1)));
    }
    strbuf_printf(out, ")\"></span><span class=\"end\">%s</span> <span class=\"scale\">%s</span></p>\n", hi,
                  h->scale == HEAT_DIVERGING ? "colour: blue below 0, red above" : "colour: darker is larger");
}

// Every value 0 or -inf, and at least one of each: an attention mask.
static bool is_mask(const Tensor *t) {
    bool zero = false, blocked = false;
    for (size_t i = 0; i < t->size; i++) {
        double v = t->data[i];
        if (v == 0)
            zero = true;
        else if (isinf(v) && v < 0)
            blocked = true;
        else
            return false;
    }
    return zero && blocked;
}

static void values(StrBuf *out, const Trace *tr, const TraceStage *s, const Tensor *t, const int *decimals,
                   const char *cls) {
    const Shape *sh = &t->shape;
    strbuf_printf(out, "<div class=\"values %s\">\n", cls);
    if (!t->data) {
        char n[64], bytes[64];
        format_count((double)t->size, n, sizeof(n));
        format_count((double)t->size * 8.0, bytes, sizeof(bytes));
        strbuf_printf(out, "<p class=\"shape-only\">Shape only: %s values, %s bytes as doubles; not stored.</p>\n", n,
                      bytes);
        strbuf_puts(out, "</div>\n");
        return;
    }
    Picture pic = {.stage = s, .t = t, .decimals = decimals, .digits = tr->digits};
    // A distribution's rows (a softmax's) get bars. A lesson's show: table keeps only the
    // numbers; show: bars draws a vector as bars.
    // Ids are tokens, not amounts: never coloured, never bars.
    pic.coloured = s->show != PICTURE_TABLE && !(s->ids_of.items && t == s->value);
    pic.bars = pic.coloured && (s->show == PICTURE_BARS || (s->show != PICTURE_TABLE && s->distribution));
    heatmap_init(&pic.heat, t->data, t->size);
    pic.mask = pic.coloured && !pic.bars && is_mask(t);
    if (!decimals)
        pic.style = notation_of(t, tr->digits);
    if (sh->rank == 0) {
        char num[64], exact[64];
        cell_number(&pic, 0, num, sizeof(num));
        format_exact(t->data[0], exact, sizeof(exact));
        strbuf_printf(out, "<p class=\"scalar\">= <data value=\"%s\" title=\"%s\">%s</data>", exact, exact, num);
        const char *token = cell_token(&pic, 0);
        if (token) {  // one id: its number, then its token
            strbuf_puts(out, " (");
            esc(out, token);
            strbuf_putc(out, ')');
        }
        strbuf_puts(out, "</p>\n");
        strbuf_puts(out, "</div>\n");
        return;
    }
    strbuf_puts(out, "<div class=\"scroll\">\n");
    size_t rows = sh->rank >= 2 ? sh->dim[sh->rank - 2] : 1, cols = sh->dim[sh->rank - 1];
    size_t per = rows * cols, slices = per ? t->size / per : 0;
    if (sh->rank == 1 && pic.bars) {
        // A bar chart: the bars carry the picture, on a plain background.
        pic.coloured = false;
        bars(out, &pic, &s->labels[0]);
    } else if (sh->rank == 1) {
        matrix(out, &pic, CORNERS_GAP, 1, cols, NULL, &s->labels[0], true);
    } else if (sh->rank == 2) {
        if (per)
            matrix(out, &pic, CORNERS_GAP, rows, cols, &s->labels[0], &s->labels[1], false);
    } else if (per) {
        // One small table per head (or per leading index), side by side, on one colour scale
        // so that the heads compare at a glance: bertviz's head view.
        size_t si[CORNERS_SLICES + 1];
        size_t ns = corners_shown(slices, CORNERS_SLICES, CORNERS_EDGE_SLICES, si);
        strbuf_puts(out, "<div class=\"slices\">\n");
        for (size_t j = 0; j < ns; j++) {
            if (si[j] == CORNERS_GAP) {
                strbuf_printf(out, "<p class=\"gap\">⋮ %zu more slices</p>\n", slices - 2 * CORNERS_EDGE_SLICES);
                continue;
            }
            strbuf_puts(out, "<figure class=\"slice\">\n<figcaption>");
            slice_caption(out, sh, s->labels, si[j]);
            strbuf_puts(out, "</figcaption>\n");
            matrix(out, &pic, si[j], rows, cols, &s->labels[sh->rank - 2], &s->labels[sh->rank - 1], false);
            strbuf_puts(out, "</figure>\n");
        }
        strbuf_puts(out, "</div>\n");
    }
    strbuf_puts(out, "</div>\n");
    legend(out, &pic);
    strbuf_puts(out, "</div>\n");
}

// ---------------------------------------------------------------- the document check

// A verdict's words in its colour; the words carry it, so colour is never the only sign.
// cls: agrees (green), inherits (yellow), disagrees (red) or edit (the student's change).
static void badge(StrBuf *out, const char *cls, const char *words) {
    strbuf_printf(out, "<strong class=\"badge %s\">%s</strong> ", cls, words);
}

// A name in a sentence: code, escaped.
static void code_name(StrBuf *out, const char *name) {
    strbuf_puts(out, "<code>");
    esc(out, name);
    strbuf_puts(out, "</code>");
}

// One judgement (verdict.h) as a paragraph in the colour of its tone, led by its badge.
static void judgement(StrBuf *out, VerdictWords *w) {
    static const char *const classes[] = {[VERDICT_AGREES] = "agrees", [VERDICT_INHERITS] = "inherits",
                                          [VERDICT_DISAGREES] = "disagrees", [VERDICT_EDIT] = "edit"};
    strbuf_printf(out, "<p class=\"verdict %s\">", classes[w->tone]);
    badge(out, classes[w->tone], strbuf_str(&w->head));
    strbuf_printf(out, "%s.</p>\n", strbuf_str(&w->body));
    out->failed |= verdict_words_failed(w);
    verdict_words_finish(w);
}

// The class that colours a stage's document values by its verdict.
static const char *doc_class(DocClass c) {
    static const char *const classes[] = {"agrees", "inherits", "own-slip", "edited", "follows-edit", "set-aside"};
    _Static_assert(ARRAY_LEN(classes) == DOC_CLASS_COUNT, "one class for each verdict");
    return classes[c];
}

static void document(StrBuf *out, const Trace *tr, const TraceStage *s) {
    const TraceDocument *doc = s->document;
    strbuf_printf(out, "<div class=\"document %s\">\n", doc_class(doc->verdict));
    VerdictWords w;
    if (doc->verdict == DOC_SET_ASIDE || doc->same_as_given) {
        if (doc->verdict == DOC_SET_ASIDE)
            verdict_set_aside(&w, s, code_name);
        else
            verdict_same(&w);
        judgement(out, &w);
        strbuf_puts(out, "</div>\n");
        return;
    }
    strbuf_puts(out, "<h4>As the document printed it</h4>\n");
    values(out, tr, s, doc->values, doc->decimals, "printed");
    if (doc->verdict == DOC_EDITED) {
        verdict_edited(&w, s, code_name);
        judgement(out, &w);
    } else {
        verdict_words(&w, tr, s, &doc->chained, false, code_name);
        judgement(out, &w);
        if (doc->has_local) {
            verdict_words(&w, tr, s, &doc->local, true, code_name);
            judgement(out, &w);
        }
    }
    strbuf_puts(out, "</div>\n");
}

// Whether a stage belongs to a verdict's list: the givens the student changed are those
// edited and those whose shape changed.
static bool in_list(const TraceStage *s, DocClass which) {
    if (!s->document)
        return false;
    DocClass v = s->document->verdict;
    if (which == DOC_EDITED)
        return v == DOC_EDITED || (v == DOC_SET_ASIDE && s->kind == STAGE_GIVEN);
    return v == which;
}

// One sentence of the summary naming the stages of a verdict, "Q (step 1), K (step 2)",
// each linked to its stage; nothing when there are none.
static bool list_line(StrBuf *out, const Trace *tr, DocClass which, const char *cls, const char *words,
                      const char *middle) {
    bool first = true;
    for (size_t i = 0; i < tr->n_stages; i++) {
        const TraceStage *s = &tr->stages[i];
        if (!in_list(s, which))
            continue;
        if (first) {
            strbuf_printf(out, "<p class=\"verdict %s\">", cls);
            badge(out, cls, words);
            strbuf_puts(out, middle);
        }
        strbuf_printf(out, "%s<a href=\"#stage-%zu\"><code>", first ? "" : ", ", i);
        esc(out, s->name);
        strbuf_puts(out, "</code>");
        if (s->number[0]) {
            strbuf_puts(out, " (step ");
            esc(out, s->number);
            strbuf_puts(out, ")");
        }
        strbuf_puts(out, "</a>");
        first = false;
    }
    if (!first)
        strbuf_puts(out, ".</p>\n");
    return !first;
}


// "at step 3: <code>scores = Q @ K.T</code>", where the document's summary points.
static void step_formula(StrBuf *out, const TraceStage *s) {
    strbuf_puts(out, "at step ");
    esc(out, s->number);
    strbuf_puts(out, ": <code>");
    esc(out, s->name);
    strbuf_puts(out, " = ");
    esc(out, s->expr);
    strbuf_puts(out, "</code>");
}

static void document_summary(StrBuf *out, const Trace *tr) {
    if (tr->doc_printed == 0)
        return;
    strbuf_puts(out, "<section class=\"summary\" id=\"document-check\">\n<h2>Document check</h2>\n");
    // The student's edits first: they explain every difference that follows from them.
    if (list_line(out, tr, DOC_EDITED, "edit", "You changed", "(the document's numbers are not yours there): "))
        list_line(out, tr, DOC_FOLLOWS_EDIT, "edit", "Off only because of your edit",
                  "(the document is not to blame): ");
    size_t compared = tr->doc_printed - tr->doc_edited - tr->doc_set_aside;
    strbuf_printf(out, "<p>The document printed %zu of these stages; %zu agree with the exact values", tr->doc_printed,
                  tr->doc_agree);
    if (tr->doc_follow)
        strbuf_printf(out, ", %zu follow your edit", tr->doc_follow);
    strbuf_puts(out, ".</p>\n");
    list_line(out, tr, DOC_SET_ASIDE, "edit", "Not compared",
              "because their shape is no longer the document's: ");
    list_line(out, tr, DOC_OWN_SLIP, "disagrees", "Wrong by themselves", "on the document's own printed inputs: ");
    list_line(out, tr, DOC_INHERITS, "inherits", "Right on their own printed inputs",
              "off only through numbers carried from earlier steps: ");
    if (tr->doc_first_slip >= 0) {
        const TraceStage *s = &tr->stages[tr->doc_first_slip];
        strbuf_printf(out, "<p class=\"verdict disagrees\">The document first goes wrong by itself "
                           "<a href=\"#stage-%ld\">", tr->doc_first_slip);
        if (s->kind == STAGE_GIVEN) {
            strbuf_puts(out, "in the given <code>");
            esc(out, s->name);
            strbuf_puts(out, "</code>");
        } else {
            step_formula(out, s);
        }
        strbuf_puts(out, "</a>.</p>\n");
    } else if (tr->doc_agree == compared) {
        strbuf_puts(out, "<p class=\"verdict agrees\">");
        badge(out, "agrees", tr->doc_edited || tr->doc_set_aside ? "Every other number the document printed agrees."
                                                                 : "Every number the document printed agrees.");
        strbuf_puts(out, "</p>\n");
    } else if (tr->doc_agree + tr->doc_follow < compared) {
        // Disagreements without a slip: the document computed on from its own rounded numbers.
        strbuf_puts(out, "<p class=\"verdict inherits\">");
        badge(out, "inherits", "No step goes wrong by itself");
        strbuf_puts(out, "each disagreement comes from rounded numbers the document carried forward.</p>\n");
    } else if (tr->doc_follow && tr->doc_first_hidden_slip >= 0) {
        // Every difference follows the edit, but on its own printed inputs the document is also
        // wrong somewhere (the stage says so).
        const TraceStage *s = &tr->stages[tr->doc_first_hidden_slip];
        strbuf_printf(out, "<p class=\"verdict disagrees\">Your edit aside, the document also goes wrong by itself, "
                           "on its own printed inputs, first <a href=\"#stage-%ld\">", tr->doc_first_hidden_slip);
        step_formula(out, s);
        strbuf_puts(out, "</a>.</p>\n");
    } else {
        strbuf_puts(out, "<p class=\"verdict agrees\">");
        badge(out, "agrees", "No step of the document goes wrong by itself.");
        strbuf_puts(out, "</p>\n");
    }
    strbuf_puts(out, "</section>\n");
}

// ---------------------------------------------------------------- stages

// "Step 3  scores = Q @ K.T" or "Given X": the stage's heading text, also the contents' entry.
static void stage_title(StrBuf *out, const TraceStage *s) {
    if (s->kind == STAGE_GIVEN) {
        strbuf_puts(out, "<span class=\"number\">Given</span> <code>");
        esc(out, s->name);
        strbuf_puts(out, "</code>");
        return;
    }
    strbuf_puts(out, "<span class=\"number\">Step ");
    esc(out, s->number);
    strbuf_puts(out, "</span> <code>");
    esc(out, s->name);
    strbuf_puts(out, " = ");
    esc(out, s->expr);
    strbuf_puts(out, "</code>");
}

static const char *kind_class(StageKind k) {
    switch (k) {
    case STAGE_GIVEN: return "given";
    case STAGE_STEP: return "step";
    case STAGE_INTERMEDIATE: return "intermediate";
    case STAGE_GRADIENT: return "gradient";  // shown open: the backward pass is the lesson
    }
    return "";
}

static void stage_body(StrBuf *out, const Trace *tr, const TraceStage *s) {
    if (s->kind == STAGE_GIVEN && s->about) {
        strbuf_puts(out, "<p class=\"about\">");
        esc(out, s->about);
        strbuf_puts(out, "</p>\n");
    }
    // A step that names a grad() shows the backward pass above it, not a copy of its last stage.
    if (s->op_line && !s->names_gradient) {
        strbuf_puts(out, "<p class=\"op\"><code class=\"shapes\">");
        esc(out, s->op_line);
        strbuf_puts(out, "</code>");
        if (s->op_about) {
            strbuf_puts(out, " <span class=\"op-about\">");
            esc(out, s->op_about);
            strbuf_puts(out, "</span>");
        }
        strbuf_puts(out, "</p>\n");
    }
    if (s->say)
        prose(out, s->say, "say");
    if (s->say && trace_claim_fails_under(tr, (size_t)(s - tr->stages))) {
        strbuf_puts(out, "<p class=\"careful\">");
        badge(out, "disagrees", "careful");
        strbuf_puts(out, " this narration describes the lesson as written; the claim below fails on these "
                         "numbers</p>\n");
    }
    values(out, tr, s, s->value, NULL, "result");
    if (s->n_notes) {
        strbuf_puts(out, "<ul class=\"notes\">\n");
        for (size_t i = 0; i < s->n_notes; i++) {
            strbuf_puts(out, "<li><span class=\"label\">note:</span> ");
            esc(out, s->notes[i]);
            strbuf_puts(out, "</li>\n");
        }
        strbuf_puts(out, "</ul>\n");
    }
    if (s->document)
        document(out, tr, s);
    if (s->n_work) {
        strbuf_printf(out, "<details class=\"work\">\n<summary>Work: the arithmetic of %zu value%s</summary>\n<pre>",
                      s->n_work, s->n_work == 1 ? "" : "s");
        for (size_t i = 0; i < s->n_work; i++) {
            esc(out, s->work[i]);
            strbuf_putc(out, '\n');
        }
        strbuf_puts(out, "</pre>\n</details>\n");
    }
}

// The claims judged under stage i, each with its verdict in words: holds (green) or fails
// (red, with where and by how much).
static void stage_claims(StrBuf *out, const Trace *tr, size_t i) {
    for (size_t k = 0; k < tr->n_claims; k++) {
        const TraceClaim *cl = &tr->claims[k];
        if (cl->stage != i)
            continue;
        strbuf_puts(out, "<p class=\"claim\"><span class=\"label\">claim:</span> ");
        esc(out, cl->text);
        strbuf_puts(out, " <code>");
        esc(out, cl->expr);
        strbuf_puts(out, "</code> ");
        badge(out, cl->holds ? "agrees" : "disagrees", cl->holds ? "holds" : "fails");
        if (!cl->holds && cl->detail)
            esc(out, cl->detail);
        strbuf_puts(out, "</p>\n");
    }
}

static void claims_summary(StrBuf *out, const Trace *tr) {
    if (tr->n_claims == 0)
        return;
    strbuf_puts(out, "<section class=\"summary claims\">\n<h2>Claims</h2>\n<p>");
    size_t held = tr->n_claims - tr->n_claims_failed;
    if (tr->n_claims == 1)
        strbuf_printf(out, "The lesson's claim %s.</p>\n", held ? "holds" : "fails");
    else
        strbuf_printf(out, "%zu of %zu claims hold.</p>\n", held, tr->n_claims);
    if (tr->n_claims_failed) {
        strbuf_puts(out, "<ul>\n");
        for (size_t k = 0; k < tr->n_claims; k++) {
            if (tr->claims[k].holds)
                continue;
            strbuf_puts(out, "<li>");
            badge(out, "disagrees", "fails");
            esc(out, tr->claims[k].text);
            strbuf_puts(out, " <code>");
            esc(out, tr->claims[k].expr);
            strbuf_puts(out, "</code></li>\n");
        }
        strbuf_puts(out, "</ul>\n");
    }
    strbuf_puts(out, "</section>\n");
}

static void stage(StrBuf *out, const Trace *tr, const TraceStage *s, size_t index) {
    char shape[64];
    shape_format(&s->value->shape, shape, sizeof(shape));
    strbuf_printf(out, "<section class=\"stage %s\" id=\"stage-%zu\" data-name=\"", kind_class(s->kind), index);
    esc(out, s->name);
    strbuf_puts(out, "\" tabindex=\"-1\">\n");
    // An intermediate stage (an operation inside a step) is folded away until asked for.
    bool folded = s->kind == STAGE_INTERMEDIATE;
    if (folded)
        strbuf_puts(out, "<details>\n<summary>");
    strbuf_puts(out, "<h3>");
    stage_title(out, s);
    strbuf_printf(out, " <span class=\"shape\">%s</span></h3>", shape);
    strbuf_puts(out, folded ? "</summary>\n" : "\n");
    stage_body(out, tr, s);
    stage_claims(out, tr, index);
    if (folded)
        strbuf_puts(out, "</details>\n");
    strbuf_puts(out, "</section>\n");
}

// The contents: the givens in one line, then every step; intermediates stay out of it.
static void contents(StrBuf *out, const Trace *tr) {
    strbuf_puts(out, "<nav class=\"contents\" aria-labelledby=\"contents-title\">\n"
                     "<h2 id=\"contents-title\">Contents</h2>\n");
    bool first = true;
    for (size_t i = 0; i < tr->n_stages; i++) {
        const TraceStage *s = &tr->stages[i];
        if (s->kind != STAGE_GIVEN)
            continue;
        strbuf_printf(out, "%s<a href=\"#stage-%zu\"><code>", first ? "<p class=\"givens\">Given: " : ", ", i);
        esc(out, s->name);
        strbuf_puts(out, "</code></a>");
        first = false;
    }
    if (!first)
        strbuf_puts(out, "</p>\n");
    strbuf_puts(out, "<ol class=\"steps\">\n");
    for (size_t i = 0; i < tr->n_stages; i++) {
        const TraceStage *s = &tr->stages[i];
        if (s->kind != STAGE_STEP)
            continue;
        strbuf_printf(out, "<li><a href=\"#stage-%zu\">", i);
        stage_title(out, s);
        strbuf_puts(out, "</a></li>\n");
    }
    strbuf_puts(out, "</ol>\n");
    if (tr->doc_printed)
        strbuf_puts(out, "<p><a href=\"#document-check\">Document check</a></p>\n");
    strbuf_puts(out, "<p class=\"keys\"><kbd>j</kbd> or <kbd>↓</kbd> next stage, <kbd>k</kbd> or <kbd>↑</kbd> the one "
                     "before</p>\n</nav>\n");
}

// ---------------------------------------------------------------- the page

// Split in two to stay within the string length every C compiler must support.
static const char style[] =
    "<style>\n"
    ":root{--ink:#1a1a1a;--dim:#5a5a5a;--rule:#d0d0d0;--accent:#08306b;--paper:#fff;--agree:#1b7837;"
    "--slip:#b2182b;--inherit:#8c510a;--edit:#01665e}\n"
    "*{box-sizing:border-box}\n"
    "html{-webkit-text-size-adjust:100%}\n"
    "body{margin:0 auto;max-width:100rem;padding:0 1.5rem 4rem;font:18px/1.5 system-ui,sans-serif;color:var(--ink);"
    "background:var(--paper);overflow-wrap:break-word}\n"
    "h1{font-size:1.8rem;line-height:1.2;margin:1.5rem 0 .5rem}\n"
    "h2{font-size:1.3rem;margin:2rem 0 .5rem}\n"
    "h3{font-size:1.1rem;margin:0 0 .4rem;display:inline}\n"
    "h4{font-size:1rem;margin:.8rem 0 .3rem}\n"
    "code,pre,kbd{font-family:ui-monospace,'DejaVu Sans Mono',monospace;font-size:.92em}\n"
    "h3 code,.op code{overflow-wrap:anywhere}\n"
    ".meta{color:var(--dim);margin:.2rem 0}\n"
    ".contents{border:1px solid var(--rule);border-radius:6px;padding:.5rem 1rem;margin:1rem 0}\n"
    ".contents h2{margin:.3rem 0;font-size:1.1rem}\n"
    ".contents ol{margin:.3rem 0;padding-left:1.5rem}\n"
    ".contents a{color:var(--accent)}\n"
    ".keys{color:var(--dim);font-size:.9em}\n"
    "kbd{border:1px solid var(--rule);border-radius:3px;padding:0 .3em}\n"
    ".stage,.before{border-top:1px solid var(--rule);padding:1rem 0 .5rem;scroll-margin-top:.5rem}\n"
    ".stage:focus{outline:3px solid #6baed6;outline-offset:2px}\n"
    ".stage .number{color:var(--accent)}\n"
    ".shape{color:var(--dim);font-weight:normal;font-family:ui-monospace,monospace;font-size:.9em}\n"
    ".intermediate summary{cursor:pointer}\n"
    ".intermediate h3{font-size:1rem}\n"
    ".op{margin:.3rem 0}\n"
    ".op .shapes{background:#eef3f8;padding:0 .3em;border-radius:3px}\n"
    ".op-about{color:var(--dim)}\n"
    ".say{margin:.4rem 0;max-width:48rem}\n"
    "pre{white-space:pre-wrap;overflow-wrap:anywhere;margin:.4rem 0}\n"
    "pre.say,pre.prose{padding-left:1.5rem}\n"
    ".scroll{overflow-x:auto;max-width:100%;margin:.5rem 0}\n";
// (in parts: C guarantees string literals of 4,095 characters, not more)
static const char style_tables[] =
    "table.tensor{border-collapse:collapse;font-family:ui-monospace,'DejaVu Sans Mono',monospace;font-size:.9rem;"
    "font-variant-numeric:tabular-nums}\n"
    "table.tensor th{font-weight:normal;color:var(--dim);padding:.15rem .5rem;white-space:nowrap}\n"
    "table.tensor th[scope=row]{text-align:right;position:sticky;left:0;background:var(--paper)}\n"
    "table.tensor td{padding:.2rem .5rem;text-align:right;border:1px solid #fff;position:relative;"
    "white-space:nowrap;min-width:4.5em}\n"
    "table.tensor td.gap,table.tensor th.gap{text-align:center;color:var(--dim)}\n"
    "table.probabilities{font-size:.8rem}\n"
    "table.probabilities td{padding:.15rem .25rem .45rem;min-width:3.2em}\n"
    "table.probabilities th{padding:.15rem .25rem}\n"
    "table.probabilities .bar{position:absolute;left:0;bottom:1px;height:.25rem;background:#e6550d}\n"
    "table.column td{min-width:16rem;isolation:isolate;padding:.2rem .5rem}\n"
    "table.column .bar{top:.2rem;bottom:.2rem;height:auto;background:#9ecae1;z-index:-1}\n"
    ".slices{display:flex;flex-wrap:wrap;gap:1.5rem;align-items:flex-start}\n"
    ".slice{margin:0}\n"
    ".slice figcaption{font-family:ui-monospace,monospace;font-size:.9rem;font-weight:bold}\n"
    ".scalar{font-family:ui-monospace,monospace;font-size:1.1rem;font-weight:bold;margin:.4rem 0}\n"
    ".legend{display:flex;align-items:center;gap:.4rem;font-size:.8rem;color:var(--dim);margin:.2rem 0}\n"
    ".legend .ramp{display:inline-block;width:8rem;height:.7rem;border:1px solid var(--rule)}\n"
    ".legend .swatch{display:inline-block;width:1.2rem;height:.7rem;border:1px solid var(--rule)}\n"
    "table.tensor td.allowed,.swatch.allowed{background:#fff;color:#1a1a1a}\n"
    "table.tensor td.blocked,.swatch.blocked{background:#525252;color:#fff}\n"
    ".corners,.shape-only{color:var(--dim);font-size:.9em}\n"
    ".notes{margin:.4rem 0;padding-left:1.2rem}\n"
    ".notes .label,.work summary{color:var(--accent)}\n"
    ".document{border-left:4px solid var(--rule);padding:.1rem 0 .1rem .8rem;margin:.8rem 0}\n"
    ".document.agrees{border-color:var(--agree)}\n"
    ".document.inherits{border-color:var(--inherit)}\n"
    ".document.own-slip{border-color:var(--slip)}\n"
    ".verdict{margin:.3rem 0}\n"
    ".badge{display:inline-block;border-radius:3px;padding:0 .4em;color:#fff}\n"
    ".badge.agrees{background:var(--agree)}\n"
    ".badge.disagrees{background:var(--slip)}\n"
    ".badge.inherits{background:var(--inherit)}\n"
    ".badge.edit{background:var(--edit)}\n"
    ".document.edited,.document.follows-edit,.document.set-aside{border-color:var(--edit)}\n"
    ".work{margin:.5rem 0}\n"
    ".work summary{cursor:pointer}\n"
    ".work pre{font-size:.85rem;background:#f6f6f6;padding:.5rem;border-radius:4px}\n"
    ".prose{max-width:48rem}\n";
static const char style_more[] =
    ".course{display:flex;flex-wrap:wrap;gap:.5rem 1.5rem;margin-top:1rem;font-size:.9em}\n"
    ".course a{color:var(--accent)}\n"
    "@media print{\n"
    "body{max-width:none;font-size:11pt;padding:0}\n"
    ".keys,.course{display:none}\n"
    "table,figure,.verdict,.op{break-inside:avoid}\n"
    "h3,h4,summary{break-after:avoid}\n"
    ".scroll{overflow:visible}\n"
    "*{-webkit-print-color-adjust:exact;print-color-adjust:exact}\n"
    "a{color:inherit;text-decoration:none}\n"
    ".slices{flex-wrap:wrap}\n"
    "}\n"
    "</style>\n";

// j/k and the arrow keys move stage by stage (for a projector); printing opens every fold,
// so that a printed page holds the shown work too.
static const char script[] =
    "<script>\n"
    "(function(){\n"
    "var stages=Array.prototype.slice.call(document.querySelectorAll('.stage'));\n"
    "function current(){var c=-1;for(var i=0;i<stages.length;i++){"
    "if(stages[i].getBoundingClientRect().top<=12)c=i;}return c;}\n"
    "document.addEventListener('keydown',function(e){\n"
    "if(e.altKey||e.ctrlKey||e.metaKey||e.defaultPrevented)return;\n"
    "var t=e.target&&e.target.tagName;if(t==='INPUT'||t==='TEXTAREA'||t==='SELECT')return;\n"
    "var d=(e.key==='j'||e.key==='ArrowDown')?1:(e.key==='k'||e.key==='ArrowUp')?-1:0;\n"
    "if(!d||!stages.length)return;\n"
    "var c=current(),top=c>=0?stages[c].getBoundingClientRect().top:1;\n"
    "var n=d>0?c+1:(top<-12?c:c-1);\n"
    "if(n<0||n>=stages.length)return;\n"
    "e.preventDefault();stages[n].scrollIntoView({block:'start'});stages[n].focus({preventScroll:true});\n"
    "});\n"
    "var opened=[];\n"
    "window.addEventListener('beforeprint',function(){document.querySelectorAll('details:not([open])')"
    ".forEach(function(d){d.open=true;opened.push(d);});});\n"
    "window.addEventListener('afterprint',function(){opened.forEach(function(d){d.open=false;});opened=[];});\n"
    "})();\n"
    "</script>\n";

// What train: did: the loss curve as a picture, then the setup and the table as the text
// trace prints them.
static void training(StrBuf *out, const Trace *tr) {
    strbuf_puts(out, "<section class=\"training\" id=\"training\">\n<h2>Training</h2>\n");
    render_train_svg(tr->training, tr->digits, out);
    StrBuf text;
    strbuf_init(&text);
    render_train_text_without_chart(tr->training, tr->digits, 0, 100, &text);
    strbuf_puts(out, "<div class=\"scroll\"><pre style=\"white-space:pre\">");
    esc(out, strbuf_str(&text));
    strbuf_puts(out, "</pre></div>\n");
    out->failed = out->failed || text.failed;
    strbuf_finish(&text);
    // Each trained given as it was before the first step, as the text trace shows it: its
    // stage below shows it trained.
    const TraceTraining *t = tr->training;
    for (size_t k = 0; k < t->n_trained; k++) {
        TraceStage s = render_train_before(tr, &t->trained[k]);
        char shape[64];
        shape_format(&s.value->shape, shape, sizeof(shape));
        strbuf_puts(out, "<section class=\"given before\" data-name=\"");
        esc(out, s.name);
        strbuf_puts(out, "\">\n<h3><code>");
        esc(out, s.name);
        strbuf_printf(out, "</code> before training <span class=\"shape\">%s</span></h3>\n<p>Trained: the given <code>",
                      shape);
        esc(out, s.name);
        strbuf_puts(out, "</code> below holds its values after training.</p>\n");
        values(out, tr, &s, s.value, NULL, "before");
        strbuf_puts(out, "</section>\n");
    }
    strbuf_puts(out, "</section>\n");
}

void render_html(const Trace *tr, StrBuf *out) {
    strbuf_puts(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                     "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                     "<meta name=\"generator\" content=\"tracer\">\n<title>");
    esc(out, tr->title);
    strbuf_puts(out, "</title>\n");
    strbuf_puts(out, style);
    strbuf_puts(out, style_tables);
    strbuf_puts(out, style_more);
    strbuf_puts(out, "</head>\n<body>\n<header>\n<h1>");
    esc(out, tr->title);
    strbuf_puts(out, "</h1>\n");
    if (tr->source) {
        strbuf_puts(out, "<p class=\"meta\">Source: ");
        esc(out, tr->source);
        strbuf_puts(out, "</p>\n");
    }
    strbuf_puts(out, "<p class=\"meta\">Lesson: <code>");
    esc(out, tr->file_name);
    strbuf_puts(out, "</code></p>\n</header>\n");
    contents(out, tr);
    strbuf_puts(out, "<main>\n");
    if (tr->intro) {
        strbuf_puts(out, "<section class=\"intro\">\n");
        prose(out, tr->intro, "prose");
        strbuf_puts(out, "</section>\n");
    }
    if (tr->training)
        training(out, tr);
    for (size_t i = 0; i < tr->n_stages; i++) {
        ASSERT(!tr->stages[i].released);  // the web page keeps every value (pipeline.c)
        stage(out, tr, &tr->stages[i], i);
    }
    if (tr->outro) {
        strbuf_puts(out, "<section class=\"outro\">\n");
        prose(out, tr->outro, "prose");
        strbuf_puts(out, "</section>\n");
    }
    document_summary(out, tr);
    claims_summary(out, tr);
    strbuf_puts(out, "</main>\n");
    strbuf_puts(out, script);
    strbuf_puts(out, "</body>\n</html>\n");
}
