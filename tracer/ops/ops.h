// ops: every operation the tracer knows, found by how a lesson writes it. The entries live in
// their families (op_<family>.c, see op.h); this module only looks them up.
//
//     const OpDef *op = ops_find_function("softmax");   // NULL when no function has that name
//     const OpDef *at = ops_operator(OP_INFIX, '@');     // the matrix product
#pragma once

#include <stddef.h>

#include "op.h"

// The function called name, or NULL.
const OpDef *ops_find_function(const char *name);
// The operator written with `token` in this syntax (OP_INFIX '+', OP_PREFIX '-', OP_POSTFIX
// 'T', OP_INDEXING '['), or NULL.
const OpDef *ops_operator(OpSyntax syntax, char token);
// The operator written as the word of these len bytes (and, or, not), or NULL. Such a word is
// the expression language's: the parser reads it as the operator, and no lesson's name is it.
const OpDef *ops_word(const char *word, size_t len);
// Every entry, functions and operators: entry i for i < ops_count(), NULL past the last (for
// the tests that check that each operation has its cases and documents).
size_t ops_count(void);
const OpDef *ops_entry(size_t i);
// How many functions there are, and their names in the table's order (for suggestions).
size_t ops_function_count(void);
size_t ops_function_names(const char **names, size_t cap);
