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
#   z = sum(a[[1, 1, 0]]): a[1] was taken twice (places 0 and 1), a[0] once (place 2).
# Usage: grad_explain.sh TRACER, run from the project root.
set -u
tracer=$1
out=$(NO_COLOR=1 "$tracer" --width 200 --explain 'dloss/dx[0,1]' --explain 'dloss/dW[1,0]' --explain 'dloss/dloss.1' \
    --explain 'ds/da[1]' --explain 'dz/da' tests/grad/explain.yaml) || { echo "the tracer failed"; exit 1; }
fail=0
while IFS= read -r line; do
    if ! printf '%s\n' "$out" | grep -qxF "      $line"; then
        echo "missing: $line"
        fail=1
    fi
done <<'LINES'
dloss/dloss.1[0] = 1 × (softmax(h[0])[0] - onehot[0]) = 1.0000 × (0.6341 - 0) = 0.6341
dloss/dloss.1[1] = 1 × (softmax(h[0])[1] - onehot[1]) = 1.0000 × (0.3659 - 1) = -0.6341
dloss/dx[0, 1] = dloss/dh[0, :] · W[1, :] = (0.6341×0.1000) + (-0.6341×0.2000) = -0.0634
dloss/dW[1, 0] = x[:, 1] · dloss/dh[:, 0] = (2.0000×0.6341) + (-1.0000×0.0000) = 1.2683
through (a * a + a): (ds/ds.2)[1] = 1.0000
ds/da[1] = 2.0000 + 2.0000 + 1.0000 = 5.0000
dz/da[0] = dz/dz.1[2] = 1.0000
dz/da[1] = dz/dz.1[0] + dz/dz.1[1] = 2.0000
LINES
[ "$fail" = 0 ] || printf '%s\n' "$out" | grep -A8 'work:'
# A loss of inf (0 ** -0.5) has no finite differences to compare with: the note says so.
note='note: finite differences not checked: y is inf, and differences of it are not numbers'
if ! NO_COLOR=1 "$tracer" --width 200 tests/grad/infinite_loss.yaml | grep -qF "$note"; then
    echo "missing: $note"
    fail=1
fi
exit "$fail"
