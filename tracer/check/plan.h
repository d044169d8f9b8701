// plan: a lesson checked and laid out for evaluation (check.c makes it). Every name is
// resolved, every shape inferred and every error reported before any output: once there is a
// plan, the lesson runs (save for index values that are only known while running).
//
// The plan is a flat list of nodes in evaluation order. A node is a given, a constant
// (a number or list written in an expression) or one operation; an operation's arguments are
// earlier nodes. Givens and operations become stages of the trace.
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "diag.h"
#include "expr.h"
#include "lesson.h"
#include "op.h"
#include "tensor.h"
#include "trace.h"

typedef enum PlanKind {
    PLAN_GIVEN,
    PLAN_CONSTANT,
    PLAN_OP,
    PLAN_GRAD,  // the gradient of a scalar stage with respect to an earlier node (grad())
} PlanKind;

typedef struct PlanNode {
    PlanKind kind;
    const OpDef *op;     // PLAN_OP
    size_t *args;        // indices of earlier nodes: the tensor arguments in order
    const Expr **args_at;  // where each tensor argument is written, for errors while running
    size_t n_args;
    OpAttrs attrs;
    // PLAN_OP: the call's parameters as its shape rule read them (OpCheck.constants, .present),
    // so that the rule can run again at run time on labels its inputs' values chose.
    const double *constants;
    const bool *present;
    Shape shape;
    bool has_values;     // false: a shape-only tensor
    bool document_set_aside;  // its document: values no longer fit its shape (an edit changed it)
    bool is_count;       // an exact integer count
    Labels labels[TENSOR_MAX_RANK];
    // The tokens its values are ids of (a given's ids_of:, or what an argmax picks from),
    // printed in place of the numbers; no items: the values are numbers.
    Labels ids_of;
    const double *values;  // PLAN_CONSTANT: shape-size values

    // What the trace shows; is_stage is false for constants.
    bool is_stage;
    StageKind stage_kind;
    const char *name;       // "Q", or "weights.1" for an intermediate
    const char *number;     // "3", "3a"; "" for givens
    const char *expr_text;  // this node's own expression text (NULL for givens)
    const char *op_line;    // "[3, 4] @ [4, 3] -> [3, 3]"
    const char *op_about;   // what this call does, when the op's .about is not true of it; NULL: .about
    const char *display;    // how the node is written as an input: "Q", "2", "(a + b)", "K.T"
    const LessonGiven *given;
    const LessonStep *step;  // the step the node belongs to
    const Expr *expr;        // for errors while running
    bool renames;            // the copy that shows a step which only names another value

    // PLAN_GRAD: d grad_of / d grad_wrt, gathered from the uses of grad_wrt on the way to
    // grad_of: use k is input grad_use_input[k] of node grad_use[k], whose own gradient is
    // node args[k]. No uses: the seed d y / d y = 1 that starts the backward pass.
    size_t grad_of, grad_wrt;
    size_t *grad_use, *grad_use_input;
    const char **grad_terms;  // how each use's share is written ("dloss/dscores @ K.T")
    const char *say;          // a gradient stage's narration
} PlanNode;

// One "show your work" request, resolved against a stage's shape.
typedef struct ExplainTarget {
    size_t node;
    ExplainKind kind;  // EXPLAIN_ELEMENT (n_index == rank), EXPLAIN_ROW (n_index == rank - 1), EXPLAIN_ALL
    size_t index[TENSOR_MAX_RANK];
    size_t n_index;
} ExplainTarget;

// A claim of the lesson, compiled: its value is node's (a truth value), and it prints under
// the stage of node `after`, the latest stage it reads.
typedef struct PlanClaim {
    const LessonClaim *claim;
    size_t node;
    size_t after;
} PlanClaim;

// The memory a check may fill with the plan: its nodes, names and formulas together. Each
// step, and each stage of a backward pass, takes about a kilobyte, so 4,000 chained steps
// differentiated one by one would take gigabytes before any other limit is reached.
typedef struct PlanMemory {
    size_t bytes;       // 0: no limit
    const char *limit;  // how the error names it: "25.6 MiB, 10% of the 256 MiB TRACER_MEMORY allows"
    const char *raise;  // the end of the hint: "; or raise TRACER_MEMORY", or ""
} PlanMemory;

#define PLAN_EXPLAIN_ALL_MAX 100  // explain: all is for tensors this small

// The multiply-adds of all the lesson's matrix products, forward, backward and in training:
// 2^36 is a few seconds with the vectorised product on two cores, about a minute on one core
// of plain C, and a full GPT-2 block at n = 2048 (2.1e10) fits. Without it, one 70-byte lesson
// multiplying two [11000, 11000] givens would run for an hour.
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define PLAN_MAX_MULTIPLY_ADDS ((size_t)1 << 22)
#else
#define PLAN_MAX_MULTIPLY_ADDS ((size_t)1 << 36)
#endif

