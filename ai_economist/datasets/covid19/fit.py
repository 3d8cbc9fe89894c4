"""Re-calibrate the COVID-19 model from data (the original ``fit_model_parameters.ipynb``).

    python -m ai_economist.datasets.covid19.fit --source DIR \\
        [--last_train_date 2020-11-30 --last_val_date 2020-12-31] --out FILE

reads ``DIR/real_world_data.npz`` and ``DIR/model_constants.json``, fits the beta delay, the
per-state beta slopes and intercepts, the unemployment model and the health/economic
weightages with their normalisation constants, and writes ``FILE`` in the schema of the
original ``fitted_params.json`` plus a ``fit_report`` (input hashes, each fit's train and
validation error). Package it with

    python -m ai_economist.datasets.covid19.build --source DIR --fitted_params FILE \\
        --output my_calibration.npz

and point a run config's ``path_to_data_and_fitted_params`` at ``my_calibration.npz``.
The packaged calibration is never overwritten.
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ai_economist.datasets.covid19.fit_beta import (
    DELAYS,
    fit_beta_delay,
    fit_beta_regression,
    regression_errors,
)
from ai_economist.datasets.covid19.fit_data import (
    FitError,
    FitInputs,
    FitWindow,
    check_series_window,
    load_fit_inputs,
    read_json,
)
from ai_economist.datasets.covid19.fit_unemployment import fit_unemployment, unemployment_errors
from ai_economist.datasets.covid19.fit_weightages import (
    DEFAULT_ENV_SETTINGS,
    fit_weightages,
    with_placeholders,
)
from ai_economist.datasets.covid19.loader import (
    CalibrationError,
    CovidCalibration,
    default_calibration_path,
)

_UNEMPLOYMENT_FIT = inspect.signature(fit_unemployment).parameters
"""``fit_unemployment``'s parameters: the unemployment-fit defaults of :class:`FitSettings`."""


@dataclass
class FitSettings:
    """Every choice a fit depends on (written to ``settings`` of the output)."""

    last_train_date: str = "2020-11-30"
    last_val_date: str = "2020-12-31"
    filter_len: int = _UNEMPLOYMENT_FIT["filter_len"].default
    similarity_unemployment: float = _UNEMPLOYMENT_FIT["similarity"].default
    similarity_sir: float = 1.0
    unemployment_steps: int = _UNEMPLOYMENT_FIT["steps"].default
    unemployment_lr: float = _UNEMPLOYMENT_FIT["lr"].default
    seed: int = _UNEMPLOYMENT_FIT["seed"].default
    device: str = _UNEMPLOYMENT_FIT["device"].default
    env: dict = field(default_factory=lambda: dict(DEFAULT_ENV_SETTINGS))

    def as_json(self) -> dict:
        """The original's ``settings`` keys plus the ones this command adds."""
        return {
            "LAST_DATE_IN_TRAIN_SET": self.last_train_date,
            "LAST_DATE_IN_VAL_SET": self.last_val_date,
            "FILTER_SIZE_UNEMPLOYMENT": self.filter_len,
            "SIMILARITY_REGULARIZATION_UNEMPLOYMENT": self.similarity_unemployment,
            "SIMILARITY_REGULARIZATION_SIR": self.similarity_sir,
            "env": dict(self.env),
            "BETA_DELAYS_SEARCHED": [min(DELAYS), max(DELAYS)],
            "UNEMPLOYMENT_STEPS": self.unemployment_steps,
            "UNEMPLOYMENT_LR": self.unemployment_lr,
            "SEED": self.seed,
            "DEVICE": self.device,
        }


def _check_training_window(inputs: FitInputs, window: FitWindow) -> None:
    longest = max(abs(d) for d in DELAYS)
    if window.train_end + 1 <= longest:
        raise FitError(
            f"the training window {inputs.date(0)} .. {inputs.date(window.train_end)} has "
            f"{window.train_end + 1} days; it must be longer than the beta-delay search "
            f"(delays {min(DELAYS)}..{max(DELAYS)}), i.e. more than {longest} days"
        )


