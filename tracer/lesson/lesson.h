// lesson: a YAML tree given meaning. Checks the structure of a lesson (sections, givens,
// steps, labels, numbers) and keeps the node of everything so that later errors can point
// into the file. Expressions stay text here: check.c parses them.
//
//     Diag diag; diag_init(&diag);
//     Lesson *lesson = lesson_load_file("lessons/02_the_cat_sat.yaml", &diag);
//     if (!lesson) { diag_print(&diag, stderr, false); return diag.status; }
//     ... lesson->givens[0].name ...
//     lesson_destroy(lesson);
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "given_file.h"
#include "given_text.h"
#include "kernel.h"
#include "lesson_train.h"
#include "tensor.h"
#include "yamldoc.h"

// What a step asks to be drawn as (show: heatmap | bars | table, numbers meaning table); the
// default lets the renderer choose (a picture for attention weights when the terminal has
// colour, or when their numbers do not fit).
typedef enum PictureKind {
    PICTURE_DEFAULT,
    PICTURE_TABLE,    // numbers only, never a picture
    PICTURE_HEATMAP,  // cells coloured by value (shades without colour)
    PICTURE_BARS,     // one bar per entry of a vector
} PictureKind;

// How much of a stage the text trace shows (show: quiet | result | picture | percent |
// corners; the rest of show: picks a PictureKind and leaves the view full).
typedef enum StageView {
    VIEW_FULL,     // every value shown, as the picture and the width allow
    VIEW_QUIET,    // the stage's line and narration, not its values nor its intermediates
    VIEW_RESULT,   // the step's result as usual, its intermediates folded away
    VIEW_PICTURE,  // the picture alone, drawn whole, with each row's largest value; no intermediates
    VIEW_PERCENT,  // the values as percentages
    VIEW_CORNERS,  // the first and last few rows and columns
} StageView;

#define LESSON_MAX_DIGITS 12
#define LESSON_DEFAULT_DIGITS 4  // decimals printed when the lesson says nothing

// A named (labels: tokens: [The, cat, sat]) or inline (rows: [The, cat, sat]) list of labels.
typedef struct LabelList {
    const char *name;  // NULL for an inline list
    const char **items;
    size_t n;
    const Node *node;
} LabelList;

// Numbers a textbook printed for a tensor, kept with how many decimals each was printed with
// ("0.20" -> 2, "1" -> 0, "2.69e43" -> -41): agreement is judged to one unit of the last
// printed place.
typedef struct DocValues {
    Shape shape;
    double *values;  // row-major
    int *decimals;
    const Node **nodes;  // the scalar node of each number
    const Node *node;
} DocValues;

typedef enum GivenInit {
    GIVEN_VALUES,      // values: or a bare number or list
    GIVEN_ZEROS,       // shape: + init: zeros
    GIVEN_ONES,        // shape: + init: ones
    GIVEN_IDENTITY,    // shape: + init: identity (last two dims equal)
    GIVEN_RANDOM,      // shape: + init: random (+ distribution, scale, seed)
    GIVEN_SHAPE_ONLY,  // shape: alone: no values, only a shape to reason about
    GIVEN_FILE,        // file: (+ tensor:, slice:, shape:): a tensor of a weight file
} GivenInit;

typedef struct LessonGiven {
    const char *name;
    const Node *key;    // the name's node
    const Node *value;  // the whole value node
    const char *about;  // NULL when absent
    const Node *about_node;
    const LabelList *rows, *cols;  // label the last two axes; NULL when absent
    const Node *rows_node, *cols_node;
    const LabelList *ids_of;  // ids_of: the tokens its values are ids of; NULL when absent
    const Node *ids_of_node;
    PictureKind show;  // show: as a step's
    StageView view;
    const Node *show_node;
    GivenInit init;
    Shape shape;
    double *values;  // GIVEN_VALUES: the shape's size values, row-major
    const Node **value_nodes;  // GIVEN_VALUES: the scalar node of each value
    KernelDistribution distribution;  // GIVEN_RANDOM
    double scale;
    uint64_t seed;
    DocValues *document;  // NULL when absent
    GivenFileTensor file;  // GIVEN_FILE: where its values are
    // text: with tokenizer: (GIVEN_VALUES then holds its ids, cols: its tokens); text_node
    // is NULL for any other given.
    const Node *text_node, *tokenizer_node;
    GivenText text;
    // trained: LESSON: the lesson whose given of the same name this one is, as that lesson's
    // training leaves it (the run trains it first); NULL for any other given.
    const struct Lesson *model;
} LessonGiven;

typedef enum ExplainKind {
    EXPLAIN_NONE,
    EXPLAIN_ELEMENT,  // explain: [0, 1]
    EXPLAIN_ROW,      // explain: row 0
    EXPLAIN_ALL,      // explain: all
} ExplainKind;

typedef struct ExplainSpec {
    ExplainKind kind;
    size_t n_index;
    long index[TENSOR_MAX_RANK];  // ELEMENT: the element; ROW: index[0] is the row
    const Node *node;
} ExplainSpec;

// The names a step of a block reads, as one application of the block calls them: from[i]
// in the block's text is to[i] in the lesson (an input is the name it is bound to, a step of
// the block layer1.q). A step outside every block has none.
typedef struct LessonScope {
    const char **from, **to;
    size_t n, cap;
    const char *where;  // "in layer2, block 'layer' applied on line 30": said with an error in it
} LessonScope;

