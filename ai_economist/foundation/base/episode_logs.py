"""Dense logs (full episode record) and replay logs (actions + RNG states).

Dense log layout (one episode, JSON-able lists after the episode ends):

* ``world``: a map snapshot (``Maps.state_dict``) every ``world_dense_log_frequency`` steps
  (``{}`` on the other steps), plus a final snapshot;
* ``states``: a deep copy of every agent's state before each step, plus the final states;
* ``actions``: the non-zero actions of each agent at each step;
* ``rewards``: per-agent rewards of each step;
* ``<shorthand>`` / ``<shorthand>-<key>``: the components' ``get_dense_log()``.

Replay log: ``{"reset": {"seed_state": ...}, "step": [{"actions": ..., "seed_state": ...}]}``;
replaying is ``env.reset(**log["reset"])`` followed by ``env.step(**entry)`` for each entry.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import numpy as np

from ai_economist.foundation.base.base_agent import BaseAgent


def new_dense_log() -> dict[str, list[Any]]:
    """An empty dense log."""
    return {"world": [], "states": [], "actions": [], "rewards": []}


def snapshot_states(agents: Sequence[BaseAgent]) -> dict[str, Any]:
    """Deep copies of every agent's state, keyed by ``str(idx)``."""
    return {str(agent.idx): copy.deepcopy(agent.state) for agent in agents}


def nonzero_actions(agents: Sequence[BaseAgent]) -> dict[str, dict[str, int]]:
    """Each agent's non-NO-OP actions, keyed by ``str(idx)``."""
    return {str(a.idx): {k: v for k, v in a.action.items() if v > 0} for a in agents}


def merge_component_logs(dense_log: dict[str, Any], components: Sequence[Any]) -> None:
    """Add each component's ``get_dense_log()`` to ``dense_log`` (in place)."""
    for component in components:
        log = component.get_dense_log()
        if log is None:
            continue
        if isinstance(log, dict):
            for key, value in log.items():
                dense_log[f"{component.shorthand}-{key}"] = value
        elif isinstance(log, (list, tuple)):
            dense_log[component.shorthand] = list(log)
        else:
            raise TypeError(
                f"{component.name}.get_dense_log must return a dict, list, tuple or None, "
                f"got {type(log).__name__}"
            )


_INT_ONLY = {int}


def copy_actions(actions: Any) -> Any:
    """A copy of a step's action dict that later mutation of the caller's buffers cannot change."""
    if actions is None:
        return None
    out = {}
    for key, value in actions.items():
        if type(value) is int:  # the common case first: nothing to copy
            out[key] = value
        elif isinstance(value, np.ndarray):
            out[key] = value.copy()
        elif type(value) is list and set(map(type, value)) <= _INT_ONLY:
            out[key] = value.copy()  # a multi-action list of ints: no deepcopy needed
        elif isinstance(value, (list, dict)):
            out[key] = copy.deepcopy(value)
        else:
            out[key] = value
    return out


_JSON_ATOMS = frozenset((str, int, float, bool, type(None)))


def to_jsonable(obj: Any) -> Any:
    """Recursively convert arrays, numpy scalars and tuples to JSON-able Python objects."""
    kind = type(obj)
    if kind is dict:  # fast paths for the exact built-in types (replay logs are large)
        return {
            (k if type(k) is str else str(k)): (v if type(v) in _JSON_ATOMS else to_jsonable(v))
            for k, v in obj.items()
        }
    if kind in _JSON_ATOMS:
        return obj
    if kind is list or kind is tuple:
        return [v if type(v) in _JSON_ATOMS else to_jsonable(v) for v in obj]
    if kind is np.ndarray:
        return obj.tolist()
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.generic):
        return obj.item()
    return obj


class EpisodeLogger:
    """Owns an environment's dense and replay logs and the previous-episode records.

    Args:
        dense_log_frequency: dense-log every N-th episode (None: only when forced).
        world_dense_log_frequency: world snapshot every N steps of a dense-logged episode.
    """

    def __init__(self, dense_log_frequency: int | None, world_dense_log_frequency: int) -> None:
        self.dense_log_frequency = dense_log_frequency
        self.world_dense_log_frequency = world_dense_log_frequency
        self.dense_this_episode = False
        self.dense_log: dict[str, Any] = new_dense_log()
        self.replay_log: dict[str, Any] = {"reset": {"seed_state": None}, "step": []}
        self.previous_dense_log: dict[str, Any] = new_dense_log()
        self._previous_replay_log: dict[str, Any] | None = None
        self._previous_replay_raw: dict[str, Any] | None = None  # converted when first read
        self.previous_metrics: dict[str, Any] | None = None

    @property
    def previous_replay_log(self) -> dict[str, Any] | None:
        """The last completed episode's replay log (JSON-able, converted on first read)."""
        if self._previous_replay_raw is not None:
            self._previous_replay_log = to_jsonable(self._previous_replay_raw)
            self._previous_replay_raw = None
        return self._previous_replay_log

    @previous_replay_log.setter
    def previous_replay_log(self, value: dict[str, Any] | None) -> None:
        self._previous_replay_log, self._previous_replay_raw = value, None

    def start_episode(self, completions: int, force_dense: bool, seed_state: Any) -> None:
        """Decide whether to dense-log and clear the logs."""
        freq = self.dense_log_frequency
        self.dense_this_episode = bool(force_dense) or (
            freq is not None and completions % freq == 0
        )
        self.dense_log = new_dense_log()
        self.replay_log = {"reset": {"seed_state": seed_state}, "step": []}

    def record_step(
        self, actions: Any, seed_state: Any, world: Any, agents: Sequence[BaseAgent]
    ) -> None:
        """Log the step's actions and RNG state (and, if dense-logging, world/states/actions)."""
        self.replay_log["step"].append({"actions": copy_actions(actions), "seed_state": seed_state})
        if not self.dense_this_episode:
            return
        log = self.dense_log
        if world.timestep % self.world_dense_log_frequency == 0:
            log["world"].append(world.maps.state_dict)
        else:
            log["world"].append({})
        log["states"].append(snapshot_states(agents))
        log["actions"].append(nonzero_actions(agents))

    def record_rewards(self, per_agent_rewards: dict[str, Any]) -> None:
        """Log the step's rewards (dense-logged episodes only)."""
        if self.dense_this_episode:
            self.dense_log["rewards"].append(per_agent_rewards)

    def finalize(
        self,
        world: Any,
        agents: Sequence[BaseAgent],
        components: Sequence[Any],
        metrics: dict[str, Any],
    ) -> None:
        """Store the episode's logs and metrics as the previous episode's (JSON-able)."""
        # Its entries are not written to again, so the conversion to JSON-able objects can
        # wait until it is read; the step list is copied, as the live log may still grow.
        log = self.replay_log
        self._previous_replay_raw = {**log, "step": list(log["step"])}
        self._previous_replay_log = None
        self.previous_metrics = metrics
        if self.dense_this_episode:
            self.dense_log["world"].append(world.maps.state_dict)
            self.dense_log["states"].append(snapshot_states(agents))
            merge_component_logs(self.dense_log, components)
        self.dense_log = to_jsonable(self.dense_log)
        self.previous_dense_log = self.dense_log
