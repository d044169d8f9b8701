// render_text: the trace as a student reads it: headers, shapes, narration and boxed,
// labelled matrices with aligned columns, all fitted to a width (a terminal's, or 80 for a
// golden file), with pictures of attention weights where asked for.
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "corners.h"
#include "format.h"
#include "heatmap.h"
#include "notation.h"
#include "render.h"
#include "render_train.h"
#include "safetext.h"
#include "textwrap.h"
#include "verdict.h"

typedef struct TextStyle {
    const char *bold, *dim, *cyan, *green, *yellow, *red, *reset;
} TextStyle;

// What every part of the renderer reads: the trace, the options, the style and the width.
// The notation of the tensor last formatted, chosen once from all its values (notation_of).
typedef struct Notation {
    const Tensor *t;
    FormatStyle style;
} Notation;

typedef struct Ctx {
    const Trace *tr;
    const RenderOptions *opts;
    TextStyle st;
    size_t width;       // what this part of the page must fit in
    size_t page_width;  // the whole page's (--width)
    Notation *notation;
} Ctx;

// Display width of UTF-8 text, as a terminal shows it.
static size_t text_width(const char *s) {
    return format_display_width(s, strlen(s));
}

static void pad(StrBuf *out, size_t n) {
    strbuf_repeat(out, " ", n);
}

