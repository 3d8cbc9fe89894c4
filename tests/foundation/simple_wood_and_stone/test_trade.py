"""ContinuousDoubleAuction: hand-made trades that must and must not clear, and invariants."""

import numpy as np
import pytest
from gtb_world_helpers import action_index, components, place, total_coin

TRADE = "ContinuousDoubleAuction"


def order(env, agent, side, resource, price):
    return action_index(env, agent, f"{TRADE}.{side}_{resource}", price + 1)


def test_a_bid_above_an_ask_clears_at_the_ask_price_placed_the_same_step(make_env):
    env = make_env()
    place(env, 0, 4, 0, Wood=1)
    place(env, 1, 4, 3, Coin=7.0)
    env.step({"0": order(env, 0, "Sell", "Wood", 3), "1": order(env, 1, "Buy", "Wood", 5)})
    seller, buyer = env.world.agents
    assert seller.inventory["Wood"] == 0 and seller.escrow["Wood"] == 0
    assert seller.inventory["Coin"] == 3
    assert buyer.inventory["Wood"] == 1
    assert buyer.inventory["Coin"] == 4 and buyer.escrow["Coin"] == 0  # 5 escrowed, 2 refunded
    trade = env.get_component("Trade").executed_trades[-1][0]
    assert (trade["price"], trade["seller"], trade["buyer"], trade["commodity"]) == (
        3,
        0,
        1,
        "Wood",
    )
    assert seller.endogenous["Labor"] == buyer.endogenous["Labor"] == 0.25


def test_a_bid_below_the_ask_does_not_clear_and_both_stay_escrowed(make_env):
    env = make_env()
    place(env, 0, 4, 0, Wood=1)
    place(env, 1, 4, 3, Coin=7.0)
    env.step({"0": order(env, 0, "Sell", "Wood", 3), "1": order(env, 1, "Buy", "Wood", 2)})
    seller, buyer = env.world.agents
    assert seller.escrow["Wood"] == 1 and buyer.escrow["Coin"] == 2 and buyer.inventory["Coin"] == 5
    cda = env.get_component("Trade")
    assert cda.executed_trades[-1] == []
    assert len(cda.bids["Wood"]) == len(cda.asks["Wood"]) == 1
    obs = env._generate_observations()
    assert obs["1"]["flat"] is not None
    assert cda.available_asks("Wood", buyer)[3] == 1 and cda.available_asks("Wood", seller)[3] == 0


@pytest.mark.parametrize(
    "first, second, price",
    [(("0", "Sell", 3), ("1", "Buy", 6), 3), (("1", "Buy", 6), ("0", "Sell", 2), 6)],
)
def test_the_earlier_order_sets_the_price(make_env, first, second, price):
    env = make_env()
    place(env, 0, 4, 0, Wood=1)
    place(env, 1, 4, 3, Coin=10.0)
    env.step({first[0]: order(env, int(first[0]), first[1], "Wood", first[2])})
    env.step({second[0]: order(env, int(second[0]), second[1], "Wood", second[2])})
    assert env.get_component("Trade").executed_trades[-1][0]["price"] == price
    assert env.world.agents[0].inventory["Coin"] == price
    assert env.world.agents[1].total_endowment("Coin") == 10 - price


def test_an_agent_never_trades_with_itself(make_env):
    env = make_env()
    place(env, 0, 4, 0, Wood=1, Coin=10.0)
    env.step({"0": order(env, 0, "Sell", "Wood", 1)})
    env.step({"0": order(env, 0, "Buy", "Wood", 9)})
    assert env.get_component("Trade").executed_trades[-1] == []
    assert env.world.agents[0].escrow["Wood"] == 1 and env.world.agents[0].escrow["Coin"] == 9


def test_expired_orders_return_their_escrow(make_env):
    env = make_env(comps=components(ContinuousDoubleAuction={"order_duration": 2}))
    place(env, 1, 4, 3, Coin=5.0)
    env.step({"1": order(env, 1, "Buy", "Stone", 4)})
    assert env.world.agents[1].escrow["Coin"] == 4
    env.step({})  # age 2: still open
    assert env.world.agents[1].escrow["Coin"] == 4
    env.step({})  # age 3 > 2: expired
    assert env.world.agents[1].escrow["Coin"] == 0 and env.world.agents[1].inventory["Coin"] == 5
    assert env.get_component("Trade").n_orders["Stone"][1] == 0


def test_buy_masks_follow_coin_and_sell_masks_follow_inventory(make_env):
    env = make_env()
    place(env, 0, 4, 0, Coin=3.0, Wood=0, Stone=2)
    masks = env.get_component("Trade").generate_masks()[0]
    assert masks["Buy_Wood"].tolist() == [1, 1, 1, 1] + [0] * 7
    assert not masks["Sell_Wood"].any() and masks["Sell_Stone"].all()


def test_trades_conserve_coin_and_resources_over_random_play(make_env, rng):
    env = make_env(n_agents=3, episode_length=200)
    for agent in env.world.agents:
        agent.state["inventory"].update(Coin=20.0, Wood=3, Stone=3)
    for resource in ("Wood", "Stone"):  # nothing to gather
        env.world.maps.set(resource, np.zeros((5, 6)))
    trade_only = np.zeros(env.world.agents[0].action_spaces, dtype=bool)
    for g, (sub, _) in env.world.agents[0].single_action_map.items():
        trade_only[g] = sub.startswith(TRADE)
    obs = env._generate_observations()
    coin0 = total_coin(env)
    n_trades = 0
    for _ in range(200):
        actions = {}
        for k in ("0", "1", "2"):
            mask = obs[k]["action_mask"].copy()
            mask[1 : 1 + 5] = 0  # no moves (no gathering) and no builds: only trades
            allowed = np.flatnonzero(mask)
            actions[k] = int(rng.choice(allowed))
        obs, _, done, _ = env.step(actions)
        n_trades += len(env.get_component("Trade").executed_trades[-1])
        assert total_coin(env) == pytest.approx(coin0)
        for r in ("Wood", "Stone"):
            assert sum(a.total_endowment(r) for a in env.world.agents) == 9
        if done["__all__"]:
            break
    assert n_trades > 0
    metrics = env.previous_episode_metrics
    assert metrics["Trade/n_trades"] == n_trades
