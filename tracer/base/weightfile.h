// weightfile: tensors in NumPy's .npy files and in .safetensors files, memory-mapped so that a
// value is read from the disk only when it is widened. The parsers take bytes and report the
// first problem in a reader's words; the lesson locates it.
//
//     char problem[WEIGHT_PROBLEM_MAX];
//     WeightFile *f = weight_open("model.safetensors", WEIGHT_SAFETENSORS, problem, sizeof(problem));
//     const WeightTensor *t = f ? weight_find(f, "wte.weight") : NULL;
//     if (t) weight_widen(f, t, 0, t->count, out);   // out: t->count doubles, in C order
//     weight_close(f);
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

#define WEIGHT_MAX_RANK 8
#define WEIGHT_PROBLEM_MAX 256
// A safetensors header is at most this long (the format's own limit), so that a length read
// from a broken file never asks for more.
#define WEIGHT_MAX_HEADER ((size_t)100 << 20)

typedef enum WeightFormat {
    WEIGHT_NPY,
    WEIGHT_SAFETENSORS,
} WeightFormat;

typedef enum WeightDtype {
    WEIGHT_F64,
    WEIGHT_F32,
    WEIGHT_F16,
    WEIGHT_BF16,
    WEIGHT_I64,
    WEIGHT_I32,
    WEIGHT_UNSUPPORTED,  // the file may hold it; a lesson cannot use it
} WeightDtype;

typedef struct WeightTensor {
    const char *name;        // safetensors: its key; .npy: ""
    WeightDtype dtype;
    const char *dtype_name;  // as the file writes it ("<f4", "BF16")
    bool big_endian;
    bool fortran;            // .npy with fortran_order: True (the first axis varies fastest)
    size_t rank;
    size_t dim[WEIGHT_MAX_RANK];
    size_t count;            // values: the product of dim
    size_t begin, end;       // its bytes in the file
} WeightTensor;

typedef struct WeightFile {
    WeightFormat format;
    const unsigned char *bytes;
    size_t len;
    WeightTensor *tensors;  // in the order of the file's header
    size_t n_tensors;
    Arena *arena;
    void *map;  // the mapping to unmap (NULL when the file is empty or bytes came from the caller)
} WeightFile;

// Read the header of `bytes` into f (whose arena is set; bytes stay the caller's). False with a
// problem ("out of memory" when memory ran out).
bool weight_parse(WeightFile *f, WeightFormat format, const unsigned char *bytes, size_t len,
                  char *problem, size_t cap);
// Map a file and read its header. NULL with a problem; *err is errno when the file could not
// be opened or mapped (0 when its bytes are wrong).
WeightFile *weight_open(const char *path, WeightFormat format, char *problem, size_t cap, int *err);
void weight_close(WeightFile *f);  // accepts NULL

const WeightTensor *weight_find(const WeightFile *f, const char *name);  // NULL when absent
size_t weight_dtype_size(WeightDtype dtype);  // bytes of one value; 0 when unsupported

// Values first .. first + n - 1 of t in C order (the last axis fastest), widened to double
// exactly.
void weight_widen(const WeightFile *f, const WeightTensor *t, size_t first, size_t n, double *out);
// The first of those values that a lesson cannot hold: a NaN, or an integer beyond 2^53 that a
// double would round. SIZE_MAX when there is none.
size_t weight_find_unfit(const WeightFile *f, const WeightTensor *t, size_t first, size_t n);

// The seam where the fast layer reads values a run at a time instead of one at a time
// (fast/widen.c), with the same results. Each function does what the one above of its name
// does and returns true, or returns false for a tensor it does not take, which the plain loops
// then read. NULL (the reference): the plain loops read every tensor.
typedef struct WeightReader {
    bool (*widen)(const WeightFile *f, const WeightTensor *t, size_t first, size_t n, double *out);
    bool (*find_unfit)(const WeightFile *f, const WeightTensor *t, size_t first, size_t n, size_t *at);
} WeightReader;
void weight_install_reader(const WeightReader *reader);
