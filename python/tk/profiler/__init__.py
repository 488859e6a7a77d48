"""tk.profiler: the subset of Triton's profiler (proton) that tutorial 09
uses, timing kernels with CUDA events.

    import tk.profiler as proton
    proton.start("matmul", hook="triton")      # writes matmul.hatchet at finalize
    with proton.scope("cublas", {"flops16": 2.0 * M * N * K}):
        torch.matmul(a, b)                      # the scope's time: CUDA events around it
    matmul_kernel[grid](...)                    # hook="triton": each tk kernel launch is timed
    proton.deactivate(); proton.activate()      # pause and resume recording
    proton.finalize()                           # prints the table, writes the file

A session records while it is active: every `scope` (nested scopes make a
tree) and, with `hook="triton"`, every launch of a @tk.jit kernel, named by
its `launch_metadata` function when it has one (`@tk.jit(launch_metadata=fn)`,
fn(grid, kernel, args) returning {"name": ..., "flops16": ..., "bytes": ...})
and by the kernel's name otherwise. Times come from CUDA events recorded on
torch's current stream before and after (summed over the calls, read at
finalize); where kernels run on the interpreter, from the host clock. The
metrics a scope or launch metadata gives (flops8, flops16, flops32, bytes,
...) are summed too. `finalize` prints one row per node (calls, time,
TFLOP/s and GB/s where the metrics allow) and writes `<name>.hatchet`, a JSON
tree that `tk.profiler.viewer` reads.

Not there: Triton's other backends, contexts and data modes (accepted and
ignored), hardware counters, `proton` on the command line.
"""

import contextlib
import json
import time

_sessions = {}  # session id -> _Session
_stack = []  # the names of the open scopes


class _Clock:
    """CUDA events on torch's current stream, or the host clock where
    kernels do not run on a GPU."""

    def __init__(self):
        from ..testing import gpu_available

        self.torch = None
        if gpu_available():
            import torch

            self.torch = torch

    def mark(self):
        if self.torch is None:
            return time.perf_counter()
        event = self.torch.cuda.Event(enable_timing=True)
        event.record()
        return event

    def elapsed_ns(self, start, end):
        if self.torch is None:
            return (end - start) * 1e9
        return start.elapsed_time(end) * 1e6


class _Session:
    def __init__(self, name, hook):
        self.name = name
        self.hook = hook
        self.active = True
        self.clock = _Clock()
        self.records = []  # (path, start, end, metrics)


def _recording():
    return [s for s in _sessions.values() if s.active]


def _record(path, start, end, metrics):
    for s in _recording():
        s.records.append((path, start, end, metrics))


def start(name="proton", *, context="shadow", data="tree", backend=None, mode=None, hook=None):
    """Starts a session (active) and returns its id; `hook="triton"` times
    every @tk.jit launch."""
    if hook not in (None, "triton"):
        raise ValueError(f"tk.profiler.start: hook must be None or 'triton', not {hook!r}")
    session = len(_sessions)
    _sessions[session] = _Session(name, hook)
    if hook == "triton":
        _install_launch_timing()
    return session


def activate(session=None):
    """Resumes recording (every session, or the one given)."""
    for i, s in _sessions.items():
        if session is None or i == session:
            s.active = True


def deactivate(session=None):
    """Pauses recording (every session, or the one given)."""
    for i, s in _sessions.items():
        if session is None or i == session:
            s.active = False


@contextlib.contextmanager
def scope(name, metrics=None):
    """Times the block (CUDA events around it) as a node named `name` under
    the enclosing scopes; `metrics` (e.g. {"flops16": ...}) are added to it."""
    sessions = _recording()
    _stack.append(name)
    path = tuple(_stack)
    marks = [s.clock.mark() for s in sessions]
    try:
        yield
    finally:
        _stack.pop()
        for s, m in zip(sessions, marks):
            s.records.append((path, m, s.clock.mark(), dict(metrics or {})))


