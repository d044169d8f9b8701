// ieee: what the trace says when IEEE arithmetic leaves the numbers a page can show. The first
// inf made from finite numbers is named with its operands ("exp(800) overflows: the largest
// double is about 1.8e308"), a nan with the operation that made it ("inf / inf", "inf - inf",
// "0 * inf", the log of a negative number), and the first stage that only carries a nan on
// says so once; later ones say nothing more.
//
//     IeeeWatch watch = {0};                 // one per run of a lesson
//     const char *note;
//     if (!ieee_note(&watch, op, out, in, n_in, "weights", arena, &note)) ...  // out of memory
//     if (note) ...                          // a line for the stage's notes
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "op.h"
#include "tensor.h"
#include "util.h"

// Where the lesson's first nan was made, so stages that inherit it can say where from.
typedef struct IeeeWatch {
    const char *nan_stage;    // the stage that made it; NULL before any
    bool inherited_said;      // a stage has said that it only carries the nan on
} IeeeWatch;

// The note for one stage of operation op (out from the n_in inputs in) into *note, or NULL
// when its numbers are ordinary, or inherit what was already said. The text lives in arena.
// False when memory runs out.
bool ieee_note(IeeeWatch *watch, const OpDef *op, const Tensor *out, const Tensor *const *in, size_t n_in,
               const char *stage, Arena *arena, const char **note);
