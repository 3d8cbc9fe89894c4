"""Old import path of ``ai_economist.foundation.scenarios.covid19.kernels.covid19_numba``; the Numba kernels moved into ``kernels/``.

This module IS that module (same object in ``sys.modules``), so attributes, monkeypatches
and registrations are shared.
"""

import sys

from ai_economist.foundation.scenarios.covid19.kernels import covid19_numba as _moved

sys.modules[__name__] = _moved
