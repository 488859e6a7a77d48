// The autotuner's Python binding (python/src/Autotune.cpp): _C.Autotuner and
// _C.bench_gpu, used by python/tk/autotuner.py.
#pragma once

#include <pybind11/pybind11.h>

namespace tk {

void bindAutotune(pybind11::module_ &m);

} // namespace tk
