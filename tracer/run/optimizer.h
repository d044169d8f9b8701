// optimizer: PyTorch's update rules (torch.optim.SGD, Adam, AdamW), one element at a time.
// The same code moves every weight of a trained given and, for `--explain W[i, j]@s`, writes
// down one element's intermediates, so that the numbers shown are the numbers used.
//
//     OptimizerRule r = optimizer_rule(spec, t);        // the t-th update, t = 1, 2, ...
//     OptimizerWork work;
//     optimizer_explain(&r, w[i], g[i], m, v, i, &work);  // element i, before the update
//     optimizer_update(&r, w, g, m, v, n);              // every element, in place
#pragma once

#include <stddef.h>

#include "lesson_train.h"

// What one update of every element shares: the settings and the numbers made from them once.
typedef struct OptimizerRule {
    TrainOptimizer optimizer;
    size_t t;  // which update, from 1
    double lr, weight_decay, momentum, beta1, beta2, eps;
    double lerp_weight;      // adam: 1 - beta1, the weight torch.lerp moves m towards g by
    double one_minus_beta2;  // adam: 1 - beta2
    double beta1_t, beta2_t;  // adam: beta1^t, beta2^t
    double bias1, bias2;      // adam: the bias corrections 1 - beta1^t, 1 - beta2^t
    double step_size;         // adam: lr / bias1
    double bias2_sqrt;        // adam: sqrt(bias2)
    double shrink;            // adamw: 1 - lr * weight_decay, the factor the weight shrinks by
} OptimizerRule;

// One element's update, every number as the optimizer computed it, in its order.
typedef struct OptimizerWork {
    double w;          // the weight before the update
    double g;          // its gradient as the optimizer receives it (after clipping)
    double decayed;    // sgd, adam: g + weight_decay * w (g itself without weight decay)
    double shrunk;     // adamw: w * shrink, the weight after the decoupled decay
    double m_before, m;  // sgd with momentum: the buffer b; adam: the first moment
    double g_squared;    // adam: decayed * decayed
    double v_before, v;  // adam: the second moment
    double m_hat, v_hat; // adam: m / bias1, v / bias2, for reading (the optimizer folds them in)
    double sqrt_v;       // adam: sqrt(v)
    double root_v_hat;   // adam: sqrt(v) / bias2_sqrt, which is sqrt(v_hat) in exact arithmetic
    double denom;        // adam: root_v_hat + eps
    double ratio;        // adam: m / denom
    double step;         // what is taken off the weight: lr * b (sgd), step_size * ratio (adam)
    double w_after;      // the weight after the update
} OptimizerWork;

// The rule of update t (from 1) of spec's optimizer.
OptimizerRule optimizer_rule(const LessonTrain *spec, size_t t);
// Update n weights w in place by their gradients g; m: sgd's momentum buffers (read only with
// momentum) or adam's first moments, v: adam's second moments (NULL for sgd).
void optimizer_update(const OptimizerRule *r, double *w, const double *g, double *m, double *v, size_t n);
// What optimizer_update will do to element i, before it does it: w, g, m and v unchanged.
void optimizer_explain(const OptimizerRule *r, const double *w, const double *g, const double *m, const double *v,
                       size_t i, OptimizerWork *work);
