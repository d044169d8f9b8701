#!/usr/bin/env python3
"""The tracer's gradients against PyTorch's autograd, in float64.

    torchcheck.py TRACER LESSON.yaml [LESSON.yaml ...]

For each lesson this runs `TRACER --format json LESSON`, then evaluates the lesson again with
PyTorch: givens built from the YAML (tests/crosscheck.py reads them), every step's expression
evaluated by Python with each function written again here in torch, and grad(y, x) computed by
torch.autograd.grad, so nothing of the tracer's backward pass is used. It compares:

  * every step's value with the tracer's, within 1e-10 * max(1, |torch|) (the forward pass
    both sides differentiate must be the same);
  * every gradient stage (kind "gradient", "of" y, "wrt" x) whose x is a given or a step with
    autograd's d y / d x, within 1e-10 * max(1, |torch|). Gradients with respect to the
    intermediates inside a step are checked by the tracer's own finite-difference notes and by
    tests/crosscheck.py.

Lessons without gradient stages are only evaluated forward. Exit status: 0 all agree, 1 any
difference, 2 usage, 77 (meson's skip) when PyTorch cannot be imported, with a loud message:
Debian's python3-torch, for /usr/bin/python3.
"""

import json
import math
import os
import subprocess
import sys

SKIP_MESSAGE = ("SKIP: the PyTorch comparison of gradients needs python3 with torch, numpy and "
                "yaml (Debian: apt-get install python3-torch python3-numpy python3-yaml); "
                "the finite-difference half of the gradient checks still ran in the numpy "
                "cross-check")

try:
    import numpy as np
    import torch
    import yaml  # noqa: F401 - crosscheck needs it
except ImportError as exc:  # pragma: no cover - depends on the machine
    system_python = "/usr/bin/python3"
    if (os.environ.get("TORCHCHECK_REEXEC") is None and os.path.exists(system_python)
            and os.path.realpath(sys.executable) != os.path.realpath(system_python)):
        print("torchcheck: %s lacks %s; re-running with %s" % (sys.executable, exc.name, system_python),
              file=sys.stderr)
        env = dict(os.environ, TORCHCHECK_REEXEC="1")
        os.execve(system_python, [system_python, os.path.abspath(__file__)] + sys.argv[1:], env)
    print("*" * 78, file=sys.stderr)
    print(SKIP_MESSAGE, file=sys.stderr)
    print("  (%s: %s, python %s)" % (type(exc).__name__, exc, sys.executable), file=sys.stderr)
    print("*" * 78, file=sys.stderr)
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import crosscheck as xc  # noqa: E402 - after the interpreter is settled

RTOL = 1e-10
F64 = torch.float64


class CheckError(Exception):
    pass


class TT(torch.Tensor):
    """float64 tensor whose .T swaps only the last two axes and whose indices may be floats."""

    @property
    def T(self):  # noqa: N802 - the lesson language's name
        return self.mT if self.dim() >= 2 else self

    def __getitem__(self, index):
        return super().__getitem__(_index(index))


def _index(index):
    if isinstance(index, tuple):
        return tuple(_index(i) for i in index)
    if isinstance(index, torch.Tensor):
        v = index.detach()
        return int(v.item()) if v.dim() == 0 else v.to(torch.long).as_subclass(torch.Tensor)
    if isinstance(index, slice):
        return slice(*(None if p is None else int(_index(p)) for p in (index.start, index.stop, index.step)))
    return index


def _t(x):
    if isinstance(x, TT):
        return x
    if isinstance(x, torch.Tensor):
        return x.as_subclass(TT)
    return torch.tensor(x, dtype=F64).as_subclass(TT)


def _num(x):
    return _t(float(x))


def _list(items):
    return _t(torch.stack([_t(i).as_subclass(torch.Tensor) for i in items]))


def _plain(x):
    return x.as_subclass(torch.Tensor) if isinstance(x, torch.Tensor) else x


def _int(x):
    return int(_plain(x).item()) if isinstance(x, torch.Tensor) else int(x)


def _axis(axis):
    return None if axis is None else _int(axis)


def _reduction(fn):
    def f(x, axis=None, keepdims=False):
        axis, keep = _axis(axis), bool(_int(keepdims)) if keepdims is not None else False
        if axis is None:
            r = fn(_plain(x).reshape(-1), 0)
            return _t(r.reshape([1] * x.dim()) if keep else r)
        return _t(fn(_plain(x), axis, keep) if keep else fn(_plain(x), axis))
    return f


def _sum(x, dim, keep=False):
    return torch.sum(x, dim=dim, keepdim=keep)


def _mean(x, dim, keep=False):
    return torch.mean(x, dim=dim, keepdim=keep)


def _var(x, dim, keep=False):
    return torch.var(x, dim=dim, unbiased=False, keepdim=keep)


