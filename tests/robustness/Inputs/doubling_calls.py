"""Prints block IR with a chain of N functions, each calling the one before
twice (compile-budget-inline.tkir): @kernel calls @f{N-1}, which inlines to
2^N adds."""
import sys

n = int(sys.argv[1])
print("func @f0(%x: i32) -> i32 {\n  %y = add %x, %x : i32\n  return %y\n}\n")
for i in range(1, n):
    print(f"func @f{i}(%x: i32) -> i32 {{\n  %a = call %x {{callee = \"f{i - 1}\"}} : i32\n"
          f"  %b = call %a {{callee = \"f{i - 1}\"}} : i32\n  return %b\n}}\n")
print(f"func @kernel(%p: ptr<i32>) {{\n  %x = load %p : i32\n"
      f"  %y = call %x {{callee = \"f{n - 1}\"}} : i32\n  store %p, %y\n  return\n}}")
