"""Where the one-step economy's GPU step spends its time: the step kernel's variants, timed alike.

    python benchmarks/one_step_kernel_ablation.py --num_envs 1000000 [--rounds 20] \\
        [--variants main no_writes no_metrics one_env_per_block] [--old_source OLD.cu]

Each variant is the packaged CUDA C step (``kernels/one_step_economy_step.cu``) copied with its
headers into a temporary folder and edited there, never in the package:

* ``main``: as packaged;
* ``no_writes``: without step 4's observation and mask writes (``write_observations_and_masks``);
* ``no_metrics``: without the serial per-env metrics of step 3 (equality and welfare of thread 0
  replaced by constants);
* ``one_env_per_block``: as packaged, one env per block (``KernelSpec.envs_per_block = 1``);
* ``lb2`` ... ``lb6``: as packaged, with ``__launch_bounds__`` asking for at least 2 ... 6
  resident blocks per SM (fewer registers a thread; the compiler may spill or use the stack:
  nvcc 13 for sm_90 gives 111, 80, 64, 48 and 40 registers against 102 as packaged);
* ``old``: the file given with ``--old_source`` (e.g. an earlier commit's step, from
  ``git show COMMIT:path``), with the packaged headers.

For every variant it builds ``EnvWrapper`` over ``OneStepEconomyGpu`` (pycuda) at ``--num_envs``,
draws the random allowed actions of ``economy_env_throughput.py``, and over ``--rounds``
episodes times with CUDA events the step of day 1 (the tax day's rates; the workers' masks
open), the step of day 2 (labour, the tax day) and the reset of every env. The variants are not
the model (some skip work); only ``main`` is, and its parity is the GPU tests'.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from economy_env_throughput import action_sets  # noqa: E402

LAUNCH_BOUNDS = (2, 3, 4, 5, 6)
VARIANTS = ("main", "no_writes", "no_metrics", "one_env_per_block",
            *(f"lb{k}" for k in LAUNCH_BOUNDS), "old")  # fmt: skip


def variant_source(name: str, folder: Path, old_source: Path | None) -> Path:
    """The step kernel of variant ``name``, written into ``folder`` with the headers."""
    from ai_economist.foundation.scenarios.one_step_economy import gpu_env

    kernels = gpu_env.HERE / "kernels"
    for header in kernels.glob("*.cuh"):
        shutil.copy(header, folder / header.name)
    text = (kernels / "one_step_economy_step.cu").read_text()
    if name == "old":
        if old_source is None:
            raise SystemExit("variant 'old' needs --old_source FILE")
        text = old_source.read_text()
    elif name == "no_writes":
        text = re.sub(r"\n  write_observations_and_masks\([^;]*\);", "\n", text, count=1)
    elif name == "no_metrics":
        text = text.replace("s_equality = get_equality(e_coin);", "s_equality = 0.5;")
        text = re.sub(r"s_welfare = planner_welfare\([^;]*\);", "s_welfare = 1.0;", text)
    elif name.startswith("lb"):
        bounds = f"__launch_bounds__(ENVS_PER_BLOCK * NUM_AGENTS, {int(name[2:])}) "
        text = text.replace(
            'extern "C" __global__ void ', f'extern "C" __global__ void {bounds}', 1
        )
    path = folder / f"one_step_economy_step_{name}.cu"
    path.write_text(text)
    return path


def time_variant(name: str, num_envs: int, rounds: int, old_source: Path | None) -> dict:
    """Mean milliseconds of the day-1 step, the day-2 step and the reset of every env."""
    import dataclasses

    import torch

    from ai_economist.foundation.scenarios.one_step_economy.gpu_env import OneStepEconomyGpu
    from ai_economist.warp_drive.env_wrapper import EnvWrapper

    folder = Path(tempfile.mkdtemp(prefix=f"one_step_{name}_"))
    source = variant_source(name, folder, old_source)
    env = OneStepEconomyGpu()
    spec = env.kernels()
    spec = dataclasses.replace(
        spec,
        cuda_source=source,
        envs_per_block=1 if name == "one_env_per_block" else spec.envs_per_block,
    )
    env.kernels = lambda: spec  # this instance only
    wrapper = EnvWrapper(env, num_envs=num_envs, env_backend="pycuda", device="cuda", seed=0)
    registers, local_bytes = kernel_resources(wrapper)
    sets = action_sets({t: wrapper.action_masks(t) for t in wrapper.policy_specs}, 0)
    buffers = {t: wrapper.actions(t) for t in wrapper.policy_specs}
    wrapper.reset_all_envs()
    marks = [torch.cuda.Event(enable_timing=True) for _ in range(4)]
    totals = [0.0, 0.0, 0.0]
    for r in range(rounds + 2):  # two untimed rounds first
        for day in range(2):
            for tag, value in sets[day].items():
                buffers[tag].copy_(value)
            marks[day].record()
            wrapper.step_all_envs()
        marks[2].record()
        wrapper.reset_only_done_envs()
        marks[3].record()
        torch.cuda.synchronize()
        if r >= 2:
            for k in range(3):
                totals[k] += marks[k].elapsed_time(marks[k + 1])
    del wrapper
    torch.cuda.empty_cache()
    day1, day2, reset = (t / rounds for t in totals)
    return {"variant": name, "day1_ms": day1, "day2_ms": day2, "reset_ms": reset,
            "env_steps_per_s": 2 * num_envs / ((day1 + day2 + reset) / 1e3),
            "registers": registers, "local_bytes": local_bytes}  # fmt: skip


def kernel_resources(wrapper) -> tuple[int | None, int | None]:
    """Registers per thread and local (stack) bytes of the loaded step kernel, as the driver
    reports them (``None`` where the function manager does not say)."""
    from ai_economist.foundation.scenarios.one_step_economy.gpu_env import STEP_KERNEL

    try:
        function = wrapper.backend.function_manager.get_function(STEP_KERNEL)
        return int(function.num_regs), int(function.local_size_bytes)
    except (AttributeError, TypeError):
        return None, None


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--num_envs", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=20, help="timed episodes per variant")
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS[:4]), choices=VARIANTS)
    parser.add_argument("--old_source", type=Path, default=None)
    args = parser.parse_args(argv)
    import torch

    device = torch.cuda.get_device_name()
    print(f"one-step economy step variants, {args.num_envs:,} envs on {device} (pycuda), "
          f"{args.rounds} episodes each (2 steps and a reset)")  # fmt: skip
    rows = []
    for name in args.variants:
        row = time_variant(name, args.num_envs, args.rounds, args.old_source)
        rows.append(row)
        print(f"{name:>18}: day-1 step {row['day1_ms']:7.2f} ms, day-2 step {row['day2_ms']:7.2f} ms, "
              f"reset {row['reset_ms']:6.2f} ms -> {row['env_steps_per_s']:.3e} env-steps/s "
              f"({row['registers']} registers, {row['local_bytes']} B local a thread)")  # fmt: skip
    return rows


if __name__ == "__main__":
    main()
