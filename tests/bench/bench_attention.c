// bench_attention: how fast the kernel runs one GPT-2-sized attention head and its
// projections (n 1024, d_model 768, d_head 64), the sizes the tracer is meant to reach.
// Run with `meson test -C build --benchmark --verbose`; compare with numpy + OpenBLAS by
// timing the same products there. Not a test: it asserts nothing about time.
#include <stdio.h>
#include <time.h>

#include "../fast_layer.h"
#include "kernel.h"
#include "tensor.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static Tensor *random_tensor(size_t rows, size_t cols, uint64_t seed) {
    Shape s = {.rank = 2, .dim = {rows, cols}};
    Tensor *t = tensor_create(&s);
    if (t)
        kernel_fill_random(t, KERNEL_NORMAL, 0.02, seed);
    return t;
}

int main(void) {
    test_install_fast_layer();
    const size_t n = 1024, d = 768, dh = 64;
    Tensor *x = random_tensor(n, d, 1), *w = random_tensor(d, d, 2), *wq = random_tensor(d, dh, 3);
    Shape ps = {.rank = 2, .dim = {n, d}}, qs = {.rank = 2, .dim = {n, dh}}, ss = {.rank = 2, .dim = {n, n}};
    Shape ts = {.rank = 2, .dim = {dh, n}};
    Tensor *proj = tensor_create(&ps), *q = tensor_create(&qs), *k = tensor_create(&qs), *kt = tensor_create(&ts);
    Tensor *scores = tensor_create(&ss), *weights = tensor_create(&ss), *out = tensor_create(&qs);
    if (!x || !w || !wq || !proj || !q || !k || !kt || !scores || !weights || !out) {
        fprintf(stderr, "bench_attention: out of memory\n");
        return 1;
    }
    // proj (n, d) = x (n, d) @ w (d, d): the shape of every projection in a GPT-2 layer
    double t0 = now();
    kernel_matmul(proj, x, w);
    double t1 = now();
    // one head: q, k (n, dh); scores (n, n) = q @ k^T; softmax; out (n, dh) = weights @ v
    kernel_matmul(q, x, wq);
    kernel_matmul(k, x, wq);
    kernel_transpose(kt, k);
    kernel_matmul(scores, q, kt);
    kernel_softmax(weights, scores);
    kernel_matmul(out, weights, q);
    double t2 = now();
    double flops = 2.0 * (double)n * (double)d * (double)d;
    printf("projection [1024, 768] @ [768, 768]: %.3f s, %.2f GFLOP/s\n", t1 - t0, flops / (t1 - t0) / 1e9);
    printf("one attention head (n 1024, d_head 64, with its projections): %.3f s\n", t2 - t1);
    printf("checksum %.6f\n", out->data[0] + proj->data[n * d - 1]);
    Tensor *all[] = {x, w, wq, proj, q, k, kt, scores, weights, out};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        tensor_destroy(all[i]);
    return 0;
}
