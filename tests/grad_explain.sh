#!/bin/sh
# --explain on gradient stages writes the chain rule with the lesson's numbers (and a gradient
# of an infinite loss says it was not checked). The expected
# lines are worked out by hand for tests/grad/explain.yaml:
#   h = x @ W, h[0] = [1*0.5 + 2*0.1, 1*-0.25 + 2*0.2] = [0.7, 0.15];
#   softmax(h[0]) = [1, e^-0.55] / (1 + e^-0.55) = [0.63414, 0.36586]; target 1, so
#   dloss/dh[0] = probs - onehot = [0.6341, -0.6341] and dloss/dh[1] = 0;
#   dloss/dx[0, 1] = dloss/dh[0, :] . W[1, :] = 0.6341*0.1 - 0.6341*0.2 = -0.0634;
#   dloss/dW[1, 0] = x[:, 1] . dloss/dh[:, 0] = 2*0.6341 + (-1)*0 = 1.2683;
#   s = sum(a * a + a): ds/da = a + a + 1 (three uses), at a[1] = 2: 2 + 2 + 1 = 5;
#   z = sum(a[[1, 1, 0]]): a[1] was taken twice (places 0 and 1), a[0] once (place 2);
#   y = sum(take(a, ids) * ids), ids = [[1, 0], [1, 1]]: dy/dy.1 = ids, a[0] sits at [0, 1]
#   (weight 0), a[1] at [0, 0], [1, 0] and [1, 1] (weight 1 each): 3;
#   w = sum(a[ids] * ids) gathers a by the same positions of two axes: the same places.
# Usage: grad_explain.sh TRACER, run from the project root.
set -u
tracer=$1
out=$(NO_COLOR=1 "$tracer" --width 200 --explain 'dloss/dx[0,1]' --explain 'dloss/dW[1,0]' --explain 'dloss/dloss.1' \
    --explain 'ds/da[1]' --explain 'dz/da' --explain 'dy/da' --explain 'dw/da' tests/grad/explain.yaml) || { echo "the tracer failed"; exit 1; }
fail=0
# expect: every line on stdin must be a line of work in $out.
expect() {
    while IFS= read -r line; do
        if ! printf '%s\n' "$out" | grep -qxF "      $line"; then
            echo "missing: $line"
            fail=1
        fi
    done
}
expect <<'LINES'
dloss/dloss.1[0] = 1 × (softmax(h[0])[0] - onehot[0]) = 1.0000 × (0.6341 - 0) = 0.6341
dloss/dloss.1[1] = 1 × (softmax(h[0])[1] - onehot[1]) = 1.0000 × (0.3659 - 1) = -0.6341
dloss/dx[0, 1] = dloss/dh[0, :] · W[1, :] = (0.6341×0.1000) + (-0.6341×0.2000) = -0.0634
dloss/dW[1, 0] = x[:, 1] · dloss/dh[:, 0] = (2.0000×0.6341) + (-1.0000×0.0000) = 1.2683
through (a * a + a): (ds/ds.2)[1] = 1.0000
ds/da[1] = 2.0000 + 2.0000 + 1.0000 = 5.0000
dz/da[0] = dz/dz.1[2] = 1.0000
dz/da[1] = dz/dz.1[0] + dz/dz.1[1] = 2.0000
dy/da[0] = dy/dy.1[0, 1] = 0.0000
dy/da[1] = dy/dy.1[0, 0] + dy/dy.1[1, 0] + dy/dy.1[1, 1] = 3.0000
dw/da[0] = dw/dw.1[0, 1] = 0.0000
dw/da[1] = dw/dw.1[0, 0] + dw/dw.1[1, 0] + dw/dw.1[1, 1] = 3.0000
LINES
[ "$fail" = 0 ] || printf '%s\n' "$out" | grep -A8 'work:'
# Softmax and LayerNorm, tests/grad/explain_norm.yaml, row 0 (checked with numpy by finite
# differences): x = [1, 2, 4] has mean 7/3 and sd = sqrt(14/9 + 1e-5) = 1.2472, so
# n = xhat * gamma and p = softmax(n) = [0.1192, 0.2035, 0.6773]; the loss weights row 0 by
# c = [1, 0, 2], so dloss/dn[0, 1] = -0.2035 * (1*0.1192 + 2*0.6773) = -0.2999;
# g = dloss/dn * gamma = [-0.0565, -0.5997, 0.1782], mean(g) = -0.1594,
# xhat[1] = -1/3 / 1.2472 = -0.2673, mean(g * xhat) = 0.1529, so
# dloss/dx[0, 1] = (-0.5997 + 0.1594 + 0.2673*0.1529) / 1.2472 = -0.3203; gamma's share is
# shown by its value, sum over both rows of dloss/dn[:, 1] * xhat[:, 1] = 0.0203.
# RMSNorm has no worked form of its own: row 1 of dloss2/dx names the formula, with
# x = [0.5, -1, 0], rms = sqrt(1.25/3 + 1e-5) = 0.6455 and dloss2/dr * gamma = [0, 6, 0.5]:
# 6 * [0, 1, 0] / rms + 0.5 * [0, 0, 1] / rms - x * (-6) / 3 / rms^3 = [3.7179, 1.8592, 0.7746].
out=$(NO_COLOR=1 "$tracer" --width 200 --explain 'dloss/dn[0,1]' --explain 'dloss/dx[0,1]' \
    --explain 'dloss/dgamma[1]' --explain 'dloss2/dx row 1' tests/grad/explain_norm.yaml) || { echo "the tracer failed"; exit 1; }
