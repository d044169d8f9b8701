// train_baseline: the Witten-Bell bigram and trigram scores of a text's held-out tail.
#include "train_baseline.h"

#include <math.h>
#include <stdint.h>

#include "util.h"

#define CONTEXTS (256 * 256)

// Witten-Bell: a context seen n times, followed by t different bytes, gives c its own count out
// of n + t, and t / (n + t) of the next shorter context's probability; a context never seen,
// the shorter one's alone.
static double witten_bell(uint32_t count, uint32_t seen, uint32_t types, double shorter) {
    return seen ? ((double)count + (double)types * shorter) / ((double)seen + (double)types) : shorter;
}

bool train_baseline(const unsigned char *text, size_t len, size_t held, TrainBaseline *out) {
    size_t fit = len - held;  // the training part: text[0 .. fit - 1]
    // Byte counts; bigram counts, a row of 256 per context byte, each row's total and how many
    // different bytes it holds.
    uint32_t *bytes = util_calloc(256, sizeof(uint32_t));
    uint32_t *pairs = util_calloc(CONTEXTS, sizeof(uint32_t));
    uint32_t *after = util_calloc(256, sizeof(uint32_t));
    uint32_t *after_types = util_calloc(256, sizeof(uint32_t));
    // Trigram counts only for the contexts the tail asks about, each a row of 256: a text of
    // 64 MiB may hold every pair of bytes, but a byte of the tail reads one row.
    uint32_t *row_of = util_calloc(CONTEXTS, sizeof(uint32_t));  // 0: not asked; else row + 1
    bool ok = bytes && pairs && after && after_types && row_of;
    size_t rows = 0;
    for (size_t j = fit; ok && j < len; j++) {
        size_t c = (size_t)text[j - 2] << 8 | text[j - 1];
        if (!row_of[c])
            row_of[c] = (uint32_t)++rows;
    }
    uint32_t *triples = ok ? util_calloc(rows * 256, sizeof(uint32_t)) : NULL;
    uint32_t *context = ok ? util_calloc(rows + 1, sizeof(uint32_t)) : NULL;
    uint32_t *context_types = ok ? util_calloc(rows + 1, sizeof(uint32_t)) : NULL;
    ok = ok && triples && context && context_types;
    for (size_t j = 0; ok && j < fit; j++) {
        bytes[text[j]]++;
        if (j == 0)
            continue;
        after_types[text[j - 1]] += pairs[(size_t)text[j - 1] << 8 | text[j]]++ == 0;
        after[text[j - 1]]++;
        size_t r = j >= 2 ? row_of[(size_t)text[j - 2] << 8 | text[j - 1]] : 0;
        if (r) {
            context_types[r - 1] += triples[(r - 1) * 256 + text[j]]++ == 0;
            context[r - 1]++;
        }
    }
    // The sums run over the tail in order, so the digits are the same on every run.
    double two = 0, three = 0;
    for (size_t j = fit; ok && j < len; j++) {
        size_t b = text[j - 1], c = text[j], r = row_of[(size_t)text[j - 2] << 8 | text[j - 1]] - 1;
        double one = ((double)bytes[c] + 1) / ((double)fit + 256);
        double p2 = witten_bell(pairs[b << 8 | c], after[b], after_types[b], one);
        double p3 = witten_bell(triples[r * 256 + c], context[r], context_types[r], p2);
        two += log(p2);
        three += log(p3);
    }
    if (ok)
        *out = (TrainBaseline){.bigram = -two / (double)held, .trigram = -three / (double)held};
    util_free(bytes);
    util_free(pairs);
    util_free(after);
    util_free(after_types);
    util_free(row_of);
    util_free(triples);
    util_free(context);
    util_free(context_types);
    return ok;
}
