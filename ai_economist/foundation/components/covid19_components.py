"""1.7.1's import path of the COVID-19 components, kept as one documented alias (see
``docs/differences.md``, "Layout"): the components live beside their scenario, in
``ai_economist.foundation.scenarios.covid19.components.covid19_components``.

This module IS that module (the same object in ``sys.modules``), so attributes, monkeypatches
and registrations are shared; ``foundation/components/`` imports no scenario otherwise.
"""

import sys

from ai_economist.foundation.scenarios.covid19.components import covid19_components as _moved

sys.modules[__name__] = _moved
