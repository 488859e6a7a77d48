"""pytest set-up for tk's Python tests.

They run the kernels on the CPU interpreter (TK_INTERPRET=1), so they need no
GPU. Tests marked `gpu` launch on the GPU (TK_INTERPRET is removed for them)
and are skipped, with the reason shown, where there is none: no CUDA driver
or device, or no torch with CUDA (test.sh runs pytest with -rs).

tk is imported from the build tree: test.sh sets PYTHONPATH=build/python;
by hand, `PYTHONPATH=build/python python3 -m pytest tests/python`.
"""

import os
import sys

import pytest

os.environ["TK_INTERPRET"] = "1"
sys.path.insert(0, os.path.dirname(__file__))  # helper modules next to the tests


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a GPU (torch with CUDA and tk's driver)")


def _why_no_gpu():
    """None when GPU tests can run, else the reason."""
    try:
        import torch
    except ImportError:
        return "needs a GPU: torch is not installed"
    if not torch.cuda.is_available():
        return "needs a GPU: torch sees no CUDA device"
    import tk

    ok, why = tk._C.gpu_available()
    return None if ok else f"needs a GPU: {why}"


def pytest_collection_modifyitems(config, items):
    gpu_items = [item for item in items if "gpu" in item.keywords]
    if not gpu_items:
        return
    why = _why_no_gpu()
    if why is not None:
        for item in gpu_items:
            item.add_marker(pytest.mark.skip(reason=why))


@pytest.fixture(autouse=True)
def _gpu_tests_launch_on_the_gpu(request, monkeypatch):
    if "gpu" in request.keywords:
        monkeypatch.delenv("TK_INTERPRET", raising=False)


@pytest.fixture
def ptx_compile(monkeypatch):
    """Compiles for sm_90 (to PTX; nothing is loaded) whatever the suite's
    default: for warmup(...) on ptx_compile_util.CudaArray arguments."""
    monkeypatch.delenv("TK_INTERPRET", raising=False)
    monkeypatch.setenv("TK_ARCH", "sm_90")


@pytest.fixture(scope="session")
def fake_libcuda(tmp_path_factory):
    """The stand-in CUDA driver (fake_cuda.c), built once per session."""
    import stand_in_driver

    path = stand_in_driver.build(tmp_path_factory.mktemp("fakecuda"))
    if path is None:
        pytest.skip("no C compiler to build the stand-in CUDA driver")
    return path
