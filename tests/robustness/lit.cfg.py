# lit configuration for tk's hostile-input suite (docs/testing.md,
# "Robustness"): inputs chosen to crash, hang or exhaust the compiler, each
# of which must end in a located error or a clean failure.
#
# The tools, substitutions and features are the FileCheck suite's
# (tests/filecheck/lit.cfg.py, loaded first); this file adds the bounds every
# test here runs under:
#   - a time limit per test (maxIndividualTestTime, which lit enforces by
#     killing the test: a hang is a failure, not a stuck CI job);
#   - %{limit-memory}, a RUN line that caps the address space of the commands
#     after it (ulimit -v), so a runaway allocation fails the test instead of
#     the machine. The sanitizer tree reserves terabytes of shadow address
#     space up front, so there it is a no-op and ASan's own checks stand in.
import os

lit_config.load_config(
    config,
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "filecheck", "lit.cfg.py"),
)

config.name = "tk-robustness"
config.test_source_root = os.path.dirname(os.path.abspath(__file__))
config.test_exec_root = os.path.join(config.tk_obj_root, "tests", "robustness")
config.environment["TK_CACHE_DIR"] = os.path.join(config.test_exec_root, "tk-cache")

# Seconds per test. Each test takes well under 5 s in the Release tree and
# under 20 s in the sanitizer tree on a loaded 2-core machine; 120 s is the
# line past which an input counts as a hang.
config.maxIndividualTestTime = 120

# 4 GiB of address space for the commands after %{limit-memory}.
if config.tk_sanitize:
    config.substitutions.insert(0, ("%{limit-memory}", ":"))
else:
    config.substitutions.insert(0, ("%{limit-memory}", "ulimit -v 4194304"))

# %python: the interpreter lit runs on, for RUN lines that make inputs.
import sys

config.substitutions.append(("%python", sys.executable))
