// freeing: the nodes bucketed by their last reader, freed as it runs.
#include "freeing.h"

void freeing_finish(Freeing *f) {
    util_free(f->starts);
    util_free(f->frees);
    util_free(f->stage_of);
    *f = (Freeing){0};
}

// Bucket the nodes not kept by their last reader (a counting sort); a view's input lives as
// long as the view.
bool freeing_init(Freeing *f, const Plan *plan, const bool *keep, const NodeMode *mode) {
    size_t n = plan->n_nodes;
    *f = (Freeing){0};
    size_t *last = util_calloc(n + 1, sizeof(size_t));
    size_t *cursor = util_calloc(n + 1, sizeof(size_t));
    f->starts = util_calloc(n + 1, sizeof(size_t));
    f->frees = util_calloc(n + 1, sizeof(size_t));
    f->stage_of = util_calloc(n + 1, sizeof(size_t));
    bool ok = last && cursor && f->starts && f->frees && f->stage_of && plan_last_readers(plan, last);
    if (ok) {
        for (size_t k = n; k-- > 0;) {
            size_t in = mode[k] == MODE_VIEW ? plan->nodes[k].args[0] : k;
            if (last[in] < last[k])
                last[in] = last[k];
        }
        for (size_t k = 0; k < n; k++) {
            f->stage_of[k] = SIZE_MAX;
            if (!keep[k])
                f->starts[last[k] + 1]++;
        }
        for (size_t j = 0; j < n; j++)
            cursor[j] = f->starts[j + 1] += f->starts[j];
        for (size_t k = n; k-- > 0;)
            if (!keep[k])
                f->frees[--cursor[last[k]]] = k;
    }
    util_free(cursor);
    util_free(last);
    if (!ok)
        freeing_finish(f);
    return ok;
}

void freeing_release(Freeing *f, Trace *t, size_t j) {
    if (t->n_stages && t->stages[t->n_stages - 1].node == j)
        f->stage_of[j] = t->n_stages - 1;
    for (size_t k = f->starts[j]; k < f->starts[j + 1]; k++) {
        size_t node = f->frees[k];
        if (!t->tensors[node]->data && !t->tensors[node]->view)
            continue;  // shape-only: nothing to free
        tensor_release_values(t->tensors[node]);
        if (f->stage_of[node] != SIZE_MAX)
            t->stages[f->stage_of[node]].released = true;
    }
}
