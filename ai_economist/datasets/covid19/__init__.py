"""COVID-19 calibration data: loading, validation and the packaged default."""

from ai_economist.datasets.covid19.loader import (
    CalibrationError,
    CovidCalibration,
    default_calibration_path,
    load_calibration,
)

__all__ = ["CalibrationError", "CovidCalibration", "default_calibration_path", "load_calibration"]
