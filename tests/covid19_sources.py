"""Small COVID-19 source files in the public sources' column layouts, for the gather tests and
the README's data workflow."""

from datetime import date


def write_sources(folder, ox_name="ox.csv", jhu_name="jhu.csv", owid_name="owid.csv",
                  bls_name="bls.txt"):  # fmt: skip
    """Three states, 2020-01-01 .. 2020-03-10, in the four sources' layouts (OxCGRT, JHU CSSE,
    OWID, BLS LAU), written under ``folder`` with the given file names."""
    days = [date.fromordinal(date(2020, 1, 1).toordinal() + n) for n in range(70)]
    ox = ["RegionName,RegionCode,Jurisdiction,Date,StringencyIndex"]
    for state in ("Alabama", "Washington DC", "New York"):
        for n, d in enumerate(days):
            value = "" if (state == "Alabama" and n == 5) else f"{min(100, n * 1.5):.2f}"
            ox.append(f"{state},US_X,STATE_TOTAL,{d:%Y%m%d},{value}")
    ox.append(f",,NAT_GOV,{days[0]:%Y%m%d},99")
    (folder / ox_name).write_text("\n".join(ox) + "\n")
    header = "UID,Province_State,Admin2,Population," + ",".join(
        f"{d.month}/{d.day}/{d.year % 100}" for d in days[21:]
    )
    lines = [header]
    for state, pops in (
        ("Alabama", (1000, 2000)),
        ("District of Columbia", (700,)),
        ("New York", (5000,)),
    ):
        for k, pop in enumerate(pops):
            lines.append(
                f"1,{state},c{k},{pop}," + ",".join(str(n * (k + 1)) for n in range(len(days) - 21))
            )
    (folder / jhu_name).write_text("\n".join(lines) + "\n")
    (folder / owid_name).write_text(
        "date,location,total_vaccinations,people_fully_vaccinated\n"
        "2020-02-01,New York State,10,0\n2020-02-11,New York State,30,100\n"
        "2020-02-05,Alabama,1,\n"
    )
    bls = ["series_id\tyear\tperiod\tvalue"]
    for fips in (1, 11, 36):
        for month in (1, 2, 3):
            bls.append(f"LASST{fips:02d}0000000000003\t2020\tM{month:02d}\t{fips / 10 + month}")
        bls.append(f"LASST{fips:02d}0000000000003\t2020\tM13\t99")
        bls.append(f"LASST{fips:02d}0000000000004\t2020\tM01\t12345")
    (folder / bls_name).write_text("\n".join(bls) + "\n")
    return folder


def write_packaged_source(folder):
    """The packaged calibration's series and constants as a fit's ``--source`` folder (the
    original data layout: ``real_world_data.npz``, ``model_constants.json``)."""
    import json

    import numpy as np

    from ai_economist.datasets.covid19 import load_calibration

    packaged = load_calibration("")
    folder.mkdir(parents=True, exist_ok=True)
    np.savez(folder / "real_world_data.npz", **packaged.real_world_data)
    constants = {
        k: v.tolist() if hasattr(v, "tolist") else v for k, v in packaged.model_constants.items()
    }
    (folder / "model_constants.json").write_text(json.dumps(constants))
    return folder
