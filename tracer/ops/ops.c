// ops: the families of operations, searched in one fixed order (the order in which a learner
// who misspells a function is offered the names).
#include "ops.h"

#include <ctype.h>
#include <string.h>

static const OpFamily *const families[] = {
    &op_family_softmax, &op_family_norm, &op_family_reduce, &op_family_elementwise, &op_family_matmul,
    &op_family_index,   &op_family_heads, &op_family_positions, &op_family_loss,
    &op_family_axis, &op_family_fill, &op_family_sort, &op_family_sample, &op_family_list,
    &op_family_linalg,
};

const OpDef *ops_find_function(const char *name) {
    for (size_t f = 0; f < ARRAY_LEN(families); f++)
        for (size_t i = 0; i < families[f]->n; i++) {
            const OpDef *op = &families[f]->ops[i];
            if (op->syntax == OP_FUNCTION && strcmp(op->name, name) == 0)
                return op;
        }
    return NULL;
}

const OpDef *ops_operator(OpSyntax syntax, char token) {
    for (size_t f = 0; f < ARRAY_LEN(families); f++)
        for (size_t i = 0; i < families[f]->n; i++) {
            const OpDef *op = &families[f]->ops[i];
            if (op->syntax == syntax && syntax != OP_FUNCTION && op->token == token)
                return op;
        }
    return NULL;
}

const OpDef *ops_word(const char *word, size_t len) {
    for (size_t f = 0; f < ARRAY_LEN(families); f++)
        for (size_t i = 0; i < families[f]->n; i++) {
            const OpDef *op = &families[f]->ops[i];
            if (op->syntax != OP_FUNCTION && op->symbol && isalpha((unsigned char)op->symbol[0]) &&
                strlen(op->symbol) == len && memcmp(op->symbol, word, len) == 0)
                return op;
        }
    return NULL;
}

size_t ops_function_names(const char **names, size_t cap) {
    size_t n = 0;
    for (size_t f = 0; f < ARRAY_LEN(families); f++)
        for (size_t i = 0; i < families[f]->n; i++)
            if (families[f]->ops[i].syntax == OP_FUNCTION && n < cap)
                names[n++] = families[f]->ops[i].name;
    return n;
}

size_t ops_count(void) {
    size_t n = 0;
    for (size_t f = 0; f < ARRAY_LEN(families); f++)
        n += families[f]->n;
    return n;
}

const OpDef *ops_entry(size_t i) {
    for (size_t f = 0; f < ARRAY_LEN(families); i -= families[f]->n, f++)
        if (i < families[f]->n)
            return &families[f]->ops[i];
    return NULL;
}

size_t ops_function_count(void) {
    size_t n = 0;
    for (size_t f = 0; f < ARRAY_LEN(families); f++)
        for (size_t i = 0; i < families[f]->n; i++)
            n += families[f]->ops[i].syntax == OP_FUNCTION;
    return n;
}
