// gradcheck: a gradient stage checked against central finite differences of the forward pass.
//
//     char note[256];
//     if (!gradcheck_note(plan, trace, i, values, &diag, note, sizeof(note))) { /* no memory */ }
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "diag.h"
#include "plan.h"
#include "tensor.h"
#include "trace.h"

// How many elements of a gradient the finite-difference check samples at most (all of them
// when the tensor holds no more than BACKWARD_CHECK_ALL).
#define BACKWARD_CHECK_SAMPLES 16
#define BACKWARD_CHECK_ALL 64
// The most work (multiply-adds plus values computed) the check of one gradient stage may take,
// about a tenth of a second: fewer elements are checked past it, none past twice a forward pass.
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define BACKWARD_CHECK_WORK ((size_t)1 << 18)
#define BACKWARD_CHECK_LESSON_WORK ((size_t)1 << 20)
#else
#define BACKWARD_CHECK_WORK ((size_t)1 << 26)
// All the checks of one lesson together, a few seconds: later stages go unchecked past it.
#define BACKWARD_CHECK_LESSON_WORK ((size_t)1 << 27)
#endif

// Checks gradient node i against central finite differences of the forward pass (run again
// from the perturbed tensor to y) and writes a note for the trace: "finite differences agree:
// largest relative difference 3e-10 (all 12 elements)". An element where x or the difference
// is not finite cannot be checked: it is left out, and the note names the first ("2 of 3
// elements; element 0 left out, where x is -inf and a difference is not a number"). The work
// it does comes off *budget (start it at BACKWARD_CHECK_LESSON_WORK for a lesson). False when
// memory runs out.
bool gradcheck_note(const Plan *plan, Trace *trace, size_t i, Tensor *const *values, size_t *budget, Diag *diag,
                    char *note, size_t cap);

// The central differences of gradient node i's y at the given elements of its x (at most
// BACKWARD_CHECK_ALL of them), into fd: two forward passes per element, one pass at a time.
// False when memory runs out or an operation refuses (diag says why).
bool gradcheck_differences(const Plan *plan, Trace *trace, size_t i, Tensor *const *values, const size_t *elements,
                           size_t count, double *fd, Diag *diag);