def fit_calibration(inputs: FitInputs, settings: FitSettings) -> dict:
    """Run the four fits; return the content of ``fitted_params.json`` (original schema)."""
    window = FitWindow.from_dates(inputs, settings.last_train_date, settings.last_val_date)
    _check_training_window(inputs, window)
    search = slice(0, window.val_end + 1)
    policy = inputs.series["policy"]
    beta = check_series_window(inputs, "beta", search, "beta-delay search")
    check_series_window(inputs, "unemployment", slice(0, window.train_end + 1), "unemployment fit")
    delay, correlations = fit_beta_delay(policy[search], beta)
    regression = fit_beta_regression(
        policy, inputs.series["beta"], delay, window.train_end, window.val_end,
        lam=settings.similarity_sir,
    )  # fmt: skip
    unemployment = fit_unemployment(
        policy,
        inputs.series["unemployment"],
        window.train_end,
        window.val_end,
        filter_len=settings.filter_len,
        similarity=settings.similarity_unemployment,
        lr=settings.unemployment_lr,
        steps=settings.unemployment_steps,
        seed=settings.seed,
        device=settings.device,
    )
    num_states = len(inputs.state_names)
    fitted = {
        "settings": settings.as_json(),
        "BETA_DELAY": int(delay),
        "BETA_SLOPES": regression.slopes.tolist(),
        "BETA_INTERCEPTS": regression.intercepts.tolist(),
        "POLICY_START_DATE": inputs.date(0),
        "FILTER_LEN": unemployment.filter_len,
        "CONV_LAMBDAS": unemployment.lambdas.tolist(),
        "UNEMPLOYMENT_BIAS": unemployment.bias.tolist(),
        "GROUPED_CONVOLUTIONAL_FILTER_WEIGHTS": unemployment.weights.reshape(-1, 1, 1).tolist(),
    }
    calibration = CovidCalibration(
        model_constants=inputs.model_constants,
        fitted_params=with_placeholders(_as_arrays(fitted), num_states),
        real_world_data=inputs.series,
        source=str(inputs.source),
    )
    weightages = fit_weightages(calibration, settings.env, window.val_end)
    fitted["VALUE_OF_LIFE"] = 10000000
    fitted.update(weightages.values)
    fitted["fit_report"] = {
        "input_sha256": inputs.input_sha256,
        "source": str(inputs.source),
        "train_rows": [0, window.train_end],
        "validation_rows": [window.train_end + 1, window.val_end],
        "beta_delay": {"best_r": float(np.nanmin(correlations))},
        "beta_regression": regression.errors,
        "unemployment": unemployment.errors,
    }
    previous = _previous_fit_errors(inputs, window)
    if previous:
        fitted["fit_report"]["previous_fit"] = previous
    return fitted


def _previous_fit_errors(inputs: FitInputs, window: FitWindow) -> dict:
    """The errors of a ``fitted_params.json`` beside the data on the same days ({} if none)."""
    path = inputs.source / "fitted_params.json"
    if not path.is_file():
        return {}
    previous = read_json(path)
    num_states = len(inputs.state_names)
    try:
        weights = np.reshape(previous["GROUPED_CONVOLUTIONAL_FILTER_WEIGHTS"], (num_states, -1))
        policy, beta = inputs.series["policy"], inputs.series["beta"]
        x = policy[: window.train_end + 1].T
        delay = int(previous["BETA_DELAY"])
        padded = np.vstack([beta, np.full((delay, num_states), np.nan)])
        y = padded[delay : window.train_end + 1 + delay].T
        slopes, intercepts = (
            np.asarray(previous["BETA_SLOPES"]),
            np.asarray(previous["BETA_INTERCEPTS"]),
        )
        return {
            "file": str(path),
            "beta_regression": {f"train_{k}": v for k, v in regression_errors(x, y, slopes, intercepts).items()},
            "unemployment": unemployment_errors(
                policy, inputs.series["unemployment"], window.train_end, window.val_end, weights,
                np.asarray(previous["CONV_LAMBDAS"]), np.asarray(previous["UNEMPLOYMENT_BIAS"]),
                int(previous["FILTER_LEN"]),
            ),
        }  # fmt: skip
    except (KeyError, ValueError, TypeError):  # another layout or state count: no comparison
        return {}


