// train_baseline: the add-one bigram and trigram scores of a text's held-out tail.
#include "train_baseline.h"

#include <math.h>
#include <stdint.h>

#include "util.h"

#define CONTEXTS (256 * 256)

bool train_baseline(const unsigned char *text, size_t len, size_t held, TrainBaseline *out) {
    size_t fit = len - held;  // the training part: text[0 .. fit - 1]
    // Bigram counts, a row of 256 per context byte, and each row's total.
    uint32_t *pairs = util_calloc(CONTEXTS, sizeof(uint32_t));
    uint32_t *after = util_calloc(256, sizeof(uint32_t));
    // Trigram counts only for the contexts the tail asks about, each a row of 256: a text of
    // 64 MiB may hold every pair of bytes, but a byte of the tail reads one row.
    uint32_t *row_of = util_calloc(CONTEXTS, sizeof(uint32_t));  // 0: not asked; else row + 1
    bool ok = pairs && after && row_of;
    size_t rows = 0;
    for (size_t j = fit; ok && j < len; j++) {
        size_t c = (size_t)text[j - 2] << 8 | text[j - 1];
        if (!row_of[c])
            row_of[c] = (uint32_t)++rows;
    }
    uint32_t *triples = ok ? util_calloc(rows * 256, sizeof(uint32_t)) : NULL;
    uint32_t *context = ok ? util_calloc(rows + 1, sizeof(uint32_t)) : NULL;
    ok = ok && triples && context;
    for (size_t j = 1; ok && j < fit; j++) {
        pairs[(size_t)text[j - 1] << 8 | text[j]]++;
        after[text[j - 1]]++;
        size_t r = j >= 2 ? row_of[(size_t)text[j - 2] << 8 | text[j - 1]] : 0;
        if (r) {
            triples[(r - 1) * 256 + text[j]]++;
            context[r - 1]++;
        }
    }
    // The sums run over the tail in order, so the digits are the same on every run.
    double two = 0, three = 0;
    for (size_t j = fit; ok && j < len; j++) {
        size_t b = text[j - 1], r = row_of[(size_t)text[j - 2] << 8 | text[j - 1]] - 1;
        two += log(((double)pairs[b << 8 | text[j]] + 1) / ((double)after[b] + 256));
        three += log(((double)triples[r * 256 + text[j]] + 1) / ((double)context[r] + 256));
    }
    if (ok)
        *out = (TrainBaseline){.bigram = -two / (double)held, .trigram = -three / (double)held};
    util_free(pairs);
    util_free(after);
    util_free(row_of);
    util_free(triples);
    util_free(context);
    return ok;
}
