// bpe_files: reads GPT-2's vocabulary and merges files into the tables its BPE encodes with.
#include "bpe_files.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "json.h"
#include "utf8.h"

// The characters of the files that stand for a byte lie in U+0000 to U+0143.
#define BYTE_CHARS 0x144

// ---------------------------------------------------------------- GPT-2's bytes as characters

// GPT-2's files write each byte as one printable character: the printable bytes of Latin-1 as
// themselves, the others (controls, space, soft hyphen) as U+0100 onwards in byte order, so
// that a token never holds a space or a control character: ' ' is 'Ġ' (U+0120).
static bool byte_is_itself(unsigned b) {
    return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
}

// Which byte each character of the files stands for, -1 for none: the table GPT-2 builds
// (bytes_to_unicode), turned around.
static void byte_of_char_table(int16_t byte_of[BYTE_CHARS]) {
    for (size_t cp = 0; cp < BYTE_CHARS; cp++)
        byte_of[cp] = -1;
    uint32_t n = 0;  // how many bytes so far are written as U+0100 onwards
    for (unsigned b = 0; b < 256; b++)
        byte_of[byte_is_itself(b) ? b : 0x100 + n++] = (int16_t)b;
}

// ---------------------------------------------------------------- hash tables

// FNV-1a, continued from h over s[0, len), so that the hash of two tokens side by side is the
// hash of the first continued over the second (the merges look up "a" + "t" without a copy).
#define FNV_START 14695981039346656037u
static uint64_t hash_more(uint64_t h, const char *s, size_t len) {
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211u;
    return h;
}

static uint64_t hash_pair(uint64_t pair) {
    pair ^= pair >> 33;  // a finaliser of MurmurHash3: every bit of the pair moves every bit
    pair *= 0xff51afd7ed558ccdu;
    pair ^= pair >> 33;
    return pair;
}

static size_t table_capacity(size_t n) {
    size_t cap = 16;
    while (cap < n + n / 4)
        cap *= 2;
    return cap;
}

static BpeMerge *merge_slot(const BpeTables *t, uint64_t pair) {
    size_t mask = t->merges_cap - 1;
    for (size_t i = hash_pair(pair) & mask;; i = (i + 1) & mask) {
        BpeMerge *slot = &t->merges[i];
        if (slot->pair == UINT64_MAX || slot->pair == pair)
            return slot;
    }
}

const BpeMerge *bpe_merge_find(const BpeTables *t, uint32_t left, uint32_t right) {
    const BpeMerge *slot = merge_slot(t, (uint64_t)left << 32 | right);
    return slot->pair == UINT64_MAX ? NULL : slot;
}

// ---------------------------------------------------------------- the vocabulary's tokens

// A token of the vocabulary as read, kept while the files are read: its spelling (the files'
// characters, as UTF-8) is what the merges file names it by.
typedef struct Entry {
    const char *spelling;
    const char *bytes;  // NUL-terminated, in the tables' block
    uint32_t spelling_len, len, id;
    uint32_t offset;    // of its opening quote (a file holds at most TOKENIZER_MAX_FILE_BYTES)
    uint64_t hash;      // of its spelling
} Entry;

// A token's slot in the table of spellings. It holds the spelling's first 8 bytes, so that
// finding a short token (most are) reads its slot and nothing else: the merges are some
// 150,000 look-ups in a table larger than the caches.
typedef struct SpellingSlot {
    uint64_t head;  // the spelling's first bytes, up to 8, the rest zero
    uint32_t len;   // the spelling's length
    uint32_t id;    // the token's id + 1; 0: empty
} SpellingSlot;

// What the reading of both files shares: the byte of each character, and the tokens by their
// spelling (freed once both files are read).
typedef struct Reading {
    BpeTables *t;
    Arena *arena;
    Diag *diag;
    int16_t byte_of[BYTE_CHARS];
    Entry *entry;  // in file order
    size_t n, cap;
    const Entry **entry_of;  // by id
    uint32_t last_merged;    // the token the last merge line made
    SpellingSlot *slot;
    size_t slot_cap;  // a power of two
    char *spellings;  // one block for every token's spelling
    char *bytes;      // one block (in the arena) for every token's bytes
} Reading;

// The first 8 bytes of a spelling in two parts, a + b.
static uint64_t spelling_head(const char *a, size_t a_len, const char *b, size_t b_len) {
    char head[8] = {0};
    size_t from_a = a_len < 8 ? a_len : 8, from_b = b_len < 8 - from_a ? b_len : 8 - from_a;
    memcpy(head, a, from_a);
    memcpy(head + from_a, b, from_b);
    uint64_t h;
    memcpy(&h, head, sizeof(h));
    return h;
}