def _norm(x, dim, keep=False):
    return torch.linalg.vector_norm(x, dim=dim, keepdim=keep)


def _top_p(x, p):
    """Kept while the sum ranked above is below p (a stable descending sort: of equal values the
    earlier first), over the kept sum; the kept set is held fixed, so autograd differentiates
    the renormalisation only."""
    x = _plain(x)
    ranked, order = torch.sort(x, dim=-1, descending=True, stable=True)
    running = torch.cumsum(ranked, dim=-1)
    before = torch.cat([torch.zeros_like(running[..., :1]), running[..., :-1]], dim=-1)
    keep = torch.zeros_like(x, dtype=torch.bool).scatter(-1, order, before.detach() < float(_plain(p)))
    kept = torch.where(keep, x, torch.zeros_like(x))
    return _t(kept / kept.sum(dim=-1, keepdim=True))


def _max(x, dim, keep=False):
    return torch.max(x, dim=dim, keepdim=keep).values


def _min(x, dim, keep=False):
    return torch.min(x, dim=dim, keepdim=keep).values


def _normalise(x, gamma, beta, eps, dims):
    x = _plain(x)
    mean = x.mean(dim=dims, keepdim=True)
    var = ((x - mean) ** 2).mean(dim=dims, keepdim=True)
    return _t((x - mean) / torch.sqrt(var + float(_plain(eps))) * _plain(gamma) + _plain(beta))


def layernorm(x, gamma, beta, eps=1e-5):
    return _normalise(x, gamma, beta, eps, (-1,))


def batchnorm(x, gamma, beta, eps=1e-5):
    return _normalise(x, gamma, beta, eps, tuple(range(x.dim() - 1)))


def rmsnorm(x, gamma, eps=1e-5):
    x = _plain(x)
    ms = (x * x).mean(dim=-1, keepdim=True)
    return _t(x / torch.sqrt(ms + float(_plain(eps))) * _plain(gamma))


def argmax(x, axis=None):
    x = _plain(x)
    r = torch.argmax(x) if axis is None else torch.argmax(x, dim=_int(axis))
    return _t(r.to(F64))


def concat(*parts, axis=0):
    return _t(torch.cat([_plain(p) for p in parts], dim=_int(axis)))


def numel(x):
    return _t(float(x.numel()))


def size(x, axis=None):
    return numel(x) if axis is None else _t(float(x.shape[_int(axis)]))


