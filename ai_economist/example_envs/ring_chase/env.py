"""Ring chase: ``num_chasers`` chasers and ``num_runners`` runners on a ring of cells.

Every step each agent moves: chasers by 0, -1, +1, -2 or +2 cells (actions 0..4), runners by
0, -1 or +1 (actions 0..2); positions wrap around the ring of ``ring_size`` cells. After the
moves, a chaser that shares a cell with a runner earns ``tag_reward``; a runner that shares a
cell with a chaser loses ``tagged_penalty``. Runners stay in the game. An episode lasts
``episode_length`` steps.

Observation of every agent (3 floats): its cell / ring_size, timestep / episode_length, and
the signed ring distance to the nearest agent of the other policy / ring_size (the signed
distance from p to q is ``(q - p) mod ring_size``, minus ``ring_size`` above ring_size // 2;
ties go to the lower agent index).

The numpy reference below is the truth; ``ring_chase_step.cu`` (CUDA C) and
``ring_chase_numba.py`` (Numba) mirror it function for function: one block per environment,
one thread per agent (chasers first, then runners).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from ai_economist.warp_drive.scenario import GpuEnvironment, KernelSpec, PolicyGroup
from ai_economist.warp_drive.state import StateField

CHASER_MOVES = np.array([0, -1, 1, -2, 2], dtype=np.int32)
RUNNER_MOVES = np.array([0, -1, 1], dtype=np.int32)
OBS_DIM = 3
STEP_KERNEL = "ring_chase_step"
HERE = Path(__file__).resolve().parent


def _positive_int(name: str, value, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"ring_chase: {name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def signed_ring_distance(src: np.ndarray, dst: np.ndarray, ring_size: int) -> np.ndarray:
    """``(dst - src) mod ring_size``, minus ``ring_size`` where it exceeds ``ring_size // 2``."""
    d = np.mod(dst - src, ring_size)
    return np.where(d > ring_size // 2, d - ring_size, d).astype(np.int32)


def nearest_signed_distance(me: np.ndarray, others: np.ndarray, ring_size: int) -> np.ndarray:
    """Per agent of ``me`` (E, N), the signed distance to the nearest of ``others`` (E, M)."""
    d = signed_ring_distance(me[:, :, None], others[:, None, :], ring_size)  # (E, N, M)
    nearest = np.argmin(np.abs(d), axis=2)  # first minimum: the lower index wins ties
    return np.take_along_axis(d, nearest[:, :, None], axis=2)[:, :, 0]


def observations(positions: np.ndarray, timestep: np.ndarray, num_chasers: int,
                 ring_size: int, episode_length: int) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """float32 observations ``(E, chasers, 3)`` and ``(E, runners, 3)``."""
    chasers, runners = positions[:, :num_chasers], positions[:, num_chasers:]
    ring, f32 = np.float32(ring_size), np.float32

    def obs(me: np.ndarray, others: np.ndarray) -> np.ndarray:
        out = np.empty(me.shape + (OBS_DIM,), np.float32)
        out[..., 0] = me.astype(f32) / ring
        out[..., 1] = (timestep.astype(f32) / f32(episode_length))[:, None]
        out[..., 2] = nearest_signed_distance(me, others, ring_size).astype(f32) / ring
        return out

    return obs(chasers, runners), obs(runners, chasers)


class RingChase(GpuEnvironment):
    """Chasers and runners on a ring (two policies: ``"chaser"`` and ``"runner"``).

    Args:
        num_chasers, num_runners: agents of each policy (threads 0.. are chasers).
        ring_size: cells of the ring (>= 2).
        episode_length: steps per episode.
        tag_reward: a chaser's reward for sharing a cell with a runner.
        tagged_penalty: a runner's loss for sharing a cell with a chaser.
    """

    name = "ring_chase"

    def __init__(self, num_chasers: int = 2, num_runners: int = 3, ring_size: int = 16,
                 episode_length: int = 20, tag_reward: float = 1.0,
                 tagged_penalty: float = 1.0) -> None:  # fmt: skip
        self.num_chasers = _positive_int("num_chasers", num_chasers)
        self.num_runners = _positive_int("num_runners", num_runners)
        self.ring_size = _positive_int("ring_size", ring_size, 2)
        self.episode_length = _positive_int("episode_length", episode_length)
        self.num_agents = self.num_chasers + self.num_runners
        self.tag_reward, self.tagged_penalty = float(tag_reward), float(tagged_penalty)

    def config(self) -> dict:
        """Constructor arguments that rebuild this environment."""
        return dict(num_chasers=self.num_chasers, num_runners=self.num_runners,
                    ring_size=self.ring_size, episode_length=self.episode_length,
                    tag_reward=self.tag_reward, tagged_penalty=self.tagged_penalty)  # fmt: skip

    # ------------------------------------------------------------ declaration
    def dims(self) -> dict[str, int]:
        return {
            "num_agents": self.num_agents,
            "num_chasers": self.num_chasers,
            "num_runners": self.num_runners,
            "obs_dim": OBS_DIM,
            "chaser_actions": len(CHASER_MOVES),
            "runner_actions": len(RUNNER_MOVES),
        }

    def state_fields(self) -> list[StateField]:
        f32, i32 = np.float32, np.int32
        return [
            StateField("_timestep_", i32, doc="steps taken in the current episode"),
            StateField("_done_", i32, doc="1 once the episode has ended"),
            StateField("positions", i32, ("num_agents",), doc="cell of every agent"),
            StateField("observations_chaser", f32, ("num_chasers", "obs_dim")),
            StateField("observations_runner", f32, ("num_runners", "obs_dim")),
            StateField("action_mask_chaser", f32, ("num_chasers", "chaser_actions")),
            StateField("action_mask_runner", f32, ("num_runners", "runner_actions")),
            StateField("sampled_actions_chaser", i32, ("num_chasers",), reset="zeros"),
            StateField("sampled_actions_runner", i32, ("num_runners",), reset="zeros"),
            StateField("rewards_chaser", f32, ("num_chasers",), reset="zeros"),
            StateField("rewards_runner", f32, ("num_runners",), reset="zeros"),
            StateField("tags_this_episode", i32, reset="zeros", doc="runners tagged so far"),
            StateField("last_episode_tags", i32, reset="none", doc="tags of the last episode"),
            StateField("completed_episodes", i32, reset="none", doc="episodes finished"),
            StateField("ring_size", i32, per_env=False, doc="cells of the ring"),
            StateField("episode_length", i32, per_env=False, doc="steps per episode"),
            StateField("tag_reward", f32, per_env=False),
            StateField("tagged_penalty", f32, per_env=False),
        ]

    def policies(self) -> dict[str, PolicyGroup]:
        return {
            "chaser": PolicyGroup("chaser", 0, self.num_chasers, OBS_DIM, len(CHASER_MOVES)),
            "runner": PolicyGroup(
                "runner", self.num_chasers, self.num_runners, OBS_DIM, len(RUNNER_MOVES)
            ),
        }

    def kernels(self) -> KernelSpec:
        return KernelSpec(
            step_kernels=(STEP_KERNEL,),
            cuda_source=HERE / "ring_chase_step.cu",
            numba_module="ai_economist.example_envs.ring_chase.ring_chase_numba",
        )

    # ------------------------------------------------------------ behaviour
    def initial_state(self, num_envs: int, seed: int | None) -> dict[str, np.ndarray]:
        """Random cells per env (from ``seed``); every action allowed."""
        rng = np.random.default_rng(seed)
        positions = rng.integers(0, self.ring_size, (num_envs, self.num_agents), dtype=np.int32)
        t0 = np.zeros(num_envs, np.int32)
        obs_c, obs_r = observations(positions, t0, self.num_chasers, self.ring_size,
                                    self.episode_length)  # fmt: skip
        return {
            "positions": positions,
            "observations_chaser": obs_c,
            "observations_runner": obs_r,
            "action_mask_chaser": np.ones((num_envs, self.num_chasers, 5), np.float32),
            "action_mask_runner": np.ones((num_envs, self.num_runners, 3), np.float32),
            "ring_size": np.int32(self.ring_size),
            "episode_length": np.int32(self.episode_length),
            "tag_reward": np.float32(self.tag_reward),
            "tagged_penalty": np.float32(self.tagged_penalty),
        }

    def reference_step(self, state: dict[str, np.ndarray]) -> None:
        """One step of every environment, in place (see the module docstring)."""
        ring, nc = int(state["ring_size"]), self.num_chasers
        pos = state["positions"]
        move = np.concatenate(
            [CHASER_MOVES[state["sampled_actions_chaser"]],
             RUNNER_MOVES[state["sampled_actions_runner"]]], axis=1,
        )  # fmt: skip
        pos[:] = np.mod(pos + move, ring)
        state["_timestep_"] += 1
        t = state["_timestep_"]
        same = pos[:, :nc, None] == pos[:, None, nc:]  # (E, chasers, runners)
        zero = np.float32(0)
        state["rewards_chaser"][:] = np.where(same.any(2), state["tag_reward"], zero)
        tagged = same.any(1)
        state["rewards_runner"][:] = np.where(tagged, -state["tagged_penalty"], zero)
        state["tags_this_episode"] += tagged.sum(1, dtype=np.int32)
        obs_c, obs_r = observations(pos, t, nc, ring, int(state["episode_length"]))
        state["observations_chaser"][:] = obs_c
        state["observations_runner"][:] = obs_r
        done = t >= state["episode_length"]
        state["_done_"][done] = 1
        state["last_episode_tags"][done] = state["tags_this_episode"][done]
        state["completed_episodes"][done] += 1

    def episode_metrics(self, pull: Callable[[str], np.ndarray]) -> dict[str, float]:
        """``tags per episode``: runners tagged per step summed over the last episode of
        every env that finished one."""
        completed = pull("completed_episodes") > 0
        if not completed.any():
            return {}
        return {"tags per episode": float(pull("last_episode_tags")[completed].mean())}
