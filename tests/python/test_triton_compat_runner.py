"""bench/triton_compat: the porting rule's rewrite changes import lines and
nothing else; reasons group by cause. (The runner itself needs torch and
Triton: bench/triton_compat/README.md.)"""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench", "triton_compat"))

import rewrite  # noqa: E402


def test_import_lines_are_rewritten():
    cases = {
        "import triton": "import tk as triton",
        "import triton as tr": "import tk as tr",
        "import triton.language as tl": "import tk.language as tl",
        "import triton.profiler as proton  # tutorial 09": "import tk.profiler as proton  # tutorial 09",
        "    import triton.profiler.viewer as proton_viewer": "    import tk.profiler.viewer as proton_viewer",
        "import triton.language": "import tk.language; import tk as triton",
        "from triton.runtime.jit import TensorWrapper, reinterpret":
            "from tk.runtime.jit import TensorWrapper, reinterpret",
        "from triton import knobs": "from tk import knobs",
        "        from triton.runtime._allocation import NullAllocator":
            "        from tk.runtime._allocation import NullAllocator",
        "from triton._internal_testing import (": "from _internal_testing import (",
    }
    for before, after in cases.items():
        assert rewrite.rewrite_line(before) == after, before


def test_nothing_else_changes():
    text = ('"""import triton in a docstring"""\n'
            "x = triton.cdiv(n, 4)  # import triton\n"
            "import tritonclient\n"
            "from triton_kernels import y\n"
            "\timport triton\r\n")
    out, changed = rewrite.rewrite(text)
    assert changed == 1
    assert out == text.replace("\timport triton\r\n", "\timport tk as triton\r\n")


def test_reasons_group_by_cause():
    sys.path.insert(0, os.path.join(ROOT, "bench", "triton_compat"))
    import run

    a = run.reason_group("tk.errors.CompilationError: error: tk.dot needs every dimension >= 16, "
                         "got [2, 4] x [4, 8]")
    b = run.reason_group("tk.errors.CompilationError: error: tk.dot needs every dimension >= 16, "
                         "got [8, 8] x [8, 2]")
    assert a == b and "N" in a
    c = run.reason_group("AssertionError: /tmp/x/test_core.py:12: mismatch at 0x7f00ab")
    assert c == "AssertionError: FILE: mismatch at ADDR"


def test_benchmarks_not_run_name_one_or_many(capsys):
    import types

    import tutorial_harness

    one = types.SimpleNamespace(benchmarks=types.SimpleNamespace(plot_name="softmax"))
    many = types.SimpleNamespace(benchmarks=[types.SimpleNamespace(plot_name="a"),
                                             types.SimpleNamespace(plot_name="b")])
    tutorial_harness.skipped_run(one)
    tutorial_harness.skipped_run(many)
    out = capsys.readouterr().out.splitlines()
    assert out == ["[triton_compat] benchmark softmax not run (correctness only)",
                   "[triton_compat] benchmark a, b not run (correctness only)"]


def test_libdevice_where_a_source_checkout_keeps_it(tmp_path, monkeypatch):
    import run

    cuda = tmp_path / "cuda"
    (cuda / "nvvm" / "libdevice").mkdir(parents=True)
    (cuda / "nvvm" / "libdevice" / "libdevice.10.bc").write_bytes(b"BC")
    monkeypatch.setenv("CUDA_HOME", str(cuda))
    monkeypatch.setattr(run.importlib.util, "find_spec", lambda name: None)
    run.place_libdevice(str(tmp_path / "copy"))
    placed = tmp_path / "copy" / "third_party" / "nvidia" / "backend" / "lib" / "libdevice.10.bc"
    assert placed.read_bytes() == b"BC"
