// op: what one operation is, and the helpers every operation shares. Each family of operations
// (op_elementwise.c, op_matmul.c, op_reduce.c, op_norm.c, op_softmax.c, op_index.c,
// op_heads.c, op_positions.c, op_loss.c, op_axis.c, op_fill.c, op_sort.c, op_sample.c, op_list.c, op_linalg.c) holds, for each of its operations, the shape rule,
// the computation (a call into the kernel), the notes and the explanation, and ends in a table
// of entries written with designated initializers:
//
//     {.name = "softmax", .about = "softmax over the last axis: ...", .params = {OP_X},
//      .infer = infer_softmax, .compute = compute_softmax, .notes = note_row_sums,
//      .explain = explain_softmax, .row_form = true},
//
// An operation never reaches up into the checker or the runner: a shape rule or a computation
// that refuses its inputs fills an OpProblem (which input, the message, a hint) and returns
// false, and its caller turns that into an error located in the lesson. Notes and lines of
// shown work are collected in the OpNotes and OpExplain the caller passes and reads back.
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "kernel.h"
#include "tensor.h"
#include "util.h"

// Arguments of one call or items of one list ([1, 2, 3], concat(a, b, c)): the expression
// parser refuses more (longer lists of numbers belong under given:), and every stage sizes its
// per-argument arrays by it.
#define OP_MAX_ARGS 64
#define OP_MAX_PARAMS 5
#define OP_MAX_NOTES 8          // lines of notes one stage may print
#define OP_MESSAGE_MAX 1024     // an error's message or hint, as a Diag holds it
#define OP_NO_INDEX_INPUT (-1)  // OpAttrs.index_input: every index is known before running

typedef enum ParamKind {
    PARAM_TENSOR,   // any tensor expression
    PARAM_TENSORS,  // all remaining positional arguments (concat)
    PARAM_NUMBER,   // a number known before running (a literal or a scalar given)
    PARAM_COUNT,    // a whole number >= 1 known before running
    PARAM_AXIS,     // a whole number, negative counts from the end; absent means every axis
    PARAM_FLAG,     // True or False
    PARAM_SHAPE,    // a list of whole numbers known before running, as in [2, -1] (reshape)
    PARAM_AXES,     // a list of axes known before running, as in [1, 0, 2] (transpose); absent: None
} ParamKind;

typedef struct OpParam {
    const char *name;
    ParamKind kind;
    bool optional;
    double fallback;  // the value when optional and absent (PARAM_AXIS: 0 for all axes, -1 for the last)
} OpParam;

// What an operation needs besides its tensors, fixed at check time.
typedef struct OpAttrs {
    int axis;         // reductions, concat: 0..rank-1, or KERNEL_ALL_AXES
    bool keepdims;
    double number;    // eps, base
    double rtol, atol;  // allclose: |a - b| <= atol + rtol * |b|
    size_t count;     // heads, n
    KernelAxisIndex index[KERNEL_MAX_INDEX];  // indexing
    size_t n_index;
    int index_input;  // indexing: which index item comes from tensor argument 1, or OP_NO_INDEX_INPUT
    long long dims[TENSOR_MAX_RANK];  // a PARAM_SHAPE argument: the sizes, -1 for one to work out;
                                      // a PARAM_AXES one: the axes as written
    size_t n_dims;
} OpAttrs;

// ---------------------------------------------------------------- problems

// Where in the call a problem lies: the whole call (under its operator or name), one of its
// tensor inputs, or one of its parameters. The caller knows where each of those is written.
typedef enum OpTargetKind {
    OP_TARGET_CALL,
    OP_TARGET_INPUT,  // index: the tensor argument, 0 for the first
    OP_TARGET_PARAM,  // index: the parameter, as numbered in OpDef.params
} OpTargetKind;

typedef struct OpTarget {
    OpTargetKind kind;
    size_t index;
} OpTarget;

#define OP_CALL ((OpTarget){OP_TARGET_CALL, 0})
#define OP_INPUT(k) ((OpTarget){OP_TARGET_INPUT, (size_t)(k)})
#define OP_PARAM(p) ((OpTarget){OP_TARGET_PARAM, (size_t)(p)})

