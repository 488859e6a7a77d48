"""@tk.autotune and @tk.heuristics on the interpreter, and the C++ tuner
behind them (_C.Autotuner) with a fake benchmark: keys, pruning, scoring of
failing configs, in-place arguments, the disk cache and its recovery."""

import os

import numpy as np
import pytest

import tk
from tk import _C


@pytest.fixture
def tune_in_interpreter(monkeypatch):
    monkeypatch.setenv("TK_AUTOTUNE_INTERPRET", "1")


def _fill_kernel():
    # A fresh kernel per test: each Autotuner remembers its choices.
    @tk.autotune(configs=[tk.Config({"BLOCK": 32}, num_warps=2), tk.Config({"BLOCK": 64}),
                          tk.Config({"BLOCK": 48})], key=["n"])
    @tk.jit
    def fill(x_ptr, n, v, BLOCK: tk.constexpr):
        offs = tk.program_id(0) * BLOCK + tk.arange(0, BLOCK)
        tk.store(x_ptr + offs, tk.full((BLOCK,), v, tk.float32), mask=offs < n)

    return fill


def test_without_tuning_the_interpreter_takes_the_first_config(monkeypatch, capsys):
    monkeypatch.setenv("TK_PRINT_AUTOTUNING", "1")
    fill = _fill_kernel()
    x = np.zeros(100, np.float32)
    fill[lambda m: (tk.cdiv(100, m["BLOCK"]),)](x, 100, 2.5)
    assert (x == 2.5).all()
    assert fill.best_config.kwargs == {"BLOCK": 32}
    assert "first config" in capsys.readouterr().err


def test_tuning_on_the_interpreter_times_every_config_and_skips_broken_ones(tune_in_interpreter):
    fill = _fill_kernel()
    x = np.zeros(1000, np.float32)
    fill[lambda m: (tk.cdiv(1000, m["BLOCK"]),)](x, 1000, 1.5)
    assert (x == 1.5).all()
    timings = fill.configs_timings
    assert len(timings) == 3
    # BLOCK=48 is not a power of two: tk.arange refuses it, the config is
    # unusable (infinite time), and one of the others wins.
    broken = [c for c in timings if c.kwargs["BLOCK"] == 48][0]
    assert timings[broken] == float("inf")
    assert fill.best_config.kwargs["BLOCK"] in (32, 64)
    assert all(t > 0 for c, t in timings.items() if c is not broken)


def test_the_key_includes_argument_values_and_tensor_dtypes(tune_in_interpreter):
    fill = _fill_kernel()
    grid = lambda m: (tk.cdiv(64, m["BLOCK"]),)  # noqa: E731
    fill[grid](np.zeros(64, np.float32), 64, 1.0)
    fill[grid](np.zeros(64, np.float32), 64, 3.0)  # same key: no new tuning
    assert len(fill.cache) == 1
    fill[grid](np.zeros(64, np.float32), 63, 1.0)  # another n
    assert len(fill.cache) == 2
    (values, dtypes), = [k for k in fill.cache if dict(k[0])["n"] == "63"]
    assert dict(dtypes) == {"x_ptr": "float32"}
    text = _C.autotune_key(list(values), list(dtypes))
    assert text == "n=63; x_ptr:float32"


def test_no_usable_config_lists_every_reason(tune_in_interpreter):
    @tk.autotune(configs=[tk.Config({"BLOCK": 48}), tk.Config({"BLOCK": 24})], key=["n"])
    @tk.jit
    def bad(x_ptr, n, BLOCK: tk.constexpr):
        tk.store(x_ptr + tk.arange(0, BLOCK), 1.0)

    with pytest.raises(RuntimeError) as e:
        bad[(1,)](np.zeros(64, np.float32), 64)
    message = str(e.value)
    assert "no usable config" in message
    assert "[0] BLOCK=48" in message and "[1] BLOCK=24" in message