// The slot of a spelling in two parts (a + b, b_len 0 for one token): its own, or the empty
// one where it would go.
static SpellingSlot *spelling_slot(const Reading *g, uint64_t hash, const char *a, size_t a_len,
                                   const char *b, size_t b_len) {
    size_t mask = g->slot_cap - 1, len = a_len + b_len;
    uint64_t head = spelling_head(a, a_len, b, b_len);
    for (size_t i = hash & mask;; i = (i + 1) & mask) {
        SpellingSlot *slot = &g->slot[i];
        if (!slot->id)
            return slot;
        if (slot->head != head || slot->len != len)
            continue;
        if (len <= 8)  // the head is the whole spelling
            return slot;
        const char *s = g->entry_of[slot->id - 1]->spelling;
        if (memcmp(s, a, a_len) == 0 && memcmp(s + a_len, b, b_len) == 0)
            return slot;
    }
}

// ---------------------------------------------------------------- located errors

// One file being read, to locate what is wrong in it.
typedef struct Reader {
    Source src;
    Diag *diag;
} Reader;

static bool fail_at(Reader *r, size_t offset, const char *hint, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static bool fail_at(Reader *r, size_t offset, const char *hint, const char *fmt, ...) {
    char message[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof(message), fmt, ap);
    va_end(ap);
    size_t line, col;
    diag_place_of(r->src.text, r->src.len, offset, &line, &col);
    diag_error(r->diag, STATUS_LESSON_ERROR, &r->src, line, col, 1, "%s", message);
    diag_hint(r->diag, "%s", hint);
    return false;
}

static bool fail_no_byte(Reader *r, size_t at, uint32_t cp) {
    return fail_at(r, at, "GPT-2's files write every byte as one of 256 characters "
                   "(a space as 'Ġ'); is this file a GPT-2 tokenizer's?",
                   "the character U+%04X in this token stands for no byte", cp);
}

// ---------------------------------------------------------------- the vocabulary, a JSON object

static const char JSON_HINT[] =
    "the vocabulary is one JSON object of tokens and their ids, as {\"!\": 0, \"\\\"\": 1, ...}";

// What base's JSON reader found wrong in the vocabulary, in the words of tokens and ids.
static bool fail_json(Reader *r, const JsonCursor *c) {
    size_t at = c->error_at;
    switch (c->error) {
    case JSON_ERROR_MEMORY:
        return diag_no_memory(r->diag);
    case JSON_ERROR_OPEN:
        return fail_at(r, at, JSON_HINT, "the vocabulary should open with '{'");
    case JSON_ERROR_SEPARATOR:
        return fail_at(r, at, JSON_HINT, "a ',' or the closing '}' should be here");
    case JSON_ERROR_KEY:
        return fail_at(r, at, JSON_HINT, "a token in double quotes should be here");
    case JSON_ERROR_COLON:
        return fail_at(r, at, JSON_HINT, "a ':' and the token's id should be here");
    case JSON_ERROR_TRAILING:
        return fail_at(r, at, JSON_HINT, "the vocabulary goes on after its closing '}'");
    case JSON_ERROR_UNCLOSED:
        return fail_at(r, at, "close the token with a double quote",
                       "this token has no closing quote");
    case JSON_ERROR_CONTROL:
        return fail_at(r, at, "JSON writes a control character in a string as \\u00XX",
                       "a control character inside a token");
    case JSON_ERROR_ESCAPE: {
        char x = c->text[at + 1];  // the backslash is inside the token: its closing quote follows
        return fail_at(r, at, "JSON's escapes are \\\" \\\\ \\/ \\b \\f \\n \\r \\t and \\uXXXX",
                       "'\\%c' is not an escape of JSON", x >= 0x20 && x < 0x7F ? x : '?');
    }
    case JSON_ERROR_HEX:
        return fail_at(r, at, "\\u is followed by four hexadecimal digits, as \\u0120",
                       "a \\u escape needs four hexadecimal digits");
    case JSON_ERROR_HIGH_SURROGATE:
    case JSON_ERROR_LOW_SURROGATE:
        return fail_at(r, at, "a high surrogate \\uD800-\\uDBFF is followed by a low one",
                       "this \\u escape is half a character");
    default:  // a number JSON does not allow, as 012
        return fail_at(r, at, JSON_HINT, "%s", c->problem);
    }
}

// The bytes the characters of a token's spelling stand for, into bytes, NUL-terminated, with
// their count in *len; the first character that stands for none in *stray (UINT32_MAX: none).
// False when the spelling is not UTF-8, which its escapes cannot make it (each writes a whole
// character): a byte of the file is not.
static bool token_bytes(const int16_t byte_of[BYTE_CHARS], const char *spelling, size_t n,
                        char *bytes, size_t *len, uint32_t *stray) {
    const unsigned char *u = (const unsigned char *)spelling;
    size_t k = 0;
    uint32_t first = UINT32_MAX;  // here, not in *stray, which every byte written may alias
    for (size_t i = 0; i < n;) {
        uint32_t cp = u[i];
        if (cp < 0x80) {  // most of GPT-2's vocabulary
            i++;
        } else if (cp >= 0xC2 && cp <= 0xDF && i + 1 < n && (u[i + 1] & 0xC0) == 0x80) {
            cp = (cp & 0x1F) << 6 | (u[i + 1] & 0x3F);  // U+0080 to U+07FF: the other bytes'
            i += 2;                                     // characters are among them
        } else if (utf8_len(u + i, n - i) == 0) {
            return false;
        } else {
            cp = utf8_next(spelling, &i);
        }
        int b = cp < BYTE_CHARS ? byte_of[cp] : -1;
        if (b < 0 && first == UINT32_MAX)
            first = cp;
        bytes[k++] = (char)b;
    }
    bytes[k] = '\0';
    *len = k;
    *stray = first;
    return true;
}

// The token at c->at: its characters (JSON's escapes undone) into spelling as UTF-8, and the
// byte each stands for into bytes. A character that stands for no byte is refused at the
// opening quote once the whole string is read, so that a broken escape further on is told
// first.
static bool read_token(const Reading *g, Reader *r, JsonCursor *c, Entry *e, char *spelling,
                       char *bytes) {
    size_t open = c->at, n, len;
    uint32_t stray;
    if (!json_read_string(c, spelling, &n))
        return fail_json(r, c);
    if (!token_bytes(g->byte_of, spelling, n, bytes, &len, &stray)) {
        size_t bad = open + 1 + utf8_end(c->text + open + 1, c->at - open - 2);
        return fail_at(r, bad, "save the vocabulary as UTF-8, as GPT-2's files are",
                       "this byte is not UTF-8");
    }
    if (stray != UINT32_MAX)
        return fail_no_byte(r, open, stray);
    *e = (Entry){.spelling = spelling, .bytes = bytes, .spelling_len = (uint32_t)n,
                 .len = (uint32_t)len, .offset = (uint32_t)open,
                 .hash = hash_more(FNV_START, spelling, n)};
    return true;
}

// The id after a token's colon: a whole number from 0, below TOKENIZER_MAX_TOKENS.
static bool read_id(Reader *r, JsonCursor *c, uint32_t *id) {
    size_t start = c->at;
    const char *t = c->text;
    JsonValue v;
    if (start >= c->len || t[start] < '0' || t[start] > '9')
        return fail_at(r, start, JSON_HINT, "a token's id (a whole number from 0) should be here");
    if (!json_read_number(c, &v))
        return fail_json(r, c);
    size_t digits = start;  // not whole: a fraction, an exponent, or more than 64 bits count
    while (!v.whole && digits < c->at && t[digits] >= '0' && t[digits] <= '9')
        digits++;
    if (!v.whole && digits < c->at)
        return fail_at(r, start, JSON_HINT, "a token's id (a whole number from 0) should be here");
    if (!v.whole || v.count >= TOKENIZER_MAX_TOKENS)
        return fail_at(r, start, "ids count the tokens from 0",
                       "this id is larger than any vocabulary's (%zu tokens at most)",
                       TOKENIZER_MAX_TOKENS);
    *id = (uint32_t)v.count;
    return true;
}

static bool more_entries(Reading *g) {
    if (g->n < g->cap)
        return true;
    size_t cap = g->cap ? 2 * g->cap : 1024;
    Entry *more = util_realloc(g->entry, cap * sizeof(*more));
    if (!more)
        return diag_no_memory(g->diag);
    g->entry = more;
    g->cap = cap;
    return true;
}

// One "token": id entry after another, kept in file order.
static bool read_entries(Reading *g, Reader *r) {
    JsonCursor c = {.text = r->src.text, .len = r->src.len};
    char *spelling = g->spellings, *bytes = g->bytes;
    if (!json_open(&c, '{'))
        return fail_json(r, &c);
    while (json_next_item(&c, '}', g->n)) {
        if (!more_entries(g))
            return false;
        Entry *e = &g->entry[g->n];
        if (!read_token(g, r, &c, e, spelling, bytes))
            return false;
        spelling += e->spelling_len;  // a token's spelling and bytes are never longer than
        bytes += e->len + 1;          // it is in quotes: the blocks hold the whole file
        if (!json_colon(&c))
            return fail_json(r, &c);
        if (!read_id(r, &c, &e->id))
            return false;
        if (++g->n > TOKENIZER_MAX_TOKENS)
            return fail_at(r, e->offset, "GPT-2's vocabulary has 50,257 tokens",
                           "more than %zu tokens", TOKENIZER_MAX_TOKENS);
    }
    if (c.error || !json_end(&c))
        return fail_json(r, &c);
    if (g->n == 0)
        return fail_at(r, 0, "GPT-2's vocabulary has a token for each of the 256 bytes and more",
                       "the vocabulary has no tokens");
    return true;
}

// The entries by id and by spelling, each id and each token once, and a token for every byte.
static bool index_entries(Reading *g, Reader *r) {
    BpeTables *t = g->t;
    size_t n = g->n;
    t->n_tokens = n;
    t->token = arena_array(g->arena, n, sizeof(*t->token));
    t->token_len = arena_array(g->arena, n, sizeof(*t->token_len));
    g->entry_of = util_malloc(n * sizeof(*g->entry_of));
    g->slot_cap = table_capacity(n);
    g->slot = util_calloc(g->slot_cap, sizeof(*g->slot));
    if (!t->token || !t->token_len || !g->entry_of || !g->slot)
        return diag_no_memory(g->diag);
    for (size_t k = 0; k < n; k++) {
        const Entry *e = &g->entry[k];
        if (e->id >= n)
            return fail_at(r, e->offset, "ids count the tokens from 0 with none left out",
                           "id %u is past the last of the vocabulary's %zu tokens", e->id, n);
        if (t->token[e->id])
            return fail_at(r, e->offset, "each token has an id of its own",
                           "id %u is given to two tokens", e->id);
        SpellingSlot *slot = spelling_slot(g, e->hash, e->spelling, e->spelling_len, "", 0);
        if (slot->id)
            return fail_at(r, e->offset, "each token is listed once", "this token is listed twice");
        *slot = (SpellingSlot){.head = spelling_head(e->spelling, e->spelling_len, "", 0),
                               .len = e->spelling_len, .id = e->id + 1};
        g->entry_of[e->id] = e;
        t->token[e->id] = e->bytes;
        t->token_len[e->id] = e->len;
    }
    bool has[256] = {false};
    for (size_t id = 0; id < n; id++) {
        if (t->token_len[id] == 1) {  // tokens are unique: one token of each byte at most
            unsigned char b = (unsigned char)t->token[id][0];
            t->byte_id[b] = (uint32_t)id;
            has[b] = true;
        }
    }
    for (unsigned b = 0; b < 256; b++)
        if (!has[b])
            return fail_at(r, 0, "a byte-level vocabulary has a token for each of the 256 bytes, "
                           "so that any text can be encoded",
                           "the vocabulary has no token for the byte 0x%02X", b);
    return true;
}

static bool read_vocab(Reading *g, Reader *r) {
    // Every spelling and every token's bytes with its NUL fit in the file's length.
    g->spellings = util_malloc(r->src.len + 1);
    g->bytes = arena_alloc(g->arena, r->src.len + 1);
    if (!g->spellings || !g->bytes)
        return diag_no_memory(g->diag);
    return read_entries(g, r) && index_entries(g, r);
}

// ---------------------------------------------------------------- the merges, a line each

static const char MERGES_HINT[] =
    "each line of the merges file is two tokens and a space between them, as 'Ġ t'";

// The id of a token of the merges file, by its spelling there; why it is none, when not
// found: a character that stands for no byte, or a token the vocabulary does not have.
static bool merge_token(const Reading *g, Reader *r, size_t at, size_t len, uint64_t *hash,
                        uint32_t *id) {
    const char *s = r->src.text + at;
    *hash = hash_more(FNV_START, s, len);
    const SpellingSlot *slot = spelling_slot(g, *hash, s, len, "", 0);
    if (slot->id) {
        *id = slot->id - 1;
        return true;
    }
    for (size_t i = 0; i < len;) {
        uint32_t cp = utf8_next(s, &i);
        if (cp >= BYTE_CHARS || g->byte_of[cp] < 0)
            return fail_no_byte(r, at, cp);
    }
    return fail_at(r, at, "the merges and the vocabulary must be the same tokenizer's",
                   "this token is not in the vocabulary");
}

// Line number line (from 1) of two tokens, start to stop (its end, without \r or \n), as the
// next merge.
static bool read_merge_line(Reading *g, Reader *r, size_t start, size_t stop, size_t line) {
    const char *t = r->src.text;
    BpeTables *tb = g->t;
    size_t at[3], n_at[3], parts = 0;
    for (size_t i = start; i < stop;) {
        while (i < stop && (t[i] == ' ' || t[i] == '\t'))
            i++;
        if (i == stop)
            break;
        size_t b = i;
        while (i < stop && t[i] != ' ' && t[i] != '\t')
            i++;
        if (parts < 3) {
            at[parts] = b;
            n_at[parts] = i - b;
        }
        parts++;
    }
    if (parts != 2)
        return fail_at(r, parts > 2 ? at[2] : start, MERGES_HINT,
                       "a merge is two tokens; this line has %zu", parts);
    uint32_t left, right;
    uint64_t left_hash, right_hash;
    if (!merge_token(g, r, at[0], n_at[0], &left_hash, &left) ||
        !merge_token(g, r, at[1], n_at[1], &right_hash, &right))
        return false;
    // GPT-2's vocabulary lists the tokens its merges make in the merges' order, after the 256
    // bytes: the token after the one the last line made is tried first, and only when it is
    // not the one is the pair's spelling looked up ("a" + "t" is spelt "at": its hash is the
    // left's continued over the right's spelling).
    uint32_t merged = g->last_merged + 1;
    const Entry *next = merged < tb->n_tokens ? g->entry_of[merged] : NULL;
    if (!next || next->spelling_len != n_at[0] + n_at[1] ||
        memcmp(next->spelling, t + at[0], n_at[0]) != 0 ||
        memcmp(next->spelling + n_at[0], t + at[1], n_at[1]) != 0) {
        const SpellingSlot *slot = spelling_slot(g, hash_more(left_hash, t + at[1], n_at[1]),
                                                 t + at[0], n_at[0], t + at[1], n_at[1]);
        if (!slot->id)
            return fail_at(r, at[0], "a merge makes a token of the vocabulary from two",
                           "the two tokens together are not in the vocabulary");
        merged = slot->id - 1;
    }
    g->last_merged = merged;
    uint64_t pair = (uint64_t)left << 32 | right;
    BpeMerge *slot = merge_slot(tb, pair);
    if (slot->pair == pair)
        return fail_at(r, at[0], "each merge is listed once",
                       "this merge is listed already, at line %u", slot->rank);
    *slot = (BpeMerge){.pair = pair, .rank = (uint32_t)line, .merged = merged};
    tb->n_merges++;
    return true;
}

static bool read_merges(Reading *g, Reader *r) {
    const char *t = r->src.text;
    size_t len = r->src.len;
    BpeTables *tb = g->t;
    size_t bad = utf8_end(t, len);
    if (bad != len)
        return fail_at(r, bad, "save the merges as UTF-8, as GPT-2's are", "this byte is not UTF-8");
    size_t lines = 1;
    for (const char *nl = memchr(t, '\n', len); nl; nl = memchr(nl + 1, '\n', len - (size_t)(nl + 1 - t)))
        lines++;
    tb->merges_cap = table_capacity(lines);
    tb->merges = arena_array(g->arena, tb->merges_cap, sizeof(*tb->merges));
    if (!tb->merges)
        return diag_no_memory(g->diag);
    for (size_t i = 0; i < tb->merges_cap; i++)
        tb->merges[i].pair = UINT64_MAX;
    size_t line = 0;
    for (size_t start = 0; start < len; line++) {
        const char *nl = memchr(t + start, '\n', len - start);
        size_t end = nl ? (size_t)(nl - t) : len, stop = end;
        if (stop > start && t[stop - 1] == '\r')
            stop--;
        // The first line may name the format ("#version: 0.2"); empty lines are nothing.
        bool skip = (line == 0 && stop - start >= 8 && memcmp(t + start, "#version", 8) == 0) ||
                    stop == start;
        if (!skip && !read_merge_line(g, r, start, stop, line + 1))
            return false;
        start = end + 1;
    }
    return true;
}

bool bpe_files_read(BpeTables *t, Arena *arena, const Source *vocab, const Source *merges,
                    Diag *diag) {
    *t = (BpeTables){0};
    Reading g = {.t = t, .arena = arena, .diag = diag, .last_merged = 255};
    byte_of_char_table(g.byte_of);
    Reader rv = {.src = *vocab, .diag = diag}, rm = {.src = *merges, .diag = diag};
    bool ok = read_vocab(&g, &rv) && read_merges(&g, &rm);
    util_free(g.entry);
    util_free(g.entry_of);
    util_free(g.slot);
    util_free(g.spellings);
    return ok;
}
