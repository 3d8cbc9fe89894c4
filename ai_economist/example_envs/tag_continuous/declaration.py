"""Continuous Tag's state, declared once: the kernels take the ``kernel_arg`` fields in this order.

Shapes use the dimensions of ``TagContinuous.dims()``. Agents ``0 .. num_taggers - 1`` are
the taggers; per-agent arrays cover every agent, the trainer-facing arrays one policy each.
"""

from __future__ import annotations

import numpy as np

from ai_economist.warp_drive.state import StateField

F32, I32 = np.float32, np.int32
AGENTS = ("num_agents",)


def _constant(name: str, dtype, shape=(), doc: str = "") -> StateField:
    return StateField(name, dtype, shape, per_env=False, doc=doc)


def _policy_fields(tag: str, size: str) -> list[StateField]:
    return [
        StateField(f"observations_{tag}", F32, (size, "obs_dim"), doc=f"{tag}s' observations"),
        StateField(
            f"action_mask_{tag}",
            F32,
            (size, "num_actions"),
            reset="none",
            kernel_arg=False,
            doc="all ones: every action is allowed (never written, so never reset)",
        ),  # fmt: skip
        StateField(f"sampled_actions_{tag}", I32, (size,), reset="zeros", doc="flat action index"),
        StateField(f"rewards_{tag}", F32, (size,), reset="zeros", doc="last step's rewards"),
    ]


def state_fields() -> list[StateField]:
    """Every array and constant of continuous Tag, in kernel parameter order."""
    return [
        _constant("agent_types", I32, AGENTS, "1 for a tagger, 0 for a runner"),
        _constant("skill_levels", F32, AGENTS, "multiplies max_speed"),
        _constant("step_rewards", F32, AGENTS, "reward of every step in the game"),
        _constant("acceleration_actions", F32, ("num_acceleration_actions",), "0 first"),
        _constant("turn_actions", F32, ("num_turn_actions",), "radians, 0 first"),
        _constant("num_agents", I32),
        _constant("num_taggers", I32),
        _constant("episode_length", I32),
        _constant("num_turn_actions", I32, doc="flat action = accel * this + turn"),
        _constant("num_other_agents_observed", I32, doc="observed agents (all others if full)"),
        _constant("use_full_observation", I32),
        _constant("observe_own_state", I32, doc="1: observations end with the own state"),
        _constant("egocentric_observation", I32, doc="1: positions in the heading frame"),
        _constant("runner_exits_game_after_tagged", I32),
        _constant("grid_length", F32),
        _constant("max_speed", F32),
        _constant("edge_hit_penalty", F32),
        _constant("tagging_margin", F32, doc="tagging_distance * grid_length"),
        _constant("tag_reward_for_tagger", F32),
        _constant("tag_penalty_for_runner", F32),
        _constant("end_of_game_reward_for_runner", F32),
        StateField("loc_x", F32, AGENTS, doc="x in [0, grid_length]"),
        StateField("loc_y", F32, AGENTS, doc="y in [0, grid_length]"),
        StateField("speed", F32, AGENTS),
        StateField("direction", F32, AGENTS, doc="heading in [0, 2 pi)"),
        StateField("acceleration", F32, AGENTS),
        StateField("still_in_the_game", I32, AGENTS),
        StateField("tagged_by", I32, AGENTS, doc="tagger of each runner tagged last step, or -1"),
        StateField("runners_left", I32, doc="runners still in the game"),
        StateField("episode_tags", I32, reset="zeros", doc="tags in the current episode"),
        StateField("last_episode_tags", I32, reset="none", doc="tags in the last ended episode"),
        StateField("completed_episodes", I32, reset="none", doc="episodes ended so far"),
        *_policy_fields("tagger", "num_taggers"),
        *_policy_fields("runner", "num_runners"),
        StateField("_timestep_", I32, doc="steps taken in the episode"),
        StateField("_done_", I32, doc="1 once the episode has ended"),
    ]
