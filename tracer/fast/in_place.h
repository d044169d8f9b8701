// in_place: stages read in place rather than copied, for the fast layer's schedule. A layout
// operation (.T, split_heads) that nothing prints, read only by matrix products, is a view of
// its input's values (tensor.h); a product that nothing prints, read only by merge_heads,
// writes its values straight into merge_heads' result. The bits are the same either way (the
// product sums each element in the same order wherever it reads and writes), and so are the
// notes: a node is read in place only when its values are all finite, where a layout
// operation or a product has nothing to note; otherwise it is computed as any other.
//
//     InPlace ip;
//     in_place_init(&ip, plan, keep, explained);      // false: out of memory
//     Tensor *v = in_place_value(&ip, &node, &made);   // made false: compute as usual
//     in_place_finish(&ip, plan);
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "plan.h"
#include "schedule.h"
#include "tensor.h"

// How a node gets its values.
typedef enum NodeMode {
    MODE_COMPUTE,
    MODE_VIEW,  // a view of its input
    MODE_INTO,  // a product written into its merge_heads reader's result
} NodeMode;

typedef struct InPlace {
    NodeMode *mode;    // by node
    size_t *merge;     // MODE_INTO: the merge_heads node it writes into
    Tensor **pending;  // a merge_heads result its product has already written, by node
} InPlace;

// Each node's mode, given the nodes kept to the end (keep) and those whose work is shown
// (explained). False when memory runs out.
bool in_place_init(InPlace *ip, const Plan *plan, const bool *keep, const bool *explained);
// Node n->i's values read in place, or already written by the product it merges: *made false
// to compute them as usual. NULL with *made true when memory runs out or the product fails.
Tensor *in_place_value(InPlace *ip, const ScheduleNode *n, bool *made);
// Free the modes, and any merge written ahead that a failed run never reached.
void in_place_finish(InPlace *ip, const Plan *plan);
