// op_entries: every entry of the op table, one a line, for tests/op_files.py to check that each
// has its data file under tests/ops/ and its entries in the fuzz dictionary and the docs:
//
//     exp function exp( grad
//     add infix + grad
//     transpose postfix .T grad
//     argmax function argmax( none
//
// The name, how it is written (function, infix, prefix, postfix, indexing or list), the text
// that writes it in a lesson (a function's name and its bracket, an operator's symbol), and
// whether it has a derivative.
#include <stdio.h>

#include "ops.h"

static const char *const syntaxes[] = {
    [OP_FUNCTION] = "function", [OP_INFIX] = "infix",       [OP_PREFIX] = "prefix",
    [OP_POSTFIX] = "postfix",   [OP_INDEXING] = "indexing", [OP_LIST] = "list",
};

int main(void) {
    for (size_t i = 0; i < ops_count(); i++) {
        const OpDef *op = ops_entry(i);
        if (op->syntax == OP_FUNCTION)
            printf("%s function %s( ", op->name, op->name);
        else
            printf("%s %s %s ", op->name, syntaxes[op->syntax], op->symbol);
        printf("%s\n", op->grad ? "grad" : "none");
    }
    return 0;
}
