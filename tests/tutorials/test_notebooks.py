"""Every tutorial notebook runs top to bottom with what its own install line installs: the
code cells run in a fresh interpreter that cannot import the optional packages the line
leaves out (plots go to a non-interactive backend)."""

import json
import re
from pathlib import Path

import pytest
from first_hour import last_json_line, modules_outside, run_without

TUTORIALS = sorted((Path(__file__).resolve().parents[2] / "tutorials").glob("*.ipynb"))


def install_extras(notebook: dict, name: str) -> list[str]:
    """The extras of the notebook's ``pip install -e ".[a,b]"`` line."""
    for cell in notebook["cells"]:
        match = re.search(r'pip install -e "\.(?:\[([\w,]*)\])?"', "".join(cell["source"]))
        if match:
            return [e for e in (match.group(1) or "").split(",") if e]
    raise AssertionError(f'{name} has no `pip install -e ".[extras]"` line')


@pytest.mark.parametrize("path", TUTORIALS, ids=[p.name for p in TUTORIALS])
def test_notebook_runs_with_its_install_line(path):
    notebook = json.loads(path.read_text())
    hidden = modules_outside(install_extras(notebook, path.name))
    cells = [
        "".join(cell["source"]).replace("plt.show()", "plt.close('all')")
        for cell in notebook["cells"]
        if cell["cell_type"] == "code"
    ]
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
