// optimizer: PyTorch's update rules, element by element (one function moves every weight and
// explains one).
#include "optimizer.h"

#include <math.h>
#include <string.h>

OptimizerRule optimizer_rule(const LessonTrain *spec, size_t t) {
    OptimizerRule r = {.optimizer = spec->optimizer, .t = t, .lr = spec->lr, .weight_decay = spec->weight_decay,
                       .momentum = spec->momentum, .beta1 = spec->beta1, .beta2 = spec->beta2, .eps = spec->eps};
    if (r.optimizer == TRAIN_SGD)
        return r;
    r.lerp_weight = 1 - r.beta1;
    r.one_minus_beta2 = 1 - r.beta2;
    r.beta1_t = pow(r.beta1, (double)t);
    r.beta2_t = pow(r.beta2, (double)t);
    r.bias1 = 1 - r.beta1_t;
    r.bias2 = 1 - r.beta2_t;
    r.step_size = r.lr / r.bias1;
    r.bias2_sqrt = sqrt(r.bias2);
    r.shrink = 1 - r.lr * r.weight_decay;
    return r;
}

// torch.lerp as the CPU computes it: from the nearer end.
static double lerp(double from, double to, double weight) {
    return weight < 0.5 ? from + weight * (to - from) : to - (to - from) * (1 - weight);
}

// One element: PyTorch's rules, each intermediate kept in *k.
//   sgd:   g += wd w; b = g at the first update, else momentum b + g; w -= lr b (b = g without momentum)
//   adam:  g += wd w; m = lerp(m, g, 1 - beta1); v = beta2 v + (1 - beta2) g^2;
//          w -= lr / (1 - beta1^t) * (m / (sqrt(v) / sqrt(1 - beta2^t) + eps))
//   adamw: w *= 1 - lr wd first, then adam without wd
// w - x is w + -x to the bit, as PyTorch writes it (add_ with alpha -lr, addcdiv_ with value
// -step_size).
static inline double element(const OptimizerRule *r, double w, double g, double *m, double *v, OptimizerWork *k) {
    k->w = w;
    k->g = g;
    if (r->optimizer == TRAIN_SGD) {
        double d = k->decayed = r->weight_decay != 0 ? g + r->weight_decay * w : g;
        if (r->momentum != 0) {
            k->m_before = *m;
            d = k->m = *m = r->t == 1 ? d : *m * r->momentum + d;
        }
        k->step = r->lr * d;
        return k->w_after = w - k->step;
    }
    double d = g;
    if (r->optimizer == TRAIN_ADAMW)
        w = k->shrunk = w * r->shrink;
    else if (r->weight_decay != 0)
        d = g + r->weight_decay * w;
    k->decayed = d;
    k->m_before = *m;
    k->m = *m = lerp(*m, d, r->lerp_weight);
    k->v_before = *v;
    k->g_squared = d * d;
    k->v = *v = *v * r->beta2 + k->g_squared * r->one_minus_beta2;
    k->sqrt_v = sqrt(*v);
    k->root_v_hat = k->sqrt_v / r->bias2_sqrt;
    k->denom = k->root_v_hat + r->eps;
    k->ratio = *m / k->denom;
    k->step = r->step_size * k->ratio;
    return k->w_after = w - k->step;
}

void optimizer_update(const OptimizerRule *r, double *w, const double *g, double *m, double *v, size_t n) {
    OptimizerWork unused;  // the compiler drops what nothing reads
    for (size_t i = 0; i < n; i++)
        w[i] = element(r, w[i], g[i], m + i, v ? v + i : NULL, &unused);
}

void optimizer_explain(const OptimizerRule *r, const double *w, const double *g, const double *m, const double *v,
                       size_t i, OptimizerWork *work) {
    memset(work, 0, sizeof(*work));
    double m_i = m[i], v_i = v ? v[i] : 0;
    element(r, w[i], g[i], &m_i, &v_i, work);
    if (r->optimizer != TRAIN_SGD) {
        work->m_hat = work->m / r->bias1;
        work->v_hat = work->v / r->bias2;
    }
}
