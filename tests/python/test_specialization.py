"""The specialisation rule from Python: every row of
tests/unit/compiler/arg-specialization.txt, the table the C++ rule's unit test
(tests/unit/compiler/ArgSpecializationTest.cpp) reads, made into the Python
values it describes (an int, a numpy scalar, a torch-like tensor, a CUDA or a
host array at the row's address) and specialised by runtime._specialize: the
Python type dispatch, then the C++ rule through _C.specialize_arg. Both tests
check the row's entry, so Python and C++ specialise every row alike."""

import pathlib

import numpy as np
import pytest

import tk.runtime.jit as tkjit

TABLE = pathlib.Path(__file__).resolve().parents[2] / "tests/unit/compiler/arg-specialization.txt"

NUMPY_SCALARS = {"i8": np.int8, "i16": np.int16, "u8": np.uint8, "u16": np.uint16,
                 "fp16": np.float16}
TORCH_DTYPES = {name: torch_name for torch_name, name in tkjit._TORCH_DTYPES.items()}
TYPESTRS = {"fp16": "<f2", "fp32": "<f4", "fp64": "<f8", "i8": "|i1", "i64": "<i8", "u8": "|u1",
            "i1": "|b1"}


def rows():
    out = []
    for number, line in enumerate(TABLE.read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        kind, value, spec, entry, fact = line.split()
        out.append(pytest.param(kind, value, spec == "1", entry, id=f"{number}:{kind}={value}"
                                + ("" if spec == "1" else ",generic")))
    return out


class _Dtype:
    def __init__(self, name):
        self.name = name

    def __str__(self):
        return self.name


class _Device:
    type, index = "cuda", 0


class TorchLike:
    """What _gpu_array_info reads of a CUDA torch tensor."""

    device = _Device()

    def __init__(self, address, dt):
        self.address, self.dtype = address, _Dtype(TORCH_DTYPES[dt])

    def data_ptr(self):
        return self.address


class CudaArray:
    def __init__(self, address, dt):
        self.__cuda_array_interface__ = {"data": (address, False), "typestr": TYPESTRS[dt],
                                         "shape": (4,), "version": 3}


class HostArray:
    def __init__(self, address, dt):
        self.__array_interface__ = {"data": (address, False), "typestr": TYPESTRS[dt],
                                    "shape": (4,), "version": 3}


def python_values(kind, value):
    """(Python value, GPU launch?) pairs that the row describes."""
    if kind == "int":
        v = int(value)
        return [(v, False), (v, True)] + ([(np.int64(v), False)] if -2**63 <= v < 2**63 else [])
    if kind == "float":
        return [(float(value), False), (np.float64(value), True), (np.float32(value), False)]
    if kind == "bool":
        return [(bool(int(value)), False), (bool(int(value)), True)]
    if kind.startswith("*"):
        dt, address = kind[1:], int(value, 16)
        out = [(TorchLike(address, dt), True)]
        if dt in TYPESTRS:
            out += [(CudaArray(address, dt), True), (HostArray(address, dt), False)]
        return out
    return [(NUMPY_SCALARS[kind](float(value) if kind.startswith("fp") else int(value)), False)]


@pytest.mark.parametrize("kind,value,spec,entry", rows())
def test_python_specialises_every_row_as_the_table_says(kind, value, spec, entry):
    for v, gpu in python_values(kind, value):
        got, arg = tkjit._specialize("x", v, spec, "k", gpu=gpu)
        assert got == entry, (kind, value, type(v).__name__, gpu)
        if kind == "int":  # what the launch passes: the int64 (a u64's bits)
            n = int(value)
            assert arg == ("i", n - 2**64 if n >= 2**63 else n)
        elif kind.startswith("*") and gpu:
            assert arg == ("g", int(value, 16))


def test_the_table_covers_every_fact_and_kind():
    kinds = {p.values[0] if not p.values[0].startswith("*") else "*" for p in rows()}
    entries = [p.values[3] for p in rows()]
    assert {"int", "float", "bool", "*", "i8", "fp16"} <= kinds
    for suffix in (":16", ":8", ":1"):
        assert any(e.endswith(suffix) for e in entries), suffix
    assert any(e.startswith("u64") for e in entries) and any(e.startswith("i64") for e in entries)


def test_values_the_rule_cannot_take_are_type_errors_naming_the_argument():
    with pytest.raises(TypeError, match=r"argument 'n' of k: the integer 18446744073709551616 "
                                        r"does not fit in 64 bits"):
        tkjit._specialize("n", 2**64, True, "k")
    with pytest.raises(TypeError, match=r"argument 'x' of k: the address -16 is not a 64-bit "
                                        r"address"):
        tkjit._specialize("x", TorchLike(-16, "fp32"), True, "k", gpu=True)
