"""pytest set-up of the hostile-input suite (tests/robustness/): kernels run
on the interpreter, and the `tkc` fixture. The helpers are in hostile.py.

test.sh's pytest step collects this folder next to tests/python; by hand:

    PYTHONPATH=build/python python3 -m pytest -q tests/robustness
"""

import importlib.util
import os

import pytest

from hostile import ROOT, tkc_binary

os.environ["TK_INTERPRET"] = "1"


@pytest.fixture
def tkc():
    path = tkc_binary()
    if path is None:
        pytest.skip("no build/bin/tkc next to the tk package")
    return path


@pytest.fixture(scope="session")
def fake_libcuda(tmp_path_factory):
    """The stand-in CUDA driver (tests/python/fake_cuda.c), built by
    tests/python/stand_in_driver.py."""
    spec = importlib.util.spec_from_file_location(
        "stand_in_driver", ROOT / "tests/python/stand_in_driver.py")
    driver = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(driver)
    path = driver.build(tmp_path_factory.mktemp("fakecuda"))
    if path is None:
        pytest.skip("no C compiler to build the stand-in CUDA driver")
    return path
