"""Redistribution components: ``WealthRedistribution`` (here) and ``PeriodicBracketTax``.

``PeriodicBracketTax`` lives in :mod:`periodic_tax`; it is re-exported here because
Foundation 1.7.1 defined both classes in ``components/redistribution.py``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ai_economist.foundation.base.base_component import BaseComponent, component_registry
from ai_economist.foundation.components.periodic_tax import PeriodicBracketTax

__all__ = ["PeriodicBracketTax", "WealthRedistribution", "equal_coin_shares"]


def equal_coin_shares(inventory_coin: Any, escrow_coin: Any) -> np.ndarray:
    """Inventory coin that gives every agent an equal total: ``sum(total) / n - escrow``.

    Agents on the last axis (batches allowed). The total coin is unchanged.
    """
    inventory = np.asarray(inventory_coin, dtype=np.float64)
    escrow = np.asarray(escrow_coin, dtype=np.float64)
    share = (inventory + escrow).sum(axis=-1, keepdims=True) / inventory.shape[-1]
    return share - escrow


@component_registry.add
class WealthRedistribution(BaseComponent):
    """Passive: every step, share the mobile agents' total coin out equally.

    Each agent's inventory coin becomes ``total / n - its escrow coin``. List it last, so
    that it acts on the coin the other components have moved this step.
    """

    name = "WealthRedistribution"
    required_entities = ["Coin"]
    agent_subclasses = ["BasicMobileAgent"]

    def get_n_actions(self, agent_cls_name: str) -> None:
        """Passive: no actions."""
        return None

    def get_additional_state_fields(self, agent_cls_name: str) -> dict[str, Any]:
        """No extra agent state."""
        return {}

    def component_step(self) -> None:
        """Give every agent an equal share of the total coin (escrow counts towards it)."""
        agents = self.world.agents
        inventory = np.array([a.state["inventory"]["Coin"] for a in agents], dtype=np.float64)
        escrow = np.array([a.state["escrow"]["Coin"] for a in agents], dtype=np.float64)
        new_inventory = equal_coin_shares(inventory, escrow)
        before = float((inventory + escrow).sum())
        after = float((new_inventory + escrow).sum())
        if abs(before - after) >= 1:
            raise RuntimeError(f"WealthRedistribution changed the total coin: {before} -> {after}")
        for agent, coin in zip(agents, new_inventory):
            agent.state["inventory"]["Coin"] = float(coin)

    def generate_observations(self) -> dict[str, Any]:
        """No observations."""
        return {}

    def generate_masks(self, completions: int = 0) -> dict[str, Any]:
        """No actions, no masks."""
        return {}
