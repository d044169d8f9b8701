// train_draw: each drawn batch, from the generator or the rows written out.
#include "train_draw.h"

#include <string.h>

#include "kernel.h"

void train_draw_batch(Tensor *out, const LessonTrainData *d, size_t step) {
    size_t rows = out->shape.dim[0], n = out->shape.dim[1];
    if (d->draw == TRAIN_DRAW_SEQUENCES) {
        for (size_t r = 0; r < rows; r++)
            memcpy(out->data + r * n, d->rows + ((step * rows + r) % d->n_rows) * n, n * sizeof(double));
        return;
    }
    kernel_fill_tokens(out, d->vocab, d->seed + step);
    if (d->draw == TRAIN_DRAW_REPEAT)
        for (size_t r = 0; r < rows; r++)
            memcpy(out->data + r * n + n / 2, out->data + r * n, n / 2 * sizeof(double));
    if (d->draw == TRAIN_DRAW_SHIFTED) {
        // Each shift from lo to hi comes in turn, row after row and step after step, so that
        // every batch holds them all nearly equally often and no position tells the shift.
        size_t count = d->shift_hi - d->shift_lo + 1;
        for (size_t r = 0; r < rows; r++) {
            size_t shift = d->shift_lo + (r + step % count) % count;
            double *row = out->data + r * n;
            for (size_t j = shift; j < n; j++)
                row[j] = row[j - shift];  // id j is the one `shift` places back: a copy, then a copy of it
        }
    }
}
