"""What one loop of a PTX file does: the loop (a label and the backward branch
to it) with the most tensor-core instructions, and the count of each kind of
instruction in it, one `name count` line each, for FileCheck:

    %python %inputs/ptx-loop-counts.py kernel.ptx | FileCheck %s
    # CHECK: ld.shared 0

The counts are of lines, so an instruction in a nested loop counts once.
"""
import re
import sys

KINDS = [
    ("mma.sync", r"\bmma\.sync"),
    ("wgmma", r"\bwgmma\.mma_async"),
    ("ldmatrix", r"\bldmatrix"),
    ("ld.shared", r"\bld\.shared"),
    ("st.shared", r"\bst\.shared"),
    ("bar.sync", r"\bbar\.sync"),
    ("shfl", r"\bshfl\.sync"),
    ("cp.async", r"\bcp\.async\.c[ag]"),
    ("wgmma.wait_group.0", r"\bwgmma\.wait_group\.sync\.aligned 0;"),
    ("wgmma.wait_group.1", r"\bwgmma\.wait_group\.sync\.aligned 1;"),
]


def main(path):
    lines = open(path).read().split("\n")
    labels = {}
    for i, line in enumerate(lines):
        m = re.match(r"^(\$L__BB[0-9_]+):", line)
        if m:
            labels[m.group(1)] = i
    best = None
    for i, line in enumerate(lines):
        m = re.search(r"\bbra(?:\.uni)?\s+(\$L__BB[0-9_]+);", line)
        if not m or m.group(1) not in labels or labels[m.group(1)] > i:
            continue
        body = lines[labels[m.group(1)]:i + 1]
        mmas = sum(1 for b in body if re.search(r"\bmma\.sync|\bwgmma\.mma_async", b))
        if best is None or mmas > best[0]:
            best = (mmas, body)
    if best is None:
        print("no loop")
        return 1
    for name, pattern in KINDS:
        print(name, sum(1 for b in best[1] if re.search(pattern, b)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
