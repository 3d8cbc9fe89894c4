"""The Foundation dict API against the original AI Economist 1.7.1, timed in the same run.

    pip download --no-deps ai-economist==1.7.1 -d /tmp/orig
    unzip -q /tmp/orig/ai_economist-1.7.1-py3-none-any.whl -d /tmp/orig/site
    python benchmarks/dict_api_vs_original.py --original /tmp/orig/site [--rounds 5]

Both packages are called ``ai_economist``, so each timing runs in a fresh child process (the
original with ``--original`` first on its path, ours with this checkout), pinned to one core;
the children alternate (original, ours, ours, original, ...) over ``--rounds`` rounds and the
medians are compared, so a loaded machine slows both alike.  Each child builds its env from
the same config (written by the parent from our packaged configs), steps ``--warmup`` steps,
then times ``--steps`` steps (wall clock and CPU time).

* COVID-19 (``covid``): the published training env block, one env, the actions as the
  original's users send them: one dict per step, ``{"0": a0, ..., "50": a50, "p": p}`` (Python
  ints, 64 pre-drawn dicts reused).  Target: 20x the original.
* Gather-trade-build (``gtb``): the paper's phase-2 config (4 agents, 25x25 layout,
  ``PeriodicBracketTax``), dense logging off, every agent and the planner taking a uniformly
  random action among those its mask allows (the sampling is timed, as in ``cpu_step.py``).
  Target: 5x the original.  The ``env.step`` calls alone (without the benchmark's own action
  sampling, the same code for both) are timed too and printed as ``step-only``.

The original 1.7.1 is run as installed, except what it cannot do here: ``lz4``, ``Crypto`` and
``GPUtil`` (imported for saving logs, the activation code and a GPU probe) are stand-ins, numpy
2's removed aliases ``np.int``, ``np.float``, ``np.object``, ``np.str`` are put back (they were
the builtins), and the COVID-19 activation-code prompt is turned off (as in the spec's
measurements of 1.7.1).
"""

from __future__ import annotations

import argparse
import bisect
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ("covid", "gtb")
TARGETS = {"covid": 20.0, "gtb": 5.0}


# ------------------------------------------------------------------------- the children --
def _stand_ins_for_the_original() -> None:
    """Modules 1.7.1 imports but never uses on this path, and its activation prompt off."""

    def stub(name: str, **attrs: object) -> types.ModuleType:
        module = types.ModuleType(name)
        module.__dict__.update(attrs)
        sys.modules[name] = module
        return module

    stub("lz4").frame = stub("lz4.frame")
    stub("Crypto").PublicKey = stub("Crypto.PublicKey", RSA=None)
    stub("GPUtil", getAvailable=lambda *a, **k: [])
    import numpy as np

    for name, alias in (("int", int), ("float", float), ("object", object), ("str", str)):
        if not hasattr(np, name):
            setattr(np, name, alias)  # the aliases numpy 2 removed (np.int was int)
    from ai_economist.foundation import utils

    utils.verify_activation_code = lambda *a, **k: None
    from ai_economist.foundation.scenarios.covid19 import covid19_env

    covid19_env.verify_activation_code = lambda *a, **k: None


def _covid_actions(np, n_agents: int = 51) -> list[dict]:
    rng = np.random.default_rng(0)
    return [
        {
            **{str(i): int(a) for i, a in enumerate(rng.integers(0, 11, n_agents))},
            "p": int(rng.integers(0, 21)),
        }  # fmt: skip
        for _ in range(64)
    ]


def _random_valid_action(np, mask, rng, multi):
    """A uniformly random action allowed by a flattened ``mask`` (one per sub-space if
    ``multi``), as ``cpu_step.random_valid_action``: the same draws and the same actions
    (Python ints), the sub-spaces' bounds found by ``bisect`` in Python instead of numpy's
    ``cumsum``/``searchsorted``/``repeat`` on a few values (:func:`_random_valid_multi_numpy`
    where a sub-space allows nothing or ``mask`` is longer than the sub-spaces)."""
    allowed = np.ravel(mask).nonzero()[0]  # = np.flatnonzero(mask), one wrapper less
    if multi is None:
        return int(allowed[int(rng.random() * allowed.size)])
    positions = allowed.tolist()
    starts, bounds = _subspace_bounds(positions, multi)
    if bounds[-1] != len(positions) or any(lo == hi for lo, hi in zip(bounds, bounds[1:])):
        return _random_valid_multi_numpy(np, allowed, rng, multi)
    picks = rng.random(len(multi)).tolist()
    return [
        positions[lo + int(u * (hi - lo))] - start
        for lo, hi, u, start in zip(bounds, bounds[1:], picks, starts)
    ]


