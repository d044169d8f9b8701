// ops_grad: each operation's derivative, by the kernel's vector-Jacobian products.
#include "ops_grad.h"

#include <math.h>
#include <string.h>

#include "kernel_grad.h"
#include "util.h"

static bool grad_binary(OpGrad *g) {
    kernel_grad_binary(g->din, g->input, g->dout, g->in[0], g->in[1], (KernelBinary)g->op->variant);
    return true;
}

static bool grad_matmul(OpGrad *g) {
    kernel_grad_matmul(g->din, g->input, g->dout, g->in[0], g->in[1]);
    return true;
}

static bool grad_unary(OpGrad *g) {
    kernel_grad_unary(g->din, g->dout, g->in[0], (KernelUnary)g->op->variant);
    return true;
}

static bool grad_identity(OpGrad *g) {
    kernel_grad_identity(g->din, g->dout);
    return true;
}

static bool grad_transpose(OpGrad *g) {
    kernel_grad_transpose(g->din, g->dout);
    return true;
}

static bool grad_softmax(OpGrad *g) {
    kernel_grad_softmax(g->din, g->dout, g->out);
    return true;
}

static bool grad_layernorm(OpGrad *g) {
    kernel_grad_layernorm(g->din, g->input, g->dout, g->in[0], g->in[1], g->attrs->number);
    return true;
}

static bool grad_batchnorm(OpGrad *g) {
    kernel_grad_batchnorm(g->din, g->input, g->dout, g->in[0], g->in[1], g->attrs->number);
    return true;
}

static bool grad_reduce(OpGrad *g) {
    kernel_grad_reduce(g->din, g->dout, g->in[0], g->attrs->axis, (KernelReduce)g->op->variant);
    return true;
}

// The index the forward pass used: a tensor index (E[ids]) is read again from its values,
// which the forward pass has already checked to be whole and in range.
static bool grad_index(OpGrad *g) {
    KernelAxisIndex index[TENSOR_MAX_RANK];
    memcpy(index, g->attrs->index, sizeof(index));
    size_t *list = NULL;
    if (g->attrs->index_input >= 0) {
        int axis = g->attrs->index_input;
        const Tensor *ix = g->in[1];
        double dim = (double)g->in[0]->shape.dim[axis];
        list = util_calloc(ix->size ? ix->size : 1, sizeof(size_t));
        if (!list)
            return false;
        for (size_t k = 0; k < ix->size; k++)
            list[k] = (size_t)(ix->data[k] < 0 ? ix->data[k] + dim : ix->data[k]);
        if (ix->shape.rank == 0)
            index[axis] = (KernelAxisIndex){.kind = KERNEL_INDEX_AT, .start = list[0]};
        else
            index[axis] = (KernelAxisIndex){.kind = KERNEL_INDEX_LIST, .list = list, .n_list = ix->size};
    }
    kernel_grad_index(g->din, g->dout, index, g->attrs->n_index);
    util_free(list);
    return true;
}

static bool grad_take(OpGrad *g) {
    kernel_grad_take(g->din, g->dout, g->in[1]);
    return true;
}

static bool grad_concat(OpGrad *g) {
    size_t axis = (size_t)g->attrs->axis, offset = 0;
    for (size_t p = 0; p < g->input; p++)
        offset += g->in[p]->shape.dim[axis];
    kernel_grad_concat(g->din, offset, g->dout, axis);
    return true;
}

static bool grad_split_heads(OpGrad *g) {
    kernel_grad_split_heads(g->din, g->dout);
    return true;
}

static bool grad_merge_heads(OpGrad *g) {
    kernel_grad_merge_heads(g->din, g->dout);
    return true;
}

static bool grad_rope(OpGrad *g) {
    kernel_grad_rope(g->din, g->dout, g->in[1], g->attrs->number);
    return true;
}

static bool grad_cross_entropy(OpGrad *g) {
    kernel_grad_cross_entropy(g->din, g->dout, g->in[0], g->in[1]);
    return true;
}

