// expr: the expression language of lesson steps, parsed into a tree whose every node knows
// where it stands in the text (so errors can put a caret under it).
//
//     ExprError err;
//     Expr *e = expr_parse(arena, "softmax(Q @ K.T / sqrt(d_k))", &err);
//     if (!e) printf("column %zu: %s\n", err.pos + 1, err.message);
//
// Grammar, with Python's and numpy's precedence (low to high):
//     expr    := and ('or' and)*
//     and     := not ('and' not)*
//     not     := 'not' not | compare
//     compare := sum (('==' | '!=' | '<' | '<=' | '>' | '>=') sum)?
//     sum     := product (('+' | '-') product)*
//     product := unary (('*' | '/' | '//' | '%' | '@') unary)*
//     unary   := '-' unary | power
//     power   := postfix ('**' unary)?
//     postfix := atom ('.T' | '[' index ']' | '(' args ')')*
//     atom    := NUMBER | NAME | '(' expr ')' | '[' expr (',' expr)* ']'
//     index   := item (',' item)*      item := expr | expr? ':' expr?
//     args    := arg (',' arg)*        arg  := (NAME '=')? expr
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "op.h"
#include "util.h"

#define EXPR_MAX_DEPTH 64  // nesting of parentheses, brackets, calls, unary minus and **
// Operations on the way from the whole expression down to its deepest leaf. A chain such as
// 1 + 1 + ... + 1 nests no bracket but is as deep as it is long, and checking it recurses once
// per level: the limit keeps a hostile lesson from exhausting the stack.
#define EXPR_MAX_HEIGHT 256
// A list or a call holds at most OP_MAX_ARGS items or arguments (op.h: the operations own it).

typedef enum ExprKind {
    EXPR_NUMBER,     // number
    EXPR_NAME,       // name
    EXPR_LIST,       // [a, b, c]: args
    EXPR_PREFIX,     // op args[0]: '-' (-x) or OP_TOKEN_NOT (not x)
    EXPR_BINARY,     // args[0] op args[1]
    EXPR_TRANSPOSE,  // args[0].T
    EXPR_INDEX,      // args[0][args[1], ...]: each index item an expression or EXPR_SLICE
    EXPR_SLICE,      // args[0]:args[1] inside an index; either may be NULL
    EXPR_CALL,       // name(args), arg_names[i] set for keyword arguments
} ExprKind;

typedef struct Expr Expr;

struct Expr {
    ExprKind kind;
    size_t start, end;      // byte range [start, end) in the text
    size_t op_pos, op_len;  // the operator or name token, for carets
    double number;
    const char *name;  // NAME, CALL
    char op;  // BINARY: + - * / % @ < >, '^' for **, OP_TOKEN_EQ (==), OP_TOKEN_FLOOR_DIV (//), OP_TOKEN_AND,
              // ... (op.h); PREFIX: '-' or OP_TOKEN_NOT
    Expr **args;
    const char **arg_names;  // CALL: NULL entries for positional arguments
    size_t *arg_name_pos;    // CALL: where each keyword argument's name starts
    size_t n_args;
    size_t height;  // 1 for a leaf, else 1 + the largest height among args
};

typedef struct ExprError {
    size_t pos, width;  // byte offset and length of the offending text
    char message[256];
    char hint[256];
} ExprError;

// NULL on a syntax error (err filled) or when memory runs out (err->message empty).
Expr *expr_parse(Arena *arena, const char *text, ExprError *err);
// Every name in e (not a function's, not a keyword's) that is from[i] made to[i]: a block's
// step read in one application (layer1.q for q). Positions in the text are kept.
void expr_rename(Expr *e, const char *const *from, const char *const *to, size_t n);
// "+" for '+', "**" for '^', "==" for OP_TOKEN_EQ, "and" for OP_TOKEN_AND.
const char *expr_op_text(char op);

// ---------------------------------------------------------------- narration
//
// Narration (say:, about:, intro:, outro:) may quote the trace in braces, in the same language:
//
//     "'The' matches {tokens[argmax(scores)]} best ({max(scores):.2f})."
//     "Divide by sqrt(d_k) = {sqrt(d_k):g}; X is {shape(X)}; {{ and }} are braces."
//
// A placeholder is {expression} or {expression:format}, the format one of .Nf (N decimals),
// .N% (a percentage with N decimals) or g (the shortest form that reads back the same). The
// expressions are evaluated after the run (check.c and run.c); here they are only parsed.

#define NARRATION_MAX_DECIMALS 12

typedef enum NarrationFormat {
    NARRATION_DEFAULT,  // the lesson's digits (an exact count with thousands separators)
    NARRATION_FIXED,    // .Nf
    NARRATION_PERCENT,  // .N%
    NARRATION_SHORT,    // g
} NarrationFormat;

typedef struct NarrationPart {
    // Literal text (with {{ and }} already made single braces), or a placeholder (expr set).
    const char *text;
    size_t text_len;
    Expr *expr;
    const char *expr_text;  // the placeholder's expression, NUL-terminated; expr's ranges index it
    size_t expr_offset;     // where expr_text starts in the narration
    NarrationFormat format;
    int decimals;           // FIXED and PERCENT
} NarrationPart;

typedef struct Narration {
    NarrationPart *parts;
    size_t n_parts;
    size_t n_placeholders;
} Narration;

// Split narration into literal text and placeholders. NULL on a syntax error (err's pos counts
// from the start of text) or when memory runs out (err->message empty).
Narration *expr_parse_narration(Arena *arena, const char *text, ExprError *err);
