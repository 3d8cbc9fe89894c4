"""The COVID-19 scenario's components: Python classes, Numba device functions and CUDA C.

Importing this package registers ``ControlUSStateOpenCloseStatus``,
``FederalGovernmentSubsidy`` and ``VaccinationCampaign`` in ``foundation.components``.
They live beside their scenario (not in ``foundation/components/``) so that the generic
component package never imports a scenario.
"""

from ai_economist.foundation.scenarios.covid19.components.covid19_components import (
    ControlUSStateOpenCloseStatus,
    FederalGovernmentSubsidy,
    VaccinationCampaign,
)

__all__ = ["ControlUSStateOpenCloseStatus", "FederalGovernmentSubsidy", "VaccinationCampaign"]
