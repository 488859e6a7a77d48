"""pytest set-up for tk's Python tests.

They run the kernels on the CPU interpreter (TK_INTERPRET=1), so they need no
GPU. Tests marked `gpu` need a GPU launch path and are skipped, with the
reason shown, where there is none (test.sh runs pytest with -rs).

tk is imported from the build tree: test.sh sets PYTHONPATH=build/python;
by hand, `PYTHONPATH=build/python python3 -m pytest tests/python`.
"""

import os
import sys

import pytest

os.environ["TK_INTERPRET"] = "1"
sys.path.insert(0, os.path.dirname(__file__))  # helper modules next to the tests


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a GPU and tk's GPU launch path")


def pytest_collection_modifyitems(config, items):
    skip = pytest.mark.skip(reason="needs a GPU launch path (no CUDA driver here, and tk's GPU "
                                   "launch from Python is issue 6's second part)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
