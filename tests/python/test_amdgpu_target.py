"""The amdgcn target from Python (docs/python.md, "Targets"): TK_TARGET,
TK_ARCH and the `target=` / `arch=` launch options select it; a compile
gives the AMDGPU assembly (`asm["amdgcn"]`) and the code object
(`asm["hsaco"]`) without any GPU; a bad target or arch is an error that
names the choices; launching where there is no HIP runtime raises
tk.DriverError saying so; and, against the stand-in HIP runtime of
tests/unit/driver/HipDriverFake.c (amdgpu_fake_checks.py, a process of its
own), a launch passes the kernarg bytes the code object's metadata
describes on the workgroup it was compiled for."""

import os
import pathlib
import shutil
import subprocess
import sys

import pytest

import tk
from ptx_compile_util import CudaArray

HERE = pathlib.Path(__file__).parent
ROOT = HERE.parent.parent


@tk.jit
def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tk.constexpr):
    offs = tk.program_id(0) * BLOCK + tk.arange(0, BLOCK)
    mask = offs < n
    tk.store(out_ptr + offs, tk.load(x_ptr + offs, mask=mask) + tk.load(y_ptr + offs, mask=mask),
             mask=mask)


def _args(n=4096):
    return (CudaArray(0x10000, n=n), CudaArray(0x20000, n=n), CudaArray(0x30000, n=n), n)


@pytest.fixture
def gpu_compile(monkeypatch):
    """GPU compiles (no interpreter), with neither TK_TARGET nor TK_ARCH set."""
    monkeypatch.delenv("TK_INTERPRET", raising=False)
    monkeypatch.delenv("TK_TARGET", raising=False)
    monkeypatch.delenv("TK_ARCH", raising=False)
    return monkeypatch


def _needs_amdgpu_back_end():
    if shutil.which("ld.lld-19") is None and not os.path.exists("/usr/lib/llvm-19/bin/ld.lld") \
            and shutil.which("ld.lld") is None:
        pytest.skip("no ld.lld to link AMDGPU code objects (lld-19)")


def _assert_amdgpu(kernel, arch):
    asm = kernel.asm
    assert kernel.metadata.target == "amdgcn"
    assert "ptx" not in asm and "amdgcn" in asm and "hsaco" in asm
    text = asm["amdgcn"]
    assert f"amdgcn-amd-amdhsa--{arch}" in text
    assert ".amdhsa_kernel add" in text and "s_endpgm" in text
    # The kernel descriptor: no LDS here, its kernarg segment, the workgroup.
    assert ".amdhsa_group_segment_fixed_size 0" in text
    assert ".amdhsa_kernarg_size" in text
    code = asm["hsaco"]
    assert isinstance(code, bytes) and code[:4] == b"\x7fELF"
    assert b"add.kd" in code  # the kernel descriptor's symbol HIP looks up


def test_tk_target_amdgcn_compiles_for_gfx942_without_a_gpu(gpu_compile):
    _needs_amdgpu_back_end()
    gpu_compile.setenv("TK_TARGET", "amdgcn")
    k = add.warmup(*_args(), BLOCK=1024, grid=(4,))
    _assert_amdgpu(k, "gfx942")
    # wave64: a workgroup of whole wavefronts
    assert ".amdhsa_wavefront_size32 0" in k.asm["amdgcn"] or "wavefront_size32" not in \
        k.asm["amdgcn"]


def test_an_amd_tk_arch_selects_amdgcn(gpu_compile):
    _needs_amdgpu_back_end()
    gpu_compile.setenv("TK_ARCH", "gfx90a")
    _assert_amdgpu(add.warmup(*_args(), BLOCK=256, grid=(1,)), "gfx90a")
    gpu_compile.setenv("TK_TARGET", "amdgcn")
    gpu_compile.setenv("TK_ARCH", "gfx1100")
    k = add.warmup(*_args(), BLOCK=256, grid=(1,))
    _assert_amdgpu(k, "gfx1100")
    assert ".amdhsa_wavefront_size32 1" in k.asm["amdgcn"]


def test_launch_options_select_the_target(gpu_compile):
    _needs_amdgpu_back_end()
    _assert_amdgpu(add.warmup(*_args(), BLOCK=256, grid=(1,), target="amdgcn"), "gfx942")
    _assert_amdgpu(add.warmup(*_args(), BLOCK=256, grid=(1,), arch="gfx90a"), "gfx90a")
    _assert_amdgpu(add.warmup(*_args(), BLOCK=256, grid=(1,), target="amdgcn", arch="gfx90a"),
                   "gfx90a")
    # The same arguments for NVIDIA: PTX, and another compiled kernel.
    ptx = add.warmup(*_args(), BLOCK=256, grid=(1,), target="nvptx")
    assert ptx.metadata.target == "nvptx" and "ptx" in ptx.asm and "amdgcn" not in ptx.asm
    assert ".entry add" in ptx.asm["ptx"]
    # TK_TARGET=amdgcn with target="nvptx": the option wins, TK_ARCH is not NVIDIA's.
    gpu_compile.setenv("TK_TARGET", "amdgcn")
    assert add.warmup(*_args(), BLOCK=256, grid=(1,), target="nvptx").metadata.target == "nvptx"
    assert add.warmup(*_args(), BLOCK=256, grid=(1,)).metadata.target == "amdgcn"


