"""Run a tutorial notebook's code cells top to bottom, without Jupyter, and keep what they show.

    python tutorials/run_notebook.py tutorials/multi_agent_gpu_training.ipynb \\
        [--scale full|ci] [--out DIR]

Every code cell runs in one namespace, in order, like "Run all" in Jupyter (commented ``!pip``
lines stay comments). Printed output goes to the terminal with a header per cell and its wall
time; every figure a cell shows (``plt.show()``) is saved as ``DIR/<notebook>_fig<N>.png``
instead (default ``DIR``: ``notebook_outputs/`` in the current folder). ``--scale`` sets
``AI_ECONOMIST_TUTORIAL_SCALE`` for the run. The exit status is 1 when a cell raises (the
traceback names the notebook and the cell), else 0.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
from pathlib import Path


def code_cells(path: Path) -> list[str]:
    """The source of every code cell of the notebook at ``path``, in order."""
    notebook = json.loads(path.read_text())
    return ["".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code"]


def run(path: Path, out_dir: Path) -> int:
    """Run the notebook's code cells; return 0, or 1 when a cell raised."""
    os.environ.setdefault("MPLBACKEND", "Agg")
    figures: list[Path] = []
    namespace: dict = {"__name__": "__main__"}
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        plt = None
    if plt is not None:
        out_dir.mkdir(parents=True, exist_ok=True)

        def show(*_args, **_kwargs) -> None:
            for number in plt.get_fignums():
                target = out_dir / f"{path.stem}_fig{len(figures) + 1}.png"
                plt.figure(number).savefig(target, dpi=100, bbox_inches="tight")
                figures.append(target)
                print(f"[figure saved: {target}]")
            plt.close("all")

        plt.show = show
    start = time.perf_counter()
    for i, source in enumerate(code_cells(path)):
        print(f"\n===== {path.name}, code cell {i} =====", flush=True)
        began = time.perf_counter()
        try:
            exec(compile(source, f"{path.name} code cell {i}", "exec"), namespace)
        except Exception:
            traceback.print_exc()
            print(f"\n{path.name}: code cell {i} failed", file=sys.stderr)
            return 1
        print(f"----- cell {i}: {time.perf_counter() - began:.1f} s", flush=True)
    print(f"\n{path.name}: every code cell ran in {time.perf_counter() - start:.1f} s; "
          f"{len(figures)} figure(s) in {out_dir}")  # fmt: skip
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebook", type=Path)
    parser.add_argument("--scale", choices=("ci", "full"), help="AI_ECONOMIST_TUTORIAL_SCALE")
    parser.add_argument("--out", type=Path, default=Path("notebook_outputs"), help="figures")
    args = parser.parse_args(argv)
    if not args.notebook.is_file():
        parser.error(f"no notebook at {args.notebook}")
    if args.scale:
        os.environ["AI_ECONOMIST_TUTORIAL_SCALE"] = args.scale
    return run(args.notebook, args.out)


if __name__ == "__main__":
    sys.exit(main())
