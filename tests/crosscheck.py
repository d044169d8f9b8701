#!/usr/bin/env python3
"""Independent numpy cross-check of the tracer's numbers.

    crosscheck.py TRACER LESSON.yaml [LESSON.yaml ...]

For each lesson this runs `TRACER --format json LESSON`, then recomputes every stage of the
trace here with numpy and compares:

  * the JSON is valid (strict: bare NaN/Infinity are rejected; non-finite values must be the
    strings "inf", "-inf", "nan"), its title is the lesson's, and its stages are exactly: the
    givens in file order, then for each step its intermediates followed by the step itself
    (kind "step", name = the step's name, expr = the step's text in the YAML); each
    intermediate's expr must be a piece of its step's text;
  * every given: built here from the YAML (numbers, nested lists, values:, shape: with
    init: zeros | ones | identity | random -- splitmix64 + Box-Muller re-implemented in pure
    Python -- or shape: alone = shape-only);
  * every intermediate and step: its expression is evaluated with Python's eval in a namespace
    holding only the lesson's names and the functions doc/lesson-format.md lists, each written again
    with numpy: here, or for an elementwise operation in its data file (tests/ops/NAME.yaml,
    `numpy:`). Steps are evaluated from the YAML text and the results of *this* script
    (never the tracer's) feed later steps.
  * shapes must be equal; values must agree within |a - b| <= 1e-12 * max(1, |b|) (b = numpy);
    inf, -inf and nan must match exactly; shape-only results (values null) compare shapes.
  * gradient stages (kind "gradient", of y, wrt x) may stand before any step, among its
    intermediates: when x is a given or a step, the tracer's gradient is compared with central
    finite differences computed here (every element, or 256 spread over a large tensor; the
    steps from x to y evaluated again with numpy around each moved element), within 1e-6 of
    the largest gradient. grad(y, x) in a step then stands for the tracer's gradient, so the
    steps that use it are checked exactly against it. (tests/torchcheck.py compares the same
    gradients with PyTorch's autograd within 1e-10.)

Why it is independent of the C code: nothing here reads, links or shares the tracer's sources,
parser or kernels. The lesson is read with PyYAML, expressions are parsed by Python itself
(numeric literals and list literals are rewritten to float64 tensors first), and the maths is
numpy's. Only the JSON output of the tracer binary is consumed. Two implementations of the
contract (the lesson format, doc/lesson-format.md) agreeing to 1e-12 is the evidence that the printed tensors are right.

Exit status: 0 all lessons agree, 1 any mismatch or tracer failure, 2 usage error, 77 (meson's
skip) when numpy or yaml cannot be imported -- with a loud message, never a silent pass.
"""

import ast
import io
import json
import keyword
import math
import os
import re
import subprocess
import sys
import tokenize
import types
import warnings

SKIP_MESSAGE = ("SKIP: the numpy cross-check needs python3 with numpy and yaml "
                "(Debian: apt-get install python3-numpy python3-yaml)")

try:
    import numpy as np
    import yaml
except ImportError as exc:  # pragma: no cover - depends on the machine
    # Debian's numpy lives in /usr/bin/python3 only; a python3 earlier on PATH (pyenv, venv)
    # may lack it. Try the system interpreter once before skipping.
    system_python = "/usr/bin/python3"
    # The script that was started re-runs, also when it only imports this module (difftest.py).
    if (os.environ.get("CROSSCHECK_REEXEC") is None and os.path.exists(system_python)
            and os.path.realpath(sys.executable) != os.path.realpath(system_python)):
        print("%s: %s lacks %s; re-running with %s"
              % (os.path.basename(sys.argv[0]), sys.executable, exc.name, system_python), file=sys.stderr)
        env = dict(os.environ, CROSSCHECK_REEXEC="1")
        os.execve(system_python, [system_python, os.path.abspath(sys.argv[0])] + sys.argv[1:], env)
    print("*" * 78, file=sys.stderr)
    print(SKIP_MESSAGE, file=sys.stderr)
    print("  (%s: %s, python %s)" % (type(exc).__name__, exc, sys.executable), file=sys.stderr)
    print("*" * 78, file=sys.stderr)
    sys.exit(77)

RTOL = 1e-12
RESERVED_STEP_KEYS = {"say", "rows", "cols", "document", "explain", "show", "claim", "quiz"}
MAX_SHOWN_ELEMENTS = 5
MAX_SHOWN_STAGES = 5


class CheckError(Exception):
    """A problem with one lesson: printed, and the lesson counts as failed."""


# ============================================================ tensors

class T(np.ndarray):
    """float64 tensor whose .T swaps only the last two axes and whose indices may be floats."""

    @property
    def T(self):  # noqa: N802 - numpy's name
        if self.ndim < 2:
            return self
        return self.swapaxes(-1, -2)

    def __getitem__(self, index):
        if _holds_shape_only(index):
            return S(np.asarray(self)[_index(_stand_in(index))].shape)
        return _wrap(np.asarray(self)[_index(index)])

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        inputs = tuple(np.asarray(x) if isinstance(x, T) else x for x in inputs)
        if "out" in kwargs:
            kwargs["out"] = tuple(np.asarray(x) if isinstance(x, T) else x
                                  for x in kwargs["out"])
        result = getattr(ufunc, method)(*inputs, **kwargs)
        if isinstance(result, tuple):
            return tuple(_wrap(r) for r in result)
        return _wrap(result)


class Loose(T):
    """A result numpy computes by another method (LAPACK's eigenvalues and singular values,
    where the tracer has EISPACK's and Jacobi's): compared within
    .tolerance (an array that broadcasts over it), not 1e-12. What is computed from it is a T."""


def _wrap(x):
    """Anything numeric -> T (float64, any rank including 0)."""
    if isinstance(x, (S, Loose)):
        return x
    if isinstance(x, (list, tuple)):
        if any(isinstance(v, S) for v in x):
            raise CheckError("a list literal cannot hold a shape-only tensor (unsupported here)")
        x = [np.asarray(v, dtype=np.float64) for v in x]
    a = np.asarray(x)
    if a.dtype.kind == "c":
        raise CheckError("complex number in an expression")
    return np.asarray(a, dtype=np.float64).view(T)


def _plain(x):
    """Value argument -> plain float64 ndarray (shape-only is the caller's business)."""
    if isinstance(x, S):
        raise CheckError("shape-only tensor given to a function that needs values")
    return np.asarray(_wrap(x))


def _int(x, what="index"):
    if x is None:
        return None
    if isinstance(x, bool):
        return int(x)
    if isinstance(x, S):
        raise CheckError("a shape-only tensor cannot be used as %s" % what)
    a = np.asarray(x, dtype=np.float64)
    if a.ndim != 0:
        raise CheckError("%s must be a single number, got shape %s" % (what, list(a.shape)))
    v = float(a)
    if not math.isfinite(v) or v != math.floor(v):
        raise CheckError("%s must be an integer, got %r" % (what, v))
    return int(v)


def _int_array(x):
    a = np.asarray(x, dtype=np.float64)
    if not np.all(np.isfinite(a)) or np.any(a != np.floor(a)):
        raise CheckError("index values must be integers, got %r" % (a.tolist(),))
    return a.astype(np.int64)


def _index_item(i):
    if isinstance(i, slice):
        return slice(_int(i.start), _int(i.stop), _int(i.step))
    if i is None or i is Ellipsis:
        return i
    if isinstance(i, S):
        raise CheckError("a shape-only tensor cannot be used as an index")
    a = np.asarray(_wrap(i) if isinstance(i, list) else i, dtype=np.float64)
    if a.ndim == 0:
        return _int(a)
    return _int_array(a)


def _holds_shape_only(index):
    items = index if isinstance(index, tuple) else (index,)
    return any(isinstance(i, S) for i in items)


def _stand_in(index):
    """A shape-only index (wte[ids], ids without values) -> zeros of its shape: only the
    result's shape is known, and so the result is shape-only too."""
    if isinstance(index, tuple):
        return tuple(_stand_in(i) for i in index)
    if isinstance(index, S):
        return np.zeros(index.shape, dtype=np.float64)
    return index


