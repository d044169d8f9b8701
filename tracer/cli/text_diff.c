// text_diff: line-based unified diff with a longest-common-subsequence table over the region that
// differs (common prefix and suffix trimmed first).
#include "text_diff.h"

#include <string.h>

#include "safetext.h"

enum { CONTEXT = 3 };
#define DIFF_MAX_CELLS ((size_t)40 * 1000 * 1000)

typedef struct Lines {
    const char **start;
    size_t *len;
    size_t n;
} Lines;

static bool split_lines(const char *text, Lines *l) {
    size_t n = 0;
    for (const char *p = text; *p; p++)
        if (*p == '\n')
            n++;
    if (*text && text[strlen(text) - 1] != '\n')
        n++;
    l->start = util_calloc(n + 1, sizeof(char *));
    l->len = util_calloc(n + 1, sizeof(size_t));
    l->n = 0;
    if (!l->start || !l->len)
        return false;
    for (const char *p = text; *p;) {
        const char *end = strchr(p, '\n');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        l->start[l->n] = p;
        l->len[l->n++] = len;
        p += len + (end ? 1 : 0);
    }
    return true;
}

static bool same(const Lines *a, size_t i, const Lines *b, size_t j) {
    return a->len[i] == b->len[j] && memcmp(a->start[i], b->start[j], a->len[i]) == 0;
}

static bool is_stage_header(const Lines *l, size_t i) {
    return (l->len[i] > 5 && memcmp(l->start[i], "Step ", 5) == 0) ||
           (l->len[i] > 6 && memcmp(l->start[i], "Given ", 6) == 0);
}

typedef struct Edit {
    char kind;  // ' ', '-', '+'
    size_t a, b;  // line numbers (0-based) in a and b
} Edit;

// A number in a line of a trace: digits with an optional sign, decimal point and thousands
// commas ("-0.3345", "124,439,808"). Returns its length at p, 0 when none starts there.
static size_t number_at(const char *p, size_t len) {
    size_t i = p[0] == '-' ? 1 : 0;
    if (i >= len || p[i] < '0' || p[i] > '9')
        return 0;
    while (i < len && ((p[i] >= '0' && p[i] <= '9') || ((p[i] == '.' || p[i] == ',') && i + 1 < len &&
                                                          p[i + 1] >= '0' && p[i + 1] <= '9')))
        i++;
    return i;
}

// The k-th number of a line, or NULL; its length in *n.
static const char *kth_number(const char *line, size_t len, size_t k, size_t *n) {
    for (size_t i = 0; i < len;) {
        bool starts = i == 0 || !((line[i - 1] >= '0' && line[i - 1] <= '9') || line[i - 1] == '.');
        size_t m = starts ? number_at(line + i, len - i) : 0;
        if (m && k-- == 0) {
            *n = m;
            return line + i;
        }
        i += m ? m : 1;
    }
    return NULL;
}

TextDiffStyle text_diff_style(bool colour) {
    if (!colour)
        return (TextDiffStyle){"", "", "", "", "", "", ""};
    return (TextDiffStyle){"\033[1m", "\033[36m", "\033[31m", "\033[32m", "\033[7m", "\033[27m", "\033[0m"};
}

void text_diff_names(StrBuf *out, const char *a_name, const char *b_name, bool colour) {
    const TextDiffStyle st = text_diff_style(colour);
    strbuf_printf(out, "%s--- %s\n+++ %s%s\n", st.names, a_name, b_name, st.reset);
}

