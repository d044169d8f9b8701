#!/usr/bin/env python3
"""Differential test: random lessons, traced by the tracer and recomputed with numpy.

    difftest.py TRACER [--lessons N] [--invalid M] [--seed S] [--dir DIR]

From a fixed seed this writes N random valid lessons (shapes of rank 0 to 4 with size-1 and
empty axes, numpy broadcasting, every function of doc/lesson-format.md, every indexing form, `None` and
`reshape`, and extreme values: 1e300, 1e-300, subnormals, overflow to inf) and M invalid
ones. A valid lesson must trace (exit 0) and every stage must agree with numpy within 1e-12,
compared by tests/crosscheck.py's evaluator, which shares nothing with the tracer's code. An
invalid lesson must exit 1 with a located error: `FILE:LINE:COL: error: ...` naming the line
of the broken step, the source line and a caret. Every failing lesson is kept in DIR with the
tracer's output, so it can be rerun by hand.

Values that reach sums and products (matrix products, reductions, softmax, norms) are
ordinary numbers: numpy adds in another order (pairwise, BLAS), so only those results are
compared to 1e-12 and not to the last bit. Extreme values go through the operations whose
result does not depend on an order: elementwise functions and arithmetic, max, min, argmax,
indexing, concat, reshape and the head and axis shuffles.

Exit status: 0 all agree, 1 any mismatch, 2 usage, 77 (meson's skip, with a loud message)
when no python3 with numpy and yaml is found.
"""

import os
import random
import subprocess
import sys

# crosscheck re-runs this script with /usr/bin/python3 when the first python3 lacks numpy,
# and exits 77 (skipped, loudly) when no interpreter has it.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import crosscheck  # noqa: E402
import numpy as np  # noqa: E402 - importable once crosscheck is

MAX_VALUES = 48  # per tensor: small lessons, many of them
EXTREMES = [1e300, -1e300, 1e-300, -1e-300, 5e-324, -2.5e-320, 0.0, 1e-5, 710.0, -745.0,
            1e8, -3.5, 1.0, 2.0]
ORDERLESS = {"unary", "binary", "pick", "triangle", "repeat", "order", "stack", "maxmin", "argmax", "index", "concat", "transpose", "heads",
             "reshape", "newaxis", "take_table"}


# Forms the tracer does not have yet; the generator leaves them out.
PENDING = set()


class Skip(Exception):
    """The generator drew a combination it cannot make valid: draw again."""


