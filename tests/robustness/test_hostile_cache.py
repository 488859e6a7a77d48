"""The disk cache against what can be found where an entry should be: a FIFO
(which blocks a reader that opens it plainly, forever), a device, a
directory, and valid entries swapped between two keys, with and without
their key fields rewritten. Every case must compile again (the same PTX as
a clean compile) within a time bound, and repair the entry. The kind-by-
kind sweep of damaged bytes is tests/unit/runtime/CompileCacheTest.cpp;
these go through Python's GPU compile path end to end (PTX only: no GPU
needed)."""

import os
import pathlib
import sys
import textwrap

import pytest

from hostile import child_env, run_process

KERNELS = textwrap.dedent("""
    import sys, tk

    @tk.jit
    def scale(x, y, n, BLOCK: tk.constexpr):
        offs = tk.program_id(0) * BLOCK + tk.arange(0, BLOCK)
        tk.store(y + offs, tk.load(x + offs, mask=offs < n) * 3.0, mask=offs < n)

    class Gpu:  # what a GPU launch specialises a pointer from
        __cuda_array_interface__ = {"data": (4096, False), "typestr": "<f4", "shape": (64,),
                                    "version": 3}

    for block in sys.argv[1:]:
        k = scale.warmup(Gpu(), Gpu(), 64, BLOCK=int(block))
        print(f"BLOCK={block} ptx_from_cache={k._compiled.ptx_from_cache}")
        print("PTX", block, hash(k.asm["ptx"]))
""")


def compile_blocks(cache, *blocks):
    """Compiles `scale` for each BLOCK in a fresh process; the kernel's file
    is the same every time (its name is part of the key)."""
    source = pathlib.Path(cache).parent / "kernels.py"
    if not source.exists():
        source.write_text(KERNELS)
    r = run_process([sys.executable, str(source)] + [str(b) for b in blocks], timeout=60,
                    env=child_env(TK_INTERPRET=None, TK_CACHE_DIR=cache, TK_ARCH="sm_90",
                                  PYTHONHASHSEED=0))
    assert r.returncode == 0, r
    ptx = {line.split()[1]: line.split()[2] for line in r.stdout.splitlines()
           if line.startswith("PTX")}
    cached = {line.split()[0]: "ptx_from_cache=True" in line for line in r.stdout.splitlines()
              if line.startswith("BLOCK")}
    return ptx, cached


def entries(cache):
    return sorted(pathlib.Path(cache).glob("*.kernel"))


@pytest.fixture
def warm(tmp_path):
    """A cache holding the entries of BLOCK=128 and BLOCK=256, and their PTX."""
    cache = str(tmp_path / "cache")
    ptx, cached = compile_blocks(cache, 128)
    ptx.update(compile_blocks(cache, 256)[0])
    assert not any(cached.values())
    return cache, ptx


@pytest.mark.parametrize("what", ["fifo", "device", "directory"])
def test_a_special_file_where_an_entry_should_be_is_a_miss_and_is_repaired(tmp_path, what):
    cache = str(tmp_path / "cache")
    clean, _ = compile_blocks(cache, 128)
    (entry,) = entries(cache)
    entry.unlink()
    if what == "fifo":
        os.mkfifo(entry)
    elif what == "device":
        entry.symlink_to("/dev/zero")
    else:
        entry.mkdir()
    # A reader that blocks on the FIFO fails here by the timeout.
    ptx, cached = compile_blocks(cache, 128)
    assert ptx == clean and not cached["BLOCK=128"]
    if what != "directory":  # a directory cannot be renamed over: memory only
        assert entry.is_file() and not entry.is_symlink()
        assert compile_blocks(cache, 128)[1]["BLOCK=128"], "the repaired entry is read"


def test_entries_swapped_between_keys_are_misses(warm):
    cache, clean = warm
    a, b = entries(cache)
    data_a, data_b = a.read_bytes(), b.read_bytes()
    # Whole files swapped: the key in the header does not match the name.
    a.write_bytes(data_b)
    b.write_bytes(data_a)
    ptx, cached = compile_blocks(cache, 128, 256)
    assert ptx == clean and not any(cached.values())
    # Swapped with each header's key rewritten to the new name's: only a
    # checksum that covers the key tells them apart.
    a.write_bytes(data_b[:16] + data_a[16:48] + data_b[48:])
    b.write_bytes(data_a[:16] + data_b[16:48] + data_a[48:])
    ptx, cached = compile_blocks(cache, 128, 256)
    assert ptx == clean, "each key compiled its own kernel, not the other's"
    assert not any(cached.values())
    assert compile_blocks(cache, 128, 256)[1] == {"BLOCK=128": True, "BLOCK=256": True}
