"""The acceptance tests import their shared helpers (acc_common.py) from here."""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
