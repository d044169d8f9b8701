// ask: the conversation of --quiz. Part of the tracer program, not of the library: it writes
// questions and reads answers, one a line, from a terminal or from a pipe (so that a quiz can be
// scripted); the library (quiz.h) chose the questions and judges the answers.
//
//     Quiz *quiz;
//     pipeline_quiz_file(path, &opts, seed, &quiz, &diag);
//     int status = ask_quiz(quiz, stdin, stdout, !isatty(STDIN_FILENO), 80, false, &diag);
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include "quiz.h"

// Asks every question in turn: a right answer moves on, a wrong one shows the work and the
// value; "not a number: try again" asks again. The end of input or `q` stops early; either way
// the score and the operations to practise close it. echo writes each answer after its prompt
// (for a transcript when the answers come from a pipe); colour puts "right" in green and "not
// quite" in red, for a terminal. Returns an exit status: 0, or 2 (and diag says why) when out
// cannot be written or memory runs out.
int ask_quiz(const Quiz *quiz, FILE *in, FILE *out, bool echo, size_t width, bool colour, Diag *diag);
