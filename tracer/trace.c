// trace: what a lesson computed; the run fills it, the renderers read it.
#include "trace.h"

void trace_destroy(Trace *t) {
    if (!t)
        return;
    for (size_t i = 0; i < t->n_tensors; i++)
        tensor_destroy(t->tensors[i]);
    util_free(t->tensors);
    for (size_t i = 0; i < t->n_doc_tensors; i++)
        tensor_destroy(t->doc_tensors[i]);
    util_free(t->doc_tensors);
    arena_destroy(t->arena);
    util_free(t);
}
