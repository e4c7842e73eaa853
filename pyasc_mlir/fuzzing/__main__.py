"""``python -m pyasc_mlir.fuzzing``: the same as ``pyasc fuzz``."""

import sys

from pyasc_mlir.fuzzing.run import main

sys.exit(main())