def _subspace_bounds(positions: list[int], multi) -> tuple[list[int], list[int]]:
    """Each sub-space's first flat index (sizes ``multi``) and where the ascending
    ``positions`` enter each sub-space, then where they pass the last one
    (``np.searchsorted(positions, np.cumsum([0] + multi))``)."""
    starts, bounds, start = [], [bisect.bisect_left(positions, 0)], 0
    for n in multi:
        starts.append(start)
        start += int(n)
        bounds.append(bisect.bisect_left(positions, start, bounds[-1]))
    return starts, bounds


def _random_valid_multi_numpy(np, allowed, rng, multi):
    """The multi-action draw of :func:`_random_valid_action` in numpy (``allowed``: the
    mask's nonzero flat indices), for the masks its fast path leaves out."""
    starts = np.cumsum([0] + multi)
    bounds = np.searchsorted(allowed, starts).tolist()
    picks = rng.random(len(multi)).tolist()
    local = (allowed - np.repeat(starts[:-1], np.diff(bounds))).tolist()
    return [local[lo + int(u * (hi - lo))] for lo, hi, u in zip(bounds, bounds[1:], picks)]


def _time_steps(step, reset, warmup: int, steps: int, inner: dict | None = None) -> dict:
    """Steps per second of ``steps`` timed calls of ``step`` after ``warmup`` untimed ones,
    wall clock and CPU time; with ``inner`` (seconds that ``step`` adds up itself under
    ``"wall"`` and ``"cpu"``) also ``step_wall`` and ``step_cpu`` from those."""
    reset()
    for _ in range(warmup):
        step()
    if inner is not None:
        inner.update(wall=0.0, cpu=0.0)
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(steps):
        step()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    rates = {"wall": steps / max(wall, 1e-9), "cpu": steps / max(cpu, 1e-9)}
    if inner is not None:
        rates["step_wall"] = steps / max(inner["wall"], 1e-9)
        rates["step_cpu"] = steps / max(inner["cpu"], 1e-9)
    return rates


def run_child(which: str, scenario: str, config_file: str, warmup: int, steps: int) -> dict:
    """Time one scenario in this process (``which``: ``ours`` or ``original``)."""
    import numpy as np

    if which == "original":
        _stand_ins_for_the_original()
    from ai_economist import foundation

    spec = json.loads(Path(config_file).read_text())
    env = foundation.make_env_instance(spec["scenario"], **spec["kwargs"])
    state = {"obs": None}
    if scenario == "covid":
        actions, count = _covid_actions(np), [0]

        def step() -> None:
            _, _, done, _ = env.step(actions[count[0] % 64])
            count[0] += 1
            if done["__all__"]:
                env.reset()

        rates = _time_steps(step, env.reset, warmup, steps)
    else:
        rng = np.random.default_rng(0)
        sizes = {
            str(a.idx): (list(a.action_spaces) if a.multi_action_mode else None)
            for a in env.all_agents
        }

        def reset() -> None:
            state["obs"] = env.reset()

        inner = {"wall": 0.0, "cpu": 0.0}  # env.step alone

        def step() -> None:
            obs = state["obs"]
            acts = {
                k: _random_valid_action(np, obs[k]["action_mask"], rng, multi)
                for k, multi in sizes.items()
            }
            wall, cpu = time.perf_counter(), time.process_time()
            obs, _, done, _ = env.step(acts)
            inner["wall"] += time.perf_counter() - wall
            inner["cpu"] += time.process_time() - cpu
            state["obs"] = env.reset() if done["__all__"] else obs

        rates = _time_steps(step, reset, warmup, steps, inner)
    return {"which": which, "scenario": scenario, "file": foundation.__file__, **rates}


