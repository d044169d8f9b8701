// train_baseline: what counting bytes scores on a text's held-out tail, the mark a trained
// model's validation loss is read against. Two models are fitted on the bytes before the tail
// (the part training draws from), each mixing its counts with the next shorter model's
// probabilities by Witten-Bell interpolation (no constant to choose: a context followed by many
// different bytes leans more on the shorter model), down to add-one byte counts:
//
//     unigram  P1(c)       = (count(c) + 1) / (fit + 256)
//     bigram   P2(c | b)   = (count(b c) + T(b) P1(c)) / (count(b) + T(b))
//     trigram  P3(c | a b) = (count(a b c) + T(a b) P2(c | b)) / (count(a b) + T(a b))
//
// with T(x) the number of different bytes that follow the context x, and a context never seen
// taking the shorter model's probability alone; a context is counted once for each byte that
// follows it in the training part, and fit is the training part's length. Each model is scored
// in nats per byte, -(1 / held) x the sum of log P over the tail's bytes in order,
// each byte's context the bytes before it (the first of the tail's read from the training part).
//
//     TrainBaseline b;
//     if (!train_baseline(text, len, held, &b)) ... out of memory
//     // b.bigram, b.trigram
#pragma once

#include <stdbool.h>
#include <stddef.h>

typedef struct TrainBaseline {
    double bigram, trigram;  // nats per byte of the tail
} TrainBaseline;

// The baselines of the last `held` bytes of text[0 .. len - 1], fitted on the len - held bytes
// before them (at least 2, and held at least 1); false when out of memory.
bool train_baseline(const unsigned char *text, size_t len, size_t held, TrainBaseline *out);
