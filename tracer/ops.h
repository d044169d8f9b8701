// ops: the table of operations. One entry per operation says how it is written (a function
// name or an operator), which parameters it takes, its shape rule (infer, at check time),
// what it computes (with the kernel), the facts worth telling a learner about its result
// (notes) and how one element is worked out by hand (explain, written in explain.c beside the
// table). Adding an operation touches the kernel, this table and its explain function; the
// checker and the runner only read the table. The backward pass for the training lesson will add one more
// slot beside compute, its derivative, so that gradients are traced op by op the same way.
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "diag.h"
#include "kernel.h"
#include "tensor.h"
#include "util.h"

#define OP_MAX_PARAMS 5

// Labels of one axis: borrowed strings.
typedef struct Labels {
    const char *const *items;  // NULL: unlabelled
    size_t n;
} Labels;

typedef enum ParamKind {
    PARAM_TENSOR,   // any tensor expression
    PARAM_TENSORS,  // all remaining positional arguments (concat)
    PARAM_NUMBER,   // a number known before running (a literal or a scalar given)
    PARAM_COUNT,    // a whole number >= 1 known before running
    PARAM_AXIS,     // a whole number, negative counts from the end; absent means every axis
    PARAM_FLAG,     // True or False
} ParamKind;

typedef struct OpParam {
    const char *name;
    ParamKind kind;
    bool optional;
    double fallback;  // the value when optional and absent (PARAM_AXIS: absent = all axes)
} OpParam;

// What an operation needs besides its tensors, fixed at check time.
typedef struct OpAttrs {
    int axis;         // reductions, concat: 0..rank-1, or KERNEL_ALL_AXES
    bool keepdims;
    double number;    // eps, base
    size_t count;     // heads, n
    size_t count2;    // d
    KernelAxisIndex index[KERNEL_MAX_INDEX];  // indexing
    size_t n_index;
    int index_input;  // indexing: which index item comes from tensor argument 1 (-1: none)
} OpAttrs;

typedef struct OpDef OpDef;

// Check-time view of one call: shapes and labels in, shape, labels and attrs out.
typedef struct OpCheck {
    const OpDef *op;
    size_t n_inputs;
    const Shape *shapes[64];  // of the tensor arguments
    const Labels *labels[64];  // each points at TENSOR_MAX_RANK axis labels
    double constants[OP_MAX_PARAMS];  // by parameter index
    bool present[OP_MAX_PARAMS];
    Shape shape;
    Labels out_labels[TENSOR_MAX_RANK];
    OpAttrs attrs;
    Arena *arena;
    // Errors: input -1 points at the whole call, k at its k-th tensor argument, and
    // OP_PARAM(p) at parameter p.
    Diag *diag;
    void *where;
} OpCheck;

#define OP_PARAM(p) (-100 - (p))

// Run-time view: out is created with the inferred shape; inputs have values.
typedef struct OpRun {
    const OpDef *op;
    Tensor *out;
    const Tensor *const *in;
    size_t n_in;
    const OpAttrs *attrs;
    Arena *arena;  // for index lists built while running
    Diag *diag;
    void *where;
} OpRun;

// Lines a stage prints under its values ("each row sums to 1"); numbers in the lesson's digits.
typedef struct OpNotes {
    const OpDef *op;
    const Tensor *out;
    const Tensor *const *in;
    size_t n_in;
    const OpAttrs *attrs;
    int digits;
    void *sink;
} OpNotes;

// "Show your work": how one element (or one row) of a result is computed, written out with
// the lesson's numbers, the way the document writes score(0,1) = (1.0x0.8) + ... = 1.00.
typedef struct OpExplain {
    const OpDef *op;
    const Tensor *out;
    const Tensor *const *in;
    size_t n_in;
    const OpAttrs *attrs;
    const char *out_name;          // the stage's name, "scores"
    const char *const *in_names;   // how each input is written: "Q", "K.T", "(a + b)", "2"
    size_t index[TENSOR_MAX_RANK]; // the element (row mode: the row's first element)
    size_t flat;                   // its offset in out
    bool row;                      // explain the whole last-axis row at once
    bool all;                      // every element was asked for (explain: all), not one row
    int digits;
    void *sink;
} OpExplain;

// When a result holds only whole numbers, printed without decimals (and exact as a count).
typedef enum OpIntegers {
    INTEGERS_NEVER,      // results are real numbers (the default)
    INTEGERS_ALWAYS,     // numel, arange, argmax, relative positions
    INTEGERS_IF_INPUTS,  // whole when every tensor argument is (sums, products, concat, ...)
    INTEGERS_IF_FIRST,   // whole when the first argument is (indexing, take, transpose, ...)
} OpIntegers;

struct OpDef {
    const char *name;    // as written in a call, or a word for an operator ("matmul")
    const char *symbol;  // "@", "+", ".T", "[]", or NULL for a function
    const char *about;   // one line for a learner: "matrix product: rows of A against columns of B"
    int variant;         // KernelBinary, KernelUnary or KernelReduce, for families
    OpParam params[OP_MAX_PARAMS];
    bool (*infer)(OpCheck *c);
    bool (*compute)(OpRun *r);
    void (*notes)(OpNotes *n);
    // Writes the work for e->index with op_work; in row mode, returns false when the op has no
    // row form (the element form is then used for each element of the row).
    bool (*explain)(OpExplain *e);
    OpIntegers integers;
};

// The operators and functions; NULL when unknown.
const OpDef *ops_find_function(const char *name);
const OpDef *ops_binary(char op);  // + - * / @ and '^'
const OpDef *ops_negate(void);
const OpDef *ops_transpose(void);
const OpDef *ops_index(void);
const OpDef *ops_numel(void);
// Whether op computes its value from its inputs' shapes alone (numel), so that shape-only
// inputs still give a result with a value.
bool ops_value_from_shapes(const OpDef *op);
// Multiply-adds op needs for inputs of these shapes and a result of shape out (a matrix
// product: out's size times the inner dimension; everything else counts as none).
size_t ops_multiply_adds(const OpDef *op, const Shape *const *inputs, const Shape *out, bool *overflow);
// Every function name, for suggestions and --help.
size_t ops_function_names(const char **names, size_t cap);

// Implemented by the checker and the runner, for ops to report errors and notes.
bool op_check_error(OpCheck *c, int input, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void op_check_hint(OpCheck *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
bool op_run_error(OpRun *r, int input, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void op_run_hint(OpRun *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
// How input k of the running op is written in the lesson ("pos_emb", "positions"), for messages.
const char *op_run_name(OpRun *r, int input);
void op_note(OpNotes *n, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void op_work(OpExplain *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
// The work could not be written (a StrBuf ran out of memory): the whole run fails cleanly.
void op_work_failed(OpExplain *e);
