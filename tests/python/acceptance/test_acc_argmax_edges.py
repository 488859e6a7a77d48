"""argmax / argmin / max / min on the rows that separate one implementation
from another: the extreme value repeated (in one thread's registers, in
neighbouring lanes, in other warps), NaN first, NaN everywhere but one place,
a row of NaN only, signed zeros, infinities, and integer ties. tk's rule
(docs/language.md; the interpreter's, interpreter/InterpreterReduce.cpp): the
first position of the extreme value wins and NaN loses to any number, so a
row of NaN gives position 0 and a NaN value. Runs on the interpreter (CI) and
on the GPU (marked gpu), whose lowering combines a thread's own registers
differently from its lanes and warps (lowering/codegen/ReduceToLLVM.cpp), at
1, 4 and 8 warps (32, 8 and 4 elements of a row per thread)."""

import numpy as np
import pytest

import tk
from acc_common import backend, check  # noqa: F401  (backend is a fixture)

BLOCK = 256


@tk.jit
def extremes_kernel(x_ptr, vmax_ptr, imax_ptr, vmin_ptr, imin_ptr, BLOCK: tk.constexpr):
    row = tk.program_id(0)
    x = tk.load(x_ptr + row * BLOCK + tk.arange(0, BLOCK))
    v, i = tk.max(x, axis=0, return_indices=True)
    tk.store(vmax_ptr + row, v)
    tk.store(imax_ptr + row, i)
    tk.store(vmin_ptr + row, tk.min(x, axis=0))
    tk.store(imin_ptr + row, tk.argmin(x, axis=0))


def edge_rows(rng, floats):
    rows = []
    base = rng.uniform(-100, 100, size=BLOCK)
    for positions in ([3, 4, 200], [0, 255], [31, 32, 33], [128, 129, 250], [7, 100]):
        r = base.copy()
        r[positions] = 1000.0         # the maximum, repeated
        r[[p ^ 1 for p in positions]] = -1000.0  # the minimum, repeated next to it
        rows.append(r)
    ints = rng.integers(-3, 3, size=(4, BLOCK)).astype(np.float64)  # many ties
    rows.extend(ints)
    if floats:
        nan_first = base.copy()
        nan_first[0] = np.nan
        rows.append(nan_first)
        one_number = np.full(BLOCK, np.nan)
        one_number[173] = -5.0
        rows.append(one_number)
        rows.append(np.full(BLOCK, np.nan))
        zeros = np.zeros(BLOCK)
        zeros[rng.choice(BLOCK, 100, replace=False)] = -0.0
        zeros[:5] = [-0.0, 0.0, -0.0, 0.0, -0.0]
        rows.append(zeros)
        infs = np.where(rng.uniform(size=BLOCK) < 0.5, np.inf, -np.inf)
        infs[rng.choice(BLOCK, 60, replace=False)] = np.nan
        rows.append(infs)
        sprinkled = base.copy()
        sprinkled[rng.choice(BLOCK, 40, replace=False)] = np.nan
        sprinkled[[90, 91, 160]] = 1000.0
        rows.append(sprinkled)
    return np.stack(rows)


def first_extreme(x, is_max):
    """Per row: (value, position) by tk's rule, in float64."""
    vals, idxs = [], []
    for row in x:
        nums = ~np.isnan(row)
        if not nums.any():
            vals.append(np.nan)
            idxs.append(0)
            continue
        v = row[nums].max() if is_max else row[nums].min()
        vals.append(v)
        idxs.append(int(np.flatnonzero(nums & (row == v))[0]))
    return np.array(vals), np.array(idxs)


@pytest.mark.parametrize("dtype", ["fp32", "fp16", "i32"])
@pytest.mark.parametrize("num_warps", [1, 4, 8])
def test_argmax_argmin_edges(backend, dtype, num_warps):
    host = edge_rows(backend.rng, floats=dtype != "i32")
    x, x64 = backend.put(host, dtype)
    rows = host.shape[0]
    vmax, imax = backend.empty(rows, dtype), backend.empty(rows, "i32")
    vmin, imin = backend.empty(rows, dtype), backend.empty(rows, "i32")
    extremes_kernel[(rows,)](x, vmax, imax, vmin, imin, BLOCK=BLOCK, num_warps=num_warps)
    want_vmax, want_imax = first_extreme(x64, True)
    want_vmin, want_imin = first_extreme(x64, False)
    check(backend.get(imax), want_imax, what="argmax")
    check(backend.get(imin), want_imin, what="argmin")
    for got, want, what in ((vmax, want_vmax, "max"), (vmin, want_vmin, "min")):
        got = backend.get(got)
        # exact, NaN where NaN is expected, infinities kept; +0 == -0
        assert np.array_equal(got, want, equal_nan=True), f"{what}: {got} != {want}"