def test_unknown_targets_and_archs_are_errors_naming_the_choices(gpu_compile):
    gpu_compile.setenv("TK_TARGET", "rocm")
    with pytest.raises(tk.CompilationError, match='TK_TARGET="rocm" is not one of nvptx,amdgcn'):
        add.warmup(*_args(), BLOCK=256, grid=(1,))
    gpu_compile.setenv("TK_TARGET", "amdgcn")
    gpu_compile.setenv("TK_ARCH", "gfx900")
    with pytest.raises(tk.CompilationError,
                       match='TK_ARCH="gfx900" is not one of .*gfx90a,gfx942,gfx1100'):
        add.warmup(*_args(), BLOCK=256, grid=(1,))
    gpu_compile.setenv("TK_ARCH", "sm_90")
    with pytest.raises(tk.CompilationError,
                       match="TK_ARCH=sm_90 is not an arch of TK_TARGET=amdgcn "
                             r"\(amdgcn: gfx90a, gfx942, gfx1100; nvptx: sm_80"):
        add.warmup(*_args(), BLOCK=256, grid=(1,))
    gpu_compile.delenv("TK_ARCH")
    gpu_compile.delenv("TK_TARGET")
    with pytest.raises(ValueError, match="target of add must be 'nvptx' or 'amdgcn', not 'hip'"):
        add.warmup(*_args(), BLOCK=256, grid=(1,), target="hip")
    with pytest.raises(ValueError, match=r"arch of add must have the form sm<NN> \(sm80, sm90\) "
                                         r"or be an AMD arch \(gfx90a, gfx942, gfx1100\), not "
                                         "'gfx908'"):
        add.warmup(*_args(), BLOCK=256, grid=(1,), arch="gfx908")
    with pytest.raises(ValueError, match="arch 'sm_90a' of add is not an arch of target 'amdgcn'"):
        add.warmup(*_args(), BLOCK=256, grid=(1,), target="amdgcn", arch="sm90")
    with pytest.raises(ValueError, match="num_ctas > 1 requires NVIDIA SM90"):
        add.warmup(*_args(), BLOCK=256, grid=(1,), target="amdgcn", num_ctas=2)


def test_unsupported_features_on_amdgcn_are_located_compile_errors(gpu_compile):
    _needs_amdgpu_back_end()

    @tk.jit
    def ptx_asm(x_ptr, y_ptr, BLOCK: tk.constexpr):
        x = tk.load(x_ptr + tk.arange(0, BLOCK))
        y = tk.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [x], dtype=tk.int32,
                                      is_pure=True, pack=1)
        tk.store(y_ptr + tk.arange(0, BLOCK), y)

    args = (CudaArray(0x1000, "<i4"), CudaArray(0x2000, "<i4"))
    with pytest.raises(tk.CompilationError,
                       match=r"test_amdgpu_target.py:\d+:\d+: error: 'inline_asm' .* is not "
                             "supported on amdgcn yet"):
        ptx_asm.warmup(*args, BLOCK=64, grid=(1,), target="amdgcn")
    assert "mov.b32" in ptx_asm.warmup(*args, BLOCK=64, grid=(1,), target="nvptx").asm["ptx"]


def test_launching_without_a_hip_runtime_is_a_driver_error(gpu_compile):
    ok, why = tk._C.hip_available()
    if ok:
        pytest.skip(f"a HIP runtime is present ({why})")
    assert why.startswith("no HIP runtime: libamdhip64.so not found (") or \
        why.startswith("no HIP device"), why
    gpu_compile.setenv("TK_TARGET", "amdgcn")
    with pytest.raises(tk.DriverError) as e:
        add[(4,)](*_args(), BLOCK=1024)
    message = str(e.value)
    assert "cannot launch 'add' on an AMD GPU (amdgcn, gfx942): no HIP runtime" in message or \
        "no HIP device" in message, message
    assert "warmup(...) gives asm['amdgcn'] and asm['hsaco']" in message
    # The launch option as well, with TK_TARGET unset.
    gpu_compile.delenv("TK_TARGET")
    with pytest.raises(tk.DriverError, match=r"on an AMD GPU \(amdgcn, gfx90a\)"):
        add[(4,)](*_args(), BLOCK=1024, arch="gfx90a")


def _fake_hip(directory):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler to build the stand-in HIP runtime")
    out = pathlib.Path(directory) / "libamdhip64.so"
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-Wl,-soname,libamdhip64.so", "-o", str(out),
                    str(ROOT / "tests/unit/driver/HipDriverFake.c")], check=True)
    return out


def test_launches_through_a_stand_in_hip_runtime(tmp_path):
    _needs_amdgpu_back_end()
    fake = _fake_hip(tmp_path)
    env = dict(os.environ)
    env.pop("TK_INTERPRET", None)
    env.pop("TK_ARCH", None)
    env["TK_TARGET"] = "amdgcn"
    env["TK_CACHE_DIR"] = str(tmp_path / "cache")
    r = subprocess.run([sys.executable, str(HERE / "amdgpu_fake_checks.py"), str(fake)], env=env,
                       capture_output=True, text=True, timeout=300)
    print(r.stdout)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "checks passed" in r.stdout
