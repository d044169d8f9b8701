// functions: every function a lesson may call, one a line, as the op table declares it, for
// tests/docs/reference.py to compare with the table of doc/lesson-format.md:
//
//     layernorm x gamma beta eps=1e-05
//     sum x axis= keepdims=
//     concat x... axis=
//
// A number's default is printed with %.17g; an optional axis or flag has no number to print.
#include <stdio.h>

#include "ops.h"

int main(void) {
    const char *names[256];
    size_t n = ops_function_names(names, sizeof names / sizeof names[0]);
    for (size_t i = 0; i < n; i++) {
        const OpDef *op = ops_find_function(names[i]);
        printf("%s", op->name);
        for (size_t p = 0; p < OP_MAX_PARAMS && op->params[p].name; p++) {
            const OpParam *param = &op->params[p];
            printf(" %s%s", param->name, param->kind == PARAM_TENSORS ? "..." : "");
            if (param->optional && param->kind == PARAM_NUMBER)
                printf("=%.17g", param->fallback);
            else if (param->optional)
                printf("=");
        }
        printf("\n");
    }
    return 0;
}
