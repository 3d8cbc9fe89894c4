"""``one-step-economy`` (``OneStepEconomy``): taxes on the first step, labour on the second.

Intended for ``episode_length=2`` with the components ``SimpleLabor`` then
``PeriodicBracketTax`` (``period=2``): on step 1 the planner sets the bracket rates (labour
is masked), on step 2 the agents choose their hours, earn ``hours * skill`` and are taxed;
the revenue comes back as a lump sum. Rewards are the change in each agent's utility and in
the planner's social welfare.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ai_economist.foundation.base.base_env import BaseEnvironment, scenario_registry
from ai_economist.foundation.scenarios.one_step_economy import rules
from ai_economist.foundation.scenarios.utils import rewards, social_metrics


@scenario_registry.add
class OneStepEconomy(BaseEnvironment):
    """One decision each: the planner sets taxes, then every agent chooses its labour.

    Args (besides the BaseEnvironment ones):
        agent_reward_type: "coin_minus_labor_cost" (``c - labor_cost * L^labor_exponent``)
            or "isoelastic_coin_minus_labor" (with ``isoelastic_eta``).
        isoelastic_eta: shape of the isoelastic utility, in [0, 1].
        labor_exponent: exponent of the labour cost (> 1).
        labor_cost: coefficient of the labour cost.
        planner_reward_type: "inv_income_weighted_utility" or "coin_eq_times_productivity".
        mixing_weight_gini_vs_coin: in [0, 1]; equality weight = 1 - this value.
    """

    name = "one-step-economy"
    agent_subclasses = ["BasicMobileAgent", "BasicPlanner"]
    required_entities = ["Coin"]

    def __init__(
        self,
        *base_env_args: Any,
        agent_reward_type: str = "coin_minus_labor_cost",
        isoelastic_eta: float = 0.23,
        labor_exponent: float = 2.0,
        labor_cost: float = 1.0,
        planner_reward_type: str = "inv_income_weighted_utility",
        mixing_weight_gini_vs_coin: float = 0,
        **base_env_kwargs: Any,
    ) -> None:
        rules.check_reward_params(
            agent_reward_type, isoelastic_eta, labor_exponent, planner_reward_type,
            mixing_weight_gini_vs_coin,
        )  # fmt: skip
        super().__init__(*base_env_args, **base_env_kwargs)
        self.labor_cost = float(labor_cost)
        self.agent_reward_type = agent_reward_type
        self.isoelastic_eta = float(isoelastic_eta)
        self.labor_exponent = float(labor_exponent)
        self.planner_reward_type = planner_reward_type
        self.mixing_weight_gini_vs_coin = float(mixing_weight_gini_vs_coin)
        self.planner_starting_coin = 0
        self.curr_optimization_metrics: dict[Any, float] = {a.idx: 0.0 for a in self.all_agents}

    # ------------------------------------------------------------------ state
    def _coin(self) -> np.ndarray:
        return np.array([a.total_endowment("Coin") for a in self.world.agents], dtype=np.float64)

    def _production(self) -> np.ndarray:
        return np.array(
            [a.state.get("production", 0.0) for a in self.world.agents], dtype=np.float64
        )

    def get_current_optimization_metrics(
        self,
        agents: list[Any] | None = None,
        isoelastic_eta: float | None = None,
        labor_exponent: float | None = None,
        labor_coefficient: float | None = None,
    ) -> dict[Any, float]:
        """Each agent's utility and the planner's welfare, keyed by agent idx (and ``"p"``)."""
        agents = self.world.agents if agents is None else agents
        coin = np.array([a.total_endowment("Coin") for a in agents], dtype=np.float64)
        labor = np.array([a.state["endogenous"]["Labor"] for a in agents], dtype=np.float64)
        production = np.array([a.state.get("production", 0.0) for a in agents], dtype=np.float64)
        util = rules.agent_utilities(
            coin,
            labor,
            self.agent_reward_type,
            self.isoelastic_eta if isoelastic_eta is None else isoelastic_eta,
            self.labor_exponent if labor_exponent is None else labor_exponent,
            self.labor_cost if labor_coefficient is None else labor_coefficient,
        )
        metrics: dict[Any, float] = {a.idx: float(u) for a, u in zip(agents, util)}
        metrics[self.world.planner.idx] = float(
            rules.planner_welfare(
                coin, production, util, self.planner_reward_type, self.mixing_weight_gini_vs_coin
            )
        )
        return metrics

    # ------------------------------------------------------- scenario interface
    def reset_starting_layout(self) -> None:
        """No map to lay out."""

    def reset_agent_states(self) -> None:
        """Empty inventories, escrow and labour; the planner starts with no coin."""
        self.world.clear_agent_locs()
        for agent in self.world.agents:
            agent.state["inventory"] = {k: 0 for k in agent.state["inventory"]}
            agent.state["escrow"] = {k: 0 for k in agent.state["escrow"]}
            agent.state["endogenous"] = {k: 0 for k in agent.state["endogenous"]}
        self.world.planner.inventory["Coin"] = self.planner_starting_coin

    def scenario_step(self) -> None:
        """No scenario dynamics: the components do everything."""

    def generate_observations(self) -> dict[str, dict[str, Any]]:
        """Agents: nothing; planner: per-capita productivity / 1000 and equality of coin."""
        obs: dict[str, dict[str, Any]] = {str(a.idx): {} for a in self.world.agents}
        planner = rules.planner_observations(self._coin())
        obs[self.world.planner.idx] = {k: float(v) for k, v in planner.items()}
        return obs

    def compute_reward(self) -> dict[Any, float]:
        """The change of each agent's utility and of the planner's welfare since last step."""
        current = self.get_current_optimization_metrics()
        rew = {k: v - self.curr_optimization_metrics[k] for k, v in current.items()}
        self.curr_optimization_metrics = current
        return rew

    def additional_reset_steps(self) -> None:
        """Start the reward baseline from the reset state."""
        self.curr_optimization_metrics = self.get_current_optimization_metrics()

    def scenario_metrics(self) -> dict[str, float]:
        """Productivity, equality, two welfare values, average endowments, labour, utility."""
        agents = self.world.agents
        coin = self._coin()
        utilities = np.array([self.curr_optimization_metrics[a.idx] for a in agents])
        metrics = {
            "social/productivity": float(social_metrics.get_productivity(coin)),
            "social/equality": float(social_metrics.get_equality(coin)),
            "social_welfare/coin_eq_times_productivity": float(
                rewards.coin_eq_times_productivity(coin, equality_weight=1.0)
            ),
            "social_welfare/inv_income_weighted_utility": float(
                rewards.inv_income_weighted_utility(self._production(), utilities)
            ),
        }
        for resource in agents[0].inventory:
            values = [a.inventory[resource] + a.escrow[resource] for a in agents]
            metrics[f"endow/avg_agent/{resource}"] = float(np.mean(values))
        for name in agents[0].endogenous:
            metrics[f"endogenous/avg_agent/{name}"] = float(
                np.mean([a.endogenous[name] for a in agents])
            )
        metrics["util/avg_agent"] = float(np.mean(utilities))
        for resource, quantity in self.world.planner.inventory.items():
            metrics[f"endow/p/{resource}"] = float(quantity)
        metrics["util/p"] = float(self.curr_optimization_metrics[self.world.planner.idx])
        return metrics
