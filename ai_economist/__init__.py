"""AI Economist: economic-policy simulators built on the Foundation framework.

Importing this package imports :mod:`ai_economist.foundation` (which registers every
scenario and component). It has no other side effects: nothing is printed and no hardware
is probed at import time.
"""

from ai_economist import foundation

__all__ = ["foundation"]
