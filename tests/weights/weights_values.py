#!/usr/bin/env python3
"""Givens read from weight files hold numpy's widening of the stored values, bit for bit, and a
file written by --save reads back to the same bits.

    weights_values.py TRACER WORKDIR

For every dtype of .npy (f8, f4, f2, i8, i4; little- and big-endian; C and Fortran order) and of
.safetensors (F64, F32, F16, BF16, I64, I32), this writes a file of chosen values (zeros of both
signs, subnormals, the largest and smallest normal numbers, infinities, random bits), traces a
lesson that reads each one (and a slice of the first axis), saves the givens with --save, and
compares the saved float64 bits with numpy's astype(float64) of what it wrote. BF16, which
numpy lacks, is widened as its definition says: the upper 16 bits of a float32.
"""
import json
import os
import struct
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from need_numpy import numpy_or_skip  # noqa: E402

np = numpy_or_skip("the weight files test")

rng = np.random.default_rng(27)


def float_values(dtype, n):
    """n values of dtype: the special ones first, then random bit patterns that are not NaN."""
    info = np.finfo(dtype)
    special = [0.0, -0.0, info.tiny, -info.tiny, info.smallest_subnormal, -info.smallest_subnormal,
               info.max, -info.max, np.inf, -np.inf, 1.0, -1.5]
    width = np.dtype(dtype).itemsize * 8
    bits = rng.integers(0, 2 ** width, size=4 * n, dtype=np.uint64).astype(f"u{width // 8}")
    randoms = bits.view(dtype)
    randoms = randoms[~np.isnan(randoms)]
    return np.concatenate([np.array(special, dtype=dtype), randoms])[:n]


def int_values(dtype, n):
    info = np.iinfo(dtype)
    special = [0, 1, -1, 2 ** 31 - 1, -(2 ** 31)]
    if info.bits == 64:
        special += [2 ** 53, -(2 ** 53)]
    return np.concatenate([np.array(special, dtype=dtype),
                           rng.integers(-(2 ** 31), 2 ** 31, size=n, dtype=dtype)])[:n]


def values(kind, n):
    return float_values(kind, n) if kind[0] == "f" else int_values(kind, n)


def safetensors(path, tensors):
    head, data = {}, b""
    for name, (dtype, raw, shape) in tensors.items():
        head[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(head).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)


def run(tracer, lesson, save, *extra):
    result = subprocess.run([tracer, lesson, "--save", save, *extra], capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"{lesson}: exit {result.returncode}\n{result.stderr}")


def same_bits(name, got, want):
    got = np.asarray(got, dtype="<f8")
    want = np.asarray(want, dtype=np.float64)
    if got.shape != want.shape:
        return f"{name}: shape {got.shape}, expected {want.shape}"
    differ = np.flatnonzero(got.view(np.uint64).ravel() != want.view(np.uint64).ravel())
    if differ.size:
        pairs = ", ".join(f"[{i}] {got.ravel()[i]!r} != {want.ravel()[i]!r}" for i in differ[:4])
        return f"{name}: {differ.size} values differ in their bits: {pairs}"
    return None


