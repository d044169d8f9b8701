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
    trace_training_destroy(t->training);
    arena_destroy(t->arena);
    util_free(t);
}

void trace_training_destroy(TraceTraining *t) {
    if (!t)
        return;
    for (size_t k = 0; t->trained && k < t->n_trained; k++)
        tensor_destroy(t->trained[k].before);
    arena_destroy(t->arena);
}

PictureKind trace_picture(const TraceStage *s, bool every_tensor, bool colour) {
    const Tensor *t = s->value;
    if (!t->data || t->shape.rank == 0 || t->size == 0)
        return PICTURE_TABLE;
    PictureKind want = s->show;
    if (s->view == VIEW_PICTURE)  // the picture alone: bars for a vector, a heatmap for more axes
        return t->shape.rank == 1 ? PICTURE_BARS : PICTURE_HEATMAP;
    if (want == PICTURE_DEFAULT) {
        // Softmax outputs are attention weights and probability distributions: a picture shows
        // at once what a box of near-equal digits hides.
        if (!every_tensor && !(colour && s->distribution))
            return PICTURE_TABLE;
        want = t->shape.rank == 1 && s->distribution ? PICTURE_BARS : PICTURE_HEATMAP;
    }
    return want == PICTURE_BARS && t->shape.rank != 1 ? PICTURE_TABLE : want;
}

bool trace_claim_fails_under(const Trace *tr, size_t i) {
    for (size_t k = 0; k < tr->n_claims; k++)
        if (tr->claims[k].stage == i && !tr->claims[k].holds)
            return true;
    return false;
}