def size_of(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def number_text(v):
    if v == int(v) and abs(v) < 1e15:
        return str(int(v))
    return repr(float(v))


def nested_text(values, shape):
    if not shape:
        return number_text(values[0])
    step = size_of(shape[1:])
    return "[" + ", ".join(nested_text(values[i * step:(i + 1) * step], shape[1:])
                           for i in range(shape[0])) + "]"


class Lesson:
    """A lesson being drawn: givens made on demand, steps whose shapes numpy works out."""

    def __init__(self, rng):
        self.rng = rng
        self.givens = []  # (name, yaml text)
        self.steps = []   # (name, expression)
        self.env = {}     # name -> numpy value (crosscheck's T or S)
        self.extreme = set()  # names holding extreme values
        self.count = 0

    # ------------------------------------------------------------ operands

    def fresh_name(self, prefix):
        self.count += 1
        return "%s%d" % (prefix, self.count)

    def random_shape(self, rank=None):
        rng = self.rng
        rank = rng.choice([0, 1, 1, 2, 2, 2, 3, 3, 4]) if rank is None else rank
        while True:
            shape = tuple(rng.choice([1, 1, 2, 2, 3, 3, 4, 5]) for _ in range(rank))
            if size_of(shape) <= MAX_VALUES:
                return shape

    def given(self, shape, kind="ordinary", bound=None):
        """A new given of this shape; kind ordinary, extreme or index (whole numbers below
        bound). Givens cannot have empty axes: those come from slices."""
        rng = self.rng
        n = size_of(shape)
        if kind == "index":
            values = [float(rng.randrange(bound)) for _ in range(n)]
        elif kind == "extreme":
            values = [rng.choice(EXTREMES) if rng.random() < 0.6 else round(rng.gauss(0, 3), 3)
                      for _ in range(n)]
        elif rng.random() < 0.2:
            values = [float(rng.randrange(-4, 5)) for _ in range(n)]
        else:
            values = [round(rng.gauss(0, 1), rng.choice([1, 2, 4, 6])) for _ in range(n)]
        name = self.fresh_name({"index": "i", "extreme": "E"}.get(kind, "G"))
        self.givens.append((name, nested_text(values, shape)))
        self.env[name] = np.array(values, dtype=np.float64).reshape(shape).view(crosscheck.T)
        if kind == "extreme":
            self.extreme.add(name)
        return name

    def operand(self, ordinary=False, min_rank=0, nonempty=False):
        """An existing name or a new given: (text, shape, extreme)."""
        rng = self.rng
        names = [n for n in self.env
                 if len(self.env[n].shape) >= min_rank
                 and not (ordinary and n in self.extreme)
                 and not (nonempty and size_of(self.env[n].shape) == 0)
                 and not isinstance(self.env[n], crosscheck.S)]
        if names and rng.random() < 0.7:
            name = rng.choice(names)
        else:
            kind = "ordinary" if ordinary or rng.random() < 0.7 else "extreme"
            rank = rng.choice([r for r in (0, 1, 2, 2, 3, 4) if r >= min_rank])
            name = self.given(self.random_shape(rank), kind)
        return name, tuple(self.env[name].shape), name in self.extreme

    def broadcast_partner(self, shape, extreme_ok):
        """A name whose shape broadcasts with `shape` (dims set to 1, leading dims dropped)."""
        rng = self.rng
        if rng.random() < 0.2:
            return number_text(rng.choice([2.0, 0.5, -1.0, 3.0, 1e-3]))
        target = list(shape[rng.randrange(len(shape) + 1):]) if shape else []
        target = [1 if rng.random() < 0.3 else d for d in target]
        if rng.random() < 0.2 and len(target) == len(shape) and len(target) < 4:
            # a new leading axis broadcasts only in front of all of shape's axes
            target = [rng.choice([1, 2])] + target
        if size_of(target) > MAX_VALUES or 0 in target:
            target = [1 if d == 0 else d for d in target]
        for name, value in self.env.items():
            if tuple(value.shape) == tuple(target) and (extreme_ok or name not in self.extreme) \
                    and rng.random() < 0.5:
                return name
        return self.given(tuple(target), "extreme" if extreme_ok and rng.random() < 0.3 else "ordinary")

    # ------------------------------------------------------------ expressions

    def expression(self):
        """(expression text, family) for one new step."""
        rng = self.rng
        family = rng.choice(["unary", "unary", "binary", "binary", "binary", "matmul", "reduce",
                             "maxmin", "argmax", "softmax", "norm", "concat", "numel", "heads",
                             "construct", "rope", "take", "take_table", "cross_entropy",
                             "index", "index", "index", "transpose", "empty", "nested",
                             "newaxis", "reshape", "separated", "compare", "close", "allany", "pick",
                             "cumsum", "triangle", "repeat", "order", "sampling", "stack"])
        if family in PENDING:
            raise Skip()
        return getattr(self, "make_" + family)(), family

    def make_unary(self):
        name, shape, extreme = self.operand()
        fn = self.rng.choice(["exp", "log", "sqrt", "abs", "relu", "tanh", "gelu", "copy", "-",
                              "sin", "cos"])
        if fn in ("sin", "cos") and extreme:
            fn = "abs"  # sin(1e300) is argument reduction, where libm versions may differ
        if self.rng.random() < 0.25:
            fn = self.rng.choice(["sigmoid", "floor", "ceil", "round"])
            if fn != "sigmoid" and extreme:
                fn = "sigmoid"  # a whole number past 2^53 is refused as a count that is not exact
        return "-%s" % name if fn == "-" else "%s(%s)" % (fn, name)

    def make_binary(self):
        name, shape, extreme = self.operand()
        other = self.broadcast_partner(shape, True)
        op = self.rng.choice(["+", "-", "*", "/", "**"])
        if op == "**":
            other = number_text(self.rng.choice([2.0, 3.0, 0.5, -1.0]))
        pair = [name, other]
        if op != "**" and self.rng.random() < 0.5:
            pair.reverse()
        return "%s %s %s" % (pair[0], op, pair[1])

    def make_compare(self):
        name, shape, _ = self.operand()
        other = self.broadcast_partner(shape, True)
        op = self.rng.choice(["==", "!=", "<", "<=", ">", ">="])
        pair = [name, other] if self.rng.random() < 0.5 else [other, name]
        return "%s %s %s" % (pair[0], op, pair[1])

    def make_pick(self):
        """maximum, minimum, where or clip: each value picked from one of broadcast operands."""
        rng = self.rng
        name, shape, _ = self.operand()
        other = self.broadcast_partner(shape, True)
        fn = rng.choice(["maximum", "minimum", "where", "clip"])
        if fn == "where":
            third = self.broadcast_partner(shape, True)
            return "where(%s > %s, %s, %s)" % (name, other, third, name)
        if fn == "clip":
            third = self.broadcast_partner(shape, True)
            return "clip(%s, %s, %s)" % (name, other, third)
        pair = [name, other] if rng.random() < 0.5 else [other, name]
        return "%s(%s, %s)" % (fn, pair[0], pair[1])

    def make_close(self):
        name, shape, _ = self.operand()
        other = self.broadcast_partner(shape, True)
        tol = self.rng.choice(["", ", rtol=0.5", ", atol=0.1", ", rtol=0, atol=0"])
        return "allclose(%s, %s%s)" % (name, other, tol)

    def make_allany(self):
        name, shape, _ = self.operand()
        axis, text = self.axis_args(shape)
        if (size_of(shape) == 0 if axis is None else shape[axis] == 0):
            raise Skip()  # reductions refuse an empty axis
        keep = ", keepdims=True" if self.rng.random() < 0.3 else ""
        return "%s(%s%s%s)" % (self.rng.choice(["all", "any"]), name, text, keep)

    def make_matmul(self):
        rng = self.rng
        name, shape, _ = self.operand(ordinary=True, min_rank=1)
        k = shape[-1]
        if len(shape) == 1:
            right = rng.choice([(k,), (k, rng.choice([1, 2, 3]))])
        else:
            batch = shape[:-2] if rng.random() < 0.5 else ()
            right = rng.choice([(k,), batch + (k, rng.choice([1, 2, 3]))])
        if size_of(right) > MAX_VALUES or 0 in right:
            raise Skip()
        return "%s @ %s" % (name, self.given(right))

    def axis_args(self, shape, allow_none=True):
        rng = self.rng
        if not shape or (allow_none and rng.random() < 0.25):
            return None, ""
        axis = rng.randrange(-len(shape), len(shape))
        return axis, ", axis=%d" % axis

    def make_reduce(self):
        name, shape, _ = self.operand(ordinary=True)
        fn = self.rng.choice(["sum", "mean", "var", "norm"])
        axis, text = self.axis_args(shape)
        keep = ", keepdims=True" if self.rng.random() < 0.3 else ""
        return "%s(%s%s%s)" % (fn, name, text, keep)

    def make_maxmin(self):
        name, shape, _ = self.operand()
        axis, text = self.axis_args(shape)
        if (size_of(shape) == 0 if axis is None else shape[axis] == 0):
            raise Skip()  # refused: the invalid lessons cover it
        keep = ", keepdims=True" if self.rng.random() < 0.3 else ""
        return "%s(%s%s%s)" % (self.rng.choice(["max", "min"]), name, text, keep)

    def make_argmax(self):
        name, shape, _ = self.operand()
        axis, text = self.axis_args(shape)
        if (size_of(shape) == 0 if axis is None else shape[axis] == 0):
            raise Skip()
        return "argmax(%s%s)" % (name, text)

    def make_softmax(self):
        """softmax or log_softmax, over the last axis or one axis= names."""
        name, shape, _ = self.operand(ordinary=True, min_rank=1, nonempty=True)
        fn = self.rng.choice(["softmax", "log_softmax"])
        axis, text = self.axis_args(shape)
        return "%s(%s%s)" % (fn, name, text)

    def make_repeat(self):
        name, shape, _ = self.operand(min_rank=1)
        axis, text = self.axis_args(shape, allow_none=len(shape) == 1)
        if size_of(shape) * 3 > MAX_VALUES:
            raise Skip()
        return "repeat_interleave(%s, %d%s)" % (name, self.rng.randrange(1, 4), text)

    def make_order(self):
        """sort, argsort, topk or argtopk of the last axis; equal values and nan included."""
        name, shape, _ = self.operand(min_rank=1)
        fn = self.rng.choice(["sort", "argsort", "topk", "argtopk"])
        if fn in ("topk", "argtopk"):
            if shape[-1] == 0:
                raise Skip()
            return "%s(%s, %d)" % (fn, name, self.rng.randrange(1, shape[-1] + 1))
        return "%s(%s)" % (fn, name)

    def make_sampling(self):
        """top_p of a softmax, the id drawn from one for a given or seeded u, or seeded uniform
        numbers."""
        rng = self.rng
        # a new given: a step's values may be nan or inf, which no distribution holds
        shape = self.random_shape(self.rng.choice([1, 2, 2, 3]))
        if 0 in shape:
            raise Skip()
        name = self.given(shape, "ordinary")
        rows = list(shape[:-1])
        probs = "softmax(%s)" % name
        kind = rng.choice(["top_p", "top_p", "sample", "uniform"])
        if kind == "uniform":
            sizes = "" if not shape or rng.random() < 0.3 else "%s, " % list(shape)
            return "uniform(%sseed=%d)" % (sizes, rng.randrange(0, 1000))
        if kind == "top_p":
            return "top_p(%s, %s)" % (probs, rng.choice(["0.1", "0.5", "0.9", "1", "0.999", "0.25"]))
        if rng.random() < 0.4 or not rows:
            u = rng.choice(["0", "0.5", "0.999", "0.25", "uniform(seed=%d)" % rng.randrange(1000)])
        else:
            u = "uniform(%s, seed=%d)" % (rows, rng.randrange(1000))
        return "sample(%s, %s)" % (rng.choice([probs, "top_p(%s, 0.9)" % probs]), u)

    def make_stack(self):
        """A list of two to four items of one shape, steps and expressions among them, stacked
        as numpy's stack."""
        rng = self.rng
        name, shape, _ = self.operand()
        if len(shape) > 3:
            raise Skip()
        items = [rng.choice([name, "(%s) * 2" % name, "-%s" % name, "abs(%s)" % name])
                 for _ in range(rng.randrange(2, 5))]
        if not shape:
            items.append(number_text(rng.choice([0.5, -1.0, 3.0])))
        return "[%s]" % ", ".join(items)

    def make_cumsum(self):
        name, shape, _ = self.operand(min_rank=1)
        axis, text = self.axis_args(shape, allow_none=len(shape) == 1)
        return "cumsum(%s%s)" % (name, text)

    def make_norm(self):
        rng = self.rng
        if rng.random() < 0.5:
            name, shape, _ = self.operand(ordinary=True, min_rank=1, nonempty=True)
            fn = "layernorm"
        else:
            name, shape, _ = self.operand(ordinary=True, min_rank=2, nonempty=True)
            fn = "batchnorm"
        d = shape[-1]
        gamma = self.given((d,)) if rng.random() < 0.6 else "1"
        beta = self.given((d,)) if rng.random() < 0.6 else "0"
        eps = ", eps=%s" % rng.choice(["1e-5", "0.001", "0"]) if rng.random() < 0.3 else ""
        return "%s(%s, %s, %s%s)" % (fn, name, gamma, beta, eps)

    def make_concat(self):
        rng = self.rng
        name, shape, _ = self.operand(min_rank=1)
        axis = rng.randrange(-len(shape), len(shape))
        other = list(shape)
        other[axis] = rng.choice([1, 2])
        if size_of(other) > MAX_VALUES or 0 in other:
            raise Skip()
        parts = [name, self.given(tuple(other), "extreme" if rng.random() < 0.2 else "ordinary")]
        rng.shuffle(parts)
        return "concat(%s, %s, axis=%d)" % (parts[0], parts[1], axis)

    def make_numel(self):
        name, _, _ = self.operand()
        return "numel(%s)" % name

    def make_heads(self):
        rng = self.rng
        if rng.random() < 0.5:
            name, shape, _ = self.operand(min_rank=2)
            d = shape[-1]
            divisors = [h for h in range(1, d + 1) if d % h == 0] or [1]
            if len(shape) > 3 or d == 0:
                raise Skip()
            return "split_heads(%s, %d)" % (name, rng.choice(divisors))
        name, shape, _ = self.operand(min_rank=3)
        return "merge_heads(%s)" % name

    def make_construct(self):
        rng = self.rng
        n = rng.randrange(1, 6)
        m = rng.randrange(0, 4)
        return rng.choice(["causal_mask(%d)" % n, "relative_positions(%d)" % n, "arange(%d)" % n,
                           "sinusoidal(%d, %d)" % (n, 2 * rng.randrange(1, 4)),
                           "alibi_slopes(%d)" % n, "eye(%d)" % n, "ones([%d, %d])" % (n, m),
                           "zeros(%d)" % n, "full([%d, %d], %s)" % (m, n, rng.choice(["-inf", "2.5", "-1"]))])

    def make_triangle(self):
        """tril or triu of a matrix or a batch of them, on a diagonal k from -3 to 3."""
        name, shape, _ = self.operand(min_rank=2)
        k = self.rng.randrange(-3, 4)
        return "%s(%s%s)" % (self.rng.choice(["tril", "triu"]), name, ", k=%d" % k if k else "")

    def make_rope(self):
        rng = self.rng
        n, half = rng.randrange(1, 5), rng.randrange(1, 4)
        x = self.given((n, 2 * half))
        positions = self.given((n,), "index", 20)
        return "rope(%s, %s)" % (x, positions)

    def make_take(self):
        name, shape, _ = self.operand(ordinary=True, nonempty=True)
        idx = self.given(self.random_shape(self.rng.choice([0, 1, 2])), "index", size_of(shape))
        return "take(%s, %s)" % (name, idx)

    def make_take_table(self):
        name, shape, _ = self.operand(nonempty=True)
        ids = [str(self.rng.randrange(size_of(shape))) for _ in range(self.rng.randrange(1, 4))]
        return "take(%s, [%s])" % (name, ", ".join(ids))

    def make_cross_entropy(self):
        name, shape, _ = self.operand(ordinary=True, min_rank=1, nonempty=True)
        if len(shape) > 2:
            raise Skip()
        target = self.given(shape[:-1], "index", shape[-1])
        return "cross_entropy(%s, %s)" % (name, target)

    def index_items(self, shape):
        """Index items for a tensor of this shape, as the tracer accepts them: whole numbers
        (negative too), slices inside the axis, one list or tensor of positions at most."""
        rng = self.rng
        items, used_list = [], False
        count = rng.randrange(1, len(shape) + 1)
        for axis in range(count):
            d = shape[axis]
            kind = rng.choice(["int", "slice", "all", "list", "tensor", "none"])
            if kind == "none" and "newaxis" in PENDING:
                kind = "all"
            if kind in ("list", "tensor") and (used_list or d == 0):
                kind = "slice"
            if kind == "int" and d == 0:
                kind = "all"
            if kind == "int":
                items.append(str(rng.randrange(-d, d)))
            elif kind == "all":
                items.append(":")
            elif kind == "none":
                items.append("None")
                items.append(":")
            elif kind == "slice":
                a = rng.randrange(0, d + 1)
                b = rng.randrange(a, d + 1)
                text = ("%d" % a if a or rng.random() < 0.5 else "") + ":" + \
                       ("%d" % b if b != d or rng.random() < 0.5 else "")
                items.append(text)
            elif kind == "list":
                used_list = True
                items.append("[%s]" % ", ".join(str(rng.randrange(-d, d))
                                                 for _ in range(rng.randrange(1, 4))))
            else:
                used_list = True
                items.append(self.given(self.random_shape(rng.choice([0, 1])), "index", d))
        if rng.random() < 0.2 and "newaxis" not in PENDING:
            items.append("None")
        return items

    def make_index(self):
        name, shape, _ = self.operand(min_rank=1)
        return "%s[%s]" % (name, ", ".join(self.index_items(shape)))

    def make_separated(self):
        """Two advanced indices (a whole number or a list) with a slice between them: numpy puts
        the axes they index first, X[0, :, [2, 0, 1]] on [1, 2, 3] is [3, 2]."""
        rng = self.rng
        name, shape, _ = self.operand(min_rank=3, nonempty=True)
        first = rng.randrange(len(shape) - 2)
        last = rng.randrange(first + 2, len(shape))
        items = [":"] * (last + 1)
        for axis in (first, last):
            d = shape[axis]
            items[axis] = str(rng.randrange(-d, d))
        axis = rng.choice((first, last))
        items[axis] = "[%s]" % ", ".join(str(rng.randrange(shape[axis])) for _ in range(rng.randrange(1, 4)))
        return "%s[%s]" % (name, ", ".join(items))

    def make_newaxis(self):
        name, shape, _ = self.operand()
        items = [":"] * len(shape)
        for _ in range(self.rng.randrange(1, 3)):
            if len(items) < 4:
                items.insert(self.rng.randrange(len(items) + 1), "None")
        if len([i for i in items if i == "None"]) + len(shape) > 4:
            raise Skip()
        return "%s[%s]" % (name, ", ".join(items))

    def make_reshape(self):
        rng = self.rng
        name, shape, _ = self.operand()
        n = size_of(shape)
        dims = []
        rest = n
        for _ in range(rng.randrange(0, 4)):
            divisors = [k for k in range(1, rest + 1) if rest % k == 0] if rest else [0, 1, 2]
            k = rng.choice(divisors)
            dims.append(k)
            rest = rest // k if k else rest
        if rest != 1 or (n == 0 and 0 not in dims):
            dims.append(rest)
        if len(dims) > 4 or (n == 0 and dims.count(0) == 0):
            raise Skip()
        if not dims:
            dims = [1]  # a lesson cannot write [] (reshape to a single number)
        if dims and rng.random() < 0.4 and (n != 0):
            dims[rng.randrange(len(dims))] = -1
        return "reshape(%s, [%s])" % (name, ", ".join(str(d) for d in dims))

    def make_transpose(self):
        name, _, _ = self.operand(min_rank=2)
        return "%s.T" % name

    def make_empty(self):
        name, shape, _ = self.operand(min_rank=1)
        axis = self.rng.randrange(len(shape))
        a = self.rng.randrange(shape[axis] + 1)
        items = [":"] * axis + ["%d:%d" % (a, a)]
        return "%s[%s]" % (name, ", ".join(items))

    def make_nested(self):
        """Two operations in one step, so intermediates are compared too."""
        inner, family = self.expression()
        if family not in ("unary", "reduce", "softmax", "cumsum", "index", "transpose", "construct"):
            raise Skip()
        name = self.fresh_name("t")
        if not self.try_step(name, inner):
            raise Skip()
        self.steps.pop()
        value = self.env.pop(name)
        outer = self.rng.choice(["exp(%s)", "(%s) * 2", "-(%s)", "sum(%s)", "abs(%s) + 1"])
        if outer == "sum(%s)" and (isinstance(value, crosscheck.S) or value.ndim == 0):
            outer = "(%s) * 2"
        return outer % inner

    # ------------------------------------------------------------ steps

    def try_step(self, name, text):
        try:
            value = crosscheck.evaluate(text, self.env)
        except crosscheck.CheckError:
            return False
        shape = tuple(value.shape)
        if len(shape) > 4 or size_of(shape) > 4 * MAX_VALUES:
            return False
        self.steps.append((name, text))
        self.env[name] = value
        return True

    def add_step(self):
        for _ in range(50):
            saved = (list(self.givens), dict(self.env), set(self.extreme))
            try:
                text, family = self.expression()
            except Skip:
                self.givens, self.env, self.extreme = saved
                continue
            name = self.fresh_name("s")
            uses_extreme = any(n in self.extreme for n in self.env if n in text.replace("(", " ")
                               .replace(")", " ").replace(",", " ").replace("[", " ")
                               .replace("]", " ").split())
            if uses_extreme and family not in ORDERLESS:
                self.givens, self.env, self.extreme = saved
                continue
            if self.try_step(name, text):
                if uses_extreme:
                    self.extreme.add(name)
                return True
            self.givens, self.env, self.extreme = saved
        return False

    def text(self, title):
        lines = ['title: "%s"' % title, "given:"]
        if not self.givens:
            lines.append("  one: 1")
        lines += ["  %s: %s" % (name, value) for name, value in self.givens]
        lines.append("steps:")
        lines += ['  - %s: "%s"' % (name, expr) for name, expr in self.steps]
        return "\n".join(lines) + "\n"


def valid_lesson(rng, index):
    lesson = Lesson(rng)
    for _ in range(rng.randrange(2, 7)):
        lesson.add_step()
    if not lesson.steps:
        lesson.add_step()
    return lesson.text("random lesson %d" % index)


# ---------------------------------------------------------------- invalid lessons

def invalid_lesson(rng, index):
    """(lesson text, line of the broken step): a valid start and one broken step."""
    lesson = Lesson(rng)
    lesson.add_step()
    x = lesson.given((2, 3))
    y = lesson.given((4, 5))
    v = lesson.given((3,))
    broken = rng.choice([
        "%s @ %s" % (x, y),                          # inner dimensions differ
        "%s + %s" % (x, y),                          # shapes do not broadcast
        "nosuchname + %s" % x,                       # unknown name
        "sofmax(%s)" % x,                            # unknown function
        "sum(%s, axis=2)" % x,                       # axis out of range
        "%s[2]" % x,                                 # index past the end
        "%s[0, 0, 0]" % x,                           # too many indices
        "%s[0:4]" % x,                               # slice past the end
        "max(%s[:, 1:1], axis=1)" % x,               # max over an empty axis
        "min(%s[1:1], axis=0)" % x,                  # min over an empty axis
        "argmax(%s[:, 2:2], axis=-1)" % x,           # argmax over an empty axis
        "softmax(%s[:, 0:0])" % x,                   # softmax over an empty axis
        "layernorm(%s[:, 3:3], 1, 0)" % x,           # layernorm over an empty axis
        "max(%s[0:0])" % v,                          # max of nothing
        "take(%s[0:0], [0])" % v,                    # take from an empty table
        "take(%s, [3])" % v,                         # take past the end
        "%s +* %s" % (x, v),                         # syntax
        "reshape(%s, [4, 2])" % x,                   # reshape to another size
        "reshape(%s, [-1, -1])" % x,                 # two -1
        "reshape(%s, [-1, 4])" % x,                  # -1 cannot make 6 values
        "%s[None, None, None, :, :]" % x,            # more than four axes
        "%s[[0, 1], :, [0, 1]]" % lesson.given((2, 2, 2)),  # separated lists
        "split_heads(%s, 2)" % x,                    # 3 columns into 2 heads
        "concat(%s, %s, axis=0)" % (x, y),           # concat shapes differ
        "cross_entropy(%s, 3)" % v,                  # target past the vocabulary
    ])
    name = lesson.fresh_name("bad")
    lesson.steps.append((name, broken))
    text = lesson.text("broken lesson %d" % index)
    line = text.split("\n").index('  - %s: "%s"' % (name, broken)) + 1
    return text, line, broken


def check_invalid(tracer, path, line):
    proc = subprocess.run([tracer, path], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=60)
    err = proc.stderr.decode("utf-8", "replace")
    lines = err.split("\n")
    prefix = "%s:%d:" % (path, line)
    problems = []
    if proc.returncode != 1:
        problems.append("exit status %d, expected 1" % proc.returncode)
    if proc.stdout:
        problems.append("printed %d bytes on stdout" % len(proc.stdout))
    if not lines[0].startswith(prefix) or ": error: " not in lines[0]:
        problems.append("first line is not '%s<col>: error: ...'" % prefix)
    if len(lines) < 3 or "|" not in lines[1] or "^" not in lines[2]:
        problems.append("no source line with a caret under it")
    if not any(l.startswith("hint: ") for l in lines):
        problems.append("no hint")
    return problems, err


def main(argv):
    args = argv[1:]
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    tracer = args.pop(0)
    options = {"--lessons": 300, "--invalid": 100, "--seed": 8, "--dir": "difftest"}
    while args:
        key = args.pop(0)
        if key not in options or not args:
            print("unknown or incomplete option %r" % key, file=sys.stderr)
            return 2
        options[key] = args.pop(0) if key == "--dir" else int(args.pop(0))
    directory = options["--dir"]
    os.makedirs(directory, exist_ok=True)
    rng = random.Random(options["--seed"])
    failures = 0
    stages = 0
    for i in range(options["--lessons"]):
        text = valid_lesson(rng, i)
        path = os.path.join(directory, "valid_%04d.yaml" % i)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        try:
            count, problems = crosscheck.check_lesson(tracer, path)
            stages += count
        except crosscheck.CheckError as exc:
            problems = [str(exc)]
        if problems:
            failures += 1
            print("FAIL %s\n  %s" % (path, "\n  ".join(p.replace("\n", "\n  ") for p in problems[:3])))
        else:
            os.remove(path)
    for i in range(options["--invalid"]):
        text, line, broken = invalid_lesson(rng, i)
        path = os.path.join(directory, "invalid_%04d.yaml" % i)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        problems, err = check_invalid(tracer, path, line)
        if problems:
            failures += 1
            print("FAIL %s (%s): %s\n  stderr: %s" % (path, broken, "; ".join(problems),
                                                     err.strip().replace("\n", "\n          ")))
        else:
            os.remove(path)
    print("%d valid lessons (%d stages compared with numpy), %d invalid lessons, %d failed "
          "(seed %d)" % (options["--lessons"], stages, options["--invalid"], failures,
                        options["--seed"]))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
