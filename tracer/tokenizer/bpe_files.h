// bpe_files: GPT-2's vocabulary and merges files read into the tables its byte-level BPE
// encodes with: each token's bytes by id, the id of each single byte, and each listed pair of
// ids with its rank and the id it merges into.
//
//     BpeTables t;
//     Source vocab = {"vocab.json", text, len}, merges = {"merges.txt", text2, len2};
//     if (!bpe_files_read(&t, arena, &vocab, &merges, &diag)) ...   // a located error
//     const BpeMerge *m = bpe_merge_find(&t, t.byte_id['a'], t.byte_id['t']);  // "at", or NULL
//
// The vocabulary is one flat JSON object of tokens and their ids, read a piece at a time with
// base's JSON reader (no tree of JSON values): every token's bytes go into one block of the
// arena, and the tokens are looked up by their spelling in the files while the merges are
// read, in a table sized once.
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "util.h"

// Files larger than this are not a tokenizer's (GPT-2's vocabulary is 1 MB, its merges 0.5 MB).
#define TOKENIZER_MAX_FILE_BYTES ((size_t)64 << 20)
// Ids run from 0 to the number of tokens - 1; more tokens than this is not a vocabulary.
#define TOKENIZER_MAX_TOKENS ((size_t)1 << 24)

// A listed pair of tokens, in the merges' hash table.
typedef struct BpeMerge {
    uint64_t pair;    // left id << 32 | right id; UINT64_MAX: an empty slot
    uint32_t rank;    // its line in the merges file: a merge listed earlier is made first
    uint32_t merged;  // the id of left + right
} BpeMerge;

typedef struct BpeTables {
    const char **token;  // by id: its bytes, NUL-terminated (a token may hold a 0 byte too)
    size_t *token_len;
    size_t n_tokens;
    BpeMerge *merges;  // by pair, a power of two of slots
    size_t merges_cap, n_merges;
    uint32_t byte_id[256];  // the token of each single byte
} BpeTables;

// Reads both files into t, its tables in arena. False with a located error in diag (or out of
// memory) when either is broken.
bool bpe_files_read(BpeTables *t, Arena *arena, const Source *vocab, const Source *merges,
                    Diag *diag);
// The merge of the pair (left, right); NULL when the merges do not list it.
const BpeMerge *bpe_merge_find(const BpeTables *t, uint32_t left, uint32_t right);
