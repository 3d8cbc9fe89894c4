"""``python -m ai_economist.warp_drive.checks.parity``: any registered GPU environment's kernels
against its numpy reference, from the command line.

::

    python -m ai_economist.warp_drive.checks.parity --env ring_chase --backend numba \\
        --num_envs 8 --num_steps 20

Builds the environment registered under ``--env`` with its default arguments, steps the numpy
reference and the backend side by side with the same random allowed actions
(``check_parity``), and exits 0 printing ``consistent``, 1 printing the first field / env /
agent / step that differs, or 2 for an unknown environment (with the close matches) or bad
arguments. Under ``NUMBA_ENABLE_CUDASIM=1`` the Numba backend runs on the CPU.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from collections.abc import Sequence

from ai_economist.warp_drive.backend_names import EnvBackend

KERNEL_BACKENDS = (EnvBackend.NUMBA.value, EnvBackend.PYCUDA.value)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m ai_economist.warp_drive.checks.parity",
        description="Check a registered GPU environment's kernels against its numpy reference.",
    )
    parser.add_argument("--env", required=True, help="registered GPU environment name")
    parser.add_argument("--backend", required=True, choices=KERNEL_BACKENDS)
    parser.add_argument("--num_envs", type=int, default=4, help="environments (default 4)")
    parser.add_argument("--num_steps", type=int, default=20, help="steps (default 20)")
    parser.add_argument("--seed", type=int, default=0, help="initial state and actions seed")
    return parser


def gpu_environment_classes(backend: str) -> dict[str, type]:
    """Every ``GpuEnvironment`` class registered with kernels for ``backend`` (the training
    registry's registration modules are imported first, so scenarios registered there count;
    kernel sources registered without a ``GpuEnvironment`` class are left out)."""
    from ai_economist.warp_drive.registrar import default_registrar
    from ai_economist.warp_drive.registry import env_names
    from ai_economist.warp_drive.scenario import GpuEnvironment

    env_names()  # imports every registration module
    classes = {}
    for name in default_registrar.env_names(backend):
        try:
            cls = default_registrar.get(name, env_backend=backend)
        except KeyError:  # a kernel source without a class
            continue
        if isinstance(cls, type) and issubclass(cls, GpuEnvironment):
            classes[name] = cls
    return classes


def _unknown(name: str, backend: str, known: list[str]) -> str:
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
    hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    return (
        f"error: no GpuEnvironment {name!r} with {backend} kernels is registered.{hint} "
        f"Registered for {backend}: {', '.join(known) or 'none'}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the check; the exit status (0 consistent, 1 a difference, 2 bad input)."""
    args = _parser().parse_args(argv)
    for key in ("num_envs", "num_steps"):
        if getattr(args, key) < 1:
            print(f"error: --{key} must be >= 1, got {getattr(args, key)}", file=sys.stderr)
            return 2
    known = gpu_environment_classes(args.backend)
    if args.env not in known:
        print(_unknown(args.env, args.backend, sorted(known)), file=sys.stderr)
        return 2
    from ai_economist.warp_drive.checks.parity import check_parity

    env = known[args.env]()
    result = check_parity(env, args.backend, args.num_envs, args.num_steps, seed=args.seed)
    if result.ok:
        print(
            f"{args.env}: {args.backend} consistent with the numpy reference "
            f"({args.num_envs} envs x {args.num_steps} steps, seed {args.seed})"
        )
        return 0
    print(f"inconsistent: {result.message}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