// Why an operation refused: filled by op_error (and op_hint), read by whoever called it.
typedef struct OpProblem {
    bool failed;
    bool out_of_memory;  // no message: memory ran out
    OpTarget at;
    char message[OP_MESSAGE_MAX];
    char hint[OP_MESSAGE_MAX];  // may be empty
} OpProblem;

// No problem yet. Cheaper than `= {0}`, which would clear both messages before every
// operation the runner computes (the finite-difference checks compute tens of thousands).
static inline void op_problem_clear(OpProblem *p) {
    p->failed = false;
    p->out_of_memory = false;
    p->at = OP_CALL;
    p->message[0] = p->hint[0] = '\0';
}

// Record a problem (the first one wins) and return false.
bool op_error(OpProblem *p, OpTarget at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void op_hint(OpProblem *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
bool op_out_of_memory(OpProblem *p);

// ---------------------------------------------------------------- the four views of a call

typedef struct OpDef OpDef;

// Check time: shapes and labels in, shape, labels and attrs out.
typedef struct OpCheck {
    const OpDef *op;
    size_t n_inputs;
    const Shape *shapes[OP_MAX_ARGS];  // of the tensor arguments
    const Labels *labels[OP_MAX_ARGS];  // each points at TENSOR_MAX_RANK axis labels
    double constants[OP_MAX_PARAMS];  // by parameter index
    bool present[OP_MAX_PARAMS];
    Shape shape;
    Labels out_labels[TENSOR_MAX_RANK];
    OpAttrs attrs;  // the checker fills index, n_index and index_input for indexing
    // This call's description when the entry's .about would not be true of it (softmax(x,
    // axis=0) does not run over the last axis), made in arena; NULL: the entry's .about.
    const char *about;
    Arena *arena;   // for labels made here
    OpProblem *problem;  // the caller's: filled when infer refuses
} OpCheck;

// Run time: out is created with the inferred shape; inputs have values.
typedef struct OpRun {
    const OpDef *op;
    Tensor *out;
    const Tensor *const *in;
    const char *const *in_names;  // how each input is written in the lesson, for messages
    size_t n_in;
    const OpAttrs *attrs;
    Arena *arena;  // for index lists built while running
    OpProblem *problem;  // the caller's: filled when compute refuses
} OpRun;

// Run time, once the values are known: labels that follow the values. topk(probs, 10) of probs
// labelled by the vocabulary picks ten of its entries, and their labels with them.
typedef struct OpLabels {
    const OpDef *op;
    const Tensor *out;
    const Tensor *const *in;
    const Labels *in_labels;  // the first input's, TENSOR_MAX_RANK axes
    const OpAttrs *attrs;
    Labels *out_labels;       // the check's, TENSOR_MAX_RANK axes: replaced where the values say
    Arena *arena;             // holds the lists made
} OpLabels;

// Lines a stage prints under its values ("each row sums to 1"); numbers in the lesson's digits.
typedef struct OpNotes {
    const OpDef *op;
    const Tensor *out;
    const Tensor *const *in;
    size_t n_in;
    const OpAttrs *attrs;
    int digits;
    Arena *arena;  // holds the lines
    const char *lines[OP_MAX_NOTES];
    size_t n_lines;
    bool failed;   // memory ran out: a note is missing
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
    bool row;                      // explain the whole last-axis row at once (ops with .row_form)
    bool all;                      // every element was asked for (explain: all), not one row
    int digits;
    Arena *arena;                  // holds the lines
    const char **lines;
    size_t n_lines, cap_lines;
    bool failed;                   // memory ran out: a line is missing
} OpExplain;

// The backward pass: one input's share of the gradient of one use of the operation. The
// derivative adds it to din (the input's gradient so far), given the gradient of the result.
typedef struct OpGrad {
    const OpDef *op;
    Tensor *din;                // the input's shape: the share is added to it
    size_t input;               // which tensor argument
    const Tensor *dout;         // the gradient with respect to the result
    const Tensor *out;          // the result
    const Tensor *const *in;    // the tensor arguments
    size_t n_in;
    const OpAttrs *attrs;
} OpGrad;

// The shown work of one element of one input's share of a gradient (--explain on a gradient
// stage): explain_grad writes into sb how the share at index (of the input) is computed from
// the lesson's numbers, ending in its value: "dloss/dC[1, :] · B[2, :] = (0.5×0.1) + ... = 0.07".
typedef struct OpGradWork {
    const OpDef *op;
    size_t input;
    const Tensor *dout;            // the gradient with respect to the result
    const char *dout_name;         // "dloss/dscores"
    const Tensor *out;             // the result
    const char *out_name;
    const Tensor *const *in;       // the tensor arguments
    const char *const *in_names;
    size_t n_in;
    const OpAttrs *attrs;
    const Tensor *share;           // the whole share, the input's shape
    size_t index[TENSOR_MAX_RANK]; // the element of the input
    size_t flat;
    int digits;
    StrBuf *sb;
} OpGradWork;

// A number of gradient work in the lesson's digits.
void op_grad_num(OpGradWork *w, double v);

#define OP_GRAD_FORMULAS 3  // inputs whose share has a formula of its own (later ones: "dy's share for x")

void op_note(OpNotes *n, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void op_work(OpExplain *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

// ---------------------------------------------------------------- the entry

// How an operation is written, which decides how its shape line reads.
typedef enum OpSyntax {
    OP_FUNCTION,  // name(args): "softmax([3, 3]) -> [3, 3]"
    OP_INFIX,        // a @ b:      "[3, 4] @ [4, 3] -> [3, 3]"
    OP_PREFIX,       // -a:         "-[3] -> [3]"
    OP_POSTFIX,      // a.T:        "[3, 4].T -> [4, 3]"
    OP_INDEXING,     // a[...]:     "[3, 4] indexed -> [4]"
    OP_LIST,         // [a, b]:     "[[3], [3]] stacked -> [2, 3]"
} OpSyntax;

// OpDef.token of the operators written with two characters, as the expression parser gives
// them in Expr.op ('<', '>' and '%' stand for themselves, '^' for **).
#define OP_TOKEN_EQ 'E'  // ==
#define OP_TOKEN_NE 'N'  // !=
#define OP_TOKEN_LE 'L'  // <=
#define OP_TOKEN_GE 'G'  // >=
#define OP_TOKEN_FLOOR_DIV 'D'  // //
// and the words of truth values, which the parser reads where a name could stand
#define OP_TOKEN_NOT '!'  // not
#define OP_TOKEN_AND '&'  // and
#define OP_TOKEN_OR '|'   // or

// When a result holds only whole numbers, printed without decimals (and exact as a count).
typedef enum OpIntegers {
    INTEGERS_NEVER,      // results are real numbers (the default)
    INTEGERS_ALWAYS,     // numel, arange, argmax, relative positions
    INTEGERS_IF_INPUTS,  // whole when every tensor argument is (sums, products, concat, ...)
    INTEGERS_IF_FIRST,   // whole when the first argument is (indexing, take, transpose, ...)
    INTEGERS_ROUNDED,    // whole numbers made from any (floor, ceil, round): not counts, so a
                         // value past 2^53, where every double is whole, is kept as it is
} OpIntegers;

// Whether a result is a truth value, 1 (true) or 0 (false), element by element, so that a claim
// may end in the operation, and what a claim that ends in it says where it is false.
typedef enum OpTruth {
    TRUTH_NONE,      // not a truth value (the default)
    TRUTH_COMPARES,  // a comparison (or and, or, not), element by element: "at [0, 1] 0.3000 < 0.2000 is false"
    TRUTH_CLOSE,     // allclose: where the two are furthest apart, and the largest difference
    TRUTH_ALL,       // all: the first false value it reads, and how many more there are
    TRUTH_ANY,       // any: none of the values it reads is true
} OpTruth;

// Where an elementwise operation leaves the real numbers, in a learner's words. A note on an inf
// or a nan that the operation makes from finite numbers (ieee.c) writes the operation with its
// operands ("log(0)", "1 / 0") and ends with one of these; NULL: with what IEEE arithmetic gives
// (an overflow, or no value).
typedef struct OpDomain {
    const char *zero_gives_inf;      // operand zero_operand is 0 and the result infinite: why
    size_t zero_operand;
    const char *negative_gives_nan;  // the first operand is negative and the result nan: why
    const char *overflow_hint;       // said after an overflow from a positive first operand
} OpDomain;

struct OpDef {
    const char *name;    // as written in a call, or a word for an operator ("matmul")
    OpSyntax syntax;     // OP_FUNCTION (0) unless an operator
    char token;          // operators: the character the expression parser gives ('@', '^' for **)
    const char *symbol;  // operators: how the shape line writes it ("@", "**", ".T")
    const char *work_symbol;  // infix operators: how shown work writes it (" × " for *)
    // Infix operators that bind tighter than a minus in front (**): -8 ** 0.5 is -(8 ** 0.5), so
    // a negative left operand is written in brackets, (-8) ** 0.5.
    bool binds_before_minus;
    const char *about;   // one line for a learner: "matrix product: rows of A against columns of B"
    int variant;         // KernelBinary, KernelUnary or KernelReduce, for families
    OpParam params[OP_MAX_PARAMS];
    bool (*infer)(OpCheck *c);    // false with *c->problem filled
    bool (*compute)(OpRun *r);    // false with *r->problem filled, at one of its inputs
    void (*notes)(OpNotes *n);    // NULL: nothing to say
    // Labels known only from the values (OpLabels); false when memory runs out. NULL: the
    // check's labels stand.
    bool (*value_labels)(OpLabels *l);
    // Its values are its first input's, moved (indexing, reshape, transpose, a copy): ids of
    // tokens stay ids of the same tokens.
    bool keeps_ids;
    // Its values are positions along its first input's last axis (argmax, argtopk, sample):
    // ids of that axis's labels.
    bool ids_along_last;
    // Writes the work for e->index with op_work: one element, or (row_form) the whole row.
    void (*explain)(OpExplain *e);
    bool row_form;       // explain writes a whole row at once; otherwise each element alone
    // The value of the operator on two numbers known before running (d_k / 2 as an axis; a
    // prefix operator's on its one number, b 0); NULL when it is not a number's operation.
    double (*fold)(const OpDef *op, double a, double b);
    // Multiply-adds for inputs of these shapes and a result of shape out; NULL: none worth
    // counting. False when the count overflows.
    bool (*cost)(const Shape *const *in, const Shape *out, size_t *multiply_adds);
    bool from_shapes_only;  // the value needs only the inputs' shapes (numel): shape-only inputs still give one
    // Each element of the result comes from the same element of each input (broadcast), so a
    // note on an inf or a nan can name its operands: "exp(800)", "inf / inf".
    bool elementwise;
    OpDomain domain;     // elementwise operations: where they give inf or nan from finite numbers
    // Each last-axis row of the result is a probability distribution (softmax): renderers draw
    // it as a picture by default.
    bool distribution;
    OpIntegers integers;
    OpTruth truth;
    // The derivative (a vector-Jacobian product through kernel_grad): adds input g->input's
    // share of g->dout to g->din; false only when memory runs out. NULL: no derivative, and
    // grad(y, x) refuses to pass back through the operation (argmax).
    bool (*grad)(OpGrad *g);
    // Without .grad: why, as the hint of grad()'s refusal, in a learner's words; NULL: a
    // position or a count is flat and then jumps.
    const char *no_derivative;
    unsigned no_grad;    // bit k: input k carries no gradient (indices, positions, targets)
    // How input k's share is written in a gradient stage's formula: %g the gradient of the
    // result, %y the result, %0 %1 %2 the inputs ("%g @ %1.T" for the left of a matmul), %a
    // the axis it runs along (-1 for the last).
    const char *grad_formula[OP_GRAD_FORMULAS];
    // Writes the arithmetic of one element of a share (OpGradWork); NULL: only its value is
    // shown, under the formula.
    void (*explain_grad)(OpGradWork *w);
};

// One family's entries.
typedef struct OpFamily {
    const OpDef *ops;
    size_t n;
} OpFamily;

#define OP_FAMILY(table) {(table), sizeof(table) / sizeof((table)[0])}

// The families, each defined in its own op_<family>.c.
extern const OpFamily op_family_elementwise, op_family_matmul, op_family_reduce, op_family_norm,
    op_family_softmax, op_family_index, op_family_heads, op_family_positions, op_family_loss, op_family_axis,
    op_family_fill, op_family_sort, op_family_sample, op_family_list, op_family_linalg;

// What stands between a prefix operator and its operand: nothing after a sign (-x), a space
// after a word (not x).
const char *op_prefix_gap(const OpDef *op);

// Multiply-adds of op for these shapes (0 when op has no .cost); false on overflow.
bool op_multiply_adds(const OpDef *op, const Shape *const *in, const Shape *out, size_t *work);

// ---------------------------------------------------------------- for the families

#define OP_NO_GRAD(k) (1u << (k))  // OpDef.no_grad: input k carries no gradient

#define OP_X {"x", PARAM_TENSOR, false, 0}
#define OP_TENSOR(n) {n, PARAM_TENSOR, false, 0}
#define OP_COUNT(n) {n, PARAM_COUNT, false, 0}
#define OP_NUMBER(n, v) {n, PARAM_NUMBER, true, v}

// Shape rules.
bool op_infer_same(OpCheck *c);  // the result has the first input's shape and labels
void op_copy_labels(Labels *dst, const Labels *src, size_t rank);
// Normalise a possibly negative axis given as parameter `param` against rank.
bool op_resolve_axis(OpCheck *c, size_t param, double value, size_t rank, size_t *axis);
bool op_needs_rank(OpCheck *c, size_t input, size_t min_rank);
// An operation that needs at least one entry along an axis of input 0 (a maximum, a softmax
// row, a LayerNorm row) met an empty one: refused, as numpy refuses the max of nothing. what:
// the function; nothing: what does not exist without entries ("a maximum"). Returns false.
bool op_refuse_empty_axis(OpCheck *c, const char *what, const char *nothing, size_t axis);

// Shown work, written into a StrBuf and ended with op_work_line.
void op_work_num(StrBuf *sb, const OpExplain *e, const Tensor *t, double v);  // in the lesson's digits
void op_work_ref(StrBuf *sb, const char *name, const size_t *idx, size_t rank);  // name[i, j]
void op_work_lhs(StrBuf *sb, const OpExplain *e);     // "out[i, j] = "
void op_work_result(StrBuf *sb, const OpExplain *e);  // " = " and the element's value
void op_work_line(OpExplain *e, StrBuf *sb);          // the line is done (and sb finished)
// mean and variance of n values of t at stride `stride`, written out in two lines;
// var_label names the variance line ("variance", or the stage element it is).
void op_work_moments(OpExplain *e, const Tensor *t, const double *x, size_t n, size_t stride, const char *var_label,
                     double *mean, double *var);
// The last-axis row of t that holds element `flat`, and its length.
const double *op_row_of(const Tensor *t, size_t flat, size_t *d);
// The element of a broadcast input that meets output element out_idx.
void op_broadcast_index(const Tensor *in, const Tensor *out, const size_t *out_idx, size_t *idx);

// Where allclose(a, b) fails worst (the element furthest past its tolerance; nan and inf first),
// how many elements fail, and the largest |a - b| anywhere (nan when a nan meets anything; equal
// infinities are 0 apart).
typedef struct OpCloseWorst {
    size_t n_far;                // elements not close
    size_t at[TENSOR_MAX_RANK];  // the worst of them, in the broadcast shape
    size_t rank;
    double a, b;                 // the two numbers there
    double largest_difference;
} OpCloseWorst;
void op_allclose_worst(const Tensor *a, const Tensor *b, const OpAttrs *attrs, OpCloseWorst *worst);
// atol + rtol × |b|: how far a may be from b and still be close to it.
double op_close_tolerance(const OpAttrs *attrs, double b);

// Run time: every value of idx (input `input`) must be a whole number in [0, limit); what
// names one ("index", "target"), hint says what one counts. False with a problem otherwise.
bool op_check_whole_indices(OpRun *r, size_t input, const Tensor *idx, size_t limit, const char *what,
                            const char *hint);
