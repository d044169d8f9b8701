// render_values: a tensor's values as the text trace draws them: a boxed table with row and
// column labels, cut to the width by its corners; a shade or colour picture beside it, or in
// its place, whole, when its numbers do not fit; bars for a distribution; one block per slice
// of a rank-3 or rank-4 tensor, side by side.
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "corners.h"
#include "notation.h"
#include "render_values.h"
#include "textwrap.h"

const Drawing TEXT_TABLE_ONLY = {PIC_TABLE, {HEAT_NONE, 0, 0}, false, false, false};

void text_wrapf(const TextCtx *c, StrBuf *out, size_t indent, size_t hang, const char *fmt, ...) {
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
static void format_value(const TextCtx *c, const Tensor *t, const int *decimals, size_t k, char *buf, size_t cap) {
    double v = t->data[k];
    if (c->ids && !decimals && v >= 0 && v < (double)c->ids->n && v == floor(v)) {
        // An id, as its token, cut as a label is (index_label).
        const char *token = c->ids->items[(size_t)v];
        size_t len = strlen(token) < cap - 1 ? strlen(token) : cap - 1;
        memcpy(buf, token, len);
        buf[len] = '\0';
        return;
    }
    if (decimals) {
        format_places(t->data[k], decimals[k], buf, cap);
        return;
    }
    int digits = c->digits >= 0 ? c->digits : c->tr->digits;
    if (c->percent) {
        format_percent(v, digits > 2 ? digits - 2 : 0, buf, cap);
        return;
    }
    if (c->notation->t != t || c->notation->style.decimals != digits)
        *c->notation = (Notation){.t = t, .style = notation_of(t, digits), .quiet_said = c->notation->quiet_said};
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


// The escape that colours a cell's background by its value, with ink that reads on it.
static void cell_colour(const TextCtx *c, StrBuf *out, const Heatmap *h, double v) {
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

// The bytes of the next character of UTF-8 text s (1 for a byte that starts none).
static size_t char_bytes(const char *s) {
    unsigned char b = (unsigned char)s[0];
    size_t n = b < 0xC0 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
    for (size_t i = 1; i < n; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80)
            return 1;
    return n;
}

// Column labels over a picture whose cells are cw columns wide: on one line when each fits in
// its cell, else written downwards, a character a line, ending on the line above the picture.
static void picture_header(const TextCtx *c, StrBuf *out, const Labels *col_labels, size_t cols, size_t cw, size_t left,
                           const char *after) {
    char buf[64];
    size_t tallest = 0;
    bool across = true;
    for (size_t j = 0; j < cols; j++) {
        index_label(col_labels, j, buf, sizeof(buf));
        size_t chars = 0;
        for (const char *p = buf; *p; p += char_bytes(p))
            chars++;
        tallest = chars > tallest ? chars : tallest;
        across = across && text_width(buf) + (cw > 1) <= cw;  // a space between labels of wide cells
    }
    enum { PICTURE_LABEL_LINES = 8 };
    size_t lines = across ? 1 : tallest < PICTURE_LABEL_LINES ? tallest : PICTURE_LABEL_LINES;
    for (size_t line = 0; line < lines; line++) {
        text_pad(out, left + 1);
        strbuf_puts(out, c->st.dim);
        for (size_t j = 0; j < cols; j++) {
            index_label(col_labels, j, buf, sizeof(buf));
            if (across) {
                text_pad(out, cw - text_width(buf));
                strbuf_puts(out, buf);
                continue;
            }
            // Downwards, the last character on the last line: character line - (lines - chars).
            size_t chars = 0;
            for (const char *p = buf; *p; p += char_bytes(p))
                chars++;
            size_t skip = lines - (chars < lines ? chars : lines);
            const char *p = buf;
            for (size_t k = 0; *p && k + skip < line; k++)
                p += char_bytes(p);
            size_t n = line >= skip && *p ? char_bytes(p) : 0;
            size_t w = n ? format_display_width(p, n) : 0;
            text_pad(out, cw > w ? cw - w : 0);
            strbuf_append(out, p, n);
        }
        strbuf_puts(out, c->st.reset);
        if (line + 1 == lines && after)
            strbuf_puts(out, after);
        strbuf_putc(out, '\n');
    }
}

// A matrix drawn whole as a picture: every row and column, labelled, two glyphs (or colours) a
// value where they fit, else one; with largest (its numbers do not fit), beside each row its
// largest value and where it lies, the cells that matter. False, with nothing written, when
// even one glyph a value does not fit: the table then shows what it can.
static bool whole_picture(const TextCtx *c, StrBuf *out, const Tensor *t, size_t offset, size_t rows, size_t cols,
                          const Labels *row_labels, const Labels *col_labels, size_t indent, size_t limit,
                          const Drawing *draw, bool largest) {
    char buf[64], value[64];
    size_t label_w = 0;
    for (size_t r = 0; r < rows; r++) {
        index_label(row_labels, r, buf, sizeof(buf));
        label_w = text_width(buf) > label_w ? text_width(buf) : label_w;
    }
    size_t left = label_w + 1, frame = left + 2;  // the labels, a space, and the picture's two edges
    size_t cw = indent + frame + 2 * cols <= limit ? 2 : indent + frame + cols <= limit ? 1 : 0;
    if (cw == 0)
        return false;
    // The largest value of each row (its first, ignoring nan), and the widest such note.
    size_t *at = util_calloc(rows + 1, sizeof(size_t));
    if (!at) {
        out->failed = true;
        return true;
    }
    size_t note_w = 0;
    for (size_t r = 0; r < rows; r++) {
        const double *row = t->data + offset + r * cols;
        for (size_t j = 1; j < cols; j++)
            if (row[j] > row[at[r]] || (isnan(row[at[r]]) && !isnan(row[j])))
                at[r] = j;
        format_value(c, t, NULL, offset + r * cols + at[r], value, sizeof(value));
        index_label(col_labels, at[r], buf, sizeof(buf));
        size_t w = strlen(value) + 4 + text_width(buf);
        note_w = w > note_w ? w : note_w;
    }
    bool notes = largest && indent + frame + cw * cols + 2 + note_w <= limit;
    StrBuf box;
    strbuf_init(&box);
    picture_header(c, &box, col_labels, cols, cw, left, notes ? "  largest" : NULL);
    text_pad(&box, left);
    strbuf_puts(&box, "┌");
    strbuf_repeat(&box, "─", cw * cols);
    strbuf_puts(&box, "┐\n");
    bool colour = draw->picture == PIC_COLOUR;
    for (size_t r = 0; r < rows; r++) {
        index_label(row_labels, r, buf, sizeof(buf));
        strbuf_puts(&box, c->st.dim);
        text_pad(&box, label_w - text_width(buf));
        strbuf_puts(&box, buf);
        strbuf_puts(&box, c->st.reset);
        strbuf_puts(&box, " │");
        for (size_t j = 0; j < cols; j++) {
            double v = t->data[offset + r * cols + j];
            if (colour) {
                cell_colour(c, &box, &draw->heat, v);
                strbuf_repeat(&box, " ", cw);
                strbuf_puts(&box, "\033[0m");
            } else {
                strbuf_repeat(&box, heatmap_shade(heatmap_shade_level(&draw->heat, v)), cw);
            }
        }
        strbuf_puts(&box, "│");
        if (notes) {
            format_value(c, t, NULL, offset + r * cols + at[r], value, sizeof(value));
            index_label(col_labels, at[r], buf, sizeof(buf));
            strbuf_printf(&box, "  %s at %s", value, buf);
        }
        strbuf_putc(&box, '\n');
    }
    text_pad(&box, left);
    strbuf_puts(&box, "└");
    strbuf_repeat(&box, "─", cw * cols);
    strbuf_puts(&box, "┘\n");
    textwrap_indent(out, strbuf_str(&box), indent);
    out->failed = out->failed || box.failed;
    strbuf_finish(&box);
    util_free(at);
    return true;
}

// A matrix too big to read is shown by its corners, as numpy prints it (corners.h): the first
// and last rows and columns, with a gap between them. Of the columns, as many as fit in the
// width are printed, the first and last ones around the gap.
// One matrix [rows, cols] from t at offset, boxed, with row and column labels, within `limit`
// columns from the left edge; a vector is one row without a row label.
static void matrix(const TextCtx *c, StrBuf *out, const Tensor *t, const int *decimals, size_t offset, size_t rows,
                   size_t cols, const Labels *row_labels, const Labels *col_labels, bool vector, size_t indent,
                   size_t limit, const Drawing *draw) {
    const TextStyle *st = &c->st;
    char buf[64];
    size_t ri[CORNERS_ROWS + 1], ci[CORNERS_COLS + 1];
    size_t nr = c->corners ? corners_shown(rows, 2 * CORNERS_SMALL_EDGE, CORNERS_SMALL_EDGE, ri)
                           : corners_shown(rows, CORNERS_ROWS, CORNERS_EDGE_ROWS, ri);
    size_t nc = c->corners ? corners_shown(cols, 2 * CORNERS_SMALL_EDGE, CORNERS_SMALL_EDGE, ci)
                           : corners_shown(cols, CORNERS_COLS, CORNERS_EDGE_COLS, ci);
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
    // A picture whose numbers do not fit is drawn whole, every column, with the numbers that
    // matter beside it; the numbers on request. show: picture asks for it whatever fits.
    if ((needed || draw->picture_only) && !vector && nr == rows &&
        (draw->picture == PIC_SHADES || draw->picture == PIC_COLOUR) &&
        whole_picture(c, out, t, offset, rows, cols, row_labels, col_labels, indent, limit, draw, true)) {
        util_free(cells);
        size_t want = needed ? c->page_width + (needed - room) : c->page_width;
        if (want > c->notation->pictured_width)
            c->notation->pictured_width = want;
        return;
    }
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
    text_pad(&box, left + 1);
    strbuf_puts(&box, st->dim);
    for (size_t k = 0; k < nc; k++) {
        const char *label = "…";
        if (ci[k] != CORNERS_GAP) {
            index_label(col_labels, ci[k], buf, sizeof(buf));
            label = buf;
        }
        text_pad(&box, 2 + width[k] - text_width(label));
        strbuf_puts(&box, label);
    }
    strbuf_puts(&box, st->reset);
    strbuf_putc(&box, '\n');
    text_pad(&box, left);
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
            text_pad(&box, label_w - text_width(label));
            strbuf_puts(&box, label);
            strbuf_puts(&box, st->reset);
            text_pad(&box, 1);
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
            text_pad(&box, (colour ? 1 : 2) + width[k] - text_width(cell));
            strbuf_puts(&box, cell);
            if (colour)
                strbuf_puts(&box, value ? " \033[0m" : " ");
        }
        strbuf_puts(&box, colour ? "│\n" : " │\n");
    }
    text_pad(&box, left);
    strbuf_puts(&box, "└");
    strbuf_repeat(&box, "─", inner);
    strbuf_puts(&box, "┘\n");
    if (draw->picture == PIC_SHADES && !draw->whole_only) {
        // Beside the table where it fits, else under its cells.
        bool beside = !draw->under && indent + textwrap_block_width(strbuf_str(&box)) + TEXTWRAP_GAP + 2 * nc + 2 <= limit;
        StrBuf pair[2] = {box, {0}};
        shade_picture(&pair[1], t, offset, cols, ri, nr, ci, nc, &draw->heat, beside);
        if (beside) {
            textwrap_side_by_side(out, pair, 2, indent);
        } else if (nr == rows && !needed && !vector) {
            // Under a table that shows every value: the picture labelled as the table is.
            textwrap_indent(out, strbuf_str(&box), indent);
            if (!whole_picture(c, out, t, offset, rows, cols, row_labels, col_labels, indent, limit, draw, false))
                textwrap_indent(out, strbuf_str(&pair[1]), indent + left);
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
            text_wrapf(c, out, indent, indent + 1, "(only %zu of the %zu values are shown; %s)", n_cols, cols, tail);
        else if (n_rows < rows && n_cols < cols)
            text_wrapf(c, out, indent, indent + 1, "(only %zu of the %zu rows and %zu of the %zu columns are shown; %s)",
                  n_rows, rows, n_cols, cols, tail);
        else if (n_rows < rows)
            text_wrapf(c, out, indent, indent + 1, "(only %zu of the %zu rows are shown; %s)", n_rows, rows, tail);
        else
            text_wrapf(c, out, indent, indent + 1, "(only %zu of the %zu columns fit in %zu; %s)", n_cols, cols,
                  c->page_width, tail);
    }
}

// One bar per entry of a vector, eighths of a block at its end, with its label and value.
enum { BAR_MIN = 8, BAR_MAX = 40 };

static void bars(const TextCtx *c, StrBuf *out, const Tensor *t, const Labels *labels, size_t indent,
                 const Heatmap *h) {
    static const char *const eighths[8] = {"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"};
    size_t n = t->shape.dim[0];
    size_t idx[CORNERS_ROWS + 1];
    size_t ni = c->corners ? corners_shown(n, 2 * CORNERS_SMALL_EDGE, CORNERS_SMALL_EDGE, idx)
                           : corners_shown(n, CORNERS_ROWS, CORNERS_EDGE_ROWS, idx);
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
        text_pad(out, indent);
        if (idx[k] == CORNERS_GAP) {
            text_pad(out, label_w - 1);
            strbuf_puts(out, "⋮\n");
            continue;
        }
        index_label(labels, idx[k], buf, sizeof(buf));
        strbuf_puts(out, c->st.dim);
        text_pad(out, label_w - text_width(buf));
        strbuf_puts(out, buf);
        strbuf_puts(out, c->st.reset);
        strbuf_puts(out, " │");
        double p = heatmap_position(h, t->data[idx[k]]);
        if (h->scale == HEAT_DIVERGING)
            p = p < 0 ? p : fabs(2 * p - 1);  // by |value|
        size_t e = p <= 0 ? 0 : (size_t)(p * (double)(bar_w * 8) + 0.5);
        strbuf_repeat(out, "█", e / 8);
        strbuf_puts(out, eighths[e % 8]);
        text_pad(out, bar_w - e / 8 - (e % 8 ? 1 : 0));
        format_value(c, t, NULL, idx[k], buf, sizeof(buf));
        strbuf_puts(out, "│ ");
        text_pad(out, value_w - strlen(buf));
        strbuf_printf(out, "%s\n", buf);
    }
    if (n > CORNERS_ROWS)
        text_wrapf(c, out, indent, indent + 1, "(only %d of the %zu values are shown; --format json has every one)",
              2 * CORNERS_EDGE_ROWS, n);
}

// The range of a tensor's picture, under it.
static void legend(const TextCtx *c, StrBuf *out, const Drawing *d, size_t indent) {
    const Heatmap *h = &d->heat;
    if (d->picture == PIC_TABLE || (d->whole_only && !c->notation->pictured_width))
        return;
    char lo[64], hi[64];
    format_number(h->lo, c->tr->digits, lo, sizeof(lo));
    format_number(h->hi, c->tr->digits, hi, sizeof(hi));
    if (h->scale == HEAT_NONE) {
        text_wrapf(c, out, indent, indent + 1, "(no finite values to scale the picture by)");
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
        text_wrapf(c, out, indent, indent + 1, "colours: %s %s %s%s", lo, strbuf_str(&ramp), hi, centre);
        out->failed = out->failed || ramp.failed;
        strbuf_finish(&ramp);
    } else if (d->picture == PIC_SHADES) {
        if (h->scale == HEAT_DIVERGING)
            text_wrapf(c, out, indent, indent + 1, "shades by size from \"%s\" (0) to \"%s\" (%s); the table has the signs",
                  heatmap_shade(0), heatmap_shade(HEATMAP_SHADES - 1), hi);
        else
            text_wrapf(c, out, indent, indent + 1, "shades from \"%s\" (%s) to \"%s\" (%s)", heatmap_shade(0), lo,
                  heatmap_shade(HEATMAP_SHADES - 1), hi);
    } else if (d->picture == PIC_BARS) {
        text_wrapf(c, out, indent, indent + 1, "bars: a full bar is %s%s", hi,
              h->scale == HEAT_DIVERGING ? " in size (the numbers have the signs)" : "");
    }
}

Drawing text_drawing_for(const TextCtx *c, const TraceStage *s) {
    Drawing d = TEXT_TABLE_ONLY;
    if (s->ids_of.items)
        return d;  // ids are tokens, not amounts: no picture, no colour
    if (s->view == VIEW_PICTURE && s->value->data && s->value->shape.rank >= 1 && s->value->size) {
        d.picture = s->value->shape.rank == 1 ? PIC_BARS : c->opts->colour ? PIC_COLOUR : PIC_SHADES;
        d.picture_only = true;
        heatmap_init(&d.heat, s->value->data, s->value->size);
        return d;
    }
    PictureKind want = trace_picture(s, c->opts->heatmap, c->opts->colour);
    if (want == PICTURE_TABLE && s->show == PICTURE_DEFAULT && s->distribution && s->value->shape.rank >= 2 &&
        s->value->data) {
        d.picture = PIC_SHADES;
        d.whole_only = true;
        heatmap_init(&d.heat, s->value->data, s->value->size);
        return d;
    }
    if (want == PICTURE_TABLE)
        return d;
    d.picture = want == PICTURE_BARS ? PIC_BARS : c->opts->colour ? PIC_COLOUR : PIC_SHADES;
    heatmap_init(&d.heat, s->value->data, s->value->size);
    return d;
}

// One block per slice shown (si: the slices' indices, CORNERS_GAP for the gap), each a heading and a
// matrix within the width from indent. Returns their width side by side.
static size_t slice_blocks(const TextCtx *c, StrBuf *blocks, const size_t *si, size_t ns, const TraceStage *s,
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
        TextCtx inner = *c;
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

// Under a table in fixed notation where values that are not 0 print as 0.0000: once, what
// 0.0000 stands for. Under a picture drawn whole: how to see its numbers.
static void small_values_note(const TextCtx *c, StrBuf *out, const TraceStage *s, const Tensor *t,
                              const int *decimals, size_t indent) {
    if (decimals || c->percent || c->notation->t != t)
        return;
    if (c->notation->pictured_width) {
        size_t want = c->notation->pictured_width;
        if (want <= c->page_width)
            text_wrapf(c, out, indent, indent + 1, "(its numbers: --only %s prints them)", s->name);
        else if (want <= RENDER_MAX_WIDTH)
            text_wrapf(c, out, indent, indent + 1, "(its numbers need %zu columns: --width %zu prints them)", want, want);
        else
            text_wrapf(c, out, indent, indent + 1, "(its numbers: --format html or --format json has every one)");
        return;
    }
    if (!c->notation->style.hides_small)
        return;
    char zero[FORMAT_NUMBER_CAP], half[FORMAT_NUMBER_CAP];
    FormatStyle fixed = {.notation = FORMAT_FIXED, .decimals = c->notation->style.decimals};
    format_with(&fixed, 0, zero, sizeof(zero));
    format_places(0.5 * pow(10, -fixed.decimals), fixed.decimals + 1, half, sizeof(half));
    text_wrapf(c, out, indent, indent + 1, "(%s is 0, or a value below %s in size)", zero, half);
}

// Whether the last axis's labels already name each value's token (argtopk's ids under the
// tokens they are): the numbers then say what the labels do not.
static bool labelled_by_tokens(const TraceStage *s, const Tensor *t) {
    if (t->shape.rank == 0)
        return false;
    const Labels *l = &s->labels[t->shape.rank - 1];
    size_t cols = t->shape.dim[t->shape.rank - 1];
    if (!l->items || l->n != cols)
        return false;
    for (size_t k = 0; k < t->size; k++) {
        double v = t->data[k];
        if (!(v >= 0 && v < (double)s->ids_of.n && v == floor(v)) ||
            strcmp(s->ids_of.items[(size_t)v], l->items[k % cols]) != 0)
            return false;
    }
    return true;
}

void text_values(const TextCtx *outer, StrBuf *out, const TraceStage *s, const Tensor *t, const int *decimals,
                 size_t indent, const Drawing *draw) {
    // Ids of tokens print as their tokens: the stage's own values, not a document's.
    TextCtx ids_ctx = *outer;
    bool own = t == s->value;
    ids_ctx.ids = own && s->ids_of.items && !labelled_by_tokens(s, t) ? &s->ids_of : NULL;
    // The stage's own view (show: percent, corners; digits:), not its document's values.
    ids_ctx.digits = own ? s->digits : -1;
    ids_ctx.percent = own && s->view == VIEW_PERCENT;
    ids_ctx.corners = own && s->view == VIEW_CORNERS;
    const TextCtx *c = &ids_ctx;
    const TextStyle *st = &c->st;
    const Shape *sh = &t->shape;
    char buf[64];
    if (!t->data) {
        char n[64], bytes[64];
        format_count((double)t->size, n, sizeof(n));
        format_count((double)t->size * 8.0, bytes, sizeof(bytes));
        text_wrapf(c, out, indent, indent + 1, "(shape only: %s values, %s bytes as doubles; not stored)", n, bytes);
        return;
    }
    if (t->size == 0) {
        char shape[64];
        shape_format(sh, shape, sizeof(shape));
        text_wrapf(c, out, indent, indent + 1, "(empty: a tensor of shape %s holds no values)", shape);
        return;
    }
    if (sh->rank == 0) {
        // One id: the number, then its token.
        TextCtx number = *c;
        number.ids = NULL;
        format_value(&number, t, decimals, 0, buf, sizeof(buf));
        text_pad(out, indent);
        strbuf_printf(out, "= %s%s%s", st->bold, buf, st->reset);
        char token[64];
        format_value(c, t, decimals, 0, token, sizeof(token));
        if (strcmp(buf, token) != 0)
            strbuf_printf(out, " (%s)", token);
        strbuf_putc(out, '\n');
        return;
    }
    if (sh->rank == 1) {
        if (draw->picture == PIC_BARS)
            bars(c, out, t, &s->labels[0], indent, &draw->heat);
        else
            matrix(c, out, t, decimals, 0, 1, sh->dim[0], NULL, &s->labels[0], true, indent, c->width, draw);
        legend(c, out, draw, indent);
        small_values_note(c, out, s, t, decimals, indent);
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
            small_values_note(c, out, s, t, decimals, indent);
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
    small_values_note(c, out, s, t, decimals, indent);
}
