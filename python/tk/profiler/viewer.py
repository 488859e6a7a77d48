"""tk.profiler.viewer: reads the `.hatchet` files tk.profiler writes and
prints them, with the calls of Triton's viewer that tutorial 09 makes:

    tree, metrics = viewer.parse(["tflop16/s", "time/ms"], "matmul.hatchet")
    viewer.print_tree(tree, metrics)

Metric names: `time/s`, `time/ms`, `time/us`, `time/ns` (summed time),
`calls`, `tflopN/s` and `gflopN/s` (from the `flopsN` metric over the time),
`gbyte/s` (from `bytes`).
"""

import json
import re


def parse(metric_names, file_name):
    """(tree, metric names) of a .hatchet file; the tree is a list of root nodes."""
    with open(file_name, encoding="utf-8") as f:
        tree = json.load(f)
    for name in metric_names:
        _value({"metrics": {}}, name)  # rejects names it cannot compute
    return tree, list(metric_names)


def _value(node, name):
    m = node["metrics"]
    seconds = m.get("time (ns)", 0.0) / 1e9
    if name == "calls":
        return m.get("count", 0)
    unit = re.fullmatch(r"time/(s|ms|us|ns)", name)
    if unit:
        return seconds * {"s": 1, "ms": 1e3, "us": 1e6, "ns": 1e9}[unit.group(1)]
    rate = re.fullmatch(r"(t|g)flop(\d*)/s", name)
    if rate:
        flops = m.get(f"flops{rate.group(2)}")
        scale = 1e12 if rate.group(1) == "t" else 1e9
        return None if flops is None or seconds == 0 else flops / seconds / scale
    if name == "gbyte/s":
        b = m.get("bytes")
        return None if b is None or seconds == 0 else b / seconds / 1e9
    raise ValueError(f"tk.profiler.viewer: unknown metric {name!r} (time/s, time/ms, time/us, "
                     "time/ns, calls, tflopN/s, gflopN/s, gbyte/s)")


def print_tree(tree, metrics, depth=100):
    """One row per node, indented by depth, one column per metric."""
    rows = []

    def walk(node, level):
        if level > depth:
            return
        rows.append(("  " * level + node["frame"]["name"],
                     [_value(node, name) for name in metrics]))
        for child in node.get("children", []):
            walk(child, level + 1)

    for root in tree:
        walk(root, 0)
    width = max([len(r[0]) for r in rows] + [4])
    print(f"{'name':<{width}}  " + "  ".join(f"{m:>12}" for m in metrics))
    for label, values in rows:
        cells = ["" if v is None else (f"{v:12.4g}" if isinstance(v, float) else f"{v:>12}")
                 for v in values]
        print(f"{label:<{width}}  " + "  ".join(f"{c:>12}" for c in cells))
