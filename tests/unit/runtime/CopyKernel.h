// The strided copy kernel the public-API tests compile, for CUDA
// (PublicApiFakeTest) and for amdgcn (PublicApiHipFakeTest): with the stride
// specialised to 1 and n to a multiple of 16, its loads and stores vectorise.
#pragma once

inline constexpr const char *kCopy = "import tk\n"
                                     "@tk.jit\n"
                                     "def copy(x_ptr, y_ptr, n, stride, BLOCK: tk.constexpr):\n"
                                     "    offs = tk.arange(0, BLOCK)\n"
                                     "    v = tk.load(x_ptr + offs * stride, mask=offs < n)\n"
                                     "    tk.store(y_ptr + offs, v, mask=offs < n)\n";
