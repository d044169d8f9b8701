// kernel_sample: top-p filtering and inverse-CDF sampling (see kernel_sample.h).
#include "kernel_sample.h"

#include "kernel_private.h"
#include "kernel_sort.h"

// Marks kept[j] for the values of row r of x that top_p keeps, in rank order (order holds each
// row's positions largest first); returns their sum, added in that order.
static double keep_row(bool *kept, const Tensor *order, const Tensor *x, size_t r, size_t n, double p) {
    const double *row = x->data + r * n;
    double before = 0.0;
    for (size_t j = 0; j < n; j++)
        kept[j] = false;
    for (size_t j = 0; j < n && before < p; j++) {
        size_t at = (size_t)order->data[r * n + j];
        kept[at] = true;
        before += row[at];
    }
    return before;
}

// Calls each row of x with its kept set and sum. False when memory runs out.
typedef void KeptRow(void *ctx, size_t r, const bool *kept, double sum);

static bool each_kept_row(const Tensor *x, double p, KeptRow *visit, void *ctx) {
    size_t n = last_dim(&x->shape), rows = row_count(x);
    Tensor *order = tensor_create(&x->shape);
    bool *kept = util_calloc(n ? n : 1, sizeof(bool));
    bool ok = order && kept && kernel_sort(order, x, KERNEL_ARGTOPK, n);
    for (size_t r = 0; ok && r < rows; r++)
        visit(ctx, r, kept, keep_row(kept, order, x, r, n, p));
    util_free(kept);
    tensor_destroy(order);
    return ok;
}

typedef struct TopPJob {
    Tensor *out;
    const Tensor *x, *dout, *y;
    size_t n;
} TopPJob;

static void renormalise(void *ctx, size_t r, const bool *kept, double sum) {
    const TopPJob *job = ctx;
    for (size_t j = 0; j < job->n; j++)
        job->out->data[r * job->n + j] = kept[j] ? job->x->data[r * job->n + j] / sum : 0.0;
}

bool kernel_top_p(Tensor *out, const Tensor *x, double p) {
    expect_shape(out, &x->shape);
    expect_values(x);
    TopPJob job = {.out = out, .x = x, .n = last_dim(&x->shape)};
    return each_kept_row(x, p, renormalise, &job);
}

// out[i] = x[i] / S for kept i: d out[i] / d x[j] = (delta_ij - out[i]) / S for kept i and j
static void send_back(void *ctx, size_t r, const bool *kept, double sum) {
    const TopPJob *job = ctx;
    const double *g = job->dout->data + r * job->n, *y = job->y->data + r * job->n;
    double through = 0.0;
    for (size_t i = 0; i < job->n; i++)
        if (kept[i])
            through += g[i] * y[i];
    for (size_t j = 0; j < job->n; j++)
        if (kept[j])
            job->out->data[r * job->n + j] += (g[j] - through) / sum;
}

bool kernel_grad_top_p(Tensor *din, const Tensor *dout, const Tensor *x, const Tensor *out, double p) {
    expect_shape(din, &x->shape);
    expect_shape(dout, &x->shape);
    expect_shape(out, &x->shape);
    TopPJob job = {.out = din, .x = x, .dout = dout, .y = out, .n = last_dim(&x->shape)};
    return each_kept_row(x, p, send_back, &job);
}

double kernel_sample_cdf(const Tensor *probs, size_t r, size_t i) {
    size_t n = last_dim(&probs->shape);
    const double *row = probs->data + r * n;
    return line_sum(row, i + 1, 1, 1.0) / line_sum(row, n, 1, 1.0);
}

void kernel_sample(Tensor *out, const Tensor *probs, const Tensor *u) {
    expect_values(out);
    expect_values(probs);
    expect_values(u);
    size_t n = last_dim(&probs->shape), rows = row_count(probs);
    ASSERT(probs->shape.rank >= 1 && n >= 1 && out->size == rows && (u->size == 1 || u->size == rows));
    for (size_t r = 0; r < rows; r++) {
        const double *row = probs->data + r * n;
        double ur = u->data[u->size == 1 ? 0 : r], total = line_sum(row, n, 1, 1.0), running = 0.0;
        size_t i = 0;
        // cdf[n - 1] = total / total = 1 > u, so the search ends inside the row
        for (; i + 1 < n; i++) {
            running += row[i];
            if (running / total > ur)
                break;
        }
        out->data[r] = (double)i;
    }
}
