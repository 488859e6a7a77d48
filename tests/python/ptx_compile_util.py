"""What the tests that compile for the GPU without one share: a stand-in for
a device array, which a GPU compile reads (`warmup(...)` and `.asm["ptx"]`)
without launching anything. The `ptx_compile` fixture (conftest.py) makes
those compiles go to the GPU target whatever the suite's default."""


class CudaArray:
    """What the GPU compile reads of a device array (__cuda_array_interface__);
    nothing is launched, so the address is never dereferenced."""

    def __init__(self, address, typestr="<f4", n=4096):
        self.__cuda_array_interface__ = {"data": (address, False), "typestr": typestr,
                                         "shape": (n,), "version": 3}