// ---------------------------------------------------------------- the table

typedef struct NamedGrad {
    const char *name;
    OpGradDef def;
} NamedGrad;

// Bit k: input k carries no gradient.
#define NO_GRAD(k) (1u << (k))

static const NamedGrad grads[] = {
    {"add", {grad_binary, 0, {"%g", "%g"}}},
    {"subtract", {grad_binary, 0, {"%g", "-%g"}}},
    {"multiply", {grad_binary, 0, {"%g * %1", "%g * %0"}}},
    {"divide", {grad_binary, 0, {"%g / %1", "-%g * %0 / %1**2"}}},
    {"power", {grad_binary, 0, {"%g * %1 * %0**(%1 - 1)", "%g * %y * log(%0)"}}},
    {"matmul", {grad_matmul, 0, {"%g @ %1.T", "%0.T @ %g"}}},
    {"negate", {grad_unary, 0, {"-%g"}}},
    {"transpose", {grad_transpose, 0, {"%g.T"}}},
    {"index", {grad_index, NO_GRAD(1), {"%g scattered back into %0's places"}}},
    {"softmax", {grad_softmax, 0, {"%y * (%g - sum(%g * %y, axis=-1))"}}},
    {"layernorm", {grad_layernorm, 0, {"(%g*gamma - mean(%g*gamma) - xhat * mean(%g*gamma*xhat)) / sd",
                                        "sum over rows of %g * xhat", "sum over rows of %g"}}},
    {"batchnorm", {grad_batchnorm, 0, {"(%g*gamma - mean(%g*gamma) - xhat * mean(%g*gamma*xhat)) / sd, per feature",
                                        "sum over rows of %g * xhat", "sum over rows of %g"}}},
    {"sum", {grad_reduce, 0, {"%g spread over the summed axis"}}},
    {"mean", {grad_reduce, 0, {"%g / n spread over the averaged axis"}}},
    {"var", {grad_reduce, 0, {"%g * 2 (%0 - mean) / n"}}},
    {"max", {grad_reduce, 0, {"%g at the first largest value, 0 elsewhere"}}},
    {"min", {grad_reduce, 0, {"%g at the first smallest value, 0 elsewhere"}}},
    {"exp", {grad_unary, 0, {"%g * %y"}}},
    {"log", {grad_unary, 0, {"%g / %0"}}},
    {"sqrt", {grad_unary, 0, {"%g * 0.5 / %y"}}},
    {"abs", {grad_unary, 0, {"%g * sign(%0)"}}},
    {"relu", {grad_unary, 0, {"%g * (%0 > 0)"}}},
    {"gelu", {grad_unary, 0, {"%g * gelu'(%0)"}}},
    {"tanh", {grad_unary, 0, {"%g * (1 - %y**2)"}}},
    {"sin", {grad_unary, 0, {"%g * cos(%0)"}}},
    {"cos", {grad_unary, 0, {"-%g * sin(%0)"}}},
    {"concat", {grad_concat, 0, {NULL}}},
    {"copy", {grad_identity, 0, {"%g"}}},
    // a count read from the shape alone: no value of x moves it
    {"numel", {NULL, NO_GRAD(0), {NULL}}},
    {"split_heads", {grad_split_heads, 0, {"merge_heads(%g)"}}},
    {"merge_heads", {grad_merge_heads, 0, {"split_heads(%g)"}}},
    {"rope", {grad_rope, NO_GRAD(1), {"%g turned back by each angle"}}},
    {"take", {grad_take, NO_GRAD(1), {"%g added into the entries taken"}}},
    {"cross_entropy", {grad_cross_entropy, NO_GRAD(1), {"%g * (softmax(%0) - onehot(%1))"}}},
};

const OpGradDef *ops_grad(const OpDef *op) {
    for (size_t i = 0; i < ARRAY_LEN(grads); i++)
        if (strcmp(grads[i].name, op->name) == 0)
            return &grads[i].def;
    return NULL;
}
