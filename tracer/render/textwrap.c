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

void textwrap_line(StrBuf *out, const char *s, size_t len, size_t indent, size_t hang, size_t width) {
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
            for (size_t k = fit; k > lead; k--)
                if (s[k] == ' ') {
                    take = k;
                    break;
                }
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

// A line that starts a block of its own in narration: a list item, or text set in by spaces.
static bool starts_block(const char *line) {
    return line[0] == ' ' || line[0] == '-' || line[0] == '*' || line[0] == '|' ||
           (line[0] >= '0' && line[0] <= '9' && (line[1] == '.' || line[1] == ')'));
}

// Reflowing only where a line does not fit keeps the author's layout at the width it was
// written for, and spares a narrow terminal ragged half-lines.
void textwrap_paragraph(StrBuf *out, const char *text, size_t indent, size_t width) {
    const char *p = text;
    while (*p) {
        // The block: p up to block_end, lines_fit when every line of it fits.
        const char *q = p;
        bool lines_fit = true;
        for (bool first = true;; first = false) {
            const char *end = strchr(q, '\n');
            size_t len = end ? (size_t)(end - q) : strlen(q);
            if (!first && (len == 0 || starts_block(q)))
                break;
            if (indent + format_display_width(q, len) > width)
                lines_fit = false;
            q = end ? end + 1 : q + len;
            if (!end || len == 0)
                break;
        }
        const char *block_end = q;
        if (lines_fit || strspn(p, " ") > 0) {
            for (const char *line = p; line < block_end;) {
                const char *end = strchr(line, '\n');
                size_t len = end ? (size_t)(end - line) : strlen(line);
                size_t lead = strspn(line, " ");
                textwrap_line(out, line, len, indent, indent + (lead < len ? lead : 0), width);
                line = end ? end + 1 : line + len;
            }
        } else {
            StrBuf joined;
            strbuf_init(&joined);
            for (const char *line = p; line < block_end;) {
                const char *end = strchr(line, '\n');
                size_t len = end ? (size_t)(end - line) : strlen(line);
                if (joined.len)
                    strbuf_putc(&joined, ' ');
                strbuf_append(&joined, line, len);
                line = end ? end + 1 : line + len;
            }
            textwrap_line(out, strbuf_str(&joined), joined.len, indent, indent, width);
            out->failed = out->failed || joined.failed;
            strbuf_finish(&joined);
        }
        p = block_end;
    }
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
