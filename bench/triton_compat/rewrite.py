"""The porting rule as code: a Triton program's import lines rewritten to tk's.

Only lines that are import statements change; every other line of the file is
kept byte for byte, so line numbers and the rest of the program are Triton's:

    import triton                          ->  import tk as triton
    import triton as tr                    ->  import tk as tr
    import triton.language as tl           ->  import tk.language as tl
    import triton.profiler                 ->  import tk.profiler; import tk as triton
    from triton.runtime.jit import X       ->  from tk.runtime.jit import X
    from triton import knobs               ->  from tk import knobs

One module is not part of the rule: `triton._internal_testing` is the helper
of Triton's own test suite, not an API a program ports. The runner puts the
upstream copy of that file (its imports rewritten the same way) beside the
tests as the top-level module `_internal_testing`, so

    from triton._internal_testing import X  ->  from _internal_testing import X

    python3 bench/triton_compat/rewrite.py FILE     # prints the rewritten file
"""

import re
import sys

_INDENT = r"(?P<indent>[ \t]*)"
_IMPORT_ROOT = re.compile(_INDENT + r"import triton(?P<alias>\s+as\s+\w+)?(?P<rest>\s*(#.*)?)$")
_IMPORT_SUB = re.compile(
    _INDENT + r"import triton\.(?P<mod>[\w.]+)(?P<alias>\s+as\s+\w+)?(?P<rest>\s*(#.*)?)$"
)
_FROM = re.compile(_INDENT + r"from triton(?P<mod>(\.[\w.]+)?) import(?P<rest>.*)$")

HELPER = "_internal_testing"


def rewrite_line(line):
    """The rewritten line (without its newline), or the line itself."""
    m = _IMPORT_ROOT.match(line)
    if m:
        alias = m.group("alias") or " as triton"
        return f"{m.group('indent')}import tk{alias}{m.group('rest')}"
    m = _IMPORT_SUB.match(line)
    if m:
        mod, alias = m.group("mod"), m.group("alias")
        if alias:
            return f"{m.group('indent')}import tk.{mod}{alias}{m.group('rest')}"
        # `import triton.X` binds `triton`: bind it to tk as well.
        return f"{m.group('indent')}import tk.{mod}; import tk as triton{m.group('rest')}"
    m = _FROM.match(line)
    if m:
        mod = m.group("mod")
        if mod == "." + HELPER:
            return f"{m.group('indent')}from {HELPER} import{m.group('rest')}"
        return f"{m.group('indent')}from tk{mod} import{m.group('rest')}"
    return line


def rewrite(text):
    """(rewritten text, number of lines changed)."""
    out, changed = [], 0
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        new = rewrite_line(body)
        if new != body:
            changed += 1
        out.append(new + line[len(body):])
    return "".join(out), changed


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as f:
        sys.stdout.write(rewrite(f.read())[0])
