// given_text: a given whose values are the token ids of a text, as in
//
//     given:
//       tokens: {text: "The cat sat", tokenizer: gpt2/}
//
// The tokenizer's folder (vocab.json and merges.txt, or encoder.json and vocab.bpe) is found
// beside the lesson and read once per lesson; the ids become an [n] tensor whose labels are
// the tokens as text (' cat' for GPT-2's 'Ġcat'). The command line can give another text
// (--text).
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "tokenizer.h"
#include "util.h"

// The tokenizers a lesson has read, each once: a folder named twice (the vocabulary's labels
// and a text, as GPT-2's lesson does) is read the first time and shared after.
typedef struct GivenTokenizers GivenTokenizers;

GivenTokenizers *given_tokenizers_create(void);  // NULL when memory runs out
void given_tokenizers_destroy(GivenTokenizers *tokenizers);  // accepts NULL; frees every one
size_t given_tokenizers_count(const GivenTokenizers *tokenizers);  // how many were read

typedef struct GivenText {
    Tokenizer *tokenizer;  // the lesson's, in its GivenTokenizers: shared, not owned
    double *ids;           // in the arena
    const char **labels;   // in the arena: one per id
    size_t n;
} GivenText;

// The tokenizer in folder (relative to the folder of lesson_path, or of --weights), read
// unless tokenizers has it already. False with diag set when it cannot be read; a problem
// with no place in a file (a missing folder, say) leaves diag->path empty, for the caller to
// place at the lesson's tokenizer: line.
bool given_text_open(GivenText *gt, GivenTokenizers *tokenizers, const char *lesson_path,
                     const char *folder, Diag *diag);
// Encodes text into gt->ids and gt->labels (in arena). False when text is not UTF-8 (*bad:
// the offset of the first byte that is not) or memory runs out (diag set, *bad = SIZE_MAX).
bool given_text_encode(GivenText *gt, const char *text, size_t len, Arena *arena, size_t *bad,
                       Diag *diag);
