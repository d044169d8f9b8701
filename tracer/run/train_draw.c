// train_draw: each drawn batch, from the generator, the rows written out, or a text.
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
    if (d->draw == TRAIN_DRAW_TEXT) {
        // Row r starts at a place drawn uniformly from 0 to len - held - n, the places of a step drawn
        // from seed + step as a row of ids is. They are drawn into the first `rows` values of
        // out, and the rows written from the last: row r overwrites only places of rows r and
        // after, and reads its own first.
        Tensor places = {.shape = {.rank = 1, .dim = {rows}}, .size = rows, .data = out->data};
        kernel_fill_tokens(&places, d->text_len - d->held - n + 1, d->seed + step);
        for (size_t r = rows; r-- > 0;) {
            size_t start = (size_t)out->data[r];
            for (size_t j = 0; j < n; j++)
                out->data[r * n + j] = d->text[start + j];
        }
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

size_t train_validation_batches(const LessonTrainData *d, size_t rows, size_t n) {
    size_t fit = d->held / n / rows;
    return fit < 1 ? 1 : fit > TRAIN_VALIDATION_MAX_BATCHES ? TRAIN_VALIDATION_MAX_BATCHES : fit;
}

void train_validation_batch(Tensor *out, const LessonTrainData *d, size_t b, size_t batches) {
    size_t rows = out->shape.dim[0], n = out->shape.dim[1];
    size_t windows = rows * batches, tail = d->text_len - d->held;
    for (size_t r = 0; r < rows; r++) {
        size_t i = b * rows + r;
        // whole numbers only: i (held - n) / (windows - 1) < 2^26 x 2^23, far from overflow
        size_t start = tail + (windows > 1 ? i * (d->held - n) / (windows - 1) : 0);
        for (size_t j = 0; j < n; j++)
            out->data[r * n + j] = d->text[start + j];
    }
}