def _index(index):
    if isinstance(index, tuple):
        return tuple(_index_item(i) for i in index)
    return _index_item(index)


def _shape(x):
    if isinstance(x, S):
        return x.shape
    return tuple(np.shape(np.asarray(_wrap(x))))


def _matmul_shape(a, b):
    if len(a) == 0 or len(b) == 0:
        raise CheckError("matmul of a scalar")
    aa = (1,) + a if len(a) == 1 else a
    bb = b + (1,) if len(b) == 1 else b
    if aa[-1] != bb[-2]:
        raise CheckError("matmul shapes %s @ %s do not fit" % (list(a), list(b)))
    out = tuple(np.broadcast_shapes(aa[:-2], bb[:-2])) + (aa[-2], bb[-1])
    if len(b) == 1:
        out = out[:-1]
    if len(a) == 1:
        out = out[:-2] + out[-1:] if len(b) != 1 else out[:-1]
    return out


def _broadcast(*shapes):
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise CheckError("shapes %s do not broadcast" % [list(s) for s in shapes])


class S:
    """A shape-only tensor: a shape and no values. Operations give shape-only results."""

    __array_ufunc__ = None  # numpy defers to our reflected operators

    def __init__(self, shape):
        self.shape = tuple(int(d) for d in shape)

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def T(self):  # noqa: N802
        if len(self.shape) < 2:
            return self
        return S(self.shape[:-2] + (self.shape[-1], self.shape[-2]))

    def _bin(self, other):
        return S(_broadcast(self.shape, _shape(other)))

    __add__ = __radd__ = __sub__ = __rsub__ = _bin
    __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _bin
    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = _bin
    __pow__ = __rpow__ = _bin

    def __neg__(self):
        return self

    __pos__ = __neg__

    def __matmul__(self, other):
        return S(_matmul_shape(self.shape, _shape(other)))

    def __rmatmul__(self, other):
        return S(_matmul_shape(_shape(other), self.shape))

    def __getitem__(self, index):
        # A zero-stride view has any shape for free; numpy then works out the result shape.
        view = np.broadcast_to(np.zeros(()), self.shape)
        return S(view[_index(_stand_in(index))].shape)

    def __repr__(self):
        return "S(%s)" % list(self.shape)


def _any_shape_only(*xs):
    return any(isinstance(x, S) for x in xs)


# ============================================================ the functions of spec.md

def _picking(fn):
    """A numpy function of tensors broadcast together: every elementwise operation (exp, maximum,
    where, clip), read from its data file."""
    def f(*args):
        if _any_shape_only(*args):
            return S(_broadcast(*[_shape(a) for a in args]))
        with np.errstate(all="ignore"):
            return _wrap(fn(*[_plain(a) for a in args]))
    return f


def _along(x, axis, what):
    """The axis a softmax or a cumsum runs along, checked as the tracer checks it."""
    shape = _shape(x)
    if not shape:
        raise CheckError("%s needs at least one axis" % what)
    ax = _int(axis, "axis")
    if ax is None:
        if what == "cumsum" and len(shape) > 1:
            raise CheckError("cumsum of a matrix needs an axis to run along")
        ax = -1
    if not -len(shape) <= ax < len(shape):
        raise CheckError("axis %d does not exist" % ax)
    return ax


def _softmax_along(x, axis, what):
    ax = _along(x, axis, what)
    if isinstance(x, S):
        return x
    a = _plain(x)
    with np.errstate(all="ignore"):
        shifted = a - np.max(a, axis=ax, keepdims=True)
        if what == "log_softmax":
            return _wrap(shifted - np.log(np.sum(np.exp(shifted), axis=ax, keepdims=True)))
        e = np.exp(shifted)
        return _wrap(e / np.sum(e, axis=ax, keepdims=True))


def softmax(x, axis=None):
    return _softmax_along(x, axis, "softmax")


def log_softmax(x, axis=None):
    return _softmax_along(x, axis, "log_softmax")


def repeat_interleave(x, repeats, axis=None):
    ax = _along(x, axis, "cumsum")  # the same rule: an axis unless x has one
    r = _int(repeats, "repeats")
    if r < 1:
        raise CheckError("repeats must be 1 or more")
    if isinstance(x, S):
        shape = list(x.shape)
        shape[ax] *= r
        return S(tuple(shape))
    return _wrap(np.repeat(_plain(x), r, axis=ax))


def _ordered(what):
    """sort, argsort, topk and argtopk along the last axis: a stable order, nan last."""
    def f(x, k=None):
        shape = _shape(x)
        if not shape:
            raise CheckError("%s needs at least one axis" % what)
        n = shape[-1]
        kk = n if k is None else _int(k, "k")
        if not 1 <= kk <= n and k is not None:
            raise CheckError("k out of range")
        if isinstance(x, S):
            return S(tuple(shape[:-1]) + (kk,))
        a = _plain(x)
        if what in ("sort", "argsort"):
            order = np.argsort(a, axis=-1, kind="stable")
        else:
            # larger first, nan first, equal values by position: a stable sort of the negation
            order = np.argsort(np.where(np.isnan(a), -np.inf, -a), axis=-1, kind="stable")
            nan_first = np.argsort(~np.isnan(np.take_along_axis(a, order, -1)), axis=-1, kind="stable")
            order = np.take_along_axis(order, nan_first, -1)[..., :kk]
        if what.startswith("arg"):
            return _wrap(order.astype(np.float64))
        return _wrap(np.take_along_axis(a, order, -1))
    return f


EIG_TIE = 1e-12   # the tracer's KERNEL_EIG_TIE: moduli and real parts this close (times the
                  # largest modulus) count as equal
EIG_RTOL = 1e-9   # against numpy's eigenvalues and singular values, times the matrix's Frobenius norm


def _eig_order(ev, tie):
    """numpy's eigenvalues in the tracer's order: the larger modulus, then the larger real part,
    then the larger imaginary part, moduli and real parts within tie counting as equal; by the
    same stable insertion sort, as that comparison is not transitive near a tie."""
    ev = list(ev)

    def before(a, b):
        if abs(abs(a) - abs(b)) > tie:
            return abs(a) > abs(b)
        if abs(a.real - b.real) > tie:
            return a.real > b.real
        return a.imag > b.imag
    for i in range(1, len(ev)):
        j = i
        while j > 0 and before(ev[j], ev[j - 1]):
            ev[j], ev[j - 1] = ev[j - 1], ev[j]
            j -= 1
    return ev


def eigvals(a):
    shape = _shape(a)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise CheckError("eigvals needs square matrices, not %s" % list(shape))
    if isinstance(a, S):
        return S(tuple(shape[:-1]) + (2,))
    m = _plain(a)
    if not np.all(np.isfinite(m)):
        raise CheckError("eigvals of a matrix with inf or nan")
    n = shape[-1]
    if n == 0:
        return _wrap(np.zeros(tuple(shape[:-1]) + (2,)))
    flat = m.reshape((-1, n, n))
    out = np.zeros((flat.shape[0], n, 2))
    tolerance = np.zeros((flat.shape[0], 1, 1))
    for b, matrix in enumerate(flat):
        scale = np.max(np.abs(matrix))
        unit = matrix / scale if scale > 0 else matrix   # a Frobenius norm that cannot overflow
        found = np.linalg.eigvals(matrix)
        ordered = _eig_order(found, EIG_TIE * max(abs(v) for v in found))
        out[b, :, 0] = [v.real for v in ordered]
        out[b, :, 1] = [v.imag for v in ordered]
        tolerance[b] = EIG_RTOL * np.linalg.norm(unit) * scale
    result = out.reshape(tuple(shape[:-1]) + (2,)).view(Loose)
    result.tolerance = tolerance.reshape(tuple(shape[:-2]) + (1, 1))
    return result