def _as_arrays(fitted: dict) -> dict:
    out = {}
    for key, value in fitted.items():
        out[key] = np.asarray(value, dtype=np.float64) if isinstance(value, list) else value
    out["GROUPED_CONVOLUTIONAL_FILTER_WEIGHTS"] = out[
        "GROUPED_CONVOLUTIONAL_FILTER_WEIGHTS"
    ].reshape(-1)
    return out


def check_output_path(out: Path, source: Path) -> Path:
    """Refuse an output inside the package's data folder or over the source's fitted params."""
    out = Path(out).resolve()
    package_data = default_calibration_path().parent.resolve()
    if out == package_data or package_data in out.parents:
        raise FitError(
            f"--out {out} is inside the packaged calibration folder {package_data}; a fit never "
            "overwrites the packaged calibration: write it elsewhere, e.g. --out my_fit.json"
        )
    if out == (Path(source) / "fitted_params.json").resolve():
        raise FitError(
            f"--out {out} would overwrite the fitted_params.json of --source; write the new "
            "fit elsewhere and compare"
        )
    if out.is_dir():
        raise FitError(f"--out {out} is a directory; expected a .json file path")
    return out


def write_fitted_params(fitted: dict, out: Path) -> Path:
    """Write the JSON atomically (a partial file never replaces a complete one)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(json.dumps(fitted, indent=1) + "\n", encoding="utf-8")
    tmp.replace(out)
    return out


def _parser() -> argparse.ArgumentParser:
    defaults = FitSettings()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--source", required=True, type=Path, help="real_world_data.npz + model_constants.json"
    )
    parser.add_argument("--out", required=True, type=Path, help="the fitted_params.json to write")
    parser.add_argument("--last_train_date", default=defaults.last_train_date)
    parser.add_argument("--last_val_date", default=defaults.last_val_date)
    parser.add_argument("--policy_start_date", default=None, help="date of row 0 (default: "
                        "POLICY_START_DATE of DIR/fitted_params.json, else 2020-01-01)")  # fmt: skip
    parser.add_argument(
        "--start_date", default=defaults.env["start_date"], help="alpha calibration start"
    )
    parser.add_argument("--unemployment_steps", type=int, default=defaults.unemployment_steps)
    parser.add_argument("--seed", type=int, default=defaults.seed)
    parser.add_argument("--device", default=defaults.device, help="cpu, cuda, cuda:N or auto")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        out = check_output_path(args.out, args.source)
        inputs = load_fit_inputs(args.source, args.policy_start_date)
        settings = FitSettings(
            last_train_date=args.last_train_date,
            last_val_date=args.last_val_date,
            unemployment_steps=args.unemployment_steps,
            seed=args.seed,
            device=args.device,
        )
        settings.env["start_date"] = args.start_date
        fitted = fit_calibration(inputs, settings)
    except (CalibrationError, ValueError) as err:  # FitError included; each names its source
        print(f"error: {err}", file=sys.stderr)
        return 2
    write_fitted_params(fitted, out)
    report = fitted["fit_report"]
    print(f"wrote {out}: BETA_DELAY {fitted['BETA_DELAY']}, beta r^2 train "
          f"{report['beta_regression']['train_r2']:.3f}, unemployment MSE train "
          f"{report['unemployment']['train_mse']:.3f} / validation "
          f"{report['unemployment']['val_mse']:.3f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
