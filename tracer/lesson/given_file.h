// given_file: a given whose values are a tensor of a weight file, as in
//
//     given:
//       wte: {file: model.safetensors, tensor: wte.weight, shape: [50257, 768]}
//       Q: {file: Q.npy, slice: [0, 4]}               # rows 0 to 3
//       W_K: {file: model.safetensors, tensor: h.0.attn.c_attn.weight, slice: [all, [768, 1536]]}
//       n_head: {file: config.json}      # the number config.json holds under "n_head"
//
// The file is found beside the lesson, or in the folder of --weights; each file is opened and
// its header read once per lesson, and its values are widened when the given is computed.
#pragma once

#include "tensor.h"
#include "weightfile.h"
#include "yamldoc.h"

// A .json file a number is read from (a model's config.json) is read whole, up to this size.
#define GIVEN_JSON_MAX_BYTES ((size_t)16 << 20)

typedef struct GivenFiles GivenFiles;

GivenFiles *given_files_create(void);  // NULL when memory runs out
void given_files_destroy(GivenFiles *files);  // accepts NULL; unmaps every file

// The folder a lesson's files are read from instead of the lesson's own (NULL: the lesson's).
// Set once, from the command line, before any lesson is loaded.
void given_files_set_folder(const char *folder);
const char *given_files_folder(void);  // that folder, or NULL

typedef struct GivenFileRequest {
    const char *lesson_path;
    const char *name;     // the given's name: the key of its number in a .json file
    const Node *file;     // file: its scalar names the file
    const Node *tensor;   // tensor: (NULL when absent)
    const Node *slice;    // slice: (NULL when absent) ...
    // ... read by the loader: the first n_slice axes, each whole or begin .. end - 1 (the
    // axes after them whole); slice_at[i] is where axis i's part is written
    size_t n_slice;
    bool slice_whole[WEIGHT_MAX_RANK];
    size_t slice_begin[WEIGHT_MAX_RANK], slice_end[WEIGHT_MAX_RANK];
    const Node *slice_at[WEIGHT_MAX_RANK];
    const Node *shape;    // shape: (NULL when absent) ...
    const Shape *want;    // ... read by the loader
} GivenFileRequest;

typedef struct GivenFileTensor {
    const WeightFile *file;
    const Node *file_node;       // the lesson's file: (its text names the file)
    const WeightTensor *tensor;  // NULL for a number of a .json file ...
    double number;               // ... which is this
    bool whole;                  // written as a whole number: a count, like n_head
    size_t begin[TENSOR_MAX_RANK];  // where the values taken start on each axis ...
    Shape shape;                    // ... and how many are taken on each
} GivenFileTensor;

// What is wrong, at which node of the lesson, with the status to report it with.
typedef struct GivenFileProblem {
    const Node *at;
    int status;
    bool out_of_memory;  // then only that is to be reported
    bool reported;       // a file whose error an earlier given reported: nothing more to say
    char message[WEIGHT_PROBLEM_MAX + 256];
    char hint[WEIGHT_PROBLEM_MAX];
} GivenFileProblem;

// The values a given takes from its tensor, widened to doubles in C order (out: the shape's
// size). False with a problem when they can no longer be read: the file was cut short, or
// could not be read, after it was opened.
bool given_file_widen(const GivenFileTensor *g, double *out, GivenFileProblem *problem);

// Find, open and check the tensor a given names. False with a problem.
bool given_file_load(GivenFiles *files, const GivenFileRequest *req, GivenFileTensor *out,
                     GivenFileProblem *problem);

// The problem as a located error of the lesson in src; returns its status.
int given_file_report(const GivenFileProblem *problem, const Source *src, Diag *diag);