def test_restore_value_keeps_in_place_kernels_correct(tune_in_interpreter):
    @tk.autotune(configs=[tk.Config({"BLOCK": 16}), tk.Config({"BLOCK": 32}),
                          tk.Config({"BLOCK": 64})], key=["n"], restore_value=["acc_ptr"])
    @tk.jit
    def accumulate(acc_ptr, x_ptr, n, BLOCK: tk.constexpr):
        offs = tk.program_id(0) * BLOCK + tk.arange(0, BLOCK)
        m = offs < n
        tk.store(acc_ptr + offs, tk.load(acc_ptr + offs, mask=m) + tk.load(x_ptr + offs, mask=m),
                 mask=m)

    rng = np.random.default_rng(3)
    acc = rng.standard_normal(200).astype(np.float32)
    x = rng.standard_normal(200).astype(np.float32)
    want = acc + x
    accumulate[lambda m: (tk.cdiv(200, m["BLOCK"]),)](acc, x, 200)
    # Three timed configs ran in place; restored after each, the launch with
    # the winner added x exactly once.
    np.testing.assert_array_equal(acc, want)


def test_reset_to_zero_zeroes_before_each_trial(tune_in_interpreter):
    @tk.autotune(configs=[tk.Config({"BLOCK": 32}), tk.Config({"BLOCK": 64})], key=["n"],
                 reset_to_zero=["out_ptr"])
    @tk.jit
    def add_into(out_ptr, x_ptr, n, BLOCK: tk.constexpr):
        offs = tk.program_id(0) * BLOCK + tk.arange(0, BLOCK)
        m = offs < n
        tk.store(out_ptr + offs, tk.load(out_ptr + offs, mask=m) + tk.load(x_ptr + offs, mask=m),
                 mask=m)

    x = np.random.default_rng(4).standard_normal(100).astype(np.float32)
    out = np.full(100, 7.0, np.float32)
    add_into[lambda m: (tk.cdiv(100, m["BLOCK"]),)](out, x, 100)
    # The last trial started from zero; the real launch then added x once more.
    np.testing.assert_allclose(out, 2 * x, rtol=1e-6)


def test_a_config_that_computes_something_else_is_rejected(tune_in_interpreter):
    # WRONG is 0 in the right configs; the config with WRONG=1 (and the
    # largest block, likely the fastest) stores x + 1.
    configs = [tk.Config({"BLOCK": 32, "WRONG": 0}), tk.Config({"BLOCK": 256, "WRONG": 1}),
               tk.Config({"BLOCK": 64, "WRONG": 0})]

    @tk.autotune(configs=configs, key=["n"])
    @tk.jit
    def copy(x_ptr, out_ptr, n, BLOCK: tk.constexpr, WRONG: tk.constexpr):
        offs = tk.program_id(0) * BLOCK + tk.arange(0, BLOCK)
        m = offs < n
        tk.store(out_ptr + offs, tk.load(x_ptr + offs, mask=m) + WRONG, mask=m)

    x = np.random.default_rng(5).standard_normal(300).astype(np.float32)
    out = np.zeros(300, np.float32)
    with pytest.warns(RuntimeWarning, match=r"\[1\] BLOCK=256, WRONG=1.*rejected: computes "
                                            r"another result than config \[0\]"):
        copy[lambda m: (tk.cdiv(300, m["BLOCK"]),)](x, out, 300)
    np.testing.assert_array_equal(out, x)
    assert copy.best_config is not configs[1]
    reason = copy.rejected[configs[1]]
    assert "element 0 of 'out_ptr' is" in reason and "(fp32: |difference| " in reason, reason
    assert copy.configs_timings[configs[1]] == float("inf")
    assert len(copy.reports) == 1
    # check_outputs=False: no comparison, nothing rejected.
    plain = tk.autotune(configs=configs, key=["n"], check_outputs=False)(copy.fn)
    plain[lambda m: (tk.cdiv(300, m["BLOCK"]),)](x, out, 300)
    assert plain.rejected == {}


