"""Agents: state containers with an action space built from the registered components.

An agent's action space is the union of the sub-spaces its components declare through
``component.get_n_actions(agent.name)``:

* an int ``n`` gives one sub-space named after the component with actions ``1..n``;
* a list of ``(sub_name, n)`` gives sub-spaces ``"<Component>.<sub_name>"``;
* ``None`` or ``0`` gives nothing.

In **single-action mode** the agent picks one action from ``1 + sum(n)`` (index 0 is the
universal NO-OP; index ``g`` maps to ``(sub-space, local action)`` through
``single_action_map``). In **multi-action mode** it picks one action per sub-space, each
sub-space having ``n + 1`` actions (its own NO-OP at 0).

Difference from Foundation 1.7.1: random actions are drawn from the environment's
``numpy.random.Generator`` (``agent.rng``, set by the World) instead of the global RNG.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ai_economist.foundation.base.registrar import Registry

PASSIVE_PLACEHOLDER = "PassiveAgentPlaceholder"


def _as_action_int(value: Any, what: str, subject: Any = None) -> int:
    """Convert an action value to int, raising TypeError for non-integers (the message
    names ``what``, formatted with ``subject`` only then: ``what % (subject,)``)."""
    if type(value) is int:
        return value
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        if isinstance(value, (float, np.floating)) and float(value).is_integer():
            return int(value)
        label = what if subject is None else what % (subject,)
        raise TypeError(f"{label} must be an integer action, got {value!r}")
    return int(value)


class BaseAgent:
    """Base class for agents.

    Args:
        idx: the agent's index (an int for mobile agents, ``"p"`` for the planner).
        multi_action_mode: whether the agent takes one action per sub-space.
    """

    name: str = ""

    def __init__(self, idx: int | str | None = None, multi_action_mode: bool = False) -> None:
        if idx is None:
            idx = 0
        if isinstance(idx, (bool, np.bool_)) or not isinstance(idx, (int, np.integer, str)):
            raise TypeError(f"Agent idx must be an int or a str, got {idx!r}")
        self._idx: int | str = int(idx) if isinstance(idx, np.integer) else idx
        self.multi_action_mode = bool(multi_action_mode)
        self.state: dict[str, Any] = {
            "loc": [0, 0],
            "inventory": {},
            "escrow": {},
            "endogenous": {},
        }
        self.action: dict[str, int] = {}
        self.action_dim: dict[str, int] = {}
        self.single_action_map: dict[int, tuple[str, int]] = {}
        self._action_names: list[str] = []
        self._subspace_n: dict[str, int] = {}
        self._component_subspaces: dict[str, list[str]] = {}
        self._noop_action_dict: dict[str, int] = {}
        self._total_actions = 0
        self._passive_multi_action_agent = False
        self._registered_components = False
        self._rng: np.random.Generator | None = None

    # ------------------------------------------------------------------ properties
    @property
    def idx(self) -> int | str:
        """The agent's index."""
        return self._idx

    @property
    def loc(self) -> list[int]:
        """``[row, col]`` of the agent on the map."""
        return self.state["loc"]

    @property
    def inventory(self) -> dict[str, float]:
        """Resources the agent holds and can use."""
        return self.state["inventory"]

    @property
    def escrow(self) -> dict[str, float]:
        """Resources set aside (e.g. for open market orders)."""
        return self.state["escrow"]

    @property
    def endogenous(self) -> dict[str, float]:
        """Endogenous quantities, e.g. ``Labor``."""
        return self.state["endogenous"]

    @property
    def rng(self) -> np.random.Generator | None:
        """The environment's random generator (set by the World)."""
        return self._rng

    @rng.setter
    def rng(self, generator: np.random.Generator | None) -> None:
        self._rng = generator

    @property
    def action_names(self) -> list[str]:
        """Sub-space names in registration order."""
        return list(self._action_names)

    @property
    def subspace_sizes(self) -> list[int]:
        """Number of actions of each sub-space, NO-OP excluded (registration order)."""
        return [self._subspace_n[name] for name in self._action_names]

    @property
    def action_spaces(self) -> int | np.ndarray:
        """Single mode: the int ``1 + sum(n)``. Multi mode: int32 array of ``n + 1`` per sub-space."""
        if self.multi_action_mode:
            return np.array([self.action_dim[m] for m in self._action_names], dtype=np.int32)
        return 1 + self._total_actions

    # ---------------------------------------------------------------- registration
    def register_inventory(self, resources: Sequence[str]) -> None:
        """Create zero inventory and escrow entries for ``resources``."""
        for resource in resources:
            self.state["inventory"][resource] = 0
            self.state["escrow"][resource] = 0

    def register_endogenous(self, endogenous: Sequence[str]) -> None:
        """Create zero entries for the endogenous quantities."""
        for entity in endogenous:
            self.state["endogenous"][entity] = 0

    def _incorporate_subspace(self, component_name: str, action_name: str, n: int) -> None:
        self.action[action_name] = 0
        self._action_names.append(action_name)
        self._subspace_n[action_name] = n
        self._component_subspaces.setdefault(component_name, []).append(action_name)
        if self.multi_action_mode:
            self.action_dim[action_name] = n + 1
            return
        self.action_dim[action_name] = n
        for local in range(1, n + 1):
            self._total_actions += 1
            self.single_action_map[self._total_actions] = (action_name, local)

    def _register_component_actions(self, component: Any) -> None:
        n = component.get_n_actions(self.name)
        if n is None:
            return
        if isinstance(n, (int, np.integer)) and not isinstance(n, bool):
            if n < 0:
                raise ValueError(f"{component.name}.get_n_actions returned {n} (< 0)")
            if n > 0:
                self._incorporate_subspace(component.name, component.name, int(n))
            return
        if not isinstance(n, (list, tuple)):
            raise TypeError(
                f"{component.name}.get_n_actions must return None, an int or a list of "
                f"(sub_name, n) pairs, got {n!r}"
            )
        for sub_name, sub_n in n:
            if "." in str(sub_name):
                raise NameError(f"Action sub-space names may not contain '.', got {sub_name!r}")
            if int(sub_n) > 0:
                self._incorporate_subspace(
                    component.name, f"{component.name}.{sub_name}", int(sub_n)
                )

    def register_components(self, components: Sequence[Any]) -> None:
        """Build the action space from ``components`` (order matters) and add their state fields."""
        if self._registered_components:
            raise RuntimeError(f"Components already registered for agent {self.idx!r}")
        for component in components:
            self._register_component_actions(component)
            self.state.update(component.get_additional_state_fields(self.name))
        if not self.action and self.multi_action_mode:
            self._incorporate_subspace(PASSIVE_PLACEHOLDER, PASSIVE_PLACEHOLDER, 0)
            self._passive_multi_action_agent = True
        self._noop_action_dict = {k: 0 for k in self.action}
        self._registered_components = True

    # ---------------------------------------------------------------------- actions
    def has_component(self, component_name: str) -> bool:
        """Whether the agent has actions from ``component_name`` (or that exact sub-space)."""
        return component_name in self._component_subspaces or component_name in self.action

    def get_component_action(
        self, component_name: str, sub_action_name: str | None = None
    ) -> int | list[int] | None:
        """Current action for a component: an int, a list (several sub-spaces) or None."""
        if sub_action_name is not None:
            return self.action.get(f"{component_name}.{sub_action_name}")
        if component_name in self.action:
            return self.action[component_name]
        subspaces = self._component_subspaces.get(component_name)
        if not subspaces:
            return None
        if len(subspaces) == 1:
            return self.action[subspaces[0]]
        return [self.action[s] for s in subspaces]

    def set_component_action(self, component_name: str, action: int | Sequence[int]) -> None:
        """Set the local action (``0..n``) of a sub-space, or of every sub-space of a component.

        Every value is checked before any is written: a rejected call changes nothing.
        """
        for name, value in self._resolve_component_action(component_name, action):
            self.action[name] = value

    def _resolve_component_action(
        self, component_name: str, action: int | Sequence[int]
    ) -> list[tuple[str, int]]:
        """The validated ``(sub_space, local_action)`` writes of ``set_component_action``."""
        if component_name in self.action:
            value = _as_action_int(action, "Action for %r", component_name)
            n = self._subspace_n[component_name]
            if not 0 <= value <= n:
                raise ValueError(
                    f"Action {value} for {component_name!r} of agent {self.idx!r} is out of "
                    f"range: expected 0..{n}"
                )
            return [(component_name, value)]
        subspaces = self._component_subspaces.get(component_name)
        if subspaces is None:
            raise KeyError(
                f"Agent {self.idx!r} has no action sub-space {component_name!r}. "
                f"Known sub-spaces: {self._action_names}"
            )
        if isinstance(action, (int, np.integer)) or len(action) != len(subspaces):
            raise ValueError(
                f"Component {component_name!r} has sub-spaces {subspaces}: expected a sequence "
                f"of {len(subspaces)} actions, got {action!r}"
            )
        return [
            write
            for sub, value in zip(subspaces, action, strict=True)
            for write in self._resolve_component_action(sub, value)
        ]

    def reset_actions(self, component: str | None = None) -> None:
        """Set every action (or those of ``component``) to NO-OP."""
        if component is None:
            self.action.update(self._noop_action_dict)
            return
        key = component.lower()
        for name in self.action:
            if name.lower() == key or name.split(".")[0].lower() == key:
                self.action[name] = 0

    def get_random_action(self, rng: np.random.Generator | None = None) -> int | list[int]:
        """A uniformly random action in the format ``parse_actions`` accepts."""
        rng = rng if rng is not None else self._rng
        if rng is None:
            raise RuntimeError(
                f"Agent {self.idx!r} has no random generator; pass rng= or attach it to a World"
            )
        if self.multi_action_mode:
            return [int(rng.integers(self.action_dim[m])) for m in self._action_names]
        return int(rng.integers(1 + self._total_actions))

    def populate_random_actions(self, rng: np.random.Generator | None = None) -> None:
        """Reset the actions, then set a random one."""
        self.reset_actions()
        self.parse_actions(self.get_random_action(rng))

    def parse_actions(self, actions: Any) -> None:
        """Set actions from the env-level format.

        Single-action mode: an int in ``0..action_spaces-1`` (0 = NO-OP) or a one-entry dict
        ``{sub_space: local_action}``. Multi-action mode: a sequence with one int per
        sub-space (a dict ``{sub_space: action}`` is also accepted).  Floats holding
        integers are accepted; everything is checked before anything is written.
        """
        for name, value in self.resolve_actions(actions):
            self.action[name] = value

    def resolve_actions(self, actions: Any) -> list[tuple[str, int]]:
        """The ``(sub_space, local_action)`` writes ``parse_actions(actions)`` would make,
        validated but not made (TypeError/ValueError/KeyError naming the agent otherwise)."""
        if type(actions) is int and not self.multi_action_mode:  # the common case, directly
            if actions == 0:
                return []
            target = self.single_action_map.get(actions)
            if target is not None:
                return [target]
        if isinstance(actions, dict):
            if not self.multi_action_mode and len(actions) > 1:
                raise ValueError(
                    f"Agent {self.idx!r} is in single-action mode: a dict action must have at "
                    f"most one entry, got {dict(actions)!r}"
                )
            return [
                write
                for name, value in actions.items()
                for write in self._resolve_component_action(name, value)
            ]
        if self.multi_action_mode:
            return self._resolve_multi(actions)
        return self._resolve_single(actions)

    def _resolve_single(self, actions: Any) -> list[tuple[str, int]]:
        if isinstance(actions, np.ndarray) and actions.size == 1:
            actions = actions.reshape(-1)[0]
        action = _as_action_int(actions, "Action of agent %r", self._idx)
        if action == 0:
            return []
        target = self.single_action_map.get(action)
        if target is None:
            raise ValueError(
                f"Action {action} of agent {self.idx!r} is out of range: expected "
                f"0..{self._total_actions} (single-action mode)"
            )
        return [target]

    def _resolve_multi(self, actions: Any) -> list[tuple[str, int]]:
        if isinstance(actions, (int, np.integer)) and len(self._action_names) == 1:
            actions = [actions]
        if isinstance(actions, (str, bytes)) or not hasattr(actions, "__len__"):
            raise TypeError(
                f"Agent {self.idx!r} is in multi-action mode: expected a sequence of "
                f"{len(self._action_names)} actions, got {actions!r}"
            )
        if len(actions) != len(self._action_names):
            raise ValueError(
                f"Agent {self.idx!r} expects {len(self._action_names)} actions (one per "
                f"sub-space {self._action_names}), got {len(actions)}"
            )
        writes: list[tuple[str, int]] = []
        action, sizes = self.action, self._subspace_n
        for name, value in zip(self._action_names, actions, strict=True):
            # the common case (an int in range for a sub-space) without the general checks
            if type(value) is int and name in action and 0 <= value <= sizes[name]:
                writes.append((name, value))
            else:
                writes.extend(self._resolve_component_action(name, value))
        return writes

    # ------------------------------------------------------------------------ masks
    def flatten_masks(self, mask_dict: Mapping[str, Any]) -> np.ndarray:
        """Concatenate per-sub-space masks into one float32 vector laid out like the logits.

        Single mode: ``[1] + mask_1 + mask_2 ...``; multi mode: ``[1] + mask_1 + [1] + mask_2 ...``.
        """
        if self._passive_multi_action_agent:
            return np.ones(1, dtype=np.float32)
        try:
            parts = [mask_dict[name] for name in self._action_names]
        except KeyError as err:
            raise KeyError(
                f"No action mask for sub-space {err} of agent {self.idx!r}; "
                f"got masks for {sorted(mask_dict)}"
            ) from None
        if self.multi_action_mode:
            parts = [p for part in parts for p in (_ONE, part)]
        else:
            parts.insert(0, _ONE)
        try:
            return np.concatenate(parts, dtype=np.float32)
        except ValueError:  # not all 1-D: flatten each part
            return np.concatenate([np.asarray(p, dtype=np.float32).reshape(-1) for p in parts])

    # -------------------------------------------------------------------- resources
    def inventory_to_escrow(self, resource: str, amount: float) -> float:
        """Move up to ``amount`` of ``resource`` to escrow; return the amount moved."""
        return self._move_resource(resource, amount, "inventory", "escrow")

    def escrow_to_inventory(self, resource: str, amount: float) -> float:
        """Move up to ``amount`` of ``resource`` back to the inventory; return the amount moved."""
        return self._move_resource(resource, amount, "escrow", "inventory")

    def _move_resource(self, resource: str, amount: float, source: str, target: str) -> float:
        if amount < 0:
            raise ValueError(f"amount must be >= 0, got {amount!r}")
        moved = min(self.state[source][resource], amount)
        self.state[source][resource] -= moved
        self.state[target][resource] += moved
        return float(moved)

    def total_endowment(self, resource: str) -> float:
        """Inventory plus escrow of ``resource``."""
        return self.state["inventory"][resource] + self.state["escrow"][resource]

    def __repr__(self) -> str:
        return f"{type(self).__name__}(idx={self.idx!r})"


_ONE = np.ones(1, dtype=np.float32)

agent_registry = Registry(BaseAgent)
