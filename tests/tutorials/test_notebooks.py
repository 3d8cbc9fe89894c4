"""Every tutorial notebook runs top to bottom with what its own install line installs: the
code cells run in a fresh interpreter that cannot import the optional packages the line
leaves out (plots go to a non-interactive backend), at the CI scale
(``AI_ECONOMIST_TUTORIAL_SCALE=ci``) and with no GPU visible. Notebooks are stored without
outputs. ``test_notebooks_gpu.py`` runs them on a GPU."""

import json
import re
from pathlib import Path

import pytest
from first_hour import last_json_line, modules_outside, run_without

from ai_economist.tutorial_scale import SCALE_VARIABLE

TUTORIALS = sorted((Path(__file__).resolve().parents[2] / "tutorials").glob("*.ipynb"))
EXPECTED = {
    "covid19_and_economic_simulation.ipynb",
    "covid19_recalibration.ipynb",
    "economic_simulation_advanced.ipynb",
    "economic_simulation_basics.ipynb",
    "optimal_taxation.ipynb",
    "multi_agent_gpu_training.ipynb",
    "your_own_environment_cuda_c.ipynb",
    "your_own_environment_numba.ipynb",
}


def install_extras(notebook: dict, name: str) -> list[str]:
    """The extras of the notebook's ``pip install -e ".[a,b]"`` line."""
    for cell in notebook["cells"]:
        match = re.search(r'pip install -e "\.(?:\[([\w,]*)\])?"', "".join(cell["source"]))
        if match:
            return [e for e in (match.group(1) or "").split(",") if e]
    raise AssertionError(f'{name} has no `pip install -e ".[extras]"` line')


def code_cells(notebook: dict) -> list[str]:
    return ["".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code"]


def test_every_tutorial_is_covered():
    assert {p.name for p in TUTORIALS} >= EXPECTED


@pytest.mark.parametrize("path", TUTORIALS, ids=[p.name for p in TUTORIALS])
def test_notebook_is_stored_without_outputs_and_reads_the_scale(path):
    notebook = json.loads(path.read_text())
    for i, cell in enumerate(notebook["cells"]):
        if cell["cell_type"] != "code":
            continue
        assert cell.get("outputs") == [], f"{path.name} code cell {i} has stored outputs"
        assert cell.get("execution_count") is None, f"{path.name} code cell {i} was executed"
    assert any("tutorial_scale()" in s for s in code_cells(notebook)), (
        f"{path.name} does not read {SCALE_VARIABLE} (ai_economist.tutorial_scale)"
    )


@pytest.mark.parametrize("path", TUTORIALS, ids=[p.name for p in TUTORIALS])
def test_notebook_runs_with_its_install_line(path, monkeypatch, tmp_path):
    monkeypatch.setenv(SCALE_VARIABLE, "ci")
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # the notebooks' work folders go with the test
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")  # the CPU path, also on a GPU machine
    notebook = json.loads(path.read_text())
    hidden = modules_outside(install_extras(notebook, path.name))
    cells = [s.replace("plt.show()", "plt.close('all')") for s in code_cells(notebook)]
    code = (
        "import json\nnamespace = {}\n"
        f"for i, source in enumerate({cells!r}):\n"
        f"    exec(compile(source, {path.name!r} + f' cell {{i}}', 'exec'), namespace)\n"
        "results = namespace.get('results', {})\n"
        "print(json.dumps({k: float(v[0]) for k, v in results.items()}))\n"
    )
    results = last_json_line(run_without(hidden, code))
    if path.name == "covid19_and_economic_simulation.ipynb":
        assert "torch" in hidden  # `.[plot]` installs matplotlib only
        assert results["real-world policies"] == pytest.approx(349.06, rel=0.005)
    if path.name == "covid19_recalibration.ipynb":
        assert results["beta delay"] == 29
        assert results["original calibration deaths"] == pytest.approx(325025, rel=0.005)
        # fitted to 2020-09-30, beta misses the autumn wave: fewer deaths by 2020-12-31
        assert results["re-fit to 2020-09-30 deaths"] < 0.8 * results["original calibration deaths"]
    if path.name == "your_own_environment_cuda_c.ipynb":
        assert {"numba", "pycuda"} <= set(hidden)  # the CPU path needs neither
    if path.name == "multi_agent_gpu_training.ipynb":
        assert {"numba", "pycuda"} <= set(hidden)
        assert set(results) >= {"trained (greedy)", "closed 180 days, then open, no subsidy"}
    if path.name == "economic_simulation_basics.ipynb":
        assert "torch" in hidden  # `.[plot]`: the simulation needs numpy only
        assert results["steps"] == 150  # the ci episode
        assert results["coin"] == pytest.approx(results["productivity"])  # productivity = coin
    if path.name == "economic_simulation_advanced.ipynb":
        assert results["work only total_donated"] == 0 < results["work and give total_donated"]
        assert results["work and give equality"] > results["work only equality"]
    if path.name == "optimal_taxation.ipynb":
        # taxes paid back as a lump sum make incomes more equal than the free market's
        assert (
            results["one-step US federal 2018 equality"] > results["one-step free market equality"]
        )
        assert results["one-step free market welfare"] == pytest.approx(1.030, abs=1e-3)
        assert {"gtb Saez eq x prod", "gtb flat 30% equality"} <= set(results)