def enter_scope(name, metrics=None):
    """scope(name, metrics) as a pair of calls: enter_scope ... exit_scope."""
    manager = scope(name, metrics)
    manager.__enter__()
    _open_scopes.append(manager)


def exit_scope(name=None, metrics=None):
    _open_scopes.pop().__exit__(None, None, None)


_open_scopes = []


def finalize(session=None, output_format="hatchet"):
    """Ends the session(s): prints the table and writes <name>.hatchet."""
    ids = [i for i in list(_sessions) if session is None or i == session]
    for i in ids:
        s = _sessions.pop(i)
        if s.clock.torch is not None:
            s.clock.torch.cuda.synchronize()
        tree = _tree(s)
        with open(f"{s.name}.{output_format}", "w", encoding="utf-8") as f:
            json.dump([tree], f)
        print(f"tk.profiler: session '{s.name}' -> {s.name}.{output_format}")
        from .viewer import print_tree

        print_tree([tree], ["time/ms", "calls"] + _rates(tree))
    if not any(x.hook == "triton" for x in _sessions.values()):
        _remove_launch_timing()


def _tree(session):
    root = {"frame": {"name": "ROOT", "type": "function"}, "metrics": {}, "children": []}
    for path, start, end, metrics in session.records:
        node = root
        for name in path:
            child = next((c for c in node["children"] if c["frame"]["name"] == name), None)
            if child is None:
                child = {"frame": {"name": name, "type": "function"}, "metrics": {},
                         "children": []}
                node["children"].append(child)
            node = child
        m = node["metrics"]
        m["count"] = m.get("count", 0) + 1
        m["time (ns)"] = m.get("time (ns)", 0.0) + session.clock.elapsed_ns(start, end)
        for k, v in metrics.items():
            if isinstance(v, (int, float)):
                m[k] = m.get(k, 0) + v
    _sum_up(root)
    return root


def _sum_up(node):
    if not node["children"]:
        return node["metrics"]
    own = node["metrics"]
    if "count" not in own:  # an inner node without its own timing: its children's sum
        for child in node["children"]:
            for k, v in _sum_up(child).items():
                own[k] = own.get(k, 0) + v
    else:
        for child in node["children"]:
            _sum_up(child)
    return own


def _rates(tree):
    names, seen = [], set()

    def walk(node):
        for k in node["metrics"]:
            if k.startswith("flops") and k not in seen:
                seen.add(k)
                names.append(f"tflop{k[5:]}/s")
            elif k == "bytes" and k not in seen:
                seen.add(k)
                names.append("gbyte/s")
        for c in node["children"]:
            walk(c)

    walk(tree)
    return names


#
# hook="triton": every @tk.jit launch timed
#


def _timed_getitem(self, grid):
    from .. import _C

    bound = _C.LaunchBase.__getitem__(self, grid)
    if not _recording():
        return bound

    def launch(*args, **kwargs):
        sessions = _recording()
        metadata = {}
        if getattr(self, "launch_metadata", None) is not None:
            values = self._bind(args, {k: v for k, v in kwargs.items()
                                       if k in self.arg_names})
            metadata = dict(self.launch_metadata(grid, _KernelView(self), values) or {})
        name = metadata.pop("name", self.__name__)
        marks = [s.clock.mark() for s in sessions]
        result = bound(*args, **kwargs)
        path = tuple(_stack) + (name,)
        for s, m in zip(sessions, marks):
            s.records.append((path, m, s.clock.mark(), metadata))
        return result

    return launch


class _KernelView:
    """What a launch_metadata function receives as `kernel`: its name."""

    def __init__(self, fn):
        self.name = fn.__name__
        self.fn = fn


def _install_launch_timing():
    from ..runtime.jit import JITFunction

    if "__getitem__" not in vars(JITFunction):
        JITFunction.__getitem__ = _timed_getitem


def _remove_launch_timing():
    from ..runtime.jit import JITFunction

    if vars(JITFunction).get("__getitem__") is _timed_getitem:
        del JITFunction.__getitem__