typedef struct LessonStep {
    const char *name;  // layer1.q for a block's step q in its application layer1
    const Node *key;
    const char *expr;  // the expression text, as YAML read it
    const Node *expr_node;
    // Byte i of expr stands at line expr_line, column expr_col + i of the file when
    // expr_exact (a plain or simply quoted scalar on one line; columns count characters, so
    // use lesson_expr_position past non-ASCII text); otherwise errors inside the expression
    // point at the start of the node.
    size_t expr_line, expr_col;
    bool expr_exact;
    const char *say;  // NULL when absent
    const Node *say_node;
    const LabelList *rows, *cols;
    const Node *rows_node, *cols_node;
    ExplainSpec explain;
    DocValues *document;
    PictureKind show;
    StageView view;
    const Node *show_node;  // NULL when absent
    int digits;             // digits: the decimals of this step's values; -1: the lesson's
    const Node *digits_node;
    ExplainSpec quiz;       // quiz: [i, j] or row i: what --quiz asks here (EXPLAIN_NONE: its own choice)
    const Node *claim_node;  // claim: (read into Lesson.claims); NULL when absent
    const LessonScope *scope;  // a block's step: how its names read in the lesson; else NULL
    const char **aliases;  // other names of a block's result, from its application's results: (out)
    size_t n_aliases;
    // An intervention's step (an application's replace:): the name of the stage it stands in
    // for, computed as the block writes it (ablated.layer1.A.original); NULL for any other step.
    const char *replaces;
} LessonStep;

// A claim: what must hold, in the lesson's own expression language, ending in a truth value
// (a comparison, allclose, all or any):
//     claims:
//       - decoded row equals full attention: allclose(new_out, all_out[2:3])
// or, on a step, `claim: weights[0, 0] == 1` (the text is then the expression itself).
typedef struct LessonClaim {
    const char *text;  // "decoded row equals full attention"
    // The expression, located in the file as a step's is (where.expr, where.expr_node, ...);
    // where.name is the claim's text, where.key its node.
    LessonStep where;
    const LessonStep *step;  // claim: on this step; NULL for the lesson's claims:
} LessonClaim;

typedef struct Lesson {
    Arena *arena;  // owns everything below but doc
    YamlDoc *doc;
    const char *path;
    const char *title;
    const char *source;  // NULL when absent
    const char *intro;   // NULL when absent
    const char *outro;   // NULL when absent
    const Node *intro_node, *outro_node;
    int digits;          // -1 when absent
    LabelList *labels;
    size_t n_labels;
    LessonGiven *givens;
    size_t n_givens;
    GivenFiles *files;  // the weight files the givens read; NULL when none
    GivenTokenizers *tokenizers;  // the tokenizers the labels and givens read; NULL when none
    LessonStep *steps;
    size_t n_steps;
    LessonClaim *claims;  // the steps' claim: in step order, then the lesson's claims:
    size_t n_claims;
    LessonTrain *train;  // train: (lesson_train.h); NULL when absent
    // The lessons its givens' trained: name, each loaded once and owned here.
    struct Lesson **models;
    size_t n_models;
} Lesson;

// Build a lesson from a file's bytes; NULL with a located error (status 1) on failure.
Lesson *lesson_create(const char *path, const char *bytes, size_t len, Diag *diag);
// Read the file first: a missing or unreadable file, a directory, or one larger than
// YAMLDOC_MAX_BYTES is status 2.
Lesson *lesson_load_file(const char *path, Diag *diag);
// The same for the lesson a given's trained: names: one whose own givens take nothing from
// another lesson (a trained: there is refused), so that no chain of lessons can loop.
Lesson *lesson_load_model(const char *path, Diag *diag);
// The same file read only as far as its title (the YAML, the top-level keys, title:), for a
// list of lessons: none of its files, tokenizer, givens or steps is read. Only title, path and
// doc are set.
Lesson *lesson_load_title(const char *path, Diag *diag);
// Gives every text: of the lesson's givens this text instead (the command line's --text),
// its ids and tokens replacing theirs. A usage error when the lesson gives no text or text
// is not UTF-8.
int lesson_replace_text(Lesson *lesson, const char *text, Diag *diag);
void lesson_destroy(Lesson *lesson);  // accepts NULL

// Where byte `offset` of a narration node's text (say:, about:, intro:, outro:) stands in the
// file: exact for a literal block (|) and a one-line scalar (true), else the node's start.
bool lesson_text_position(const Lesson *lesson, const Node *node, size_t offset, size_t *line, size_t *col);
// The same for offsets of one node in increasing order, each read on from the one before in
// cur (zeroed before the first): a text with 100,000 placeholders is read once, not 100,000 times.
typedef struct TextCursor {
    const Node *node;
    size_t offset;           // read up to here
    size_t k, start;         // a block's line of the text, and the byte where it starts
    size_t chars;            // characters from start to offset
    int exact;               // that line stands in the file as it is: 1 yes, -1 no, 0 not known yet
    size_t line, col;        // where it starts in the file, when it does
    size_t src_line;         // the file's line last looked up, and where it starts
    const char *src_at;
} TextCursor;
bool lesson_text_place(const Lesson *lesson, const Node *node, size_t offset, TextCursor *cur, size_t *line,
                       size_t *col);
// Where byte `offset` of step->expr stands in the file.
void lesson_expr_position(const LessonStep *step, size_t offset, size_t *line, size_t *col);
