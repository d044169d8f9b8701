// notation: format_style's two passes over a tensor, each a block of values per item.
#include "notation.h"

#include <math.h>

#include "backend.h"

typedef struct NotationJob {
    const double *values;
    BackendBlocks blocks;
    double largest;  // the second pass's: the largest of every block
    double found[BACKEND_MAX_BLOCKS];
} NotationJob;

static void largest_blocks(void *ctx, size_t begin, size_t end) {
    NotationJob *j = ctx;
    for (size_t b = begin; b < end; b++)
        j->found[b] = format_largest(j->values + b * j->blocks.size, backend_block_length(&j->blocks, b));
}

static void smallest_blocks(void *ctx, size_t begin, size_t end) {
    NotationJob *j = ctx;
    for (size_t b = begin; b < end; b++)
        j->found[b] = format_smallest(j->values + b * j->blocks.size, backend_block_length(&j->blocks, b), j->largest);
}

FormatStyle notation_of(const Tensor *t, int digits) {
    NotationJob j;  // found is written block by block before it is read: not zeroed first
    j.values = t->data;
    j.blocks = backend_blocks(t->size);
    // the largest of the blocks' largest, the smallest of their smallest: a max and a min are
    // the same whichever block is read first
    backend_for(j.blocks.count, 1, largest_blocks, &j);
    double largest = 0;
    for (size_t b = 0; b < j.blocks.count; b++)
        largest = fmax(largest, j.found[b]);
    double smallest = INFINITY;
    if (format_style_reads_smallest(largest, t->is_count)) {
        j.largest = largest;
        backend_for(j.blocks.count, 1, smallest_blocks, &j);
        for (size_t b = 0; b < j.blocks.count; b++)
            smallest = fmin(smallest, j.found[b]);
    }
    return format_style_of(largest, smallest, digits, t->is_count);
}
