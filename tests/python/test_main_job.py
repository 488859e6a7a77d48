"""scripts/tutorials.py, the main job run.sh and test.sh run, on small copies
of the tutorials: it fails on a kernel without a manifest entry, on an entry
without its kernel and on a tutorial whose check fails, and its GPU table is
computed from a tutorial's benchmark()."""

import json
import pathlib
import shutil
import subprocess
import sys

import pytest

import tk

ROOT = pathlib.Path(__file__).parents[2]
SCRIPT = ROOT / "scripts" / "tutorials.py"
BUILD = pathlib.Path(tk.__file__).parents[2]  # build/python/tk/__init__.py

pytestmark = pytest.mark.skipif(not (BUILD / "bin" / "tkc").exists(),
                                reason=f"needs tkc of the build tree tk comes from ({BUILD})")

EXTRA_KERNEL = """

@tk.jit
def scale_kernel(x_ptr, n_elements, BLOCK_SIZE: tk.constexpr):
    offsets = tk.program_id(0) * BLOCK_SIZE + tk.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tk.store(x_ptr + offsets, tk.load(x_ptr + offsets, mask=mask) * 3.0, mask=mask)
"""


def main_job(tutorials, *args):
    proc = subprocess.run([sys.executable, str(SCRIPT), "--build", str(BUILD), "--tutorials",
                           str(tutorials), *args], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=600)
    return proc.returncode, proc.stdout


def vector_add_only(tmp_path):
    """tmp_path holding 01-vector-add.tk and a manifest of its one entry."""
    shutil.copy(ROOT / "tutorials" / "01-vector-add.tk", tmp_path)
    entries = json.loads((ROOT / "tutorials" / "kernels.json").read_text())["kernels"]
    mine = [e for e in entries if e["file"].endswith("01-vector-add.tk")]
    assert [e["kernel"] for e in mine] == ["add_kernel"]
    (tmp_path / "kernels.json").write_text(json.dumps({"kernels": mine}))
    return mine


def test_the_copy_passes(tmp_path):
    vector_add_only(tmp_path)
    status, out = main_job(tmp_path, "--only", "ptx")
    assert status == 0, out
    assert "01-vector-add.tk:add_kernel" in out
    assert out.rstrip().splitlines()[-1].startswith("tutorials: all passed; ptx 1/1")


def test_a_kernel_without_a_manifest_entry_fails_the_job(tmp_path):
    vector_add_only(tmp_path)
    source = tmp_path / "01-vector-add.tk"
    line = source.read_text().count("\n") + 4  # the def line of EXTRA_KERNEL
    source.write_text(source.read_text() + EXTRA_KERNEL)
    status, out = main_job(tmp_path, "--only", "ptx")
    assert status == 1, out
    assert (f"01-vector-add.tk:{line}: kernel 'scale_kernel' has no entry in "
            f"{tmp_path}/kernels.json") in out
    last = out.rstrip().splitlines()[-1]
    assert last.startswith("tutorials: FAILED: 01-vector-add.tk:scale_kernel (manifest)"), last


def test_an_entry_without_its_kernel_fails_the_job(tmp_path):
    mine = vector_add_only(tmp_path)
    mine.append(dict(mine[0], kernel="add_kernel_v2"))
    (tmp_path / "kernels.json").write_text(json.dumps({"kernels": mine}))
    status, out = main_job(tmp_path, "--only", "ptx")
    assert status == 1, out
    assert ("lists 'add_kernel_v2' of 01-vector-add.tk, which has no kernel of that name "
            "(its kernels: add_kernel)") in out


def test_a_wrong_result_fails_the_job(tmp_path):
    text = (ROOT / "tutorials" / "01-vector-add.py").read_text()
    store = "tk.store(output_ptr + offsets, x + y, mask=mask)"
    assert text.count(store) == 1
    (tmp_path / "01-vector-add.py").write_text(text.replace(store, store.replace("x + y",
                                                                                 "x - y")))
    status, out = main_job(tmp_path, "--only", "interpreter")
    assert status == 1, out
    assert "FAIL TK_INTERPRET=1 python3" in out and "Mismatched elements" in out
    assert out.rstrip().splitlines()[-1].startswith("tutorials: FAILED: 01-vector-add.py;")


def test_the_gpu_stage_skips_visibly_without_a_gpu(tmp_path):
    if tk._C.gpu_available()[0]:
        pytest.skip("there is a GPU here: the stage runs")
    status, out = main_job(tmp_path, "--only", "gpu")
    assert status == 0, out
    assert "== on the GPU: skipped (" in out
    assert "gpu skipped (" in out.rstrip().splitlines()[-1]


def test_the_gpu_table_is_the_tutorials_benchmark(tmp_path):
    # A tutorial whose benchmark() needs no GPU: fixed numbers per provider.
    (tmp_path / "09-fake.py").write_text(
        "import tk\n\n\n"
        "def benchmark(small):\n"
        "    @tk.testing.perf_report(tk.testing.Benchmark(\n"
        "        x_names=['N'], x_vals=[256, 1024], line_arg='provider',\n"
        "        line_vals=['tk', 'triton', 'torch'], line_names=['tk', 'Triton', 'torch'],\n"
        "        ylabel='GB/s', plot_name='09-fake', args={}))\n"
        "    def run(N, provider):\n"
        "        return {'tk': 3.0, 'triton': 2.0, 'torch': 6.0}[provider] * N\n"
        "    return run\n")
    status, out = main_job(tmp_path, "--gpu-table")
    assert status == 0, out
    rows = [line.split() for line in out.splitlines() if line.startswith("09-fake")]
    assert rows == [["09-fake", "N=256", "GB/s", "768", "512", "1536", "1.50", "0.50"],
                    ["09-fake", "N=1024", "GB/s", "3072", "2048", "6144", "1.50", "0.50"]]
