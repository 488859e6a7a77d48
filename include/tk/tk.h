// tk/tk.h: the whole public C++ API of tk.
//
//   #include <tk/tk.h>
//   tk::Kernel k = tk::Kernel::fromFile("add.tk", {.kernel = "add_kernel"});
//
// CMake: find_package(tk) and target_link_libraries(app PRIVATE tk::tk).
// docs/cpp-api.md describes it; tutorials/05-host-autotune.cpp uses it.
#pragma once

#include "tk/Autotuner.h"
#include "tk/Device.h"
#include "tk/Error.h"
#include "tk/Graph.h"
#include "tk/Kernel.h"
#include "tk/Version.h"