// One line of the diff. With colour, a changed line whose counterpart is known has the numbers
// that differ from the counterpart's highlighted (reverse video), as git's word diff does.
// A golden file is a file like any other: its text passes the filter of every text from a
// file (safetext.h) before it reaches the terminal.
static void diff_line(StrBuf *out, char kind, const char *line, size_t len, const char *other, size_t other_len,
                      bool colour) {
    if (!colour || kind == ' ') {
        strbuf_putc(out, kind);
        safetext_escape(out, line, len, false);
        strbuf_putc(out, '\n');
        return;
    }
    const TextDiffStyle st = text_diff_style(true);
    strbuf_puts(out, kind == '-' ? st.before : st.after);
    strbuf_putc(out, kind);
    size_t k = 0;
    for (size_t i = 0; i < len;) {
        // the text up to the next number (which is ASCII: a character is never cut)
        size_t m = 0, from = i;
        for (; i < len; i++) {
            bool starts = i == 0 || !((line[i - 1] >= '0' && line[i - 1] <= '9') || line[i - 1] == '.');
            if (starts && (m = number_at(line + i, len - i)) != 0)
                break;
        }
        safetext_escape(out, line + from, i - from, false);
        if (!m)
            continue;
        size_t theirs_len = 0;
        const char *theirs = other ? kth_number(other, other_len, k, &theirs_len) : NULL;
        bool changed = other && (!theirs || theirs_len != m || memcmp(theirs, line + i, m) != 0);
        strbuf_puts(out, changed ? st.changed : "");
        strbuf_append(out, line + i, m);
        strbuf_puts(out, changed ? st.changed_end : "");
        i += m;
        k++;
    }
    strbuf_puts(out, st.reset);
    strbuf_putc(out, '\n');
}

// The line a changed line pairs with: in a block of removals followed by additions, the i-th
// removal goes with the i-th addition. NULL when there is none.
static const Edit *counterpart(const Edit *edits, size_t start, size_t stop, size_t k) {
    size_t first = k;
    while (first > start && edits[first - 1].kind != ' ')
        first--;
    size_t mid = first;
    while (mid < stop && edits[mid].kind == '-')
        mid++;
    size_t end = mid;
    while (end < stop && edits[end].kind == '+')
        end++;
    size_t j = edits[k].kind == '-' ? mid + (k - first) : first + (k - mid);
    bool ok = edits[k].kind == '-' ? j < end : k >= mid && j < mid;
    return ok && edits[j].kind != edits[k].kind ? &edits[j] : NULL;
}

static void emit_hunks(const Edit *edits, size_t n, const Lines *a, const Lines *b, size_t first_context,
                       bool colour, StrBuf *out) {
    size_t i = 0;
    bool first = true;
    while (i < n) {
        // Find the next change.
        size_t change = i;
        while (change < n && edits[change].kind == ' ')
            change++;
        if (change == n)
            break;
        size_t before = first ? first_context : CONTEXT;
        size_t start = change >= i + before ? change - before : i;
        // Extend until CONTEXT * 2 unchanged lines follow the last change.
        size_t end = change, quiet = 0;
        for (size_t k = change; k < n; k++) {
            if (edits[k].kind == ' ') {
                if (++quiet > 2 * CONTEXT)
                    break;
            } else {
                quiet = 0;
                end = k;
            }
        }
        size_t stop = end + 1 + CONTEXT < n ? end + 1 + CONTEXT : n;
        // Every edit holds the line it stands at in both texts, so the first edit's are where the
        // hunk starts even on a side it has no line of: a hunk that only removes lines says
        // after which line of b, as diff -u does ("@@ -4,3 +3,0 @@").
        size_t a_start = edits[start].a, a_count = 0, b_start = edits[start].b, b_count = 0;
        for (size_t k = start; k < stop; k++) {
            a_count += edits[k].kind != '+';
            b_count += edits[k].kind != '-';
        }
        const TextDiffStyle st = text_diff_style(colour);
        strbuf_printf(out, "%s@@ -%zu,%zu +%zu,%zu @@%s\n", st.hunk, a_count ? a_start + 1 : a_start, a_count,
                      b_count ? b_start + 1 : b_start, b_count, st.reset);
        for (size_t k = start; k < stop; k++) {
            const Edit *e = &edits[k];
            const Edit *pair = e->kind == ' ' ? NULL : counterpart(edits, start, stop, k);
            if (e->kind == '+')
                diff_line(out, '+', b->start[e->b], b->len[e->b], pair ? a->start[pair->a] : NULL,
                          pair ? a->len[pair->a] : 0, colour);
            else
                diff_line(out, e->kind, a->start[e->a], a->len[e->a], pair ? b->start[pair->b] : NULL,
                          pair ? b->len[pair->b] : 0, colour);
        }
        i = stop;
        first = false;
    }
}

