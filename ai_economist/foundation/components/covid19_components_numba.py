"""Old import path of ``ai_economist.foundation.scenarios.covid19.components.covid19_components_numba``; the COVID-19 components' Numba device functions moved beside their scenario.

This module IS that module (same object in ``sys.modules``), so attributes, monkeypatches
and registrations are shared.
"""

import sys

from ai_economist.foundation.scenarios.covid19.components import covid19_components_numba as _moved

sys.modules[__name__] = _moved
