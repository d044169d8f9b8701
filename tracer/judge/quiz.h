// quiz: the questions --quiz asks, worked out from a lesson: which elements of which stages,
// what the student is shown (the stage's formula, the element's formula and its inputs' values),
// the right value and the worked expansion, and whether an answer is right. The conversation
// itself (prompts, reading answers) belongs to the program (ask.c); this module only computes.
//
//     Quiz *quiz = NULL;
//     if (pipeline_quiz_file("lessons/02_the_cat_sat.yaml", &opts, seed, &quiz, &diag) == STATUS_OK) {
//         QuizVerdict v;
//         quiz_judge(&quiz->questions[0], "0.35", &v);   // v.right, v.note
//     }
//     quiz_destroy(quiz);
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "plan.h"
#include "trace.h"

#define QUIZ_MAX_QUESTIONS 12  // a seeded choice asks at most this many
#define QUIZ_MAX_INPUT_VALUES 48  // a seeded choice only asks where every input shows whole

typedef struct QuizQuestion {
    const char *stage;    // "Step 3  scores = Q @ K.T"
    const char *asked;    // "scores[0, 1]"
    const char *formula;  // "scores[0, 1] = Q[0] · K.T[:, 1]", or NULL when the work has none
    const char **inputs;  // "X[1, :] = [0.5000, 0.6000]", the part of each tensor input the
                          // element reads, or "Q = [[0.2000, 0.1600], [0.5200, 0.4000]]", whole
    size_t n_inputs;
    const char **work;    // the worked expansion, as --explain writes it
    size_t n_work;
    double value;
    const char *value_text;  // as the trace prints it
    double half_unit;        // half a unit of the last digit printed: 0.00005 for 0.3478
    int digits;              // decimals of that digit (0 for a count): "to 4 it is 0.3478"
    const char *op;          // "matmul": what to practise when the answer is wrong
} QuizQuestion;

typedef struct Quiz {
    Arena *arena;
    const char *title;
    QuizQuestion *questions;
    size_t n;
} Quiz;

void quiz_destroy(Quiz *quiz);  // accepts NULL

// What --quiz asks: the lesson's quiz: marks (a row is each of its elements), or, when it has
// none, one element drawn with `seed` from each step small enough to work by hand. Fills
// targets (room for cap) and returns how many; *marked says which of the two it was.
size_t quiz_targets(const Plan *plan, uint64_t seed, ExplainTarget *targets, size_t cap, bool *marked);
// The questions, from a trace run with exactly those targets as extra explain requests (and
// no others); a seeded choice keeps only those whose work is one line (one sum, one product,
// not softmax's exps, sum and divisions). NULL when memory runs out (diag says so).
Quiz *quiz_create(const Plan *plan, const Trace *trace, const ExplainTarget *targets, size_t n, bool marked,
                  Diag *diag);

typedef struct QuizVerdict {
    bool number;  // the answer reads as a number (else: "not a number: try again")
    bool right;
    // Right only to the precision the student typed, looser than the trace's: the note says
    // so ("right to the 2 decimals you gave; to 4 it is 0.3478"). Empty otherwise.
    char note[160];
} QuizVerdict;

// The longest answer read as a number (characters, spaces around it aside): a longer one is not
// judged, since cutting it would judge another number.
#define QUIZ_ANSWER_MAX 255

// An answer is right within half a unit of the last decimal the trace prints, or of the last
// decimal the student typed, whichever is looser (an answer of zero is held to the printed
// decimals).
void quiz_judge(const QuizQuestion *q, const char *answer, QuizVerdict *verdict);