def svdvals(a):
    shape = _shape(a)
    if len(shape) < 2:
        raise CheckError("svdvals needs matrices, not %s" % list(shape))
    q = min(shape[-2:])
    if isinstance(a, S):
        return S(tuple(shape[:-2]) + (q,))
    m = _plain(a)
    if not np.all(np.isfinite(m)):
        raise CheckError("svdvals of a matrix with inf or nan")
    if q == 0:
        return _wrap(np.zeros(tuple(shape[:-2]) + (0,)))
    flat = m.reshape((-1,) + tuple(shape[-2:]))
    out = np.zeros((flat.shape[0], q))
    tolerance = np.zeros((flat.shape[0], 1))
    for b, matrix in enumerate(flat):
        scale = np.max(np.abs(matrix))
        unit = matrix / scale if scale > 0 else matrix   # a Frobenius norm that cannot overflow
        out[b] = np.linalg.svd(matrix, compute_uv=False)
        tolerance[b] = EIG_RTOL * np.linalg.norm(unit) * scale
    result = out.reshape(tuple(shape[:-2]) + (q,)).view(Loose)
    result.tolerance = tolerance.reshape(tuple(shape[:-2]) + (1,))
    return result


def cumsum(x, axis=None):
    ax = _along(x, axis, "cumsum")
    if isinstance(x, S):
        return x
    with np.errstate(all="ignore"):
        return _wrap(np.cumsum(_plain(x), axis=ax))


def _normalise(x, gamma, beta, eps, axes):
    if _any_shape_only(x, gamma, beta):
        return S(_broadcast(_shape(x), _shape(gamma), _shape(beta)))
    e = float(_plain(eps))

    def xhat(a):
        mu = np.mean(a, axis=axes, keepdims=True)
        var = np.mean((a - mu) ** 2, axis=axes, keepdims=True)
        return (a - mu) / np.sqrt(var + e), (mu, var)

    return _wrap(_wide_where_overflow(xhat, _plain(x)) * _plain(gamma) + _plain(beta))


def _wide_where_overflow(fn, a):
    """fn(a) -> (result, statistics). Where a statistic overflows float64 (squares of values
    past about 1e154) though the values are finite, the result is worked again in long double
    (x86's 80-bit extended, whose range reaches 1e4932): an independent check of the tracer's
    rescaled answer."""
    result, stats = fn(a)
    bad = np.zeros(result.shape, dtype=bool)
    for st in stats:
        bad |= np.broadcast_to(~np.isfinite(st), result.shape)
    if not (bad & np.isfinite(a)).any():
        return result
    if np.finfo(np.longdouble).max <= np.finfo(np.float64).max:
        raise SystemExit("crosscheck: this machine's long double is no wider than a double, so "
                         "a normalisation whose squares overflow cannot be checked here")
    wide, _ = fn(a.astype(np.longdouble))
    return np.where(bad, wide.astype(np.float64), result)


def layernorm(x, gamma, beta, eps=1e-5):
    return _normalise(x, gamma, beta, eps, -1)


def rmsnorm(x, gamma, eps=1e-5):
    if _any_shape_only(x, gamma):
        return S(_broadcast(_shape(x), _shape(gamma)))
    e = float(_plain(eps))

    def xhat(a):
        ms = np.mean(a * a, axis=-1, keepdims=True)
        return a / np.sqrt(ms + e), (ms,)

    return _wrap(_wide_where_overflow(xhat, _plain(x)) * _plain(gamma))


def batchnorm(x, gamma, beta, eps=1e-5):
    return _normalise(x, gamma, beta, eps, tuple(range(len(_shape(x)) - 1)))


def _reduce_shape(shape, axis, keepdims):
    if axis is None:
        return tuple(1 for _ in shape) if keepdims else ()
    if not -len(shape) <= axis < len(shape):
        raise CheckError("axis %d out of range for shape %s" % (axis, list(shape)))
    axis %= len(shape)
    if keepdims:
        return shape[:axis] + (1,) + shape[axis + 1:]
    return shape[:axis] + shape[axis + 1:]


def _reduction(fn):
    def f(x, axis=None, keepdims=False):
        ax = _int(axis, "axis")
        keep = bool(_int(keepdims, "keepdims"))
        if isinstance(x, S):
            return S(_reduce_shape(x.shape, ax, keep))
        _reduce_shape(_shape(x), ax, keep)  # range check
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # the mean of an empty axis is nan
            return _wrap(fn(_plain(x), axis=ax, keepdims=keep))
    return f


def _norm(a, axis=None, keepdims=False):
    """The L2 norm as the tracer states it: each line read scaled so that its largest magnitude
    lies in [1, 2) (a power of two, which changes no bit), so 1e300 does not square to inf;
    a line with inf or nan is read as it is. A line of subnormals (largest below 2^-1022),
    whose scale is past the largest double, is scaled in two steps, each exact: its norm is
    numpy's hypot, where squaring first would give 0."""
    big = np.max(np.abs(a), axis=axis, keepdims=True, initial=0.0)
    finite = np.all(np.isfinite(a), axis=axis, keepdims=True)
    exp = np.frexp(np.where(finite & (big > 0), big, 1.0))[1] - 1
    first = np.ldexp(1.0, np.minimum(-exp, 1000))
    second = np.ldexp(1.0, np.maximum(-exp - 1000, 0))
    norm = np.sqrt(np.sum((a * first * second) ** 2, axis=axis, keepdims=True)) / first / second
    return norm if keepdims else np.squeeze(norm, axis=axis)


def argmax(x, axis=None):
    ax = _int(axis, "axis")
    if isinstance(x, S):
        return S(_reduce_shape(x.shape, ax, False))
    return _wrap(np.argmax(_plain(x), axis=ax))


def concat(*parts, axis=0):
    ax = _int(axis, "axis")
    if not parts:
        raise CheckError("concat of nothing")
    if _any_shape_only(*parts):
        shapes = [_shape(p) for p in parts]
        rank = len(shapes[0])
        ax %= rank
        for s in shapes:
            if len(s) != rank or s[:ax] + s[ax + 1:] != shapes[0][:ax] + shapes[0][ax + 1:]:
                raise CheckError("concat shapes %s do not fit" % [list(s) for s in shapes])
        return S(shapes[0][:ax] + (sum(s[ax] for s in shapes),) + shapes[0][ax + 1:])
    return _wrap(np.concatenate([_plain(p) for p in parts], axis=ax))


def numel(x):
    n = 1
    for d in _shape(x):
        n *= d
    return _wrap(float(n))


def size(x, axis=None):
    ax = _int(axis, "axis")
    if ax is None:
        return numel(x)
    shape = _shape(x)
    if not -len(shape) <= ax < len(shape):
        raise CheckError("axis %d does not exist" % ax)
    return _wrap(float(shape[ax]))


