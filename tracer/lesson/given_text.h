// given_text: a given whose values are the token ids of a text, as in
//
//     given:
//       tokens: {text: "The cat sat", tokenizer: gpt2/}
//
// The tokenizer's folder (vocab.json and merges.txt, or encoder.json and vocab.bpe) is found
// beside the lesson; the ids become an [n] tensor whose labels are the tokens as text
// (' cat' for GPT-2's 'Ġcat'). The command line can give another text (--text).
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "tokenizer.h"
#include "util.h"

typedef struct GivenText {
    Tokenizer *tokenizer;  // owned: given_text_finish
    double *ids;           // in the arena
    const char **labels;   // in the arena: one per id
    size_t n;
} GivenText;

// Reads the tokenizer in folder (relative to the folder of lesson_path). False with diag set
// when it cannot be read; a problem with no place in a file (a missing folder, say) leaves
// diag->path empty, for the caller to place at the lesson's tokenizer: line.
bool given_text_open(GivenText *gt, const char *lesson_path, const char *folder, Diag *diag);
// Encodes text into gt->ids and gt->labels (in arena). False when text is not UTF-8 (*bad:
// the offset of the first byte that is not) or memory runs out (diag set, *bad = SIZE_MAX).
bool given_text_encode(GivenText *gt, const char *text, size_t len, Arena *arena, size_t *bad,
                       Diag *diag);
void given_text_finish(GivenText *gt);