expect <<'LINES'
dloss/dn[0, 1] = sum over i of dloss/dp[0, i] × p[0, i] × (δ(i, 1) - p[0, 1]) = (1.0000×0.1192×(0 - 0.2035)) + (0.0000×0.2035×(1 - 0.2035)) + (2.0000×0.6773×(0 - 0.2035)) = -0.2999
dloss/dx[0, 1] = (g[1] - mean(g) - xhat[1] × mean(g × xhat)) / sd with g = dloss/dn × gamma, sd = sqrt(var + eps) = (-0.5997 - -0.1594 - -0.2673×0.1529) / 1.2472 = -0.3203
dloss/dgamma[1] = 0.0203
dloss2/dx[1, 0] = (dloss2/dr*gamma / rms - x * mean(dloss2/dr*gamma * x) / rms**3)[1, 0] = 3.7179
dloss2/dx[1, 1] = (dloss2/dr*gamma / rms - x * mean(dloss2/dr*gamma * x) / rms**3)[1, 1] = 1.8592
dloss2/dx[1, 2] = (dloss2/dr*gamma / rms - x * mean(dloss2/dr*gamma * x) / rms**3)[1, 2] = 0.7746
LINES
# Matrix products, tests/grad/explain_matmul.yaml, worked by hand: in batch 1,
# h = P[1] @ Q[1] = [[0, 1], [2, 3]] @ [[1, 1], [-2, 1]] = [[-2, 1], [-4, 5]] and ds/dh = 2h;
# ds/dQ[1, 0, 1] = P[1, :, 0] . ds/dh[1, :, 1] = 0*2 + 2*10 = 20;
# ds/dP[1, 0, 1] through h = ds/dh[1, 0, :] . Q[1, 1, :] = -4*-2 + 2*1 = 10, and P[0] took
# nothing of batch 1; a vector's share shows its value: u = v @ W, ds/du = column sums of
# P[0] = [1.5, 1], ds/dv[1] = W[1, :] . ds/du = 2*1.5 - 1*1 = 2.
out=$(NO_COLOR=1 "$tracer" --width 200 --explain 'ds/dP[1,0,1]' --explain 'ds/dQ[1,0,1]' --explain 'ds/dv[1]' \
    tests/grad/explain_matmul.yaml) || { echo "the tracer failed"; exit 1; }
expect <<'LINES'
through h: (ds/dh @ Q.T)[1, 0, 1] = ds/dh[1, 0, :] · Q[1, 1, :] = (-4.0000×-2.0000) + (2.0000×1.0000) = 10.0000
through P[0]: (ds/ds.3 put back in the places P[0] took from P)[1, 0, 1] = nothing took this entry: 0.0000
ds/dP[1, 0, 1] = 10.0000 + 0.0000 = 10.0000
ds/dQ[1, 0, 1] = P[1, :, 0] · ds/dh[1, :, 1] = (0.0000×2.0000) + (2.0000×10.0000) = 20.0000
ds/dv[1] = 2.0000
LINES
# Log-softmax, tests/grad/explain_log_softmax.yaml, worked by hand: x = [0, 1, 2], so
# exp(y) = softmax(x) = [1, e, e^2] / (1 + e + e^2) = [0.0900, 0.2447, 0.6652]; loss = y[0], so
# dloss/dy = [1, 0, 0], whose sum is 1, and dloss/dx = dloss/dy - exp(y) * 1 = [0.9100, -0.2447, -0.6652].
out=$(NO_COLOR=1 "$tracer" --width 200 --explain 'dloss/dx' tests/grad/explain_log_softmax.yaml) \
    || { echo "the tracer failed"; exit 1; }
expect <<'LINES'
dloss/dx[0] = dloss/dy[0] - exp(y[0]) × sum over i of dloss/dy[i] = 1.0000 - 0.0900×(1.0000 + 0.0000 + 0.0000) = 0.9100
dloss/dx[1] = dloss/dy[1] - exp(y[1]) × sum over i of dloss/dy[i] = 0.0000 - 0.2447×(1.0000 + 0.0000 + 0.0000) = -0.2447
dloss/dx[2] = dloss/dy[2] - exp(y[2]) × sum over i of dloss/dy[i] = 0.0000 - 0.6652×(1.0000 + 0.0000 + 0.0000) = -0.6652
LINES
# A loss of inf (0 ** -0.5) has no finite differences to compare with: the note says so.
note='note: finite differences not checked: y is inf, and differences of it are not numbers'
if ! NO_COLOR=1 "$tracer" --width 200 tests/grad/infinite_loss.yaml | grep -qF "$note"; then
    echo "missing: $note"
    fail=1
fi
exit "$fail"
