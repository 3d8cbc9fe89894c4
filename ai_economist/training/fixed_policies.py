"""Deprecated path of :mod:`ai_economist.foundation.scenarios.covid19.training.fixed_policies`, the
module's home since the COVID-19 code moved beside its scenario; works (with a
DeprecationWarning naming the new path) for one release, then is removed."""

import sys

from ai_economist.foundation.scenarios.covid19.training import fixed_policies as _moved
from ai_economist.moved_modules import warn_moved

warn_moved(__name__, _moved.__name__)
sys.modules[__name__] = _moved
