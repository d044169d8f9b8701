// corners: the entries of a large tensor that a picture shows.
#include "corners.h"

size_t corners_shown(size_t n, size_t limit, size_t edge, size_t *idx) {
    size_t k = 0;
    if (n <= limit) {
        for (size_t i = 0; i < n; i++)
            idx[k++] = i;
        return k;
    }
    for (size_t i = 0; i < edge; i++)
        idx[k++] = i;
    idx[k++] = CORNERS_GAP;
    for (size_t i = n - edge; i < n; i++)
        idx[k++] = i;
    return k;
}
