// given_text: reads a lesson's tokenizers, each once, and turns a text into ids and labels.
#define _DEFAULT_SOURCE  // realpath
#include "given_text.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "given_file.h"

typedef struct ReadTokenizer {
    char *folder;  // as resolved (realpath), or as written when it cannot be
    Tokenizer *tokenizer;
} ReadTokenizer;

struct GivenTokenizers {
    ReadTokenizer *read;
    size_t n, cap;  // a lesson names a folder or two: a list is enough
};

GivenTokenizers *given_tokenizers_create(void) {
    return util_calloc(1, sizeof(GivenTokenizers));
}

void given_tokenizers_destroy(GivenTokenizers *tokenizers) {
    if (!tokenizers)
        return;
    for (size_t i = 0; i < tokenizers->n; i++) {
        util_free(tokenizers->read[i].folder);
        tokenizer_destroy(tokenizers->read[i].tokenizer);
    }
    util_free(tokenizers->read);
    util_free(tokenizers);
}

size_t given_tokenizers_count(const GivenTokenizers *tokenizers) {
    return tokenizers ? tokenizers->n : 0;
}

// The tokenizer read from dir, reading it unless it was: "gpt2/" and "./gpt2" are one folder.
static Tokenizer *tokenizer_of(GivenTokenizers *tokenizers, const char *dir, Diag *diag) {
    char resolved[PATH_MAX];
    const char *key = realpath(dir, resolved) ? resolved : dir;
    for (size_t i = 0; i < tokenizers->n; i++)
        if (strcmp(tokenizers->read[i].folder, key) == 0)
            return tokenizers->read[i].tokenizer;
    if (tokenizers->n == tokenizers->cap) {
        size_t cap = tokenizers->cap ? 2 * tokenizers->cap : 2;
        ReadTokenizer *more = util_realloc(tokenizers->read, cap * sizeof(*more));
        if (!more) {
            diag_no_memory(diag);
            return NULL;
        }
        tokenizers->read = more;
        tokenizers->cap = cap;
    }
    char *folder = util_strdup(key);
    Tokenizer *tok = folder ? tokenizer_load(dir, diag) : NULL;
    if (!tok) {
        if (!folder)
            diag_no_memory(diag);
        util_free(folder);
        return NULL;
    }
    tokenizers->read[tokenizers->n++] = (ReadTokenizer){.folder = folder, .tokenizer = tok};
    return tok;
}

bool given_text_open(GivenText *gt, GivenTokenizers *tokenizers, const char *lesson_path,
                     const char *folder, Diag *diag) {
    *gt = (GivenText){0};
    StrBuf dir;
    strbuf_init(&dir);
    // As a weight file's, the folder is found in the folder of --weights, else the lesson's.
    const char *slash = lesson_path ? strrchr(lesson_path, '/') : NULL;
    const char *weights = given_files_folder();
    if (folder[0] != '/' && weights) {
        strbuf_puts(&dir, weights);
        strbuf_puts(&dir, "/");
    } else if (folder[0] != '/' && slash) {
        strbuf_append(&dir, lesson_path, (size_t)(slash - lesson_path) + 1);
    }
    strbuf_puts(&dir, folder);
    if (dir.failed || !dir.data) {
        strbuf_finish(&dir);
        return diag_no_memory(diag);
    }
    gt->tokenizer = tokenizer_of(tokenizers, dir.data, diag);
    strbuf_finish(&dir);
    return gt->tokenizer != NULL;
}

bool given_text_encode(GivenText *gt, const char *text, size_t len, Arena *arena, size_t *bad,
                       Diag *diag) {
    *bad = tokenizer_utf8_end(text, len);
    if (*bad != len)
        return false;
    *bad = SIZE_MAX;
    TokenIds ids = {0};
    if (tokenizer_encode(gt->tokenizer, text, len, &ids, diag) != STATUS_OK) {
        token_ids_finish(&ids);  // the ids made before memory ran out
        return false;
    }
    double *values = arena_array(arena, ids.n ? ids.n : 1, sizeof(double));
    const char **labels = arena_array(arena, ids.n ? ids.n : 1, sizeof(char *));
    bool ok = values && labels;
    for (size_t i = 0; ok && i < ids.n; i++) {
        values[i] = ids.ids[i];  // ids are below 2^24: exact as doubles
        ok = (labels[i] = tokenizer_label(gt->tokenizer, ids.ids[i], arena)) != NULL;
    }
    if (ok) {
        gt->ids = values;
        gt->labels = labels;
        gt->n = ids.n;
    }
    token_ids_finish(&ids);
    return ok || diag_no_memory(diag);
}