# ------------------------------------------------------------------------- the parent ----
def scenario_spec(scenario: str) -> dict:
    """``{"scenario": name, "kwargs": ...}`` of the env both children build (our configs)."""
    if scenario == "covid":
        from ai_economist.foundation.scenarios.covid19.configs import (
            TRAINING_ENV_CONFIG,
            env_config,
        )

        return {"scenario": "CovidAndEconomySimulation", "kwargs": env_config(TRAINING_ENV_CONFIG)}
    from ai_economist.foundation.scenarios.simple_wood_and_stone import configs

    kwargs = configs.env_config(configs.PHASE2_ENV_CONFIG)
    kwargs["dense_log_frequency"] = None
    return {"scenario": configs.PHASE2_ENV_CONFIG["scenario_name"], "kwargs": kwargs}


def spawn(which: str, scenario: str, config_file: str, args: argparse.Namespace) -> dict:
    """One timed child process; its JSON result."""
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    env["PYTHONPATH"] = str(args.original if which == "original" else ROOT)
    command = [sys.executable, "-u", __file__, "--child", which, "--scenario", scenario,
               "--config_file", config_file, "--warmup", str(args.warmup),
               "--steps", str(args.steps[scenario])]  # fmt: skip
    done = subprocess.run(
        command, env=env, capture_output=True, text=True, check=False, cwd=tempfile.gettempdir()
    )
    if done.returncode != 0:
        raise SystemExit(f"{which} {scenario} child failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def compare(scenario: str, args: argparse.Namespace) -> dict:
    """Alternate the two children over ``args.rounds`` rounds; medians and their ratios."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(scenario_spec(scenario), f)
    runs: dict[str, list[dict]] = {"original": [], "ours": []}
    try:
        for i in range(args.rounds):
            order = ("original", "ours") if i % 2 == 0 else ("ours", "original")
            for which in order:
                result = spawn(which, scenario, f.name, args)
                runs[which].append(result)
                print(f"  round {i + 1} {which:>8}: {result['wall']:9,.0f} env-steps/s wall, "
                      f"{result['cpu']:9,.0f} CPU time  ({result['file']})", flush=True)  # fmt: skip
    finally:
        os.unlink(f.name)
    out = {}
    for clock in ("wall", "cpu", "step_wall", "step_cpu"):
        if any(clock not in r for rs in runs.values() for r in rs):
            continue
        med = {w: statistics.median(r[clock] for r in runs[w]) for w in runs}
        pairs = [u[clock] / o[clock] for u, o in zip(runs["ours"], runs["original"])]
        out[clock] = (med["original"], med["ours"], med["ours"] / med["original"], pairs)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--original", help="folder holding the original's ai_economist/ (1.7.1)")
    parser.add_argument("--scenario", choices=SCENARIOS + ("both",), default="both")
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds (medians)")
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--covid_steps", type=int, default=600)
    parser.add_argument("--gtb_steps", type=int, default=600)
    parser.add_argument("--child", choices=("ours", "original"), help=argparse.SUPPRESS)
    parser.add_argument("--config_file", help=argparse.SUPPRESS)
    parser.add_argument("--steps", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from cpu_machine import pin_to_one_core

        pin_to_one_core()
        print(json.dumps(run_child(args.child, args.scenario, args.config_file, args.warmup,
                                   args.steps)))  # fmt: skip
        return
    if not args.original or not (Path(args.original) / "ai_economist" / "foundation").is_dir():
        parser.error(f"--original {args.original!r}: expected a folder holding ai_economist/ of "
                     "1.7.1 (see the module docstring for the two commands that make one)")  # fmt: skip
    import numpy as np
    from cpu_machine import cpu_name

    args.steps = {"covid": args.covid_steps, "gtb": args.gtb_steps}
    print(f"CPU: {cpu_name()} (each child pinned to one core), numpy {np.__version__}, "
          f"Python {sys.version.split()[0]}; {args.rounds} alternating rounds, medians")  # fmt: skip
    scenarios = SCENARIOS if args.scenario == "both" else (args.scenario,)
    for scenario in scenarios:
        print(f"{scenario}:", flush=True)
        for clock, (orig, ours, ratio, pairs) in compare(scenario, args).items():
            clock = clock.replace("step_", "step-only ")
            print(f"{scenario} {clock:>4}: original {orig:,.0f}, ours {ours:,.0f} env-steps/s; "
                  f"ratio of medians {ratio:.1f}x (target {TARGETS[scenario]:.0f}x; per round "
                  f"{', '.join(f'{p:.1f}' for p in pairs)})", flush=True)  # fmt: skip
    if hasattr(os, "getloadavg"):
        print(f"load average (1 min) at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
