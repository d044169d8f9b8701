// trace: what a lesson computed, stage by stage. Renderers read only this: every number,
// label, note and line of shown work is already here.
//
//     Trace *t = run_plan(plan, digits, NULL, 0, NULL, &diag);   // run.h: evaluate every stage
//     if (t && doccheck_trace(plan, t, &diag)) {           // doccheck.h: the document's numbers
//         RenderOptions ro = {.width = 80};
//         render_text(t, &ro, &out);                       // render.h
//     }
//     trace_destroy(t);
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "lesson.h"  // PictureKind: what a step's show: asks for
#include "tensor.h"
#include "util.h"

typedef enum StageKind {
    STAGE_GIVEN,
    STAGE_STEP,          // the result of a step
    STAGE_INTERMEDIATE,  // an operation inside a step's expression
    STAGE_GRADIENT,      // a stage of a backward pass: dloss/dlogits
} StageKind;

// One verdict on numbers a document printed: do they agree with ours, and where do they
// differ most.
typedef struct DocVerdict {
    bool agrees;
    double max_abs_diff;               // the largest |ours - printed|, wherever it is
    // The place shown: the worst disagreement (the most beyond its tolerance), or the largest
    // gap when every number agrees. With mixed decimals these can differ from max_abs_diff's.
    size_t at[TENSOR_MAX_RANK];
    double ours, printed;              // the two numbers there
    double gap;                        // |ours - printed| there (inf when one is nan or inf)
    double tolerance;                  // what would have agreed there
    double widened;                    // of which the widening for rounded inputs (local)
    bool worst_is_disagreement;        // at is where the worst disagreement is, not just the largest gap
} DocVerdict;

// Where a stage the document printed stands.
typedef enum DocClass {
    DOC_AGREES,        // every printed number agrees with the exact value
    DOC_INHERITS,      // disagrees, but is right on the document's own printed inputs
    DOC_OWN_SLIP,      // wrong on its own printed inputs: a slip of the document's own
    DOC_EDITED,        // a given whose values differ from the document's: the student changed it
    DOC_FOLLOWS_EDIT,  // disagrees, and depends on an edited given: the edit, not the document
    DOC_SET_ASIDE,     // printed in a shape the stage no longer has (an edit changed it): not compared
    DOC_CLASS_COUNT
} DocClass;

typedef struct TraceDocument {
    DocClass verdict;
    const Tensor *values;  // as printed (owned by the trace)
    const int *decimals;   // decimals each number was printed with
    // chained: the exact value (from the lesson's givens) against the printed one.
    DocVerdict chained;
    // local: the same operation on the document's own printed inputs, so a slip is found where
    // it happens; the tolerance widens by what rounding the printed inputs can move the result.
    bool has_local;
    DocVerdict local;
    double widened_by;  // the largest widening of the local tolerance
    size_t printed_inputs;   // how many printed input values the local check read
    bool widening_skipped;   // too many of them to perturb one by one: not widened
    // The edited givens this stage depends on (DOC_EDITED: the given itself), by name.
    const char **edited;
    size_t n_edited;
    size_t values_changed;   // DOC_EDITED: how many of the given's values differ from the document's
    size_t first_changed;    // DOC_EDITED: the first of them (flat index)
    bool same_as_given;      // a given whose values are exactly the printed ones
} TraceDocument;

typedef struct TraceStage {
    StageKind kind;
    const char *name;     // "Q", "weights.1"
    const char *const *aliases;  // a block's result's other names (results: {out: y}), for --save
    size_t n_aliases;
    const char *number;   // "3", "3a"; "" for givens
    const char *expr;     // the stage's own expression text; NULL for givens
    const char *op;       // "matmul", "softmax"; NULL for givens and constants
    const char *op_about; // "matrix product: ..."
    const char *op_line;  // "[3, 4] @ [4, 3] -> [3, 3]"
    const char *say;      // narration (steps)
    const char *about;    // what a given is
    const Tensor *value;  // owned by the trace; data NULL for shape-only
    // Its values were freed once the last stage that reads them had run, because nothing
    // prints, checks or quotes them (run.h): only the shape is left. A renderer that would
    // show them asserts that this is false.
    bool released;
    Labels labels[TENSOR_MAX_RANK];
    Labels ids_of;  // the tokens its values are ids of (printed in their place); no items: numbers
    const char **notes;   // facts about the result, numbers already in the lesson's digits
    size_t n_notes;
    const char **work;    // shown work: the arithmetic of the explained elements
    size_t n_work;
    const TraceDocument *document;  // NULL when the lesson gives no document values
    PictureKind show;               // what the step (or given) asks to be drawn as
    StageView view;                 // how much of it the text trace shows (show: quiet, ...)
    int digits;                     // a step's digits:; -1: the lesson's
    bool distribution;              // each last-axis row is a probability distribution (softmax)
    size_t node;                    // the plan node it shows
    const char *of, *wrt;           // a gradient stage: d of / d wrt (stage names); else NULL
    bool names_gradient;            // a step that only names a grad(): its backward pass shows it
} TraceStage;

