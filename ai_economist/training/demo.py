"""Deprecated path of :mod:`ai_economist.foundation.scenarios.covid19.training.demo`, the
module's home since the COVID-19 code moved beside its scenario; works (with a
DeprecationWarning naming the new path) for one release, then is removed."""

import sys

from ai_economist.foundation.scenarios.covid19.training import demo as _moved
from ai_economist.moved_modules import warn_moved

if __name__ == "__main__":  # python -m ai_economist.training.demo
    warn_moved("ai_economist.training.demo", _moved.__name__, stacklevel=2)
    sys.exit(_moved.main())
warn_moved(__name__, _moved.__name__)
sys.modules[__name__] = _moved