// Formatted text wrapped to the width of this part of the page (textwrap_line).
static void wrapf(const Ctx *c, StrBuf *out, size_t indent, size_t hang, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void wrapf(const Ctx *c, StrBuf *out, size_t indent, size_t hang, const char *fmt, ...) {
    StrBuf line;
    strbuf_init(&line);
    va_list ap;
    va_start(ap, fmt);
    strbuf_vprintf(&line, fmt, ap);
    va_end(ap);
    textwrap_line(out, strbuf_str(&line), line.len, indent, hang, c->width);
    out->failed = out->failed || line.failed;
    strbuf_finish(&line);
}


// Value k of t in the one notation chosen for all of t's values, or, with decimals (numbers as
// a document printed them), to its own printed places.
static void format_value(const Ctx *c, const Tensor *t, const int *decimals, size_t k, char *buf, size_t cap) {
    if (decimals) {
        format_places(t->data[k], decimals[k], buf, cap);
        return;
    }
    if (c->notation->t != t)
        *c->notation = (Notation){t, notation_of(t, c->tr->digits)};
    format_with(&c->notation->style, t->data[k], buf, cap);
}

// A row or column's label, or its index; cut to cap - 1 bytes as snprintf would (a table is
// drawn with thousands of them: no printf here).
static void index_label(const Labels *l, size_t i, char *buf, size_t cap) {
    if (cap == 0)
        return;
    char digits[24];
    const char *text = l->items && i < l->n ? l->items[i] : digits;
    size_t len = text == digits ? format_digits(i, 1, digits) : strlen(text);
    if (len >= cap)
        len = cap - 1;
    memcpy(buf, text, len);
    buf[len] = '\0';
}

// How a tensor is drawn: numbers in a table, with cells coloured by value, with a shade
// picture beside it, or as bars. One scale per tensor.
typedef enum Picture { PIC_TABLE, PIC_COLOUR, PIC_SHADES, PIC_BARS } Picture;

typedef struct Drawing {
    Picture picture;
    Heatmap heat;
    bool under;  // a shade picture under its table, even where it would fit beside it
} Drawing;

static const Drawing TABLE_ONLY = {PIC_TABLE, {HEAT_NONE, 0, 0}, false};

// The escape that colours a cell's background by its value, with ink that reads on it.
static void cell_colour(const Ctx *c, StrBuf *out, const Heatmap *h, double v) {
    HeatRgb bg = heatmap_colour(h, v), ink = heatmap_ink(bg);
    if (c->opts->truecolour)
        strbuf_printf(out, "\033[48;2;%d;%d;%dm\033[38;2;%d;%d;%dm", bg.r, bg.g, bg.b, ink.r, ink.g, ink.b);
    else
        strbuf_printf(out, "\033[48;5;%dm\033[38;5;%dm", heatmap_xterm256(bg), ink.r ? 231 : 16);
}

// The numbers of a table's cells, each formatted once: for its column's width, then for the
// cell itself. Cell k of row r is cells[r * nc + k] (not written, nor read, for a gap).
typedef char Cell[64];

// The widest label or number in column k (index ci) of the rows shown.
static size_t column_width(Cell *cells, size_t nc, const size_t *ri, size_t nr, const Labels *col_labels,
                           size_t ci, size_t k) {
    char buf[64];
    if (ci == CORNERS_GAP)
        return 1;  // a gap column holds one "…"
    index_label(col_labels, ci, buf, sizeof(buf));
    size_t w = text_width(buf);
    for (size_t r = 0; r < nr; r++)
        if (ri[r] != CORNERS_GAP && strlen(cells[r * nc + k]) > w)
            w = strlen(cells[r * nc + k]);
    return w;
}

// Drop columns from the middle until the box fits in `room` columns: the first and last
// ones stay, with a gap column between. Returns the room every column would need when some
// were dropped, else 0.
static size_t fit_columns(size_t room, size_t *ci, size_t *width, size_t *nc) {
    size_t sum = 0;
    for (size_t k = 0; k < *nc; k++)
        sum += width[k] + 2;
    size_t needed = sum + 3;
    if (needed <= room)
        return 0;
    size_t real[CORNERS_COLS + 1], real_w[CORNERS_COLS + 1], m = 0;
    for (size_t k = 0; k < *nc; k++)
        if (ci[k] != CORNERS_GAP)
            real[m] = ci[k], real_w[m++] = width[k];
    if (m < 2)
        return 0;
    size_t keep = m - 1, head = 0, tail = 0;
    for (; keep >= 1; keep--) {
        head = (keep + 1) / 2, tail = keep / 2;
        sum = 1 + 2;  // the gap column
        for (size_t k = 0; k < head; k++)
            sum += real_w[k] + 2;
        for (size_t k = m - tail; k < m; k++)
            sum += real_w[k] + 2;
        if (sum + 3 <= room || keep == 1)
            break;
    }
    size_t n = 0;
    for (size_t k = 0; k < head; k++)
        ci[n] = real[k], width[n++] = real_w[k];
    ci[n] = CORNERS_GAP, width[n++] = 1;
    for (size_t k = m - tail; k < m; k++)
        ci[n] = real[k], width[n++] = real_w[k];
    *nc = n;
    return needed;
}

// The shade picture of the rows and columns a table shows, two glyphs per value so that cells
// look square. Beside the table it starts with a blank line, so that each row of the picture
// stands on the line of its row of numbers.
static void shade_picture(StrBuf *out, const Tensor *t, size_t offset, size_t cols, const size_t *ri, size_t nr,
                          const size_t *ci, size_t nc, const Heatmap *h, bool beside) {
    strbuf_puts(out, beside ? "\n┌" : "┌");
    strbuf_repeat(out, "─", 2 * nc);
    strbuf_puts(out, "┐\n");
    for (size_t r = 0; r < nr; r++) {
        strbuf_puts(out, "│");
        for (size_t k = 0; k < nc; k++) {
            if (ri[r] == CORNERS_GAP || ci[k] == CORNERS_GAP) {
                strbuf_puts(out, ri[r] == CORNERS_GAP ? "⋮ " : "… ");
                continue;
            }
            const char *glyph = heatmap_shade(heatmap_shade_level(h, t->data[offset + ri[r] * cols + ci[k]]));
            strbuf_puts(out, glyph);
            strbuf_puts(out, glyph);
        }
        strbuf_puts(out, "│\n");
    }
    strbuf_puts(out, "└");
    strbuf_repeat(out, "─", 2 * nc);
    strbuf_puts(out, "┘\n");
}

// A matrix too big to read is shown by its corners, as numpy prints it (corners.h): the first
// and last rows and columns, with a gap between them. Of the columns, as many as fit in the
// width are printed, the first and last ones around the gap.
// One matrix [rows, cols] from t at offset, boxed, with row and column labels, within `limit`
// columns from the left edge; a vector is one row without a row label.
static void matrix(const Ctx *c, StrBuf *out, const Tensor *t, const int *decimals, size_t offset, size_t rows,
                   size_t cols, const Labels *row_labels, const Labels *col_labels, bool vector, size_t indent,
                   size_t limit, const Drawing *draw) {
    const TextStyle *st = &c->st;
    char buf[64];
    size_t ri[CORNERS_ROWS + 1], ci[CORNERS_COLS + 1];
    size_t nr = corners_shown(rows, CORNERS_ROWS, CORNERS_EDGE_ROWS, ri);
    size_t nc = corners_shown(cols, CORNERS_COLS, CORNERS_EDGE_COLS, ci);
    size_t label_w = 0;
    if (!vector)
        for (size_t r = 0; r < nr; r++) {
            if (ri[r] == CORNERS_GAP)
                continue;
            index_label(row_labels, ri[r], buf, sizeof(buf));
            if (text_width(buf) > label_w)
                label_w = text_width(buf);
        }
    size_t all_nc = nc, all_ci[CORNERS_COLS + 1];
    memcpy(all_ci, ci, nc * sizeof(size_t));
    Cell *cells = util_malloc(nr * all_nc * sizeof(Cell) + 1);
    if (!cells) {
        out->failed = true;
        return;
    }
    for (size_t r = 0; r < nr; r++)
        for (size_t k = 0; k < all_nc; k++)
            if (ri[r] != CORNERS_GAP && all_ci[k] != CORNERS_GAP)
                format_value(c, t, decimals, offset + ri[r] * cols + all_ci[k], cells[r * all_nc + k], sizeof(Cell));
    size_t width[CORNERS_COLS + 1];
    for (size_t k = 0; k < nc; k++)
        width[k] = column_width(cells, all_nc, ri, nr, col_labels, ci[k], k);
    size_t left = vector ? 0 : label_w + 1;
    size_t room = limit > indent + left ? limit - indent - left : 0;
    size_t needed = fit_columns(room, ci, width, &nc);
    // where each column kept stood before some were left out (they keep their order)
    size_t slot[CORNERS_COLS + 1];
    for (size_t k = 0, j = 0; k < nc; k++) {
        while (ci[k] != CORNERS_GAP && all_ci[j] != ci[k])
            j++;
        slot[k] = j;
    }
    size_t inner = 1;
    for (size_t k = 0; k < nc; k++)
        inner += width[k] + 2;
    StrBuf box;
    strbuf_init(&box);
    // Column labels, right-aligned over their numbers (the '│' takes one column).
    pad(&box, left + 1);
    strbuf_puts(&box, st->dim);
    for (size_t k = 0; k < nc; k++) {
        const char *label = "…";
        if (ci[k] != CORNERS_GAP) {
            index_label(col_labels, ci[k], buf, sizeof(buf));
            label = buf;
        }
        pad(&box, 2 + width[k] - text_width(label));
        strbuf_puts(&box, label);
    }
    strbuf_puts(&box, st->reset);
    strbuf_putc(&box, '\n');
    pad(&box, left);
    strbuf_puts(&box, "┌");
    strbuf_repeat(&box, "─", inner);
    strbuf_puts(&box, "┐\n");
    bool colour = draw->picture == PIC_COLOUR;
    for (size_t r = 0; r < nr; r++) {
        if (!vector) {
            const char *label = "⋮";
            if (ri[r] != CORNERS_GAP) {
                index_label(row_labels, ri[r], buf, sizeof(buf));
                label = buf;
            }
            strbuf_puts(&box, st->dim);
            pad(&box, label_w - text_width(label));
            strbuf_puts(&box, label);
            strbuf_puts(&box, st->reset);
            pad(&box, 1);
        }
        // A coloured cell spans one space either side of its text, so that neighbours touch.
        strbuf_puts(&box, colour ? "│ " : "│");
        for (size_t k = 0; k < nc; k++) {
            const char *cell = ri[r] == CORNERS_GAP ? "⋮" : "…";
            bool value = ri[r] != CORNERS_GAP && ci[k] != CORNERS_GAP;
            if (value) {
                cell = cells[r * all_nc + slot[k]];
                if (colour)
                    cell_colour(c, &box, &draw->heat, t->data[offset + ri[r] * cols + ci[k]]);
            }
            pad(&box, (colour ? 1 : 2) + width[k] - text_width(cell));
            strbuf_puts(&box, cell);
            if (colour)
                strbuf_puts(&box, value ? " \033[0m" : " ");
        }
        strbuf_puts(&box, colour ? "│\n" : " │\n");
    }
    pad(&box, left);
    strbuf_puts(&box, "└");
    strbuf_repeat(&box, "─", inner);
    strbuf_puts(&box, "┘\n");
    if (draw->picture == PIC_SHADES) {
        // Beside the table where it fits, else under its cells.
        bool beside = !draw->under && indent + textwrap_block_width(strbuf_str(&box)) + TEXTWRAP_GAP + 2 * nc + 2 <= limit;
        StrBuf pair[2] = {box, {0}};
        shade_picture(&pair[1], t, offset, cols, ri, nr, ci, nc, &draw->heat, beside);
        if (beside) {
            textwrap_side_by_side(out, pair, 2, indent);
        } else {
            textwrap_indent(out, strbuf_str(&box), indent);
            textwrap_indent(out, strbuf_str(&pair[1]), indent + left);
        }
        out->failed = out->failed || pair[1].failed;
        strbuf_finish(&pair[1]);
    } else {
        textwrap_indent(out, strbuf_str(&box), indent);
    }
    out->failed = out->failed || box.failed;
    strbuf_finish(&box);
    util_free(cells);
    size_t n_rows = 0, n_cols = 0;
    for (size_t r = 0; r < nr; r++)
        n_rows += ri[r] != CORNERS_GAP;
    for (size_t k = 0; k < nc; k++)
        n_cols += ci[k] != CORNERS_GAP;
    if (n_rows < rows || n_cols < cols) {
        // The width that would show every column when the width alone left some out (the
        // page is wider than the room this box was given by what stands beside the box).
        size_t want = needed ? c->page_width + (needed - room) : 0;
        char tail[64] = "--format json has every one";
        if (n_rows == rows && cols <= CORNERS_COLS && needed && want <= RENDER_MAX_WIDTH)
            snprintf(tail, sizeof(tail), "--width %zu shows them all", want);
        if (vector)
            wrapf(c, out, indent, indent + 1, "(only %zu of the %zu values are shown; %s)", n_cols, cols, tail);
        else if (n_rows < rows && n_cols < cols)
            wrapf(c, out, indent, indent + 1, "(only %zu of the %zu rows and %zu of the %zu columns are shown; %s)",
                  n_rows, rows, n_cols, cols, tail);
        else if (n_rows < rows)
            wrapf(c, out, indent, indent + 1, "(only %zu of the %zu rows are shown; %s)", n_rows, rows, tail);
        else
            wrapf(c, out, indent, indent + 1, "(only %zu of the %zu columns fit in %zu; %s)", n_cols, cols,
                  c->page_width, tail);
    }
}

// One bar per entry of a vector, eighths of a block at its end, with its label and value.
enum { BAR_MIN = 8, BAR_MAX = 40 };

static void bars(const Ctx *c, StrBuf *out, const Tensor *t, const Labels *labels, size_t indent,
                 const Heatmap *h) {
    static const char *const eighths[8] = {"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"};
    size_t n = t->shape.dim[0];
    size_t idx[CORNERS_ROWS + 1];
    size_t ni = corners_shown(n, CORNERS_ROWS, CORNERS_EDGE_ROWS, idx);
    char buf[64];
    size_t label_w = 1, value_w = 1;
    for (size_t k = 0; k < ni; k++) {
        if (idx[k] == CORNERS_GAP)
            continue;
        index_label(labels, idx[k], buf, sizeof(buf));
        label_w = text_width(buf) > label_w ? text_width(buf) : label_w;
        format_value(c, t, NULL, idx[k], buf, sizeof(buf));
        value_w = strlen(buf) > value_w ? strlen(buf) : value_w;
    }
    // label │bar│ value
    size_t used = indent + label_w + 2 + 2 + value_w;
    size_t bar_w = c->width > used + BAR_MIN ? c->width - used : BAR_MIN;
    bar_w = bar_w > BAR_MAX ? BAR_MAX : bar_w;
    for (size_t k = 0; k < ni; k++) {
        pad(out, indent);
        if (idx[k] == CORNERS_GAP) {
            pad(out, label_w - 1);
            strbuf_puts(out, "⋮\n");
            continue;
        }
        index_label(labels, idx[k], buf, sizeof(buf));
        strbuf_puts(out, c->st.dim);
        pad(out, label_w - text_width(buf));
        strbuf_puts(out, buf);
        strbuf_puts(out, c->st.reset);
        strbuf_puts(out, " │");
        double p = heatmap_position(h, t->data[idx[k]]);
        if (h->scale == HEAT_DIVERGING)
            p = p < 0 ? p : fabs(2 * p - 1);  // by |value|
        size_t e = p <= 0 ? 0 : (size_t)(p * (double)(bar_w * 8) + 0.5);
        strbuf_repeat(out, "█", e / 8);
        strbuf_puts(out, eighths[e % 8]);
        pad(out, bar_w - e / 8 - (e % 8 ? 1 : 0));
        format_value(c, t, NULL, idx[k], buf, sizeof(buf));
        strbuf_puts(out, "│ ");
        pad(out, value_w - strlen(buf));
        strbuf_printf(out, "%s\n", buf);
    }
    if (n > CORNERS_ROWS)
        wrapf(c, out, indent, indent + 1, "(only %d of the %zu values are shown; --format json has every one)",
              2 * CORNERS_EDGE_ROWS, n);
}

// The range of a tensor's picture, under it.
static void legend(const Ctx *c, StrBuf *out, const Drawing *d, size_t indent) {
    const Heatmap *h = &d->heat;
    if (d->picture == PIC_TABLE)
        return;
    char lo[64], hi[64];
    format_number(h->lo, c->tr->digits, lo, sizeof(lo));
    format_number(h->hi, c->tr->digits, hi, sizeof(hi));
    if (h->scale == HEAT_NONE) {
        wrapf(c, out, indent, indent + 1, "(no finite values to scale the picture by)");
        return;
    }
    const char *centre = h->scale == HEAT_DIVERGING ? "; white is 0" : "";
    if (d->picture == PIC_COLOUR) {
        StrBuf ramp;
        strbuf_init(&ramp);
        enum { RAMP_CELLS = 10 };
        for (int k = 0; k < RAMP_CELLS; k++) {
            cell_colour(c, &ramp, h, h->lo + (h->hi - h->lo) * (k + 0.5) / RAMP_CELLS);
            strbuf_puts(&ramp, "  \033[0m");
        }
        wrapf(c, out, indent, indent + 1, "colours: %s %s %s%s", lo, strbuf_str(&ramp), hi, centre);
        out->failed = out->failed || ramp.failed;
        strbuf_finish(&ramp);
    } else if (d->picture == PIC_SHADES) {
        if (h->scale == HEAT_DIVERGING)
            wrapf(c, out, indent, indent + 1, "shades by size from \"%s\" (0) to \"%s\" (%s); the table has the signs",
                  heatmap_shade(0), heatmap_shade(HEATMAP_SHADES - 1), hi);
        else
            wrapf(c, out, indent, indent + 1, "shades from \"%s\" (%s) to \"%s\" (%s)", heatmap_shade(0), lo,
                  heatmap_shade(HEATMAP_SHADES - 1), hi);
    } else if (d->picture == PIC_BARS) {
        wrapf(c, out, indent, indent + 1, "bars: a full bar is %s%s", hi,
              h->scale == HEAT_DIVERGING ? " in size (the numbers have the signs)" : "");
    }
}

static Drawing drawing_for(const Ctx *c, const TraceStage *s) {
    Drawing d = TABLE_ONLY;
    PictureKind want = trace_picture(s, c->opts->heatmap, c->opts->colour);
    if (want == PICTURE_TABLE)
        return d;
    d.picture = want == PICTURE_BARS ? PIC_BARS : c->opts->colour ? PIC_COLOUR : PIC_SHADES;
    heatmap_init(&d.heat, s->value->data, s->value->size);
    return d;
}

// One block per slice shown (si: the slices' indices, CORNERS_GAP for the gap), each a heading and a
// matrix within the width from indent. Returns their width side by side.
static size_t slice_blocks(const Ctx *c, StrBuf *blocks, const size_t *si, size_t ns, const TraceStage *s,
                           const Tensor *t, const int *decimals, size_t indent, const Drawing *draw) {
    const Shape *sh = &t->shape;
    size_t rows = sh->dim[sh->rank - 2], cols = sh->dim[sh->rank - 1], per = rows * cols;
    size_t slices = t->size / per;
    size_t total_width = 0;
    size_t room = c->width > indent ? c->width - indent : 0;
    char buf[64];
    for (size_t j = 0; j < ns; j++) {
        StrBuf *b = &blocks[j];
        size_t k = si[j];
        if (k == CORNERS_GAP) {
            strbuf_printf(b, "⋮ (%zu more slices)\n", slices - 2 * CORNERS_EDGE_SLICES);
            continue;
        }
        strbuf_puts(b, c->st.bold);
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
        strbuf_puts(b, c->st.reset);
        strbuf_putc(b, '\n');
        Ctx inner = *c;
        inner.width = room;
        matrix(&inner, b, t, decimals, k * per, rows, cols, &s->labels[sh->rank - 2], &s->labels[sh->rank - 1], false,
               0, room, draw);
        total_width += textwrap_block_width(strbuf_str(b)) + (j ? TEXTWRAP_GAP : 0);
    }
    return total_width;
}

// The slices' blocks in rows of as many as fit in room, left to right in order (eight narrow
// heads four to a row rather than one under another); the gap between the first and last
// slices stands on a row of its own.
static void slice_rows(StrBuf *out, const StrBuf *blocks, const size_t *si, size_t ns, size_t room, size_t indent) {
    for (size_t start = 0, end; start < ns; start = end) {
        size_t width = textwrap_block_width(strbuf_str(&blocks[start]));
        for (end = start + 1; si[start] != CORNERS_GAP && end < ns && si[end] != CORNERS_GAP; end++) {
            size_t next = width + TEXTWRAP_GAP + textwrap_block_width(strbuf_str(&blocks[end]));
            if (next > room)
                break;
            width = next;
        }
        if (end - start == 1)
            textwrap_indent(out, strbuf_str(&blocks[start]), indent);
        else
            textwrap_side_by_side(out, blocks + start, end - start, indent);
    }
}

static void values(const Ctx *c, StrBuf *out, const TraceStage *s, const Tensor *t, const int *decimals,
                   size_t indent, const Drawing *draw) {
    const TextStyle *st = &c->st;
    const Shape *sh = &t->shape;
    char buf[64];
    if (!t->data) {
        char n[64], bytes[64];
        format_count((double)t->size, n, sizeof(n));
        format_count((double)t->size * 8.0, bytes, sizeof(bytes));
        wrapf(c, out, indent, indent + 1, "(shape only: %s values, %s bytes as doubles; not stored)", n, bytes);
        return;
    }
    if (t->size == 0) {
        char shape[64];
        shape_format(sh, shape, sizeof(shape));
        wrapf(c, out, indent, indent + 1, "(empty: a tensor of shape %s holds no values)", shape);
        return;
    }
    if (sh->rank == 0) {
        format_value(c, t, decimals, 0, buf, sizeof(buf));
        pad(out, indent);
        strbuf_printf(out, "= %s%s%s\n", st->bold, buf, st->reset);
        return;
    }
    if (sh->rank == 1) {
        if (draw->picture == PIC_BARS)
            bars(c, out, t, &s->labels[0], indent, &draw->heat);
        else
            matrix(c, out, t, decimals, 0, 1, sh->dim[0], NULL, &s->labels[0], true, indent, c->width, draw);
        legend(c, out, draw, indent);
        return;
    }
    // Rank 2 is one matrix; rank 3 and 4 print one labelled matrix per leading index, side by
    // side in rows of as many as fit in the width (each head's weights next to the other's).
    size_t rows = sh->dim[sh->rank - 2], cols = sh->dim[sh->rank - 1];
    size_t per = rows * cols, slices = per ? t->size / per : 0;
    if (sh->rank == 2 || per == 0) {
        if (per) {
            matrix(c, out, t, decimals, 0, rows, cols, &s->labels[0], &s->labels[1], false, indent, c->width, draw);
            legend(c, out, draw, indent);
        }
        return;
    }
    size_t si[CORNERS_SLICES + 1];
    size_t ns = corners_shown(slices, CORNERS_SLICES, CORNERS_EDGE_SLICES, si);
    StrBuf *blocks = util_calloc(ns, sizeof(StrBuf));
    if (!blocks) {
        out->failed = true;
        return;
    }
    size_t total_width = slice_blocks(c, blocks, si, ns, s, t, decimals, indent, draw);
    // Slices side by side matter more than a picture beside each: try the pictures under them.
    if (indent + total_width > c->width && draw->picture == PIC_SHADES && ns == slices) {
        Drawing under = *draw;
        under.under = true;
        for (size_t j = 0; j < ns; j++) {
            strbuf_finish(&blocks[j]);
            strbuf_init(&blocks[j]);
        }
        total_width = slice_blocks(c, blocks, si, ns, s, t, decimals, indent, &under);
    }
    for (size_t j = 0; j < ns; j++)
        out->failed = out->failed || blocks[j].failed;
    slice_rows(out, blocks, si, ns, c->width > indent ? c->width - indent : 0, indent);
    for (size_t j = 0; j < ns; j++)
        strbuf_finish(&blocks[j]);
    util_free(blocks);
    legend(c, out, draw, indent);
}

// A name in a sentence: as it is.
static void plain_name(StrBuf *out, const char *name) {
    strbuf_puts(out, name);
}

// One judgement (verdict.h): its head in the colour of its tone, then its body.
static void judgement(const Ctx *c, StrBuf *out, VerdictWords *w, size_t indent) {
    const TextStyle *st = &c->st;
    const char *tones[] = {[VERDICT_AGREES] = st->green, [VERDICT_INHERITS] = st->yellow,
                           [VERDICT_DISAGREES] = st->red, [VERDICT_EDIT] = st->cyan};
    wrapf(c, out, indent, indent + 2, "%s%s%s%s%s", tones[w->tone], strbuf_str(&w->head), st->reset, w->sep,
          strbuf_str(&w->body));
    out->failed |= verdict_words_failed(w);
    verdict_words_finish(w);
}

static void document(const Ctx *c, StrBuf *out, const TraceStage *s, size_t indent, bool values_shown) {
    const TraceDocument *doc = s->document;
    VerdictWords w;
    if (doc->verdict == DOC_SET_ASIDE) {
        verdict_set_aside(&w, s, plain_name);
        judgement(c, out, &w, indent);
        return;
    }
    if (doc->same_as_given) {
        verdict_same(&w);
        judgement(c, out, &w, indent);
        return;
    }
    if (values_shown) {
        pad(out, indent);
        strbuf_puts(out, "as the document printed it:\n");
        values(c, out, s, doc->values, doc->decimals, indent, &TABLE_ONLY);
    }
    if (doc->verdict == DOC_EDITED) {
        verdict_edited(&w, s, plain_name);
        judgement(c, out, &w, indent);
        return;
    }
    verdict_words(&w, c->tr, s, &doc->chained, false, plain_name);
    judgement(c, out, &w, indent);
    if (doc->has_local) {
        verdict_words(&w, c->tr, s, &doc->local, true, plain_name);
        judgement(c, out, &w, indent);
    }
}

// The stages whose document has this verdict: "Q (step 1), K (step 2)". The givens the
// student changed are those edited and those whose shape changed.
static void stages_with(StrBuf *list, const Trace *tr, DocClass verdict) {
    for (size_t i = 0; i < tr->n_stages; i++) {
        const TraceStage *s = &tr->stages[i];
        if (!s->document)
            continue;
        DocClass v = s->document->verdict;
        bool reshaped_given = v == DOC_SET_ASIDE && s->kind == STAGE_GIVEN;
        if (verdict == DOC_EDITED ? v != DOC_EDITED && !reshaped_given : v != verdict)
            continue;
        strbuf_printf(list, "%s%s", list->len ? ", " : "", s->name);
        if (s->number[0])
            strbuf_printf(list, " (step %s)", s->number);
    }
}

// One sentence naming the stages with this verdict, in its colour, when there are any; the
// sentence is "%s<words>%s ... %s." (colour on, colour off, the list). list is scratch.
static bool list_line(const Ctx *c, StrBuf *out, StrBuf *list, DocClass verdict, const char *colour,
                      const char *sentence) __attribute__((format(printf, 6, 0)));
static bool list_line(const Ctx *c, StrBuf *out, StrBuf *list, DocClass verdict, const char *colour,
                      const char *sentence) {
    strbuf_clear(list);
    stages_with(list, c->tr, verdict);
    if (!list->len)
        return false;
    wrapf(c, out, 0, 2, sentence, colour, c->st.reset, strbuf_str(list));
    return true;
}

static void document_summary(const Ctx *c, StrBuf *out) {
    const Trace *tr = c->tr;
    const TextStyle *st = &c->st;
    if (tr->doc_printed == 0)
        return;
    strbuf_printf(out, "\n%sDocument check%s\n--------------\n", st->bold, st->reset);
    StrBuf list;
    strbuf_init(&list);
    // The student's edits first: they explain every difference that follows from them.
    if (list_line(c, out, &list, DOC_EDITED, st->cyan, "%sYou changed%s %s: the document's numbers are not yours there."))
        list_line(c, out, &list, DOC_FOLLOWS_EDIT, st->cyan,
                  "%sOff only because of your edit%s (the document is not to blame): %s.");
    size_t compared = tr->doc_printed - tr->doc_edited - tr->doc_set_aside;
    char follow[64] = "";
    if (tr->doc_follow)
        snprintf(follow, sizeof(follow), ", %zu follow your edit", tr->doc_follow);
    wrapf(c, out, 0, 2, "The document printed %zu of these stages; %zu agree with the exact values%s.", tr->doc_printed,
          tr->doc_agree, follow);
    list_line(c, out, &list, DOC_SET_ASIDE, st->cyan,
              "%sNot compared%s, because their shape is no longer the document's: %s.");
    list_line(c, out, &list, DOC_OWN_SLIP, st->red, "%sWrong by themselves%s, on the document's own printed inputs: %s.");
    list_line(c, out, &list, DOC_INHERITS, st->yellow,
              "%sRight on their own printed inputs%s, off only through numbers carried from earlier steps: %s.");
    if (tr->doc_first_slip >= 0) {
        const TraceStage *s = &tr->stages[tr->doc_first_slip];
        wrapf(c, out, 0, 2, "%sThe document first goes wrong by itself%s at step %s: %s = %s.", st->red, st->reset,
              s->number, s->name, s->expr);
    } else if (tr->doc_agree == compared) {
        wrapf(c, out, 0, 2, "%s%s%s", st->green,
              tr->doc_edited || tr->doc_set_aside ? "Every other number the document printed agrees."
                                                  : "Every number the document printed agrees.",
              st->reset);
    } else if (tr->doc_agree + tr->doc_follow < compared) {
        // Disagreements without a slip: the document computed on from its own rounded numbers.
        wrapf(c, out, 0, 2, "%sNo step goes wrong by itself%s: each disagreement comes from rounded numbers the "
                            "document carried forward.", st->yellow, st->reset);
    } else {
        wrapf(c, out, 0, 2, "%sNo step of the document goes wrong by itself.%s", st->green, st->reset);
    }
    out->failed |= list.failed;
    strbuf_finish(&list);
}

// The operation line: its shapes, then what it does, on the same line when both fit.
static void operation(const Ctx *c, StrBuf *out, const TraceStage *s, size_t indent) {
    const TextStyle *st = &c->st;
    const char *about = s->op_about ? s->op_about : "";
    size_t w = indent + text_width(s->op_line) + (about[0] ? 3 + text_width(about) : 0);
    if (w <= c->width || !about[0]) {
        wrapf(c, out, indent, indent + 2, "%s%s%s%s%s", st->cyan, s->op_line, st->reset, about[0] ? "   " : "",
              about);
        return;
    }
    wrapf(c, out, indent, indent + 2, "%s%s%s", st->cyan, s->op_line, st->reset);
    textwrap_line(out, about, strlen(about), indent + 2, indent + 2, c->width);
}

static bool stage_shown(const Ctx *c, size_t i) {
    if (c->opts->shown && !c->opts->shown[i])
        return false;
    return !(c->opts->brief && c->tr->stages[i].kind == STAGE_INTERMEDIATE);
}

bool render_text_prints_values(const RenderOptions *opts, StageKind kind, bool chosen) {
    return chosen && !(opts->brief && (kind == STAGE_INTERMEDIATE || kind == STAGE_GIVEN));
}

static void stage(const Ctx *c, StrBuf *out, const TraceStage *s) {
    const TextStyle *st = &c->st;
    char shape[64];
    shape_format(&s->value->shape, shape, sizeof(shape));
    const size_t indent = 4;
    bool brief_given = !render_text_prints_values(c->opts, s->kind, true);
    // The values of a stage shown were kept to the end (run.h); a given whose values --brief
    // hides may have been freed, but not when the document printed it (doccheck_needs).
    ASSERT(!s->released || (brief_given && !s->document));
    strbuf_putc(out, '\n');
    if (s->kind == STAGE_GIVEN)
        wrapf(c, out, 0, indent, "%sGiven %s  %s%s%s%s", st->bold, s->name, shape, st->reset, s->about ? "  " : "",
              s->about ? s->about : "");
    else
        wrapf(c, out, 0, indent, "%sStep %s  %s = %s%s", st->bold, s->number, s->name, s->expr, st->reset);
    // A step that names a grad() shows the backward pass above it: the copy that gives it its
    // name is no operation of the lesson's, so the step prints its shape alone.
    if (s->op_line && !s->names_gradient)
        operation(c, out, s, indent);
    else if (s->kind != STAGE_GIVEN)
        wrapf(c, out, indent, indent + 2, "%s%s%s", st->cyan, shape, st->reset);
    if (s->say)
        textwrap_paragraph(out, s->say, indent, c->width);
    if (!brief_given) {
        Drawing draw = drawing_for(c, s);
        values(c, out, s, s->value, NULL, indent, &draw);
    }
    for (size_t i = 0; i < s->n_notes; i++)
        wrapf(c, out, indent, indent + 6, "%snote:%s %s", st->cyan, st->reset, s->notes[i]);
    if (s->document)
        document(c, out, s, indent, !brief_given);
    if (s->n_work) {
        pad(out, indent);
        strbuf_printf(out, "%swork:%s\n", st->cyan, st->reset);
        for (size_t i = 0; i < s->n_work; i++)
            textwrap_line(out, s->work[i], strlen(s->work[i]), indent + 2, indent + 6, c->width);
    }
}

// The claims that print under stage i: "claim: rows sum to 1: holds", in green; a failing one
// in red, with where and by how much.
static void stage_claims(const Ctx *c, StrBuf *out, size_t i, size_t indent) {
    const TextStyle *st = &c->st;
    for (size_t k = 0; k < c->tr->n_claims; k++) {
        const TraceClaim *cl = &c->tr->claims[k];
        if (cl->stage != i)
            continue;
        if (cl->holds)
            wrapf(c, out, indent, indent + 2, "%sclaim:%s %s: %sholds%s", st->cyan, st->reset, cl->text, st->green,
                  st->reset);
        else
            wrapf(c, out, indent, indent + 2, "%sclaim:%s %s: %sfails%s: %s", st->cyan, st->reset, cl->text, st->red,
                  st->reset, cl->detail);
    }
}

static void claims_summary(const Ctx *c, StrBuf *out) {
    const Trace *tr = c->tr;
    const TextStyle *st = &c->st;
    if (tr->n_claims == 0)
        return;
    strbuf_printf(out, "\n%sClaims%s\n------\n", st->bold, st->reset);
    size_t held = tr->n_claims - tr->n_claims_failed;
    if (tr->n_claims_failed == 0) {
        if (tr->n_claims == 1)
            wrapf(c, out, 0, 2, "%sThe lesson's claim holds.%s", st->green, st->reset);
        else
            wrapf(c, out, 0, 2, "%sAll %zu of the lesson's claims hold.%s", st->green, tr->n_claims, st->reset);
        return;
    }
    wrapf(c, out, 0, 2, "%zu of %zu claims hold; %s%zu %s%s:", held, tr->n_claims, st->red, tr->n_claims_failed,
          tr->n_claims_failed == 1 ? "fails" : "fail", st->reset);
    for (size_t k = 0; k < tr->n_claims; k++)
        if (!tr->claims[k].holds)
            wrapf(c, out, 2, 4, "%s (%s)", tr->claims[k].text, tr->claims[k].expr);
}


// What train: did before the trace: the setup, the loss curve, and each trained given as it
// was before the first step (its stage below shows it trained).
static void training(const Ctx *c, StrBuf *out) {
    const TraceTraining *t = c->tr->training;
    const TextStyle *st = &c->st;
    strbuf_printf(out, "\n%sTraining%s\n--------\n", st->bold, st->reset);
    render_train_text(t, c->tr->digits, 4, c->width, out);
    for (size_t k = 0; k < t->n_trained && !c->opts->brief; k++) {
        const TraceTrainGiven *g = &t->trained[k];
        TraceStage s = render_train_before(c->tr, g);
        char shape[64];
        shape_format(&g->before->shape, shape, sizeof(shape));
        strbuf_putc(out, '\n');
        wrapf(c, out, 4, 6, "%s%s before training%s  %s (trained, it is the given %s below)", st->bold, g->name,
              st->reset, shape, g->name);
        Drawing draw = TABLE_ONLY;
        values(c, out, &s, g->before, NULL, 4, &draw);
    }
}

static void header(const Ctx *c, StrBuf *out) {
    const Trace *tr = c->tr;
    const TextStyle *st = &c->st;
    size_t before = out->len;
    wrapf(c, out, 0, 0, "%s%s%s", st->bold, tr->title, st->reset);
    // The underline as wide as the title's longest line.
    size_t underline = textwrap_block_width(out->data ? out->data + before : "");
    strbuf_repeat(out, "=", underline);
    strbuf_putc(out, '\n');
    if (tr->source)
        wrapf(c, out, 0, 2, "Source: %s", tr->source);
    char file_name[1024];  // a file's name from the folder (a course's lesson), as it may be shown
    wrapf(c, out, 0, 2, "Lesson: %s", safetext_show(file_name, sizeof(file_name), tr->file_name));
    // Givens left out by a choice of stages are still named, so that a formula reads.
    StrBuf hidden;
    strbuf_init(&hidden);
    for (size_t i = 0; i < tr->n_stages; i++)
        if (tr->stages[i].kind == STAGE_GIVEN && !stage_shown(c, i))
            strbuf_printf(&hidden, "%s%s", hidden.len ? ", " : "", tr->stages[i].name);
    if (hidden.len)
        wrapf(c, out, 0, 2, "Givens (not shown): %s", strbuf_str(&hidden));
    out->failed = out->failed || hidden.failed;
    strbuf_finish(&hidden);
    if (tr->intro) {
        strbuf_putc(out, '\n');
        textwrap_paragraph(out, tr->intro, 0, c->width);
    }
    if (tr->training)
        training(c, out);
}

size_t render_text_pages(const Trace *tr, const RenderOptions *opts, StrBuf *out, size_t *ends, size_t *stages) {
    static const RenderOptions defaults = {0};
    Notation notation = {0};
    Ctx c = {.tr = tr, .opts = opts ? opts : &defaults, .st = {"", "", "", "", "", "", ""}, .notation = &notation};
    c.width = c.page_width = c.opts->width ? c.opts->width : RENDER_DEFAULT_WIDTH;
    if (c.opts->colour)
        c.st = (TextStyle){"\033[1m", "\033[2m", "\033[36m", "\033[32m", "\033[33m", "\033[31m", "\033[0m"};
    size_t n = 0;
    header(&c, out);
    if (ends)
        ends[n] = out->len;
    if (stages)
        stages[n] = SIZE_MAX;
    n++;
    for (size_t i = 0; i < tr->n_stages; i++) {
        if (!stage_shown(&c, i))
            continue;
        stage(&c, out, &tr->stages[i]);
        stage_claims(&c, out, i, 4);
        if (ends)
            ends[n] = out->len;
        if (stages)
            stages[n] = i;
        n++;
    }
    if (tr->outro) {
        strbuf_putc(out, '\n');
        textwrap_paragraph(out, tr->outro, 0, c.width);
    }
    document_summary(&c, out);
    claims_summary(&c, out);
    if (ends)
        ends[n] = out->len;
    if (stages)
        stages[n] = SIZE_MAX;
    return n + 1;
}

void render_text(const Trace *tr, const RenderOptions *opts, StrBuf *out) {
    render_text_pages(tr, opts, out, NULL, NULL);
}
