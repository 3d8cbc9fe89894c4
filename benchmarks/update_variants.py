"""Time one PPO update of the COVID-19 states' policy under numeric and optimizer variants.

    python benchmarks/update_variants.py [--num_envs 60 1200 10000] [--rollout_length 90]
        [--repeats 5] [--variants fp32 fused bf16 bf16_fused ...]

The batch is shaped like one training iteration of the published setup for policy "a" (51
agents, 64 observations, 11 actions, [256, 256]): ``num_envs * rollout_length * 51``
agent-steps, one epoch, minibatches of at most ``--max_minibatch`` rows.  Each variant prints
the update's wall time (ms, after one untimed warm-up, synchronised) and the policy forward
of one rollout step (``num_envs * 51`` rows).  It measures; it chooses nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ai_economist.warp_drive.training.algorithms import (  # noqa: E402
    Batch,
    UpdateHyperParams,
    update_policy,
)
from ai_economist.warp_drive.training.models import FullyConnectedActorCritic  # noqa: E402

OBS_DIM, NUM_ACTIONS, NUM_AGENTS = 64, 11, 51

VARIANTS = {
    # name: (autocast dtype or None, fused Adam, max minibatch override or None, compiled loss)
    "fp32": (None, False, None, False),
    "fused": (None, True, None, False),
    "bf16": (torch.bfloat16, False, None, False),
    "bf16_fused": (torch.bfloat16, True, None, False),
    "bf16_fused_mb4M": (torch.bfloat16, True, 1 << 22, False),
    "bf16_fused_mb512k": (torch.bfloat16, True, 1 << 19, False),
    "fused_compiled": (None, True, None, True),
    "bf16_fused_compiled": (torch.bfloat16, True, None, True),
}


def make_batch(size: int, device: torch.device, gen: torch.Generator) -> Batch:
    return Batch(
        obs=torch.randn(size, OBS_DIM, device=device, generator=gen),
        masks=torch.ones(size, NUM_ACTIONS, dtype=torch.bool, device=device),
        actions=torch.randint(0, NUM_ACTIONS, (size,), device=device, generator=gen),
        log_probs=torch.full((size,), -2.4, device=device),
        advantages=torch.randn(size, device=device, generator=gen),
        returns=torch.randn(size, device=device, generator=gen),
    )


def time_variant(name: str, size: int, num_envs: int, args: argparse.Namespace) -> str:
    device = torch.device("cuda")
    dtype, fused, mb, compiled = VARIANTS[name]
    gen = torch.Generator(device=device).manual_seed(0)
    batch = make_batch(size, device, gen)
    model = FullyConnectedActorCritic(OBS_DIM, NUM_ACTIONS, [256, 256]).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-4, eps=1e-5, fused=fused)
    max_mb = mb or args.max_minibatch
    precision = "bf16" if dtype == torch.bfloat16 else "fp32"
    hp = UpdateHyperParams(
        "PPO", 1.0, 0.05, 0.1, True, 10.0, True, 1, -(-size // max_mb), precision
    )
    ctx = torch.autocast("cuda", dtype=dtype) if dtype else contextlib.nullcontext()

    def update() -> None:
        update_policy(model, opt, batch, hp, gen, compile_loss=compiled)

    update()
    update()  # a compiled loss compiles its last, smaller minibatch here
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(args.repeats):
        update()
    torch.cuda.synchronize()
    update_ms = (time.perf_counter() - start) / args.repeats * 1e3
    obs = batch.obs[: num_envs * NUM_AGENTS]
    with torch.no_grad():
        for _ in range(3):
            with ctx:
                model(obs)
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(20):
            with ctx:
                model(obs)
        torch.cuda.synchronize()
    forward_us = (time.perf_counter() - start) / 20 * 1e6
    return (
        f"{num_envs:>7} {size:>10,} {name:<18} {hp.num_mini_batches:>4} "
        f"{update_ms:>10.1f} {forward_us:>12.0f}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--num_envs", type=int, nargs="+", default=[60, 1200, 10000])
    parser.add_argument("--rollout_length", type=int, default=90)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--max_minibatch", type=int, default=1 << 21)
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("update_variants.py needs a CUDA GPU")
        return 2
    torch.backends.cuda.matmul.allow_tf32 = True
    print(f"GPU: {torch.cuda.get_device_name(0)} (torch {torch.__version__})")
    print(
        f"{'envs':>7} {'rows':>10} {'variant':<18} {'mbs':>4} {'update ms':>10} {'fwd us/step':>12}"
    )
    for num_envs in args.num_envs:
        size = num_envs * args.rollout_length * NUM_AGENTS
        for name in args.variants:
            try:
                print(time_variant(name, size, num_envs, args), flush=True)
            except Exception as exc:  # noqa: BLE001 - report the variant and go on
                print(f"{num_envs:>7} {size:>10,} {name:<18} failed: {type(exc).__name__}: {exc}")
            torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
