"""Every tutorial notebook's code cells run top to bottom (plots go to a non-interactive backend)."""

import json
from pathlib import Path

import pytest

TUTORIALS = sorted((Path(__file__).resolve().parents[2] / "tutorials").glob("*.ipynb"))


@pytest.mark.parametrize("path", TUTORIALS, ids=[p.name for p in TUTORIALS])
def test_notebook_runs(path):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    notebook = json.loads(path.read_text())
    namespace: dict = {}
    for cell in notebook["cells"]:
        if cell["cell_type"] == "code":
            source = "".join(cell["source"]).replace("plt.show()", "plt.close('all')")
            exec(compile(source, f"{path.name}", "exec"), namespace)  # noqa: S102
    if path.name == "covid19_and_economic_simulation.ipynb":
        assert namespace["results"]["real-world policies"][0] == pytest.approx(349.06, rel=0.005)