def test_prune_configs_by(tune_in_interpreter):
    seen = []

    def early(configs, named, **kwargs):
        seen.append(named["n"])
        return [c for c in configs if c.kwargs["BLOCK"] >= 64]

    @tk.autotune(configs=[tk.Config({"BLOCK": b}) for b in (16, 32, 64, 128, 256)], key=["n"],
                 prune_configs_by={"early_config_prune": early,
                                   "perf_model": lambda **kw: -kw["BLOCK"], "top_k": 2})
    @tk.jit
    def fill(x_ptr, n, BLOCK: tk.constexpr):
        offs = tk.program_id(0) * BLOCK + tk.arange(0, BLOCK)
        tk.store(x_ptr + offs, 1.0, mask=offs < n)

    x = np.zeros(300, np.float32)
    fill[lambda m: (tk.cdiv(300, m["BLOCK"]),)](x, 300)
    assert seen == [300]
    assert (x == 1).all()
    timed = {c.kwargs["BLOCK"] for c, t in fill.configs_timings.items() if t != float("inf")}
    assert timed == {128, 256}  # early prune keeps >= 64, the model's top 2 are the largest


def test_heuristics_on_top_of_autotune(tune_in_interpreter):
    @tk.autotune(configs=[tk.Config({"BLOCK": 32}), tk.Config({"BLOCK": 64})], key=["n"])
    @tk.heuristics({"EVEN": lambda a: a["n"] % a["BLOCK"] == 0})
    @tk.jit
    def k(x_ptr, n, BLOCK: tk.constexpr, EVEN: tk.constexpr):
        offs = tk.program_id(0) * BLOCK + tk.arange(0, BLOCK)
        if EVEN:
            tk.store(x_ptr + offs, tk.full((BLOCK,), 1.0, tk.float32), mask=offs < n)
        else:
            tk.store(x_ptr + offs, tk.full((BLOCK,), 2.0, tk.float32), mask=offs < n)

    x = np.zeros(100, np.float32)
    k[lambda m: (tk.cdiv(100, m["BLOCK"]),)](x, 100)
    assert (x == 2.0).all()  # 100 is a multiple of neither 32 nor 64
    x = np.zeros(128, np.float32)
    k[lambda m: (tk.cdiv(128, m["BLOCK"]),)](x, 128)
    assert (x == 1.0).all()


def test_unknown_names_are_type_errors():
    # A key naming no parameter is ignored, as in Triton (tutorial 08 upstream
    # has such a typo); the tensors to reset or restore must exist.
    @tk.autotune(configs=[tk.Config({})], key=["m"])
    @tk.jit
    def f(x_ptr, n):
        pass

    assert f.keys == ["m"]
    with pytest.raises(TypeError, match="restore_value of 'g' names"):
        @tk.autotune(configs=[tk.Config({})], key=[], restore_value=["y"])
        @tk.jit
        def g(x_ptr, n):
            pass


#
# The C++ tuner directly, with a fake benchmark
#

CONFIGS = [({"BLOCK": 32}, 4, 3), ({"BLOCK": 64}, 8, 3), ({"BLOCK": 128}, 8, 4)]


def test_cpp_tuner_persists_and_recovers_from_damage(tmp_path):
    times = [3.0, 1.25, 2.0]
    calls = []

    def bench(i):
        calls.append(i)
        return times[i]

    first = _C.Autotuner("k", "id1", CONFIGS, "Fake GPU", str(tmp_path), True)
    best, trials, seconds, from_disk = first.tune("n=1;", bench)
    assert best == 1 and not from_disk and calls == [0, 1, 2]
    path = first.cache_path("n=1;")
    assert os.path.dirname(path) == str(tmp_path / "autotune") and os.path.exists(path)

    second = _C.Autotuner("k", "id1", CONFIGS, "Fake GPU", str(tmp_path), True)
    best, trials, _, from_disk = second.tune("n=1;", bench)
    assert (best, from_disk) == (1, True) and calls == [0, 1, 2]
    assert trials[0]["ms"] == 3.0

    # A damaged file is ignored: the third tuner benchmarks again and rewrites it.
    data = bytearray(open(path, "rb").read())
    data[-5] ^= 0x20
    open(path, "wb").write(bytes(data))
    third = _C.Autotuner("k", "id1", CONFIGS, "Fake GPU", str(tmp_path), True)
    assert third.lookup("n=1;") is None
    assert third.tune("n=1;", bench)[0] == 1 and calls == [0, 1, 2] * 2
    assert _C.Autotuner("k", "id1", CONFIGS, "Fake GPU", str(tmp_path), True).lookup("n=1;")

    # Another device, source or config list is another entry.
    for other in (_C.Autotuner("k", "id1", CONFIGS, "Other GPU", str(tmp_path), True),
                  _C.Autotuner("k", "id2", CONFIGS, "Fake GPU", str(tmp_path), True),
                  _C.Autotuner("k", "id1", CONFIGS[:2], "Fake GPU", str(tmp_path), True)):
        assert other.lookup("n=1;") is None


