// textwrap: lines wrapped and blocks laid out by display columns.
#include "textwrap.h"

#include <stdbool.h>
#include <string.h>

#include "format.h"

enum { TEXTWRAP_MAX_BLOCKS = 256 };  // blocks side by side at most (the renderer sets 17)

static void pad(StrBuf *out, size_t n) {
    for (size_t i = 0; i < n; i++)
        strbuf_putc(out, ' ');
}

// Bytes of one character at s (a whole colour escape counts as one), within len.
static size_t char_bytes(const char *s, size_t len) {
    unsigned char b = (unsigned char)s[0];
    size_t n = 1;
    if (b == 0x1B) {
        while (n < len && s[n - 1] != 'm')
            n++;
        return n;
    }
    if (b >= 0xF0)
        n = 4;
    else if (b >= 0xE0)
        n = 3;
    else if (b >= 0xC0)
        n = 2;
    return n < len ? n : len;
}

// Bytes of the longest prefix of s[0, len) within cols columns, cut between characters;
// at least one character, so that wrapping always moves on.
static size_t fit_prefix(const char *s, size_t len, size_t cols) {
    size_t i = 0, w = 0;
    while (i < len) {
        unsigned char b = (unsigned char)s[i];
        size_t n = 1, cw = 1;  // ASCII, nearly all the text: one byte, one column
        if (b >= 0x80 || b == 0x1B) {
            n = char_bytes(s + i, len - i);
            cw = format_display_width(s + i, n);
        }
        if (w + cw > cols && i > 0)
            break;
        w += cw;
        i += n;
    }
    return i;
}

// Whether the word after the space at k is a lone '-' or '=': a line it started would read as a
// list item or a heading's underline, so it stays with the word before it.
static bool lone_mark_after(const char *s, size_t len, size_t k) {
    return k + 1 < len && (s[k + 1] == '-' || s[k + 1] == '=') && (k + 2 == len || s[k + 2] == ' ');
}

// One line wrapped; prose: not before a lone '-' or '=' when an earlier space will do (shown
// work keeps its "= value" continuation lines).
static void wrap_line(StrBuf *out, const char *s, size_t len, size_t indent, size_t hang, size_t width, bool prose) {
    while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\r'))
        len--;
    if (len == 0) {
        strbuf_putc(out, '\n');
        return;
    }
    size_t at = indent;
    for (bool first = true; len > 0; first = false, at = hang) {
        size_t lead = 0;
        while (lead < len && s[lead] == ' ')
            lead++;
        if (!first)
            s += lead, len -= lead, lead = 0;
        size_t avail = width > at + TEXTWRAP_MIN_COLUMNS ? width - at : TEXTWRAP_MIN_COLUMNS;
        // Measure only as far as a line reaches: a title of megabytes wraps in linear time.
        size_t fit = fit_prefix(s, len, avail), take = fit;
        if (fit < len) {
            // Break at the last space that fits, after at least one word.
            size_t last = 0;
            for (size_t k = fit; k > lead; k--)
                if (s[k] == ' ') {
                    last = last ? last : k;
                    if (!prose || !lone_mark_after(s, len, k)) {
                        take = k;
                        break;
                    }
                }
            if (take == fit && last)
                take = last;
        }
        size_t keep = take;
        while (keep > 0 && s[keep - 1] == ' ')
            keep--;
        pad(out, at);
        strbuf_append(out, s, keep);
        strbuf_putc(out, '\n');
        s += take;
        len -= take;
    }
}

void textwrap_line(StrBuf *out, const char *s, size_t len, size_t indent, size_t hang, size_t width) {
    wrap_line(out, s, len, indent, hang, width, false);
}

// ---------------------------------------------------------------- narration

// The bytes of a list item's marker and the spaces after it ("- ", "* ", "2. ", "10) "), after
// the line's leading spaces; 0 when the line is not an item.
static size_t item_marker(const char *line, size_t len, size_t lead) {
    size_t i = lead;
    if (i < len && (line[i] == '-' || line[i] == '*')) {
        i++;
    } else {
        size_t digits = 0;
        while (i < len && line[i] >= '0' && line[i] <= '9' && digits < 3)
            i++, digits++;
        if (digits == 0 || i >= len || (line[i] != '.' && line[i] != ')'))
            return 0;
        i++;
    }
    if (i >= len || line[i] != ' ')
        return 0;
    while (i < len && line[i] == ' ')
        i++;
    return i < len ? i - lead : 0;
}

// Whether a line ends a sentence or announces what follows: a number at the start of the next
// line then begins an item ("Two steps:" / "1. scale"), where after "of variance" it is the
// sentence going on ("1. A dot product ...").
static bool ends_a_sentence(const char *line, size_t len) {
    while (len > 0 && (line[len - 1] == ' ' || line[len - 1] == '\r'))
        len--;
    return len > 0 && strchr(".:;!?", line[len - 1]);
}

typedef struct TextLine {
    const char *at;
    size_t len, lead, marker;
} TextLine;

// Whether line, after the line before it (prose), starts a list item: a bullet always, a
// number after a sentence's end.
static bool starts_item(const TextLine *line, const TextLine *before) {
    size_t marker = item_marker(line->at, line->len, line->lead);
    if (!marker)
        return false;
    char c = line->at[line->lead];
    return c == '-' || c == '*' || (before->at && ends_a_sentence(before->at, before->len));
}