bool text_diff_unified(const char *a_text, const char *b_text, const char *a_name, const char *b_name, bool colour,
                  StrBuf *out) {
    if (strcmp(a_text, b_text) == 0)
        return true;
    Lines a = {0}, b = {0};
    Edit *edits = NULL;
    unsigned *table = NULL;
    if (!split_lines(a_text, &a) || !split_lines(b_text, &b)) {
        out->failed = true;
        goto done;
    }
    size_t pre = 0;
    while (pre < a.n && pre < b.n && same(&a, pre, &b, pre))
        pre++;
    size_t suf = 0;
    while (suf < a.n - pre && suf < b.n - pre && same(&a, a.n - 1 - suf, &b, b.n - 1 - suf))
        suf++;
    // Start the first hunk at the header of the stage that differs.
    size_t header = pre < a.n ? pre : (a.n ? a.n - 1 : 0);
    while (header > 0 && !is_stage_header(&a, header))
        header--;
    size_t first_context = pre - header;
    size_t na = a.n - pre - suf, nb = b.n - pre - suf;
    size_t total = pre + na + nb + suf;
    edits = util_calloc(total + 1, sizeof(Edit));
    if (!edits) {
        out->failed = true;
        goto done;
    }
    size_t n = 0;
    for (size_t i = 0; i < pre; i++)
        edits[n++] = (Edit){' ', i, i};
    size_t cells;
    if (util_mul_size(na + 1, nb + 1, &cells) && cells <= DIFF_MAX_CELLS &&
        (table = util_calloc(cells, sizeof(unsigned)))) {
        // table[i][j]: LCS length of a[pre+i..] and b[pre+j..] within the middle region.
        for (size_t i = na; i-- > 0;)
            for (size_t j = nb; j-- > 0;)
                table[i * (nb + 1) + j] = same(&a, pre + i, &b, pre + j)
                                              ? table[(i + 1) * (nb + 1) + j + 1] + 1
                                              : (table[(i + 1) * (nb + 1) + j] > table[i * (nb + 1) + j + 1]
                                                     ? table[(i + 1) * (nb + 1) + j]
                                                     : table[i * (nb + 1) + j + 1]);
        size_t i = 0, j = 0;
        while (i < na || j < nb) {
            if (i < na && j < nb && same(&a, pre + i, &b, pre + j)) {
                edits[n++] = (Edit){' ', pre + i, pre + j};
                i++, j++;
            } else if (i < na && (j == nb || table[(i + 1) * (nb + 1) + j] >= table[i * (nb + 1) + j + 1])) {
                edits[n++] = (Edit){'-', pre + i, pre + j};  // removals first, as diff -u prints them
                i++;
            } else {
                edits[n++] = (Edit){'+', pre + i, pre + j};
                j++;
            }
        }
    } else {
        // Too large to align line by line: show the whole differing region.
        for (size_t i = 0; i < na; i++)
            edits[n++] = (Edit){'-', pre + i, pre};
        for (size_t j = 0; j < nb; j++)
            edits[n++] = (Edit){'+', pre + na, pre + j};
    }
    for (size_t k = 0; k < suf; k++)
        edits[n++] = (Edit){' ', a.n - suf + k, b.n - suf + k};
    text_diff_names(out, a_name, b_name, colour);
    emit_hunks(edits, n, &a, &b, first_context, colour, out);
done:
    util_free(table);
    util_free(edits);
    util_free(a.start);
    util_free(a.len);
    util_free(b.start);
    util_free(b.len);
    return false;
}

// ---------------------------------------------------------------- the stage summary

// A stage's block of lines: its header and the indented lines under it.
typedef struct Block {
    size_t first, end;     // lines [first, end)
    const char *key;       // "Given Q_0", "Step 1a scores.1": the header's first words
    size_t key_len;
} Block;

// The key of a header: "Given NAME" or "Step N NAME", single-spaced.
static void header_key(const char *line, size_t len, Block *b) {
    size_t words = memcmp(line, "Given ", 6) == 0 ? 2 : 3, seen = 0, i = 0;
    while (i < len && seen < words) {
        while (i < len && line[i] == ' ')
            i++;
        while (i < len && line[i] != ' ')
            i++;
        seen++;
    }
    b->key = line;
    b->key_len = i;
}

