// weightfile: tensors in NumPy's .npy files and in .safetensors files. Only a file's header is
// read when it is opened; its values are read from the disk when they are widened, a block at a
// time. The parsers take bytes and report the first problem in a reader's words; the lesson
// locates it.
//
//     char problem[WEIGHT_PROBLEM_MAX];
//     WeightFile *f = weight_open("model.safetensors", WEIGHT_SAFETENSORS, problem, sizeof(problem), &err);
//     const WeightTensor *t = f ? weight_find(f, "wte.weight") : NULL;
//     if (t) err = weight_widen(f, t, 0, t->count, out);   // out: t->count doubles, in C order
//     weight_close(f);
//
// The values are read (pread), not mapped: a file cut short while the tracer reads it (numpy
// writing it again) is an error that weight_widen returns, where reading a mapping past the
// file's new end would end the program with SIGBUS.
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

#define WEIGHT_MAX_RANK 8
#define WEIGHT_PROBLEM_MAX 256
// A header is at most this long (a safetensors header's own limit; an .npy header is a line), so
// that a length read from a broken file never asks for more.
#define WEIGHT_MAX_HEADER ((size_t)100 << 20)
// Values are read from a file in blocks of this many bytes.
#define WEIGHT_READ_BLOCK ((size_t)64 << 10)

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
    const unsigned char *bytes;  // the whole file, when weight_parse's caller holds it; else NULL
    size_t len;                  // the file's length, in bytes
    int fd;                      // weight_open's file, its values read from it (-1 with bytes)
    WeightTensor *tensors;       // in the order of the file's header
    size_t n_tensors;
    Arena *arena;
} WeightFile;

// Read the header of `bytes`, the whole file, into f (whose arena is set; bytes stay the
// caller's). False with a problem ("out of memory" when memory ran out).
bool weight_parse(WeightFile *f, WeightFormat format, const unsigned char *bytes, size_t len,
                  char *problem, size_t cap);
// Open a file (a regular file only: see files.h) and read its header. NULL with a problem; *err
// is why the file could not be opened or read (an error of files.h: an errno value, a FILES_*
// value), 0 when its bytes are wrong.
WeightFile *weight_open(const char *path, WeightFormat format, char *problem, size_t cap, int *err);
void weight_close(WeightFile *f);  // accepts NULL; closes the file

const WeightTensor *weight_find(const WeightFile *f, const char *name);  // NULL when absent
size_t weight_dtype_size(WeightDtype dtype);  // bytes of one value; 0 when unsupported

// Values first .. first + n - 1 of t in C order (the last axis fastest), widened to double
// exactly. 0, or why they could not be read (an errno value, or FILES_CUT_SHORT of files.h).
int weight_widen(const WeightFile *f, const WeightTensor *t, size_t first, size_t n, double *out);
// The first of those values that a lesson cannot hold, in *at: a NaN, or an integer beyond 2^53
// that a double would round; SIZE_MAX when there is none. 0, or why they could not be read.
int weight_find_unfit(const WeightFile *f, const WeightTensor *t, size_t first, size_t n, size_t *at);

// The seam where the fast layer reads values a run at a time instead of one at a time
// (fast/widen.c), with the same results. Each function does what the one above of its name
// does, for n values of t stored one after the other at `bytes` (*at counted from the first of
// them), and returns true, or returns false for a tensor it does not take, which the plain
// loops then read. NULL (the reference): the plain loops read every tensor.
typedef struct WeightReader {
    bool (*widen)(const WeightTensor *t, const unsigned char *bytes, size_t n, double *out);
    bool (*find_unfit)(const WeightTensor *t, const unsigned char *bytes, size_t n, size_t *at);
} WeightReader;
void weight_install_reader(const WeightReader *reader);
