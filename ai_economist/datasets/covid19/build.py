"""Build the packaged COVID-19 calibration from a data directory in the original layout.

    python -m ai_economist.datasets.covid19.build --source ../shared/data/covid19

reads ``model_constants.json``, ``fitted_params.json`` and ``real_world_data.npz``, validates
them, and writes one compressed file, ``ai_economist/datasets/covid19/data/covid19_calibration.npz``,
with the arrays the simulator reads plus a JSON metadata record (scalars, state names, the
SHA-256 of every input file, and the data sources with their licences).  The output is
deterministic for the same inputs, so it can be regenerated and compared.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import sys
import zipfile
from pathlib import Path

import numpy as np

from ai_economist.datasets.covid19.loader import (
    ORIGINAL_FILES,
    CalibrationError,
    CovidCalibration,
    default_calibration_path,
    load_calibration,
)

SOURCES = [
    {
        "data": "stringency policy (OxCGRT StringencyIndex, discretised to 10 levels)",
        "source": "Oxford COVID-19 Government Response Tracker (OxCGRT), Blavatnik School of Government",
        "licence": "CC BY 4.0",
    },
    {
        "data": "deaths (and the SIR states inferred from them)",
        "source": "COVID-19 Data Repository by the Center for Systems Science and Engineering (CSSE) at Johns Hopkins University",
        "licence": "CC BY 4.0",
    },
    {
        "data": "people fully vaccinated per state",
        "source": "Our World in Data (OWID), us_state_vaccinations",
        "licence": "CC BY 4.0",
    },
    {
        "data": "unemployment per state",
        "source": "U.S. Bureau of Labor Statistics (BLS), Local Area Unemployment Statistics",
        "licence": "public domain (U.S. government work)",
    },
    {
        "data": "federal direct payments (2020-04-15, 2020-12-27, 2021-03-11)",
        "source": "Committee for a Responsible Federal Budget (CRFB), COVID Money Tracker",
        "licence": "facts reported by CRFB; cited, not redistributed as a dataset",
    },
    {
        "data": "fitted SIR, unemployment and priority parameters",
        "source": "AI Economist 1.7.1 (Salesforce), fitted on the data above",
        "licence": "BSD-3-Clause",
    },
]


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def calibration_to_arrays(cal: CovidCalibration, provenance: dict) -> dict[str, np.ndarray]:
    """Flatten a calibration into named arrays plus one JSON metadata string."""
    arrays: dict[str, np.ndarray] = {}
    scalars: dict[str, dict] = {"model_constants": {}, "fitted_params": {}}
    for group, content in (
        ("model_constants", cal.model_constants),
        ("fitted_params", cal.fitted_params),
    ):
        for key, value in sorted(content.items()):
            if isinstance(value, np.ndarray):
                arrays[f"{group}/{key}"] = value
            else:
                scalars[group][key] = value
    for key, value in sorted(cal.real_world_data.items()):
        arrays[f"real_world_data/{key}"] = value
    meta = {**scalars, "provenance": provenance}
    arrays["__metadata__"] = np.array(json.dumps(meta, sort_keys=True))
    return arrays


def write_deterministic_npz(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """Write a compressed .npz whose bytes depend only on the arrays (fixed zip timestamps)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name in sorted(arrays):
            buf = io.BytesIO()
            np.lib.format.write_array(buf, np.asarray(arrays[name]), allow_pickle=False)
            info = zipfile.ZipInfo(name + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, buf.getvalue())
    tmp.replace(path)


def _with_fitted_params(source: Path, fitted_params: Path) -> tuple[Path, Path]:
    """A temporary original-layout folder: ``source``'s data with another fitted_params.json."""
    import shutil
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="covid19_build_"))
    for name in ORIGINAL_FILES:
        origin = fitted_params if name == "fitted_params.json" else source / name
        if not origin.is_file():
            shutil.rmtree(folder)
            raise CalibrationError(f"calibration file not found: {origin}")
        shutil.copyfile(origin, folder / name)
    return folder, fitted_params


def build(source: Path, output: Path, fitted_params: Path | None = None) -> Path:
    """Validate ``source`` (original layout) and write the packaged calibration to ``output``.

    With ``fitted_params`` (a file written by ``python -m ai_economist.datasets.covid19.fit``)
    that file replaces ``source/fitted_params.json``; the packaged default is then refused
    as ``output``.
    """
    source = Path(source)
    if fitted_params is None:
        return _build(source, source, output)
    if Path(output).resolve() == default_calibration_path().resolve():
        raise CalibrationError(
            f"--output {output} is the packaged calibration; a re-fitted calibration is written "
            "elsewhere (e.g. --output my_calibration.npz) and named in the run config's "
            "path_to_data_and_fitted_params"
        )
    import shutil

    folder, _ = _with_fitted_params(source, Path(fitted_params))
    try:
        return _build(folder, source, output, Path(fitted_params))
    finally:
        shutil.rmtree(folder)


def _build(folder: Path, source: Path, output: Path, fitted_params: Path | None = None) -> Path:
    cal = load_calibration(folder)
    provenance = {
        "built_by": "python -m ai_economist.datasets.covid19.build",
        "inputs_sha256": {name: _sha256(folder / name) for name in ORIGINAL_FILES},
        "sources": SOURCES,
    }
    if fitted_params is not None:
        provenance["fitted_params"] = str(fitted_params)
        provenance["data_source"] = str(source)
    write_deterministic_npz(output, calibration_to_arrays(cal, provenance))
    load_calibration(output)  # round-trip check
    return output


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--source", required=True, type=Path, help="directory in the original layout"
    )
    parser.add_argument("--output", type=Path, default=default_calibration_path())
    parser.add_argument(
        "--fitted_params", type=Path, default=None, help="a fit's output replacing the source's"
    )
    args = parser.parse_args(argv)
    try:
        out = build(args.source, args.output, args.fitted_params)
    except CalibrationError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(f"wrote {out} ({out.stat().st_size / 1e6:.2f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
