# lit configuration for tk's FileCheck tests (docs/testing.md).
#
# Each test is a `.tk` file (later also textual IR) whose RUN lines call the
# tools of one build tree through substitutions:
#   %tkc       build/bin/tkc
#   %tkc-opt   build/bin/tkc-opt (once it exists)
#   %ptxas     ptxas, with the lit feature `ptxas` when it is installed
#   %python    the Python running lit (for the helper scripts in Inputs/)
#   %inputs    this folder's Inputs/
# FileCheck and `not` come from LLVM 19 (/usr/lib/llvm-19/bin). Features:
#   ptxas  ptxas found on PATH or in /usr/local/cuda/bin (`REQUIRES: ptxas`)
#   llvm   the tree links LLVM (the sanitizer tree does not): code-gen tests
#          say `REQUIRES: llvm`
#   lld    ld.lld is installed (AMDGPU code objects: `REQUIRES: lld`)
#   rocm-device-libs  ROCm's device-library bitcode is installed (amdgcn
#          math; %rocm_bitcode is its folder)
#   asan   the tree is built with ASan + UBSan
import os
import shutil
import sys

import lit.formats

config.name = "tk"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".tk", ".tkir"]
config.excludes = ["Inputs", "lit.cfg.py", "lit.site.cfg.py.in"]
config.test_source_root = os.path.dirname(os.path.abspath(__file__))

if not hasattr(config, "tk_obj_root"):
    lit_config.fatal(
        "run lit on a build tree, not the source tree: lit -sv build/tests/filecheck"
    )
config.test_exec_root = os.path.join(config.tk_obj_root, "tests", "filecheck")

# Tests see this tree's tools first, then LLVM's FileCheck and not.
config.environment["PATH"] = os.pathsep.join(
    [config.tk_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")]
)
# Sanitizer settings pass through; tk's own knobs (TK_DUMP_IR, ...) do not, so
# a developer's environment cannot change a test's output.
for var in ["ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS", "ASAN_SYMBOLIZER_PATH", "HOME"]:
    if var in os.environ:
        config.environment[var] = os.environ[var]
config.environment["TK_CACHE_DIR"] = os.path.join(config.test_exec_root, "tk-cache")

tkc_opt = os.path.join(config.tk_tools_dir, "tkc-opt")
# Longest first: lit substitutes in order, and %tkc is a prefix of %tkc-opt.
if os.path.exists(tkc_opt):
    config.substitutions.append(("%tkc-opt", tkc_opt))
# scripts/ptx_corpus.py runs the suite with --param tkc_wrapper=... to keep a
# copy of every PTX the suite makes.
config.substitutions.append(
    ("%tkc", lit_config.params.get("tkc_wrapper") or os.path.join(config.tk_tools_dir, "tkc"))
)

config.substitutions.append(("%python", sys.executable))
config.substitutions.append(("%inputs", os.path.join(config.test_source_root, "Inputs")))

ptxas = shutil.which("ptxas")
if not ptxas and os.path.exists("/usr/local/cuda/bin/ptxas"):
    ptxas = "/usr/local/cuda/bin/ptxas"
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))

if config.tk_with_llvm:
    config.available_features.add("llvm")
# lld  ld.lld for AMDGPU code objects (tkc --emit=hsaco; driver/Lld.h's search)
if os.path.exists("/usr/lib/llvm-19/bin/ld.lld") or shutil.which("ld.lld-19") or shutil.which(
    "ld.lld"
):
    config.available_features.add("lld")
# rocm-device-libs  ROCm's ocml.bc where tkc looks for it in the tests'
# environment (no TK_ROCM_DEVICE_LIBS or ROCM_PATH: ROCmDeviceLibs.cpp's
# other folders)
for folder in ["/opt/rocm/amdgcn/bitcode", "/usr/lib/x86_64-linux-gnu/amdgcn/bitcode"]:
    if os.path.exists(os.path.join(folder, "ocml.bc")):
        config.available_features.add("rocm-device-libs")
        config.substitutions.append(("%rocm_bitcode", folder))
        break
if config.tk_sanitize:
    config.available_features.add("asan")