def test_cpp_tuner_scores_exceptions_and_reports_progress(tmp_path):
    reports = []

    def bench(i):
        if i == 0:
            raise ValueError("out of resources: shared memory")
        return 1.0 + i

    t = _C.Autotuner("k", "id", CONFIGS, "Fake GPU", str(tmp_path), False)
    best, trials, _, _ = t.tune("k;", bench, [0, 2], reports.append)
    assert best == 2
    assert "out of resources: shared memory" in trials[0]["reason"]
    assert trials[1]["pruned"] and not trials[1]["usable"]
    assert [r["done"] for r in reports] == [1, 2, 2]
    assert reports[-1]["finished"] and reports[-1]["best_config"] == (
        "BLOCK=128, num_warps=8, num_stages=4")
    assert not os.path.exists(tmp_path / "autotune")  # disk cache off


def _record_compiles(fill):
    """Wraps the jit function's compile to record (thread, start, end) per
    compile."""
    import threading
    import time

    jit_fn = fill.fn
    calls = []
    original = jit_fn._compile

    def recording(*args, **kwargs):
        start = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            calls.append((threading.get_ident(), start, time.perf_counter()))

    jit_fn._compile = recording
    return calls


def _wide_fill_kernel():
    @tk.autotune(configs=[tk.Config({"BLOCK": b}, num_warps=w) for b in (32, 64, 128, 256)
                          for w in (1, 2)], key=["n"])
    @tk.jit
    def fill(x_ptr, n, v, BLOCK: tk.constexpr):
        offs = tk.program_id(0) * BLOCK + tk.arange(0, BLOCK)
        tk.store(x_ptr + offs, tk.full((BLOCK,), v, tk.float32), mask=offs < n)

    return fill


@pytest.mark.parametrize("threads", ["1", "4"])
def test_surviving_configs_compile_on_a_thread_pool(tune_in_interpreter, monkeypatch, threads):
    """Like the C++ tuner, the configs compile before any is timed, on
    TK_COMPILE_THREADS threads (1: each right before its benchmark, on the
    caller's thread); the choice and the results do not depend on it."""
    monkeypatch.setenv("TK_COMPILE_THREADS", threads)
    import threading

    fill = _wide_fill_kernel()
    calls = _record_compiles(fill)
    rng = np.random.default_rng(int(threads))
    n = int(rng.integers(300, 1000))
    v = float(rng.uniform(-2, 2))
    x = np.full(n, np.nan, np.float32)
    fill[lambda m: (tk.cdiv(n, m["BLOCK"]),)](x, n, v)
    assert (x == np.float32(v)).all()
    assert len(fill.configs_timings) == 8
    assert all(t < float("inf") for t in fill.configs_timings.values())
    # Every config compiled exactly once (the benchmark found it cached).
    assert len(calls) == 8
    workers = {ident for ident, _, _ in calls}
    if threads == "1":
        assert workers == {threading.get_ident()}
    else:
        assert threading.get_ident() not in workers and 1 < len(workers) <= 4
    assert _C.compile_threads(8) == int(threads)
    assert _C.compile_threads(2) == min(2, int(threads))
