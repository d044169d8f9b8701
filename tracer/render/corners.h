// corners: which entries of a large tensor a picture of it shows, as numpy prints one: every
// entry up to a limit, else the first and last few with a gap between. The text and HTML
// renderers both ask here, so that a page and a terminal show the same values.
//
//     size_t idx[CORNERS_ROWS + 1];
//     size_t n = corners_shown(rows, CORNERS_ROWS, CORNERS_EDGE_ROWS, idx);
//     // idx[0..n): the rows shown in order, CORNERS_GAP where the hidden ones are
#pragma once

#include <stddef.h>

// Below these sizes every value is shown; above, the first and last EDGE of them. Of the
// columns, the text trace then prints as many as fit in its width; a web page scrolls them.
enum {
    CORNERS_ROWS = 40,
    CORNERS_EDGE_ROWS = 10,
    CORNERS_COLS = 64,
    CORNERS_EDGE_COLS = 32,
    CORNERS_SLICES = 16,  // matrices of a rank-3 or rank-4 tensor
    CORNERS_EDGE_SLICES = 3,
    CORNERS_SMALL_EDGE = 3,  // show: corners: the first and last three rows and columns
};
#define CORNERS_GAP ((size_t)-1)

// The indices shown along an axis of n entries; idx has room for limit + 1 of them.
size_t corners_shown(size_t n, size_t limit, size_t edge, size_t *idx);
