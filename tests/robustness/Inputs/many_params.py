"""Writes a kernel `many` with N pointer parameters (N the first argument),
annotated "*fp32", that stores through its first: a kernel whose parameter
space is 8 * N bytes. The name is on line 5, column 5."""
import sys

n = int(sys.argv[1])
params = ", ".join(f'p{i}: "*fp32"' for i in range(n))
print(f"import tk\n\n\n@tk.jit\ndef many({params}):\n    tk.store(p0 + tk.arange(0, 16), 1.0)")