def main():
    tracer, work = sys.argv[1], os.path.abspath(sys.argv[2])
    os.makedirs(work, exist_ok=True)
    expected, givens = {}, []
    shape = (6, 5)
    for kind in ("f8", "f4", "f2", "i8", "i4"):
        for order in "<>":
            for fortran in (False, True):
                a = values(kind, 30).astype(order + kind).reshape(shape)
                if fortran:
                    a = np.asfortranarray(a)
                name = f"{kind}_{'le' if order == '<' else 'be'}_{'F' if fortran else 'C'}"
                np.save(os.path.join(work, name + ".npy"), a)
                givens.append(f"  {name}: {{file: {name}.npy, shape: [6, 5]}}")
                givens.append(f"  {name}_rows: {{file: {name}.npy, slice: [2, 5]}}")
                givens.append(f"  {name}_cols: {{file: {name}.npy, slice: [all, [1, 4]]}}")
                givens.append(f"  {name}_box: {{file: {name}.npy, slice: [[2, 5], [3, 5]]}}")
                expected[name] = a.astype(np.float64)
                expected[name + "_rows"] = a[2:5].astype(np.float64)
                expected[name + "_cols"] = a[:, 1:4].astype(np.float64)
                expected[name + "_box"] = a[2:5, 3:5].astype(np.float64)
    tensors = {}
    for dtype, kind in (("F64", "f8"), ("F32", "f4"), ("F16", "f2"), ("I64", "i8"), ("I32", "i4")):
        a = values(kind, 30).astype("<" + kind).reshape(shape)
        tensors[f"layer.{dtype}"] = (dtype, a.tobytes(), list(shape))
        expected[dtype] = a.astype(np.float64)
    # BF16: the upper half of a float32's bits; every pattern but NaN.
    bits = np.concatenate([np.array([0x0000, 0x8000, 0x0001, 0x8001, 0x007F, 0x0080, 0x7F7F, 0xFF7F,
                                     0x7F80, 0xFF80, 0x3F80], dtype="<u2"),
                           rng.integers(0, 2 ** 16, size=200, dtype=np.uint64).astype("<u2")])
    bits = bits[((bits & 0x7F80) != 0x7F80) | ((bits & 0x007F) == 0)][:30]
    tensors["layer.BF16"] = ("BF16", bits.tobytes(), list(shape))
    expected["BF16"] = (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64).reshape(shape)
    # Three axes, sliced on the middle one and on the last two, as Q, K and V are cut from one
    # matrix by columns.
    cube = values("f4", 60).astype("<f4").reshape(3, 4, 5)
    tensors["layer.cube"] = ("F32", cube.tobytes(), [3, 4, 5])
    for name, part, want in (("cube_middle", "[all, [1, 3]]", cube[:, 1:3]),
                             ("cube_last", "[all, all, [4, 5]]", cube[:, :, 4:5]),
                             ("cube_corner", "[[1, 3], [2, 4], [0, 2]]", cube[1:3, 2:4, 0:2])):
        givens.append(f"  {name}: {{file: model.safetensors, tensor: layer.cube, slice: {part}}}")
        expected[name] = want.astype(np.float64)
    # A name finds its tensor with or without Hugging Face's prefix "transformer.".
    tensors["transformer.layer.prefixed"] = ("F64", expected["F64"].tobytes(), list(shape))
    givens.append("  prefixed: {file: model.safetensors, tensor: layer.prefixed}")
    givens.append("  unprefixed: {file: model.safetensors, tensor: transformer.layer.F64}")
    expected["prefixed"] = expected["unprefixed"] = expected["F64"]
    safetensors(os.path.join(work, "model.safetensors"), tensors)
    for dtype in ("F64", "F32", "F16", "BF16", "I64", "I32"):
        givens.append(f"  {dtype}: {{file: model.safetensors, tensor: layer.{dtype}, shape: [6, 5]}}")
    lesson = os.path.join(work, "weights.yaml")
    with open(lesson, "w") as f:
        f.write("title: Every dtype of a weight file\ngiven:\n" + "\n".join(givens) +
                "\nsteps:\n  - total: F64 + F32\n")
    run(tracer, lesson, os.path.join(work, "saved"))
    problems = []
    for name, want in expected.items():
        problem = same_bits(name, np.load(os.path.join(work, "saved", name + ".npy")), want)
        if problem:
            problems.append(problem)
    # A file --save wrote reads back as the same bits, through a lesson and --weights.
    with open(os.path.join(work, "again.yaml"), "w") as f:
        f.write("title: Saved givens read back\ngiven:\n"
                "  BF16: {file: BF16.npy}\n  f2_be_F: {file: f2_be_F.npy}\n  total: {file: total.npy}\n"
                "steps:\n  - copy: total + 0\n")
    run(tracer, os.path.join(work, "again.yaml"), os.path.join(work, "again"),
        "--weights", os.path.join(work, "saved"))
    for name in ("BF16", "f2_be_F", "total"):
        with open(os.path.join(work, "saved", name + ".npy"), "rb") as first, \
                open(os.path.join(work, "again", name + ".npy"), "rb") as second:
            if first.read() != second.read():
                problems.append(f"{name}.npy written by --save does not read back byte for byte")
    if problems:
        sys.exit("\n".join(problems))
    print(f"{len(expected)} givens from weight files hold numpy's values, bit for bit; 3 saved files read back")


main()