// A claim of the lesson, judged on the values just computed.
typedef struct TraceClaim {
    const char *text;    // "decoded row equals full attention"
    const char *expr;    // "allclose(new_out, all_out[2:3])"
    bool holds;
    const char *detail;  // where and by how much it fails: "at [0, 3] 0.2462 != 0.2404 (largest
                         // difference 0.0058)"; NULL when it holds
    size_t stage;        // the stage it prints under (index into Trace.stages)
} TraceClaim;

// What training did before the lesson was traced (train: in the lesson, run/train.c).
typedef struct TraceTrainGiven {
    const char *name;
    Tensor *before;  // owned: its values before the first step (after them: the given's stage)
} TraceTrainGiven;

// One weight's update at one training step, worked out with its numbers (--explain
// W_Q[0, 1]@3): every number at full precision, so that each line's arithmetic, done again on
// the numbers shown, gives the number after its '='.
typedef struct TraceUpdate {
    const char *element;      // "W_Q[0, 1]"
    size_t step;              // the training step, from 0: the optimizer's update t = step + 1
    const char *not_reached;  // why it is not shown (training stopped before it); NULL: shown
    const char **work;        // the arithmetic, one line each
    size_t n_work;
    const char **names;       // every number the work shows, by name ("g", "m", ...)
    double *values;
    size_t n_values;
} TraceUpdate;

// The loss measured on a text's held-out tail (data: {text: FILE, validation: F}), and what
// counting bytes scores there.
typedef struct TraceValidation {
    const char *about;      // what it is measured on: "8 fixed windows of 12 bytes, spread over ..."
    size_t *steps;          // the steps it was measured at, as each began (before its update)
    double *losses;
    size_t n;
    double after;           // after the last update: on the weights the trace uses
    double bigram, trigram; // the counting models' nats per byte of the tail (train_baseline.h)
} TraceValidation;

typedef struct TraceTraining {
    Arena *arena;           // owns all below but the before tensors
    const char *loss;       // the loss stage's name
    const char *optimizer;  // "adam: lr 0.01, betas (0.9, 0.999), eps 1e-08, weight_decay 0"
    const char *clip;       // "the global gradient norm clipped at 1"; NULL: no clipping
    const char **data;      // one line per drawn given: "ids [64, 16]: repeat, vocab 16, seed 1"
    size_t n_data;
    TraceTrainGiven *trained;
    size_t n_trained;
    size_t steps;           // the steps asked for
    size_t steps_done;      // fewer when the loss stopped being finite
    double *losses;         // steps_done values: the loss at step s, before its update
    const char *stopped;    // why training stopped early (a non-finite loss); NULL: it did not
    const char **notes;     // the trained givens the loss does not depend on, each with its note
    size_t n_notes;
    const size_t *shown;    // the steps the table lists
    size_t n_shown;
    TraceUpdate *updates;   // the updates the command line asked to see, in its order
    size_t n_updates;
    TraceValidation *validation;  // NULL: no text held out
} TraceTraining;

typedef struct Trace {
    Arena *arena;
    const char *title;
    const char *source;  // NULL when absent
    const char *intro;   // NULL when absent
    const char *outro;   // NULL when absent
    const char *file;       // the lesson's path as given
    const char *file_name;  // its last component: what the text trace prints, so a golden file
                            // does not depend on the folder the tracer was run from
    int digits;
    TraceStage *stages;
    size_t n_stages;
    Tensor **tensors;  // every node's value, owned
    size_t n_tensors;
    // Stages read in place instead of copied (run.h): views, and products written straight
    // into their merge.
    size_t n_in_place;
    // The document check over all stages with document values.
    size_t doc_printed;     // stages that carry document values
    size_t doc_agree;       // of those, how many agree (chained)
    long doc_first_slip;    // index of the first stage that goes wrong by itself, or -1
    // The first stage that follows the student's edit but is also wrong on the document's own
    // printed inputs (its slip hidden by the edit), or -1.
    long doc_first_hidden_slip;
    size_t doc_edited;      // givens whose values differ from the document's (DOC_EDITED)
    size_t doc_follow;      // stages that differ only through an edit (DOC_FOLLOWS_EDIT)
    size_t doc_set_aside;   // stages whose printed shape no longer fits (DOC_SET_ASIDE)
    Tensor **doc_tensors;   // owned: the printed values
    size_t n_doc_tensors;
    TraceClaim *claims;     // in the lesson's order
    size_t n_claims;
    size_t n_claims_failed;
    TraceTraining *training;  // owned; NULL when the lesson does not train
} Trace;

void trace_destroy(Trace *trace);  // accepts NULL
void trace_training_destroy(TraceTraining *t);  // accepts NULL

// Whether a claim that fails prints under stage i: the narration beside it was written for
// numbers on which it held, and every page of the trace says so beside it.
bool trace_claim_fails_under(const Trace *tr, size_t i);

// The picture the text trace draws for a stage: the step's show: when it asks for one;
// otherwise, for a softmax's output in colour (or for every tensor with `every_tensor`,
// --heatmap), bars for a distribution that is a vector and a heatmap for the rest; otherwise
// the table alone. A stage without values, a single number or an empty tensor is a table. The
// JSON trace records it as the text draws it in colour without --heatmap.
PictureKind trace_picture(const TraceStage *s, bool every_tensor, bool colour);