// Split a trace into stage blocks; *opening_end is where the first block starts and
// *closing_start where the text after the last block begins.
static Block *stage_blocks(const Lines *l, size_t *n, size_t *opening_end, size_t *closing_start) {
    Block *blocks = util_calloc(l->n + 1, sizeof(Block));
    *n = 0;
    *opening_end = *closing_start = l->n;
    if (!blocks)
        return NULL;
    for (size_t i = 0; i < l->n;) {
        if (!is_stage_header(l, i)) {
            i++;
            continue;
        }
        Block *b = &blocks[(*n)++];
        if (*n == 1)
            *opening_end = i;
        b->first = i++;
        while (i < l->n && !is_stage_header(l, i) && (l->len[i] == 0 || l->start[i][0] == ' '))
            i++;
        b->end = i;
        header_key(l->start[b->first], l->len[b->first], b);
        *closing_start = i;
    }
    return blocks;  // with no stage, the opening and the closing both end the text, as set above
}

static const Block *find_block(const Block *blocks, size_t n, const Block *like) {
    for (size_t i = 0; i < n; i++)
        if (blocks[i].key_len == like->key_len && memcmp(blocks[i].key, like->key, like->key_len) == 0)
            return &blocks[i];
    return NULL;
}

static bool same_range(const Lines *a, size_t a_first, size_t a_end, const Lines *b, size_t b_first,
                       size_t b_end) {
    if (a_end - a_first != b_end - b_first)
        return false;
    for (size_t k = 0; k < a_end - a_first; k++)
        if (!same(a, a_first + k, b, b_first + k))
            return false;
    return true;
}

// The key with its runs of spaces as one: "Step 1  scores" -> "Step 1 scores".
static void put_key(StrBuf *out, const Block *b) {
    for (size_t i = 0; i < b->key_len;) {
        size_t from = i;
        while (i < b->key_len && !(b->key[i] == ' ' && (i + 1 == b->key_len || b->key[i + 1] == ' ')))
            i++;
        safetext_escape(out, b->key + from, i - from, false);
        while (i < b->key_len && b->key[i] == ' ' && (i + 1 == b->key_len || b->key[i + 1] == ' '))
            i++;
    }
}

void text_diff_stage_summary(const char *a_text, const char *b_text, const char *a_name, const char *b_name,
                        StrBuf *out) {
    if (strcmp(a_text, b_text) == 0)
        return;
    Lines a = {0}, b = {0};
    Block *ba = NULL, *bb = NULL;
    size_t na = 0, nb = 0, a_open, a_close, b_open, b_close;
    if (!split_lines(a_text, &a) || !split_lines(b_text, &b) || !(ba = stage_blocks(&a, &na, &a_open, &a_close)) ||
        !(bb = stage_blocks(&b, &nb, &b_open, &b_close))) {
        out->failed = true;
        goto done;
    }
    strbuf_printf(out, "What differs in %s from %s:\n", b_name, a_name);
    if (!same_range(&a, 0, a_open, &b, 0, b_open))
        strbuf_puts(out, "  the title and introduction\n");
    size_t changed = 0;
    for (size_t i = 0; i < nb; i++) {
        const Block *other = find_block(ba, na, &bb[i]);
        if (other && same_range(&a, other->first, other->end, &b, bb[i].first, bb[i].end))
            continue;
        strbuf_puts(out, "  ");
        put_key(out, &bb[i]);
        strbuf_printf(out, ": %s\n", other ? "changed" : "new (not in the golden file)");
        changed++;
    }
    for (size_t i = 0; i < na; i++)
        if (!find_block(bb, nb, &ba[i]))
        {
            strbuf_puts(out, "  ");
            put_key(out, &ba[i]);
            strbuf_puts(out, ": gone (only in the golden file)\n");
        }
    if (!same_range(&a, a_close, a.n, &b, b_close, b.n))
        strbuf_puts(out, "  the closing text (outro and document check)\n");
    strbuf_printf(out, "%zu of %zu stages changed.\n\n", changed, nb);
done:
    util_free(ba);
    util_free(bb);
    util_free(a.start);
    util_free(a.len);
    util_free(b.start);
    util_free(b.len);
}
