// train_cache: a training's result kept in a file, named by the exact content that determines
// it, so that a lesson traced again, or another lesson that trains the same model on the same
// data, starts at once with the same bits as a fresh training.
//
// The name is a SHA-256 digest of: the program itself (its own file, so that a tracer built
// from other code never reads another's results), the lesson's YAML with the text that only
// narrates left out (titles, narration, labels, documents, claims, quizzes, what to show), and
// for every node the loss is computed from, its name, kind, operation and shape, and the
// values of its givens and constants (those read from files or from --text included). What a
// file holds is checked whole (its own digest at its end) before anything is taken from it:
// a file that is cut short, changed or of another version is passed over, and training runs.
// It holds the trained values, the loss at every step and, when a text is held out for
// validation, the validation losses (the counting baselines are worked out again: they
// depend on the text alone).
//
// Two tracers that need the same training at once (two terminals, or tests run side by side)
// train it once: the one that finds no file takes the key's lock, and the other waits for it,
// then reads what it stored.
//
//     uint8_t key[SHA256_BYTES];
//     if (train_cache_key(lesson, plan, needed, values, loss, key) &&
//         train_cache_load(dir, key, record, trained, n_trained)) ... no training needed
//     int lock = train_cache_lock(dir, key);
//     if (train_cache_load(...)) ... trained meanwhile by another tracer
//     ... else train, then train_cache_store(dir, key, record, trained, n_trained);
//     train_cache_unlock(lock);
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lesson.h"
#include "plan.h"
#include "sha256.h"
#include "tensor.h"
#include "trace.h"

// The key of a training: nodes 0..loss of plan, needed[i] those the loss is computed from,
// values[i] their values before the first step. False when the program's own file cannot be
// read (then nothing is cached).
bool train_cache_key(const Lesson *lesson, const Plan *plan, const bool *needed, Tensor *const *values, size_t loss,
                     uint8_t key[SHA256_BYTES]);

// The training stored under key in dir, if there is one whole: record's steps_done, losses
// and stopped (in its arena), and the values of each trained tensor (their shapes must be
// those stored). False, with nothing changed, when there is none or it does not fit.
bool train_cache_load(const char *dir, const uint8_t key[SHA256_BYTES], TraceTraining *record, Tensor *const *trained,
                      size_t n_trained);

// Keep a training under key in dir (made if missing, with its parents): written into a file
// of its own, then renamed into place, so that a reader never sees half of it. A cache that
// cannot be written is passed over: training has already run.
void train_cache_store(const char *dir, const uint8_t key[SHA256_BYTES], const TraceTraining *record,
                       Tensor *const *trained, size_t n_trained);

// Wait until no other tracer is training under key in dir, then hold the key until
// train_cache_unlock: the lock is a file beside the training's (KEY.lock, empty, left in
// place), locked with flock, so a tracer that ends without unlocking releases it too. -1 when
// the lock cannot be taken (a folder that cannot be written, say): then training runs unlocked.
int train_cache_lock(const char *dir, const uint8_t key[SHA256_BYTES]);

// Release what train_cache_lock took (nothing for -1).
void train_cache_unlock(int lock);
