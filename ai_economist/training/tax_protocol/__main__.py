"""``python -m ai_economist.training.tax_protocol``: see :mod:`.cli`."""

import sys

from ai_economist.training.tax_protocol.cli import main

sys.exit(main())