def split_heads(x, h):
    h = _int(h, "number of heads")
    shape = _shape(x)
    if len(shape) < 2 or h <= 0 or shape[-1] % h:
        raise CheckError("split_heads: shape %s into %d heads" % (list(shape), h))
    n, d = shape[-2], shape[-1]
    out = shape[:-2] + (h, n, d // h)
    if isinstance(x, S):
        return S(out)
    a = _plain(x).reshape(shape[:-2] + (n, h, d // h))
    return _wrap(np.swapaxes(a, -2, -3))


def merge_heads(x):
    shape = _shape(x)
    if len(shape) < 3:
        raise CheckError("merge_heads: shape %s has no heads axis" % list(shape))
    h, n, dh = shape[-3:]
    out = shape[:-3] + (n, h * dh)
    if isinstance(x, S):
        return S(out)
    return _wrap(np.swapaxes(_plain(x), -2, -3).reshape(out))


def causal_mask(n):
    n = _int(n, "n")
    i = np.arange(n)[:, None]
    j = np.arange(n)[None, :]
    return _wrap(np.where(j > i, -np.inf, 0.0))


def relative_positions(n):
    n = _int(n, "n")
    return _wrap(np.arange(n, dtype=np.float64)[:, None] - np.arange(n, dtype=np.float64)[None, :])


def arange(n):
    return _wrap(np.arange(_int(n, "n"), dtype=np.float64))


def _sizes(shape):
    dims = shape if isinstance(shape, (list, tuple)) else [shape]
    dims = tuple(_int(d, "size") for d in np.asarray(_plain(dims)).reshape(-1))
    if any(d < 0 for d in dims):
        raise CheckError("a size cannot be negative")
    return dims


def full(shape, value):
    return _wrap(np.full(_sizes(shape), float(_plain(value))))


def uniform(shape=None, seed=0):
    """splitmix64's draws u in [0, 1) from seed, in reading order (written again below)."""
    sizes = () if shape is None else _sizes(shape)
    count = int(np.prod(sizes, dtype=np.int64))
    return _wrap(np.array(splitmix64_uniforms(_int(seed, "seed"), count), dtype=np.float64).reshape(sizes))


def top_p(x, p):
    """Each last-axis row: the values ranked largest first (numpy's stable argsort of the
    negation: of equal values the earlier first) kept while the sum before them is below p,
    over their sum; the rest 0."""
    if isinstance(x, S):
        return x
    a = _plain(x)
    if a.ndim == 0:
        raise CheckError("top_p needs a row")
    pp, out = float(_plain(p)), np.zeros_like(a)
    for row in np.ndindex(a.shape[:-1]):
        before, kept = 0.0, []
        for j in np.argsort(-a[row], kind="stable"):
            if not before < pp:
                break
            kept.append(j)
            before += a[row][j]
        for j in kept:
            out[row + (j,)] = a[row][j] / before
    return _wrap(out)


def sample(x, u):
    """numpy's choice(n, p=row) for a given u: cdf = cumsum(row); cdf /= cdf[-1];
    searchsorted(cdf, u, side='right')."""
    a, uu = _plain(x), _plain(u)
    out = np.zeros(a.shape[:-1])
    for k, row in enumerate(np.ndindex(a.shape[:-1])):
        cdf = np.cumsum(a[row])
        cdf /= cdf[-1]
        out[row] = np.searchsorted(cdf, uu.reshape(-1)[0 if uu.size == 1 else k], side="right")
    return _wrap(out)


def _triangle(fn):
    def f(x, k=0):
        k = _int(k, "k")
        if len(_shape(x)) < 2:
            raise CheckError("a triangle needs two axes")
        if isinstance(x, S):
            return x
        return _wrap(fn(_plain(x), k))
    return f


def sinusoidal(n, d, base=10000):
    n, d = _int(n, "n"), _int(d, "d")
    base = float(_plain(base))
    pos = np.arange(n, dtype=np.float64)[:, None]
    two_i = np.arange(0, d, 2, dtype=np.float64)[None, :]
    angle = pos / np.power(base, two_i / d)
    pe = np.empty((n, d))
    pe[:, 0::2] = np.sin(angle)
    pe[:, 1::2] = np.cos(angle[:, : d // 2])
    return _wrap(pe)


def rope(x, positions, base=10000):
    if isinstance(x, S):
        return x
    a = _plain(x)
    pos = np.reshape(_plain(positions), (-1,))  # a single row may take one number
    base = float(_plain(base))
    d = a.shape[-1]
    if d % 2:
        raise CheckError("rope needs an even last axis, got %d" % d)
    two_i = np.arange(0, d, 2, dtype=np.float64)
    angle = pos[:, None] * np.power(base, -two_i / d)[None, :]
    x0, x1 = a[..., 0::2], a[..., 1::2]
    out = np.empty_like(a)
    out[..., 0::2] = x0 * np.cos(angle) - x1 * np.sin(angle)
    out[..., 1::2] = x0 * np.sin(angle) + x1 * np.cos(angle)
    return _wrap(out)


def alibi_slopes(h):
    h = _int(h, "h")
    k = np.arange(1, h + 1, dtype=np.float64)
    return _wrap(np.power(2.0, -8.0 * k / h))


def reshape(x, shape):
    dims = shape if isinstance(shape, (list, tuple)) else [shape]
    dims = tuple(_int(d, "size") for d in np.asarray(_plain(dims)).reshape(-1))
    if isinstance(x, S):
        return S(np.broadcast_to(np.zeros(()), x.shape).reshape(dims).shape)
    return _wrap(_plain(x).reshape(dims))


def transpose(x, axes=None):
    """numpy's transpose(x, axes): every axis reversed when axes is None (x.T swaps only the last two)."""
    if axes is not None:
        axes = tuple(_int(a, "axis") for a in np.asarray(_plain(axes)).reshape(-1))
    if isinstance(x, S):  # the shape of a stand-in of one value per axis's size, broadcast
        return S(np.transpose(np.broadcast_to(np.zeros(()), x.shape), axes).shape)
    return _wrap(np.transpose(_plain(x), axes))


def take_along_axis(x, indices, axis):
    axis = _int(axis, "axis")
    if isinstance(x, S) or isinstance(indices, S):
        xs, js = _shape(x), _shape(indices)
        a = axis % len(xs)
        out = _broadcast(xs[:a] + (1,) + xs[a + 1:], js[:a] + (1,) + js[a + 1:])
        return S(out[:a] + (js[a],) + out[a + 1:])
    return _wrap(np.take_along_axis(_plain(x), _int_array(_plain(indices)), axis=axis))


def take(table, idx):
    if isinstance(idx, S):
        return S(idx.shape)
    if isinstance(table, S):
        return S(_shape(idx))
    flat = _plain(table).ravel()
    return _wrap(flat[_int_array(_plain(idx))])


def cross_entropy(logits, target):
    if isinstance(logits, S) or isinstance(target, S):
        return S(_shape(logits)[:-1])
    z = _plain(logits)
    t = _int_array(_plain(target))
    m = np.max(z, axis=-1, keepdims=True)
    lse = m[..., 0] + np.log(np.sum(np.exp(z - m), axis=-1))
    picked = np.take_along_axis(z, np.broadcast_to(t, z.shape[:-1])[..., None], axis=-1)[..., 0]
    return _wrap(lse - picked)


def allclose(a, b, rtol=1e-05, atol=1e-08):
    """numpy's own allclose, on numpy's own defaults: 1.0 or 0.0."""
    return _wrap(float(np.allclose(_plain(a), _plain(b), rtol=float(rtol), atol=float(atol))))


FUNCTIONS = {
    "allclose": allclose,
    "all": _reduction(np.all),
    "any": _reduction(np.any),
    "softmax": softmax,
    "log_softmax": log_softmax,
    "cumsum": cumsum,
    "sort": _ordered("sort"),
    "argsort": _ordered("argsort"),
    "topk": _ordered("topk"),
    "argtopk": _ordered("argtopk"),
    "repeat_interleave": repeat_interleave,
    "eigvals": eigvals,
    "svdvals": svdvals,
    "layernorm": layernorm,
    "rmsnorm": rmsnorm,
    "batchnorm": batchnorm,
    "mean": _reduction(np.mean),
    "var": _reduction(np.var),
    "norm": _reduction(_norm),
    "sum": _reduction(np.sum),
    "max": _reduction(np.max),
    "min": _reduction(np.min),
    "argmax": argmax,
    "concat": concat,
    "numel": numel,
    "size": size,
    "split_heads": split_heads,
    "merge_heads": merge_heads,
    "causal_mask": causal_mask,
    "relative_positions": relative_positions,
    "arange": arange,
    "ones": lambda shape: full(shape, 1.0),
    "zeros": lambda shape: full(shape, 0.0),
    "full": full,
    "eye": lambda n: _wrap(np.eye(_int(n, "n"))),
    "uniform": uniform,
    "top_p": top_p,
    "sample": sample,
    "tril": _triangle(np.tril),
    "triu": _triangle(np.triu),
    "sinusoidal": sinusoidal,
    "rope": rope,
    "alibi_slopes": alibi_slopes,
    "take": take,
    "transpose": transpose,
    "take_along_axis": take_along_axis,
    "reshape": reshape,
    "cross_entropy": cross_entropy,
}



def functions_of_data_files(key, wrap, names):
    """The functions whose data file (tests/ops/NAME.yaml) writes them in one line of numpy or
    torch (`numpy: np.exp`), each wrapped by wrap: for an elementwise operation its version here
    is there, beside its cases, and nowhere else. names: the scope the line is read in."""
    folder = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ops")
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    found = {}
    for f in sorted(os.listdir(folder)):
        if not f.endswith(".yaml"):
            continue
        with open(os.path.join(folder, f), encoding="utf-8") as fh:
            data = yaml.load(fh, Loader=loader)  # noqa: S506 - a safe loader
        if key in data:
            found[data["op"]] = wrap(eval(data[key], dict(names, __builtins__={})))  # noqa: S307 - the project's files
    return found


_DATA_FUNCTIONS = functions_of_data_files("numpy", _picking, {"np": np, "math": math})
assert not set(_DATA_FUNCTIONS) & set(FUNCTIONS), "an operation written both here and in its data file"
FUNCTIONS.update(_DATA_FUNCTIONS)

NUM_HELPER = "_xc_num"
GRAD_HELPER = "_xc_grad"
GRAD_CALL = re.compile(r"\bgrad\(\s*([A-Za-z_][\w.]*)\s*,\s*([A-Za-z_][\w.]*)\s*\)")
FD_RTOL = 1e-6       # finite differences against the largest gradient of the stage
FD_MAX_ELEMENTS = 256
LIST_HELPER = "_xc_list"
KEYWORD_PREFIX = "_xc_kw_"


def _name_key(name):
    """Lesson names that are Python keywords (e.g. `in`, `lambda`) get a safe spelling."""
    if keyword.iskeyword(name) and name not in ("True", "False") + tuple(LOGIC_HELPERS):
        return KEYWORD_PREFIX + name
    return name


# ============================================================ expressions

# and, or, not: the tracer's are elementwise (numpy's logical_and, logical_or, logical_not), with
# Python's precedence; Python's own would ask one truth value of a whole array. The parsed
# expression calls these helpers instead, which each checker defines.
LOGIC_HELPERS = {"and": "_xc_and", "or": "_xc_or", "not": "_xc_not"}


class _Elementwise(ast.NodeTransformer):
    def visit_BoolOp(self, node):  # noqa: N802 - ast's name
        self.generic_visit(node)
        helper = LOGIC_HELPERS["and" if isinstance(node.op, ast.And) else "or"]
        out = node.values[0]
        for value in node.values[1:]:  # a and b and c is (a and b) and c
            out = ast.Call(ast.Name(helper, ast.Load()), [out, value], [])
        return out

    def visit_UnaryOp(self, node):  # noqa: N802
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return ast.Call(ast.Name(LOGIC_HELPERS["not"], ast.Load()), [node.operand], [])
        return node


def compile_expr(source):
    """Python source of an expression -> code, its and, or and not elementwise."""
    tree = _Elementwise().visit(ast.parse(source, mode="eval"))
    return compile(ast.fix_missing_locations(tree), "<expr>", "eval")


def _logical(f, *xs):
    if any(isinstance(x, S) for x in xs):
        return S(_broadcast(*(_shape(x) for x in xs)))
    return _wrap(f(*xs).astype(np.float64))

def rewrite(text):
    """Expression text -> Python source: numbers become float64 tensors (so 1/0 is inf, not
    ZeroDivisionError), list literals become tensors, keyword-named names are renamed."""
    text = " ".join(text.split())  # a folded YAML scalar may hold newlines
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError) as exc:
        raise CheckError("cannot tokenize %r: %s" % (text, exc))
    out = []
    last = 0
    prev = None  # previous significant token
    brackets = []
    for tok in tokens:
        if tok.type in (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER, tokenize.INDENT,
                        tokenize.DEDENT, tokenize.COMMENT):
            continue
        start, end = tok.start[1], tok.end[1]
        out.append(text[last:start])
        last = end
        s = tok.string
        if tok.type == tokenize.NUMBER:
            s = "%s(%s)" % (NUM_HELPER, s)
        elif tok.type == tokenize.NAME:
            if not (prev is not None and prev.string == "."):
                s = _name_key(s)
        elif tok.type == tokenize.OP and s == "[":
            literal = prev is None or (prev.type == tokenize.OP and prev.string not in (")", "]"))
            brackets.append(literal)
            if literal:
                s = "%s([" % LIST_HELPER
        elif tok.type == tokenize.OP and s == "]":
            if brackets and brackets.pop():
                s = "])"
        out.append(s)
        prev = tok
    out.append(text[last:])
    return "".join(out)


def _num(x):
    if isinstance(x, complex):
        raise CheckError("complex number in an expression")
    return np.asarray(float(x)).view(T)


def base_namespace():
    ns = {"__builtins__": {}}
    ns.update(FUNCTIONS)
    ns["inf"] = _num(math.inf)
    ns["pi"] = _num(math.pi)
    ns[KEYWORD_PREFIX + "None"] = None  # axis=None: every axis, as numpy reads it
    ns[NUM_HELPER] = _num
    ns[LIST_HELPER] = _wrap
    ns[LOGIC_HELPERS["and"]] = lambda a, b: _logical(np.logical_and, a, b)
    ns[LOGIC_HELPERS["or"]] = lambda a, b: _logical(np.logical_or, a, b)
    ns[LOGIC_HELPERS["not"]] = lambda x: _logical(np.logical_not, x)
    return ns


def put_names(ns, env, cls):
    """The lesson's names in ns, each value of class cls (an ndarray or a torch tensor)."""
    for name, value in env.items():
        if "." not in name:
            ns[_name_key(name)] = value
            continue
        # layer1.A, a stage of a block's application: an attribute of a namespace layer1
        # (ablated.layer1.A.original, the stage an intervention replaced, is an attribute of the
        # value ablated.layer1.A: each holds its own view, so the two never mix)
        head, *rest = name.split(".")
        node = ns.setdefault(head, types.SimpleNamespace())
        if not isinstance(node, types.SimpleNamespace):
            continue
        for part in rest[:-1]:
            node = node.__dict__.setdefault(part, types.SimpleNamespace())
        there = node.__dict__.get(rest[-1])
        if isinstance(value, cls):
            value = value.view_as(value) if hasattr(value, "view_as") else value.view(cls)
            value.__dict__.update(there.__dict__ if isinstance(there, types.SimpleNamespace) else {})
        setattr(node, rest[-1], value)


def evaluate(text, env, grads=None):
    # grad(y, x) takes names, not values: it becomes a look-up of the gradient already checked
    source = rewrite(GRAD_CALL.sub(r'%s("\1", "\2")' % GRAD_HELPER, text))
    ns = base_namespace()
    ns[GRAD_HELPER] = lambda y, x: (grads or {})[(y, x)]
    put_names(ns, env, T)
    try:
        # numpy before 2 answers == on shapes that do not broadcast with a lone False and a
        # DeprecationWarning, where the tracer (and numpy 2) refuse: the warning is the error
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("error", DeprecationWarning)
            result = eval(compile_expr(source), ns)  # noqa: S307 - restricted ns
    except CheckError:
        raise
    except Exception as exc:  # noqa: BLE001 - any numpy/Python error is a lesson failure
        raise CheckError("numpy could not evaluate %r (as %r): %s: %s"
                         % (text, source, type(exc).__name__, exc))
    if isinstance(result, S):
        return result
    if isinstance(result, bool):
        result = float(result)
    return _wrap(result)


# ============================================================ lesson and givens

def parse_number(text, where):
    if not isinstance(text, str):
        raise CheckError("%s: expected a number, got %r" % (where, text))
    s = text.strip()
    special = {".inf": math.inf, "+.inf": math.inf, "-.inf": -math.inf, ".nan": math.nan,
               ".Inf": math.inf, "-.Inf": -math.inf, ".NaN": math.nan,
               ".INF": math.inf, "-.INF": -math.inf, ".NAN": math.nan}
    if s in special:
        return special[s]
    try:
        return float(s)
    except ValueError:
        raise CheckError("%s: %r is not a number" % (where, text))


def parse_nested(node, where):
    if isinstance(node, list):
        return [parse_nested(v, where) for v in node]
    if isinstance(node, dict):
        raise CheckError("%s: a mapping where numbers were expected" % where)
    return parse_number(node, where)


def to_tensor(nested, where):
    try:
        a = np.array(nested, dtype=np.float64)
    except ValueError:
        raise CheckError("%s: the nested list is not rectangular" % where)
    return a.view(T)


def splitmix64_uniforms(seed, count):
    """count values u in [0, 1): the recipe written in tracer/kernel.h, in pure Python, mod 2^64."""
    mask = (1 << 64) - 1
    state = seed & mask
    out = []
    for _ in range(count):
        state = (state + 0x9E3779B97F4A7C15) & mask
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        z ^= z >> 31
        out.append((z >> 11) * 2.0 ** -53)
    return out


def random_values(count, distribution, scale, seed):
    if distribution == "uniform":
        return [scale * (2.0 * u - 1.0) for u in splitmix64_uniforms(seed, count)]
    if distribution == "normal":
        pairs = (count + 1) // 2
        u = splitmix64_uniforms(seed, 2 * pairs)
        values = []
        for p in range(pairs):
            u1, u2 = u[2 * p], u[2 * p + 1]
            r = math.sqrt(-2.0 * math.log(1.0 - u1))
            values.append(r * math.cos(2.0 * math.pi * u2) * scale)
            values.append(r * math.sin(2.0 * math.pi * u2) * scale)
        return values[:count]
    raise CheckError("unknown distribution %r" % distribution)


def expand_given_times(givens):
    """A given with times: n is n givens, name{i} for i = 1..n, {i} and {i-1} in its text numbered."""
    def number(node, k):
        if isinstance(node, str):
            return node.replace("{i-1}", str(k - 1)).replace("{i}", str(k))
        if isinstance(node, list):
            return [number(x, k) for x in node]
        if isinstance(node, dict):
            return {number(a, k): number(b, k) for a, b in node.items() if a != "times"}
        return node
    out = {}
    for name, node in givens.items():
        times = node.get("times") if isinstance(node, dict) else None
        if times is None:
            out[name] = node
            continue
        n = int(times) if times.isdigit() else int(float(out[times]))
        for k in range(1, n + 1):
            out[number(name, k)] = number(node, k)
    return out


def build_given(name, node):
    where = "given %s" % name
    if not isinstance(node, dict):
        return to_tensor(parse_nested(node, where), where)
    if "values" in node:
        return to_tensor(parse_nested(node["values"], where), where)
    if "shape" not in node:
        raise CheckError("%s: neither values nor shape" % where)
    shape_node = node["shape"]
    if not isinstance(shape_node, list):
        raise CheckError("%s: shape must be a list" % where)
    try:
        shape = tuple(int(str(d).strip()) for d in shape_node)
    except ValueError:
        raise CheckError("%s: shape %r is not a list of integers" % (where, shape_node))
    init = node.get("init")
    if init is None:
        return S(shape)
    init = init.strip()
    if init == "zeros":
        return np.zeros(shape).view(T)
    if init == "ones":
        return np.ones(shape).view(T)
    if init == "identity":
        if len(shape) < 2:
            raise CheckError("%s: identity needs rank >= 2" % where)
        eye = np.eye(shape[-2], shape[-1])
        return np.array(np.broadcast_to(eye, shape), dtype=np.float64).view(T)
    if init == "random":
        distribution = str(node.get("distribution", "normal")).strip()
        scale = parse_number(node.get("scale", "1"), where + " scale")
        try:
            seed = int(str(node.get("seed", "0")).strip(), 0)
        except ValueError:
            raise CheckError("%s: seed %r is not an integer" % (where, node.get("seed")))
        count = 1
        for d in shape:
            count *= d
        values = random_values(count, distribution, scale, seed)
        return np.array(values, dtype=np.float64).reshape(shape).view(T)
    raise CheckError("%s: unknown init %r" % (where, init))


def load_lesson(path):
    # BaseLoader: every scalar stays the text the file holds (like libyaml hands it to the
    # tracer); PyYAML's YAML 1.1 resolver would turn `1e-5` into a string and `yes` into True.
    try:
        with open(path, encoding="utf-8") as f:
            doc = yaml.load(f, Loader=yaml.BaseLoader)  # noqa: S506 - BaseLoader builds no objects
    except (OSError, yaml.YAMLError) as exc:
        raise CheckError("cannot read lesson: %s" % exc)
    if not isinstance(doc, dict):
        raise CheckError("lesson is not a mapping")
    givens = doc.get("given") or {}
    if not isinstance(givens, dict):
        raise CheckError("given: is not a mapping")
    givens = expand_given_times(givens)
    steps = []
    for i, (item, name, _) in enumerate(expand_blocks(doc, givens)):
        if not isinstance(item, dict):
            raise CheckError("step %d is not a mapping" % (i + 1))
        keys = [k for k in item if k not in RESERVED_STEP_KEYS]
        if len(keys) != 1:
            raise CheckError("step %d has result names %r (need exactly one)" % (i + 1, keys))
        expr = item[keys[0]]
        if not isinstance(expr, str):
            raise CheckError("step %s: expression is not text" % keys[0])
        steps.append((name or keys[0], expr))
    return doc, list(givens.items()), steps


# A block's steps, read here on their own (not from the tracer): each application's step q is
# layer1.q, and reads the block's names (x, q) as the lesson names them in that application.
SCOPES = {}   # step name -> {name in the block: name in the lesson}
ALIASES = {}  # step name -> the other names results: gives it
REPLACES = {}  # an intervention's step (replace:) -> the stage it stands in for, NAME.original


def expand_blocks(doc, givens):
    """(step item, its name in the lesson or None, its scope) for every step, blocks applied."""
    blocks = doc.get("blocks") or {}
    out = []
    SCOPES.clear()
    ALIASES.clear()
    REPLACES.clear()
    uses = {"as", "times", "inputs", "carry", "results", "replace"}
    targets = {}  # the stages replace: names -> (its key, its expression, the scope it is read in)

    def run(items, prefix, scope):
        for item in items:
            if not (isinstance(item, dict) and "use" in item and (blocks or uses & set(item))):
                key = next((k for k in item if k not in RESERVED_STEP_KEYS), None) if isinstance(item, dict) else None
                name = "%s.%s" % (prefix, key) if prefix and key else None
                if name:
                    scope[key] = name
                if name in targets:  # computed as NAME.original; NAME is the intervention's value
                    rkey, value, outer, app = targets[name]
                    original = name + ".original"
                    out.append((item, original, dict(scope)))
                    SCOPES[original] = dict(scope)
                    # read where the application is written, with its stages so far by the
                    # names the keys use (layer1.z), and the key's own name the stage computed
                    rscope = dict(outer)
                    rscope.update({n[len(app) + 1:]: n for _, n, _ in out if n and n.startswith(app + ".")})
                    rscope[rkey] = original
                    out.append(({rkey: value}, name, rscope))
                    SCOPES[name] = rscope
                    REPLACES[name] = original
                    continue
                out.append((item, name, dict(scope)))
                if name:
                    SCOPES[name] = dict(scope)
                continue
            block = blocks[item["use"]]
            times = item.get("times")
            n = 1 if times is None else int(times) if times.isdigit() else int(float(givens[times]))
            carry = item.get("carry") or {}
            prev = {}
            for k in range(1, n + 1):
                name = (prefix + "." if prefix else "") + item.get("as", item["use"]) + (str(k) if times else "")
                inner = {}
                for x in block.get("inputs") or []:
                    if k > 1 and x in carry:
                        inner[x] = prev[carry[x]]
                    else:
                        bound = item["inputs"][x].replace("{i}", str(k))
                        inner[x] = scope.get(bound, bound)
                for rkey, value in (item.get("replace") or {}).items():
                    targets[name + "." + rkey] = (rkey, value, dict(scope), name)
                run(block["steps"], name, inner)
                prev = {r: inner[r] for r in block.get("results") or []}
            for new, r in (item.get("results") or {}).items():
                lesson_name = "%s.%s" % (prefix, new) if prefix else new
                ALIASES.setdefault(prev[r], []).append(lesson_name)
                if prefix:
                    scope[new] = lesson_name

    run(doc.get("steps") or [], "", {})
    return out


def in_scope(env, name):
    """env with the names of a block's step (for name) standing for the lesson's."""
    scope = SCOPES.get(name)
    if not scope:
        return env
    seen = dict(env)
    seen.update({mine: env[theirs] for mine, theirs in scope.items() if theirs in env})
    return seen


def step_value(env, name, text, grads):
    """The value of step `name`: its expression, and for an intervention's step that value in
    every place of the stage it stands in for (numpy's broadcast_to)."""
    value = evaluate(text, in_scope(env, name), grads)
    if name in REPLACES:
        value = np.array(np.broadcast_to(np.asarray(value), np.shape(env[REPLACES[name]]))).view(T)
    return value


def keep(env, name, value):
    env[name] = value
    for other in ALIASES.get(name, []):
        keep(env, other, value)


def split_claim(text):
    """(text, expression) of a one-line claim: "what holds: expression" splits at the first ': '
    outside brackets, since an expression holds ':' only inside them."""
    depth = 0
    for i, ch in enumerate(text):
        depth += (ch in "([") - (ch in ")]")
        if depth == 0 and text.startswith(": ", i) and i > 0:
            return text[:i].rstrip(" "), text[i + 2:].lstrip(" ")
    return text, text


def load_claims(doc):
    """(text, expression) of every claim, in the tracer's order: the steps' claim: first."""
    claims = []
    for item, name, _ in expand_blocks(doc, doc.get("given") or {}):
        c = item.get("claim")
        if isinstance(c, dict):
            claims.extend((text, expr, name) for text, expr in c.items())
        elif isinstance(c, str):
            claims.append(split_claim(c) + (name,))
    for item in doc.get("claims") or []:
        if not isinstance(item, dict) or len(item) != 1:
            raise CheckError("a claim is not one `text: expression` pair: %r" % (item,))
        claims.extend((text, expr, None) for text, expr in item.items())
    return claims


# ============================================================ JSON and comparison

def _reject_constant(name):
    raise ValueError("bare %s in JSON (non-finite numbers must be strings)" % name)


def parse_values(v, where):
    if isinstance(v, list):
        return [parse_values(x, where) for x in v]
    if isinstance(v, bool) or v is None or isinstance(v, dict):
        raise CheckError("%s: %r in values" % (where, v))
    if isinstance(v, str):
        table = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}
        if v not in table:
            raise CheckError("%s: string %r in values" % (where, v))
        return table[v]
    return float(v)


def _fmt(x):
    return repr(float(x))


def compare(stage, ours, label):
    """Empty list when the stage agrees, else lines describing the difference."""
    shape = stage.get("shape")
    if not isinstance(shape, list) or not all(isinstance(d, int) and not isinstance(d, bool)
                                              for d in shape):
        return ["bad shape %r in the trace" % (shape,)]
    shape = tuple(shape)
    our_shape = _shape(ours)
    if shape != our_shape:
        return ["shape: tracer %s, numpy %s" % (list(shape), list(our_shape))]
    values = stage.get("values")
    if isinstance(ours, S):
        if values is not None:
            return ["tracer printed values; numpy has a shape-only result"]
        return []
    if values is None:
        return ["tracer has a shape-only result (values null); numpy has values"]
    theirs = np.array(parse_values(values, label), dtype=np.float64)
    if theirs.size == 0 and math.prod(shape) == 0:
        # [] holds every empty shape: JSON cannot say [0, 4] by nesting alone.
        return []
    if theirs.shape != shape:
        return ["values nest as %s but shape says %s" % (list(theirs.shape), list(shape))]
    b = np.asarray(ours, dtype=np.float64)
    a = theirs
    with np.errstate(all="ignore"):
        finite = np.isfinite(a) & np.isfinite(b)
        diff = np.where(finite, np.abs(a - b), np.inf)
        same_nonfinite = (np.isnan(a) & np.isnan(b)) | (np.isinf(a) & (a == b))
        loose = isinstance(ours, Loose)
        tolerance = ours.tolerance if loose else RTOL * np.maximum(1.0, np.abs(b))
        ok = np.where(finite, diff <= tolerance, same_nonfinite)
    if np.all(ok):
        return []
    bad = np.argwhere(~ok) if a.ndim else [()]
    lines = ["%d of %d elements differ (tolerance %s):"
             % (int(np.count_nonzero(~ok)), a.size,
                "1e-9 * the matrix's Frobenius norm" if loose else "1e-12 * max(1, |numpy|)")]
    for idx in list(bad)[:MAX_SHOWN_ELEMENTS]:
        idx = tuple(int(i) for i in idx)
        lines.append("  %-14s tracer %-24s numpy %s"
                     % (list(idx), _fmt(a[idx]), _fmt(b[idx])))
    worst = np.unravel_index(int(np.argmax(np.where(ok, -1.0, diff))), a.shape) if a.ndim else ()
    lines.append("  largest difference %s at %s (tracer %s, numpy %s)"
                 % (_fmt(diff[worst]) if diff[worst] != np.inf else "non-finite mismatch",
                    list(int(i) for i in worst), _fmt(a[worst]), _fmt(b[worst])))
    return lines


def fd_gradient(x_name, y_name, env, steps, step_names, grads, count):
    """d y / d x by central differences: the steps after x up to y evaluated again around
    each moved element of x (the first `count` of them spread evenly). Returns (indices, values)."""
    x = np.asarray(env[x_name], dtype=np.float64)
    first = step_names.index(x_name) + 1 if x_name in step_names else 0
    last = step_names.index(y_name)
    flat = x.reshape(-1)
    picks = list(range(flat.size)) if flat.size <= count else \
        [i * flat.size // count for i in range(count)]
    out = []
    for i in picks:
        sides = []
        h = 1e-5 * max(1.0, abs(flat[i]))
        for sign in (1.0, -1.0):
            moved = flat.copy()
            moved[i] += sign * h
            local = dict(env)
            keep(local, x_name, moved.reshape(x.shape).view(T))
            for name, text in steps[first:last + 1]:
                keep(local, name, step_value(local, name, text, grads))
            sides.append(float(np.asarray(local[y_name]).reshape(-1)[0]))
        out.append((sides[0] - sides[1]) / (2 * h))
    return picks, np.array(out)


def check_gradient(st, env, grads, steps, step_names):
    """A gradient stage: its names, shape and, for a given or step x, finite differences."""
    y, x = st.get("of"), st.get("wrt")
    if not isinstance(y, str) or not isinstance(x, str):
        return ["a gradient stage needs \"of\" and \"wrt\" names, not %r and %r" % (y, x)]
    if st["name"] != "d%s/d%s" % (y, x):
        return ["named %r, but it is the gradient of %r with respect to %r" % (st["name"], y, x)]
    try:
        g = np.array(parse_values(st.get("values"), st["name"]), dtype=np.float64)
    except CheckError as exc:
        return [str(exc)]
    grads[(y, x)] = g.view(T)
    if x not in env:
        return []  # an intermediate: the tracer's own finite-difference note covers it
    if list(g.shape) != list(_shape(env[x])):
        return ["shape %s, but %s is %s" % (list(g.shape), x, list(_shape(env[x])))]
    if y not in step_names:
        return ["%r is not a step of the lesson" % y]
    picks, fd = fd_gradient(x, y, env, steps, step_names, grads, FD_MAX_ELEMENTS)
    ours = g.reshape(-1)[picks]
    scale = max(float(np.max(np.abs(fd))) if fd.size else 0.0, 1e-300)
    worst = int(np.argmax(np.abs(ours - fd))) if fd.size else 0
    if fd.size and abs(ours[worst] - fd[worst]) > FD_RTOL * max(scale, 1e-3):
        return ["finite differences disagree: element %d, tracer %s, numpy finite difference %s "
                "(largest gradient %s)" % (picks[worst], _fmt(ours[worst]), _fmt(fd[worst]), _fmt(scale))]
    return []


MODEL_GIVENS = {}  # a lesson's path -> {given name: its values in that lesson's own trace}


def model_givens(tracer, path):
    """The givens of the lesson at path as its own trace shows them (trained, when it trains)."""
    if path not in MODEL_GIVENS:
        proc = subprocess.run([tracer, "--format", "json", path], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, timeout=600)
        if proc.returncode != 0:
            raise CheckError("the lesson %s a given's trained: names does not trace: %s"
                             % (path, proc.stderr.decode("utf-8", "replace").rstrip()))
        trace = json.loads(proc.stdout.decode("utf-8"), parse_constant=_reject_constant)
        MODEL_GIVENS[path] = {st["name"]: st["values"] for st in trace["stages"] if st.get("kind") == "given"}
    return MODEL_GIVENS[path]


def check_lesson(tracer, path):
    """Returns (number of stages, list of failure texts)."""
    doc, givens, steps = load_lesson(path)
    try:
        proc = subprocess.run([tracer, "--format", "json", path], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise CheckError("cannot run the tracer: %s" % exc)
    if proc.returncode != 0:
        raise CheckError("tracer exited with status %d:\n%s"
                         % (proc.returncode, proc.stderr.decode("utf-8", "replace").rstrip()))
    try:
        trace = json.loads(proc.stdout.decode("utf-8"), parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError) as exc:
        raise CheckError("the tracer's output is not valid JSON: %s" % exc)
    if not isinstance(trace, dict) or not isinstance(trace.get("stages"), list):
        raise CheckError("the trace is not an object with a \"stages\" list")
    if trace.get("title") != doc.get("title"):
        raise CheckError("title: trace %r, lesson %r" % (trace.get("title"), doc.get("title")))
    stages = trace["stages"]
    for st in stages:
        if not isinstance(st, dict) or not isinstance(st.get("name"), str):
            raise CheckError("a stage is not an object with a name: %r" % (st,))

    failures = []
    env = {}
    grads = {}
    pos = 0
    step_names = [n for n, _ in steps]

    def fail(stage, label, lines):
        failures.append("stage %r (%s%s):\n    %s" % (
            stage.get("name"), stage.get("kind"),
            ", expr %r" % stage.get("expr") if stage.get("expr") is not None else "",
            "\n    ".join(lines)))

    # A lesson that trains (train:) traces its trained givens with their trained values (tests/
    # train_torch.py checks those against PyTorch): here their values before training must be
    # the YAML's, and the steps are worked out from the trained values in the trace.
    before = {}
    if isinstance(trace.get("training"), dict):
        before = {g["name"]: g["before"] for g in trace["training"]["trained"]}

    # Givens, in file order.
    for name, node in givens:
        if pos >= len(stages):
            raise CheckError("the trace ends before given %r" % name)
        st = stages[pos]
        if st.get("kind") != "given" or st["name"] != name:
            raise CheckError("stage %d is %s %r; expected given %r"
                             % (pos, st.get("kind"), st["name"], name))
        if isinstance(node, dict) and "trained" in node:
            # trained: LESSON: that lesson's given, as that lesson's own trace holds it
            model = os.path.join(os.path.dirname(path), node["trained"])
            theirs = model_givens(tracer, model)
            if name not in theirs:
                raise CheckError("given %s: %s has no given of that name" % (name, model))
            value = to_tensor(parse_values(theirs[name], "given " + name), "given " + name)
        else:
            value = build_given(name, node)
        if name in before:
            lines = compare(dict(st, values=before[name]), value, "given %s before training" % name)
            if lines:
                fail(st, name, lines)
            value = to_tensor(parse_values(st["values"], "given " + name), "given " + name)
        env[name] = value
        lines = compare(st, value, "given " + name)
        if lines:
            fail(st, name, lines)
        pos += 1

    # Steps: intermediates, then the step.
    for name, text in steps:
        while True:
            if pos >= len(stages):
                raise CheckError("the trace ends before step %r" % name)
            st = stages[pos]
            kind = st.get("kind")
            if kind == "gradient":
                lines = check_gradient(st, env, grads, steps, step_names)
                if lines:
                    fail(st, name, lines)
                pos += 1
                continue
            if kind == "intermediate":
                sub = st.get("expr")
                if not isinstance(sub, str):
                    fail(st, name, ["intermediate without expr text"])
                elif sub not in text:
                    fail(st, name, ["expr %r is not part of step %r's text %r"
                                    % (sub, name, text)])
                else:
                    try:
                        lines = compare(st, evaluate(sub, in_scope(env, name), grads), st["name"])
                    except CheckError as exc:
                        lines = [str(exc)]
                    if lines:
                        fail(st, name, lines)
                pos += 1
                continue
            if kind != "step" or st["name"] != name:
                raise CheckError("stage %d is %s %r; expected step %r (or its intermediates)"
                                 % (pos, kind, st["name"], name))
            break
        if not isinstance(st.get("expr"), str) or st["expr"].strip() != text.strip():
            fail(st, name, ["expr in the trace %r differs from the lesson's %r"
                            % (st.get("expr"), text)])
        try:
            value = step_value(env, name, text, grads)
        except CheckError as exc:
            fail(st, name, [str(exc), "(later steps are not checked)"])
            return len(stages), failures
        keep(env, name, value)
        lines = compare(st, value, name)
        if lines:
            fail(st, name, lines)
        pos += 1

    # Claims: numpy judges each one itself; the tracer must say the same.
    claims = load_claims(doc)
    traced = trace.get("claims")
    if not isinstance(traced, list) or len(traced) != len(claims):
        failures.append("the trace has %s claims; the lesson has %d"
                        % (len(traced) if isinstance(traced, list) else "no list of", len(claims)))
    else:
        for (text, expr, name), tc in zip(claims, traced):
            try:
                holds = bool(np.all(np.asarray(evaluate(expr, in_scope(env, name))) != 0))
            except CheckError as exc:
                failures.append("claim %r: %s" % (text, exc))
                continue
            if tc.get("text") != text or tc.get("expr") != expr or tc.get("holds") is not holds:
                failures.append("claim %r (%s): tracer says %r, numpy says holds=%r"
                                % (text, expr, tc, holds))

    if pos != len(stages):
        extra = stages[pos]
        failures.append("the trace has %d stage(s) after the last step, first %s %r"
                        % (len(stages) - pos, extra.get("kind"), extra["name"]))
    return len(stages), failures


def main(argv):
    if len(argv) < 3:
        print("usage: %s TRACER LESSON.yaml [LESSON.yaml ...]" % argv[0], file=sys.stderr)
        return 2
    tracer = argv[1]
    status = 0
    for path in argv[2:]:
        try:
            count, failures = check_lesson(tracer, path)
        except CheckError as exc:
            print("FAIL %s\n  %s" % (path, str(exc).replace("\n", "\n  ")))
            status = 1
            continue
        if not failures:
            print("ok  %s  (%d stages)" % (path, count))
            continue
        status = 1
        print("FAIL %s  (%d stages, %d differ)" % (path, count, len(failures)))
        for text in failures[:MAX_SHOWN_STAGES]:
            print("  " + text.replace("\n", "\n  "))
        if len(failures) > MAX_SHOWN_STAGES:
            print("  ... and %d more stages differ" % (len(failures) - MAX_SHOWN_STAGES))
    sys.stdout.flush()
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