typedef enum LineKind {
    LINE_BLANK,     // ends a paragraph
    LINE_PROSE,     // joined with the prose around it and wrapped
    LINE_ITEM,      // a list item: joined with its continuation lines, wrapped under its text
    LINE_VERBATIM,  // set in by spaces (a formula, code) or a table row ('|'): kept as it is
} LineKind;

static TextLine next_line(const char *p) {
    const char *end = strchr(p, '\n');
    TextLine l = {.at = p, .len = end ? (size_t)(end - p) : strlen(p)};
    while (l.lead < l.len && p[l.lead] == ' ')
        l.lead++;
    return l;
}

static const char *after(const TextLine *l) {
    return l->at[l->len] ? l->at + l->len + 1 : l->at + l->len;
}

// Appends a line's text without its leading and trailing spaces, after a space when joined
// to text before it.
static void join(StrBuf *joined, const TextLine *l, size_t from) {
    size_t len = l->len;
    while (len > from && (l->at[len - 1] == ' ' || l->at[len - 1] == '\r'))
        len--;
    if (joined->len && len > from)
        strbuf_putc(joined, ' ');
    strbuf_append(joined, l->at + from, len - from);
}

// Narration reflowed to the width once its placeholders are filled: a number written in
// takes the room its placeholder took in the author's lines, and a terminal of another width
// than the author's gets full lines, not ragged ones.
void textwrap_paragraph(StrBuf *out, const char *text, size_t indent, size_t width) {
    StrBuf joined;
    strbuf_init(&joined);
    bool in_list = false, paragraph_start = true;
    const char *prev = NULL;
    size_t prev_len = 0;
    for (const char *p = text; *p;) {
        TextLine l = next_line(p);
        LineKind kind;
        l.marker = item_marker(l.at, l.len, l.lead);
        if (l.lead == l.len) {
            kind = LINE_BLANK;
        } else if (l.marker && (paragraph_start || in_list || starts_item(&l, &(TextLine){prev, prev_len, 0, 0}))) {
            kind = LINE_ITEM;
        } else if (l.lead > 0 || l.at[0] == '|') {
            kind = LINE_VERBATIM;
        } else {
            kind = LINE_PROSE;
        }
        p = after(&l);
        if (kind == LINE_BLANK) {
            strbuf_putc(out, '\n');
            in_list = false;
            paragraph_start = true;
            prev = NULL;
            continue;
        }
        strbuf_clear(&joined);
        if (kind == LINE_VERBATIM) {
            textwrap_line(out, l.at, l.len, indent, indent + l.lead, width);
        } else if (kind == LINE_ITEM) {
            // Its continuation lines are set in further than its marker.
            join(&joined, &l, 0);
            for (TextLine c = next_line(p); *p && c.lead > l.lead && c.lead < c.len && !item_marker(c.at, c.len, c.lead);
                 c = next_line(p)) {
                join(&joined, &c, c.lead);
                p = after(&c);
            }
            wrap_line(out, strbuf_str(&joined), joined.len, indent, indent + l.lead + l.marker, width, true);
        } else {
            join(&joined, &l, 0);
            for (TextLine c = next_line(p); *p && c.lead == 0 && c.len && c.at[0] != '|' && !starts_item(&c, &l);
                 c = next_line(p)) {
                join(&joined, &c, 0);
                l = c;
                p = after(&c);
            }
            wrap_line(out, strbuf_str(&joined), joined.len, indent, indent, width, true);
        }
        in_list = kind == LINE_ITEM || (in_list && kind == LINE_VERBATIM);
        paragraph_start = false;
        prev = l.at;
        prev_len = l.len;
    }
    out->failed = out->failed || joined.failed;
    strbuf_finish(&joined);
}

void textwrap_indent(StrBuf *out, const char *text, size_t indent) {
    for (const char *p = text; *p;) {
        const char *end = strchr(p, '\n');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        while (len > 0 && p[len - 1] == ' ')
            len--;
        if (len > 0)
            pad(out, indent);
        strbuf_append(out, p, len);
        strbuf_putc(out, '\n');
        if (!end)
            break;
        p = end + 1;
    }
}

size_t textwrap_block_width(const char *text) {
    size_t w = 0;
    for (const char *p = text; *p;) {
        const char *end = strchr(p, '\n');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        size_t lw = format_display_width(p, len);
        if (lw > w)
            w = lw;
        p += len + (end ? 1 : 0);
    }
    return w;
}

void textwrap_side_by_side(StrBuf *out, const StrBuf *blocks, size_t n, size_t indent) {
    const char *at[TEXTWRAP_MAX_BLOCKS];
    size_t widths[TEXTWRAP_MAX_BLOCKS];
    ASSERT(n <= ARRAY_LEN(at));
    for (size_t k = 0; k < n; k++) {
        at[k] = strbuf_str(&blocks[k]);
        widths[k] = textwrap_block_width(at[k]);
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
                pad(&line, widths[k] - format_display_width(at[k], len) + TEXTWRAP_GAP);
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
