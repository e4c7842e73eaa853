"""pytest configuration of the test suite.

Shared plain helpers (tolerances, NumPy references, error-marker lines, inputs) are in
``tests/helpers.py``; test modules import them as ``from helpers import ...``. Shared fixtures
belong here. pytest loads this file itself; test modules do not import it.

Markers (``pyproject.toml``): ``slow`` tests are left out of the fast subset
(``python -m pytest -q -m "not slow"``); ``fuzz`` is the fuzzer's fixed-seed batch.
"""

from __future__ import annotations

import sys
from pathlib import Path

# ``from helpers import ...`` under every import mode (``--import-mode=importlib`` does not put
# the test folder on ``sys.path``) and from any working directory.
TESTS = str(Path(__file__).resolve().parent)
if TESTS not in sys.path:
    sys.path.insert(0, TESTS)
# ``from examples import ...`` (the repository's example package) from any working directory.
ROOT = str(Path(__file__).resolve().parents[1])
if ROOT not in sys.path:
    sys.path.append(ROOT)