typedef struct Plan {
    Arena *arena;
    const Lesson *lesson;
    PlanNode *nodes;
    size_t n_nodes;
    size_t cap;
    ExplainTarget *explains;  // from the lesson's explain: keys, in stage order
    size_t n_explains;
    ExplainTarget *quizzes;   // from the lesson's quiz: keys: what --quiz asks, in stage order
    size_t n_quizzes;
    PlanClaim *claims;  // in the lesson's order (the steps' claim: first)
    size_t n_claims;
    // The stages by name (open addressing; entry i + 1 for node i, 0 empty), so that narration
    // with 100,000 placeholders finds its 100,000 hidden stages in linear time.
    size_t *stage_slots;
    size_t cap_stage_slots;  // a power of two, at least twice the stages
} Plan;

// An empty plan for lesson, to be filled by the checker; NULL when memory runs out.
Plan *plan_create(const Lesson *lesson);
void plan_destroy(Plan *plan);  // accepts NULL

// Hashes the stages' names once they are final (check_lesson does it last); false when memory
// runs out. Where two stages share a name, the first is found.
bool plan_index_stages(Plan *plan);

// The operands of node n from the values of the nodes before it, into in[OP_MAX_ARGS]: in[k]
// is the value of n's argument k, and the entry after the last argument is NULL, so that an
// operation reading an operand it does not have stops at once instead of reading a stale one.
// (Only that one: the finite-difference checks call this by the million, and clearing all 64
// was an eighth of their time.)
void plan_operands(const PlanNode *n, Tensor *const *values, const Tensor **in);

// The node that holds the stage called name ("scores", "weights.1"), or NULL.
const PlanNode *plan_find_stage(const Plan *plan, const char *name, size_t *index);

// Liveness: the last node whose computation reads each node's value, into last[n_nodes]
// (node k itself when no later node reads it). An operation reads its arguments; a gradient
// reads the gradients it gathers, its uses and their inputs, and a gradient stage also what
// its finite-difference check computes again (gradcheck.h). False when memory runs out.
bool plan_last_readers(const Plan *plan, size_t *last);

// What a run holds at once, counted in values (8 bytes each), when the run frees values as the
// fast layer's schedule does (keep non-NULL; the reference keeps every value, as keep NULL
// counts): a node's values are made when it runs, while its inputs are still held, and a node
// not kept goes right after its last reader (plan_last_readers) has run. A shape-only node
// holds nothing. Where the fast layer reads values in place (a view of its input, a product
// written into its merge's result) it holds no more than this counts: the view's input lives
// on, but the view is counted as values of its own of the same size. (Save for one moment: a
// product written into its merge's result that turns out not finite is copied out, and holds
// both at once.)
typedef struct PlanHeld {
    size_t peak;       // the most values held at once
    size_t end;        // what is still held once the last node has run: the kept values
    size_t past;       // the first node at whose running more than `limit` values are held;
                       // SIZE_MAX when none
    size_t past_held;  // the values held then
} PlanHeld;

// Walk the plan in order with keep (one per node, as run_plan takes it; NULL: every value is
// kept to the end) on top of `base` values already held elsewhere. False when memory runs out.
bool plan_held_values(const Plan *plan, const bool *keep, size_t base, size_t limit, PlanHeld *held);

// Resolve an explain request for a node: negative indices count from the end; a list one
// shorter than the rank is a row. False with a message and a hint when it does not fit.
bool plan_resolve_explain(const Plan *plan, size_t node, const ExplainSpec *spec, ExplainTarget *out,
                          char *message, size_t message_cap, char *hint, size_t hint_cap);

// Point diag at text[pos, pos + width) of the step's expression (or its start when the
// expression's place in the file is not exact).
int plan_error_at(Diag *diag, const Lesson *lesson, const LessonStep *step, size_t pos,
                  size_t width, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

// Node's labels again, from other labels of its inputs (in_labels[k] for input k, each
// TENSOR_MAX_RANK axes): its operation's shape rule run on them, as the check ran it on the
// inputs' own. A run calls it where values chose other labels upstream (topk's picks, the
// tokens of looked-up ids). Lists made go in arena. False, out unwritten, if the rule refuses.
bool plan_relabel(const Plan *plan, size_t node, const Labels *const *in_labels, Labels out[TENSOR_MAX_RANK],
                  Arena *arena);

// The tokens a node's values are ids of, from its operation (with its attrs) and its first
// input's (in_ids: that input's ids_of, in_labels its axis labels): moved values keep their
// tokens (OpDef.keeps_ids), positions along the last axis are ids of its labels
// (OpDef.ids_along_last).
Labels plan_ids_of(const OpDef *op, const OpAttrs *attrs, const Shape *in_shape, const Labels *in_ids,
                   const Labels *in_labels);
