"""Old import path of ``ai_economist.foundation.scenarios.covid19.components.covid19_components``; the COVID-19 components moved beside their scenario (no import circle between ``components/`` and ``scenarios/``).

This module IS that module (same object in ``sys.modules``), so attributes, monkeypatches
and registrations are shared.
"""

import sys

from ai_economist.foundation.scenarios.covid19.components import covid19_components as _moved

sys.modules[__name__] = _moved