def split_heads(x, h):
    h = _int(h)
    x = _plain(x)
    n, d = x.shape[-2], x.shape[-1]
    return _t(x.reshape(*x.shape[:-2], n, h, d // h).transpose(-3, -2))


def merge_heads(x):
    x = _plain(x)
    h, n, dh = x.shape[-3], x.shape[-2], x.shape[-1]
    return _t(x.transpose(-3, -2).reshape(*x.shape[:-3], n, h * dh))


def reshape(x, shape):
    return _t(_plain(x).reshape(*[_int(d) for d in shape]))


def _sizes(shape):
    dims = shape if isinstance(shape, (list, tuple)) else [shape]
    return tuple(_int(d) for d in dims)


def causal_mask(n):
    n = _int(n)
    return _t(torch.triu(torch.full((n, n), -math.inf, dtype=F64), diagonal=1))


def relative_positions(n):
    i = torch.arange(_int(n), dtype=F64)
    return _t(i[:, None] - i[None, :])


def arange(n):
    return _t(torch.arange(_int(n), dtype=F64))


def _angles(n_or_positions, d, base):
    # base^(2i/d) computed as the tracer's and numpy's pow, per pair
    freqs = torch.tensor([float(base) ** (-(2.0 * i) / d) for i in range(d // 2)], dtype=F64)
    return n_or_positions[:, None] * freqs[None, :]


def sinusoidal(n, d, base=10000):
    n, d, base = _int(n), _int(d), float(_plain(base))
    out = torch.zeros((n, d), dtype=F64)
    for pos in range(n):
        for c in range(d):
            angle = pos / base ** ((c - c % 2) / d)
            out[pos, c] = math.sin(angle) if c % 2 == 0 else math.cos(angle)
    return _t(out)


def rope(x, positions, base=10000):
    x = _plain(x)
    d = x.shape[-1]
    ang = _angles(_plain(positions).detach(), d, float(_plain(base)))
    c, s = torch.cos(ang), torch.sin(ang)
    x0, x1 = x[..., 0::2], x[..., 1::2]
    out = torch.stack([x0 * c - x1 * s, x0 * s + x1 * c], dim=-1)
    return _t(out.reshape(x.shape))


def alibi_slopes(h):
    h = _int(h)
    return _t(torch.tensor([2.0 ** (-8.0 * k / h) for k in range(1, h + 1)], dtype=F64))


def transpose(x, axes=None):
    dims = range(_plain(x).dim() - 1, -1, -1) if axes is None else [_int(a) for a in _plain(axes).reshape(-1)]
    return _t(_plain(x).permute(*dims))


def take_along_axis(x, indices, axis):
    """numpy's take_along_axis with torch.gather, which neither broadcasts nor counts from the end."""
    x, idx, axis = _plain(x), _plain(indices).detach().to(torch.long), _int(axis) % _plain(x).dim()
    sizes = [max(a, b) for a, b in zip(x.shape, idx.shape)]
    n = x.shape[axis]
    x = x.expand(*[n if k == axis else d for k, d in enumerate(sizes)])
    idx = idx.expand(*[idx.shape[axis] if k == axis else d for k, d in enumerate(sizes)])
    return _t(torch.gather(x, axis, idx % n))


def take(table, idx):
    return _t(_plain(table).reshape(-1)[_plain(idx).detach().to(torch.long)])


def cross_entropy(logits, target):
    z = _plain(logits)
    t = _plain(target).detach().to(torch.long)
    lse = torch.logsumexp(z, dim=-1)
    picked = torch.gather(z, -1, t.unsqueeze(-1)).squeeze(-1)
    return _t(lse - picked)


def _broadcast(fn):
    return lambda *args: _t(fn(*[_plain(a) for a in args]))


FUNCTIONS = {
    "softmax": lambda x, axis=-1: _t(torch.softmax(_plain(x), dim=_int(axis))),
    "log_softmax": lambda x, axis=-1: _t(torch.log_softmax(_plain(x), dim=_int(axis))),
    "cumsum": lambda x, axis=0: _t(torch.cumsum(_plain(x), dim=_int(axis))),
    "sort": lambda x: _t(torch.sort(_plain(x), dim=-1, stable=True).values),
    "argsort": lambda x: _t(torch.sort(_plain(x), dim=-1, stable=True).indices.to(F64)),
    "topk": lambda x, k: _t(torch.topk(_plain(x), _int(k), dim=-1).values),
    "argtopk": lambda x, k: _t(torch.topk(_plain(x), _int(k), dim=-1).indices.to(F64)),
    "repeat_interleave": lambda x, r, axis=0: _t(torch.repeat_interleave(_plain(x), _int(r), dim=_int(axis))),
    "layernorm": layernorm,
    "batchnorm": batchnorm,
    "rmsnorm": rmsnorm,
    "sum": _reduction(_sum),
    "mean": _reduction(_mean),
    "var": _reduction(_var),
    "norm": _reduction(_norm),
    "top_p": _top_p,
    "max": _reduction(_max),
    "min": _reduction(_min),
    "argmax": argmax,
    "concat": concat,
    "numel": numel,
    "size": size,
    "split_heads": split_heads,
    "merge_heads": merge_heads,
    "reshape": reshape,
    "causal_mask": causal_mask,
    "relative_positions": relative_positions,
    "arange": arange,
    "ones": lambda shape: _t(torch.ones(_sizes(shape), dtype=F64)),
    "zeros": lambda shape: _t(torch.zeros(_sizes(shape), dtype=F64)),
    "full": lambda shape, value: _t(torch.full(_sizes(shape), float(_plain(value)), dtype=F64)),
    "eye": lambda n: _t(torch.eye(_int(n), dtype=F64)),
    "tril": lambda x, k=0: _t(torch.tril(_plain(x), diagonal=_int(k))),
    "triu": lambda x, k=0: _t(torch.triu(_plain(x), diagonal=_int(k))),
    "sinusoidal": sinusoidal,
    "rope": rope,
    "alibi_slopes": alibi_slopes,
    "take": take,
    "transpose": transpose,
    "take_along_axis": take_along_axis,
    "cross_entropy": cross_entropy,
}

_DATA_FUNCTIONS = xc.functions_of_data_files("torch", _broadcast, {"torch": torch, "math": math})
assert not set(_DATA_FUNCTIONS) & set(FUNCTIONS), "an operation written both here and in its data file"
FUNCTIONS.update(_DATA_FUNCTIONS)


def evaluate(text, env):
    source = xc.rewrite(xc.GRAD_CALL.sub(r'%s("\1", "\2")' % xc.GRAD_HELPER, text))
    ns = {"__builtins__": {}}
    ns.update(FUNCTIONS)
    ns["inf"] = _num(math.inf)
    ns["pi"] = _num(math.pi)
    ns[xc.KEYWORD_PREFIX + "None"] = None
    ns[xc.NUM_HELPER] = _num
    ns[xc.LIST_HELPER] = _list
    ns[xc.LOGIC_HELPERS["and"]] = lambda a, b: _t(torch.logical_and(_plain(_t(a)), _plain(_t(b))).to(F64))
    ns[xc.LOGIC_HELPERS["or"]] = lambda a, b: _t(torch.logical_or(_plain(_t(a)), _plain(_t(b))).to(F64))
    ns[xc.LOGIC_HELPERS["not"]] = lambda x: _t(torch.logical_not(_plain(_t(x))).to(F64))
    # autograd's own gradient: the tracer's backward pass is not used
    ns[xc.GRAD_HELPER] = lambda y, x: _t(torch.autograd.grad(env[y], env[x], retain_graph=True)[0].detach())
    xc.put_names(ns, env, TT)
    try:
        result = eval(xc.compile_expr(source), ns)  # noqa: S307 - restricted namespace
    except Exception as exc:  # noqa: BLE001
        raise CheckError("torch could not evaluate %r: %s: %s" % (text, type(exc).__name__, exc))
    # a step is a new name with its own gradient, even when it is only another name (y: x)
    return _t(result).clone()


def given(name, node, count):
    value = xc.build_given(name, node)
    if isinstance(value, xc.S):
        raise CheckError("given %s is shape-only" % name)
    t = torch.tensor(np.asarray(value, dtype=np.float64), dtype=F64).as_subclass(TT)
    # whole-number givens (ids, targets) are not differentiated, as in the tracer
    return t if count else t.requires_grad_()


def compare(theirs, ours, what):
    a = torch.tensor(np.array(xc.parse_values(theirs, what), dtype=np.float64), dtype=F64)
    b = _plain(ours).detach()
    if tuple(a.shape) != tuple(b.shape):
        return ["%s: shape %s in the trace, %s in torch" % (what, list(a.shape), list(b.shape))]
    finite = torch.isfinite(a) & torch.isfinite(b)
    same = (torch.isnan(a) & torch.isnan(b)) | (torch.isinf(a) & (a == b))
    diff = torch.where(finite, (a - b).abs(), torch.full_like(a, math.inf))
    ok = torch.where(finite, diff <= RTOL * torch.clamp(b.abs(), min=1.0), same)
    if bool(ok.all()):
        return []
    worst = int(torch.argmax(torch.where(ok, torch.full_like(diff, -1.0), diff)))
    return ["%s: %d of %d elements differ beyond 1e-10; the largest at flat index %d: tracer %r, torch %r"
            % (what, int((~ok).sum()), a.numel(), worst, float(a.reshape(-1)[worst]), float(b.reshape(-1)[worst]))]


def check_lesson(tracer, path):
    doc, givens, steps = xc.load_lesson(path)
    proc = subprocess.run([tracer, "--format", "json", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=600)
    if proc.returncode != 0:
        raise CheckError("tracer exited with status %d: %s" % (proc.returncode, proc.stderr.decode()))
    stages = json.loads(proc.stdout.decode("utf-8"))["stages"]
    by_name = {s["name"]: s for s in stages}
    env = {}
    for name, node in givens:
        if isinstance(node, dict) and "trained" in node:  # another lesson's (tests/crosscheck.py checks it)
            values = np.array(xc.parse_values(by_name[name]["values"], name), dtype=np.float64)
            env[name] = torch.tensor(values, dtype=F64).as_subclass(TT).requires_grad_()
            continue
        env[name] = given(name, node, by_name[name].get("count", False))
    failures = []
    for name, text in steps:
        value = evaluate(text, xc.in_scope(env, name))
        if name in xc.REPLACES:  # an intervention: its value in every place of the stage it replaces
            value = _t(torch.broadcast_to(value, env[xc.REPLACES[name]].shape).clone())
        xc.keep(env, name, value)
        failures += compare(by_name[name]["values"], env[name], "step " + name)
    checked = 0
    for st in stages:
        if st.get("kind") != "gradient" or st.get("wrt") not in env:
            continue
        y, x = env[st["of"]], env[st["wrt"]]
        (g,) = torch.autograd.grad(y, x, retain_graph=True, allow_unused=True)
        if g is None:
            g = torch.zeros_like(x)
        failures += compare(st["values"], g, st["name"])
        checked += 1
    return checked, failures


def main(argv):
    if len(argv) < 3:
        print("usage: %s TRACER LESSON.yaml [LESSON.yaml ...]" % argv[0], file=sys.stderr)
        return 2
    torch.set_default_dtype(F64)
    status = 0
    for path in argv[2:]:
        try:
            checked, failures = check_lesson(argv[1], path)
        except (CheckError, xc.CheckError) as exc:
            print("FAIL %s\n  %s" % (path, exc))
            status = 1
            continue
        if failures:
            status = 1
            print("FAIL %s\n  %s" % (path, "\n  ".join(failures[:8])))
        else:
            print("ok  %s  (%d gradients against autograd)" % (path, checked))
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
