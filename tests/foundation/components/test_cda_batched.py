"""The batched market (``cda_batched``) against the dict-API ``ContinuousDoubleAuction``.

Parity: N phase-1 gather-trade-build envs step with random valid actions (mostly market
orders); the batched market steps with the same orders. The world's Build and Gather change
inventories and labour between market steps, so those are synced from each dict env right
before its market step (a spy on ``component_step``) and only the market's changes are
compared; escrow, the books, histories, orders and trade totals are the batched model's own
from reset on.
"""

from __future__ import annotations

import numpy as np
import pytest

from ai_economist import foundation
from ai_economist.foundation.components import cda_batched as cb
from ai_economist.foundation.components import cda_batched_views as views
from ai_economist.foundation.scenarios.simple_wood_and_stone.configs import (
    PHASE1_ENV_CONFIG,
    SCENARIO_NAME,
    env_config,
)

CDA = "ContinuousDoubleAuction"
N_ENVS, EPISODE, STEPS = 3, 60, 240


def _make_env(seed: int, multi: bool):
    kwargs = env_config(PHASE1_ENV_CONFIG)
    kwargs.update(episode_length=EPISODE, starting_agent_coin=30, multi_action_mode_agents=multi)
    return foundation.make_env_instance(SCENARIO_NAME, seed=seed, **kwargs)


def _give_goods(env, rng: np.random.Generator) -> None:
    """Some wood and stone after reset, so that asks start early."""
    for agent in env.world.agents:
        for r in ("Stone", "Wood"):
            agent.state["inventory"][r] = int(rng.integers(0, 6))


class _Spy:
    """Wraps a component's ``component_step`` to record the goods around it."""

    def __init__(self, env, params: cb.MarketParams) -> None:
        self.env, self.params = env, params
        self.cda = env.get_component(CDA)
        self._step = self.cda.component_step
        self.cda.component_step = self
        self.pre = self.post = None

    def __call__(self) -> None:
        self.pre = views.goods_from_envs(self.params, [self.env])
        self._step()
        self.post = views.goods_from_envs(self.params, [self.env])


def _record(params, bids, asks, a: int, name: str, local: int) -> None:
    if local and name.startswith(CDA):
        side, commodity = name.split(".")[1].split("_")
        (bids if side == "Buy" else asks)[a, params.commodities.index(commodity)] = local


def _sample_multi(env, obs, rng: np.random.Generator, params: cb.MarketParams):
    """Multi-action mode: per sub-space a random valid action, an order 60 % of the time
    when one is allowed; and the market's ``(A, C)`` bid and ask action arrays."""
    actions: dict = {}
    bids, asks = np.zeros((2, params.n_agents, params.n_commodities), np.int64)
    for a, agent in enumerate(env.world.agents):
        mask, start, chosen = obs[str(a)]["action_mask"], 0, []
        for name in agent._action_names:
            valid = np.flatnonzero(mask[start : start + agent.action_dim[name]])
            start += agent.action_dim[name]
            some = valid[valid > 0]
            local = int(rng.choice(some if some.size and rng.random() < 0.6 else valid))
            chosen.append(local)
            _record(params, bids, asks, a, name, local)
        actions[str(a)] = chosen
    actions["p"] = [0] * len(env.world.planner.action_spaces)
    return actions, bids, asks


def _sample(env, obs, rng: np.random.Generator, params: cb.MarketParams):
    """Random valid actions (80 % market orders when any is allowed) and the market's
    ``(A, C)`` bid and ask action arrays."""
    if env.world.agents[0].multi_action_mode:
        return _sample_multi(env, obs, rng, params)
    actions: dict = {}
    bids, asks = np.zeros((2, params.n_agents, params.n_commodities), np.int64)
    for a, agent in enumerate(env.world.agents):
        valid = np.flatnonzero(obs[str(a)]["action_mask"])
        market = [k for k in valid if k and agent.single_action_map[k][0].startswith(CDA)]
        k = int(rng.choice(market if market and rng.random() < 0.8 else valid))
        actions[str(a)] = k
        if k:
            _record(params, bids, asks, a, *agent.single_action_map[k])
    actions["p"] = [0] * len(env.world.planner.action_spaces)
    return actions, bids, asks


def _open_orders(state: cb.MarketState, n: int, c: int, price, created) -> list[tuple]:
    a, k = np.nonzero(price[n, c] != cb.EMPTY)
    now = state.step[n]
    return sorted(zip(a.tolist(), price[n, c, a, k].tolist(), (now - created[n, c, a, k]).tolist()))


def _compare_market(params, state, n: int, cda) -> None:
    for c, r in enumerate(params.commodities):
        bids = sorted((b["buyer"], b["bid"], b["bid_lifetime"]) for b in cda.bids[r])
        asks = sorted((o["seller"], o["ask"], o["ask_lifetime"]) for o in cda.asks[r])
        assert _open_orders(state, n, c, state.bid_price, state.bid_created) == bids
        assert _open_orders(state, n, c, state.ask_price, state.ask_created) == asks
        np.testing.assert_array_equal(state.n_orders[n, c], cda.n_orders[r])
    np.testing.assert_array_equal(state.books[n], cda._books)
    np.testing.assert_array_equal(state.history[n], cda._history)
    assert state.trades.as_dicts(n, params.commodities) == cda.executed_trades[-1]


def _compare_views(params, obs, buy, sell, n: int, env) -> None:
    cda = env.get_component(CDA)
    ref_obs, ref_masks = cda.generate_observations(), cda.generate_masks()
    for c, r in enumerate(params.commodities):
        planner = ref_obs[env.world.planner.idx]
        assert planner[f"market_rate-{r}"] == obs["market_rate"][n, c]
        for f in ("price_history", "full_asks", "full_bids"):
            np.testing.assert_array_equal(planner[f"{f}-{r}"], obs[f][n, c])
        for a in range(params.n_agents):
            mine = ref_obs[a]
            assert mine[f"market_rate-{r}"] == obs["market_rate"][n, c]
            np.testing.assert_array_equal(mine[f"price_history-{r}"], obs["price_history"][n, c])
            for f in ("available_asks", "available_bids", "my_asks", "my_bids"):
                np.testing.assert_array_equal(mine[f"{f}-{r}"], obs[f][n, c, a])
            np.testing.assert_array_equal(ref_masks[a][f"Buy_{r}"], buy[n, a, c])
            np.testing.assert_array_equal(ref_masks[a][f"Sell_{r}"], sell[n, a, c])


def _sync_reset(params, state, envs, n, rng, escrow) -> dict:
    obs = envs[n].reset()
    _give_goods(envs[n], rng)
    which = np.arange(len(envs)) == n
    cb.reset_envs(state, params, which)
    escrow[n] = views.goods_from_envs(params, [envs[n]])[1][0]
    assert not escrow[n].any()
    return obs


@pytest.mark.parametrize("multi, steps", [(False, STEPS), (True, STEPS // 2)])
def test_batched_market_matches_dict_component_over_random_episodes(multi, steps) -> None:
    """Single-action agents (the published config) place one order a step at most;
    multi-action agents may bid and ask on both commodities in one step."""
    rng = np.random.default_rng(7)
    envs = [_make_env(seed, multi) for seed in range(N_ENVS)]
    params = cb.MarketParams.from_component(envs[0].get_component(CDA))
    spies = [_Spy(env, params) for env in envs]
    state = cb.initial_state(params, N_ENVS)
    escrow = np.zeros((N_ENVS, params.n_agents, params.n_commodities + 1))
    obs = [_sync_reset(params, state, envs, n, rng, escrow) for n in range(N_ENVS)]
    n_trades = 0
    for _ in range(steps):
        bids = np.zeros((N_ENVS, params.n_agents, params.n_commodities), np.int64)
        asks = np.zeros_like(bids)
        done = []
        for n, env in enumerate(envs):
            actions, bids[n], asks[n] = _sample(env, obs[n], rng, params)
            obs[n], _, d, _ = env.step(actions)
            done.append(d["__all__"])
        inventory = np.concatenate([s.pre[0] for s in spies])
        labor = np.concatenate([s.pre[2] for s in spies])
        np.testing.assert_array_equal(escrow, np.concatenate([s.pre[1] for s in spies]))
        cb.market_step(params, state, bids, asks, inventory, escrow, labor)
        for n, spy in enumerate(spies):
            post_inventory, post_escrow, post_labor = spy.post
            np.testing.assert_array_equal(inventory[n], post_inventory[0])
            np.testing.assert_array_equal(escrow[n], post_escrow[0])
            np.testing.assert_array_equal(labor[n], post_labor[0])
            _compare_market(params, state, n, spy.cda)
            n_trades += len(spy.cda.executed_trades[-1])
        now_inventory = views.goods_from_envs(params, envs)[0]
        buy, sell = views.action_masks(params, state, now_inventory)
        market_obs = views.market_observations(params, state)
        for n, env in enumerate(envs):
            _compare_views(params, market_obs, buy, sell, n, env)
            if done[n]:
                expected = env.get_component(CDA).get_metrics()
                got = views.market_metrics(params, state, n)
                np.testing.assert_equal(got, expected)
                obs[n] = _sync_reset(params, state, envs, n, rng, escrow)
    assert n_trades > 100  # the comparison covered many trades


# ------------------------------------------------------------------ hand-made cases
P = cb.MarketParams(("Stone", "Wood"), 3, 10, 0.25, 2, 3, 0.01)


def _goods(coin=(10.0, 10.0, 10.0), stone=(2, 2, 2), wood=(0, 0, 0)):
    inventory = np.array([[[s, w, c] for s, w, c in zip(stone, wood, coin)]], dtype=np.float64)
    return inventory, np.zeros_like(inventory), np.zeros((1, 3))


def _orders(**by_agent: tuple[int, int]) -> np.ndarray:
    """``(1, A, C)`` actions: ``a<i>=(commodity, price)`` -> action price + 1."""
    out = np.zeros((1, P.n_agents, P.n_commodities), np.int64)
    for key, (c, price) in by_agent.items():
        out[0, int(key[1:]), c] = price + 1
    return out


NONE = _orders()


def test_bid_meets_standing_ask_at_the_ask_price() -> None:
    state = cb.initial_state(P, 1)
    inv, esc, lab = _goods()
    cb.market_step(P, state, NONE, _orders(a1=(0, 3)), inv, esc, lab)  # ask 3 stands
    trades = cb.market_step(P, state, _orders(a0=(0, 5)), NONE, inv, esc, lab)
    (trade,) = trades.as_dicts(0, P.commodities)
    assert (trade["buyer"], trade["seller"], trade["price"]) == (0, 1, 3)
    assert (trade["bid_lifetime"], trade["ask_lifetime"]) == (0, 1)
    np.testing.assert_array_equal(inv[0, :, 2], [7.0, 13.0, 10.0])  # the buyer got 2 back
    np.testing.assert_array_equal(inv[0, :, 0], [3, 1, 2])
    assert not esc.any() and not state.books.any() and not state.n_orders.any()
    np.testing.assert_array_equal(lab[0], [0.25, 0.25, 0.0])
    obs = views.market_observations(P, state)
    assert obs["market_rate"][0, 0] == 3.0 and obs["market_rate"][0, 1] == 0.0


def test_standing_bid_sets_the_price_and_ties_go_to_the_older_ask() -> None:
    state = cb.initial_state(P, 1)
    inv, esc, lab = _goods()
    cb.market_step(P, state, _orders(a0=(0, 6)), _orders(a2=(0, 4)), inv, esc, lab)  # trade at 4
    cb.market_step(P, state, _orders(a0=(0, 6)), _orders(a1=(0, 7)), inv, esc, lab)
    cb.market_step(P, state, NONE, _orders(a2=(0, 2)), inv, esc, lab)  # bid 6 is older
    trades = state.trades.as_dicts(0, P.commodities)
    assert [(t["seller"], t["price"]) for t in trades] == [(2, 6)]
    cb.market_step(P, state, _orders(a2=(0, 9)), NONE, inv, esc, lab)  # ask 7 of agent 1
    assert [(t["seller"], t["price"]) for t in state.trades.as_dicts(0, P.commodities)] == [(1, 7)]


def test_no_self_trade_and_same_price_asks_fill_oldest_first() -> None:
    state = cb.initial_state(P, 1)
    inv, esc, lab = _goods()
    cb.market_step(P, state, NONE, _orders(a1=(0, 2)), inv, esc, lab)
    cb.market_step(P, state, NONE, _orders(a2=(0, 2), a0=(0, 1)), inv, esc, lab)
    cb.market_step(P, state, _orders(a0=(0, 5)), NONE, inv, esc, lab)
    (trade,) = state.trades.as_dicts(0, P.commodities)  # a0's own ask at 1 is skipped
    assert (trade["seller"], trade["price"], trade["ask_lifetime"]) == (1, 2, 2)


def test_bid_beyond_coin_is_masked_and_not_placed() -> None:
    state = cb.initial_state(P, 1)
    inv, esc, lab = _goods(coin=(3.0, 10.0, 0.0), stone=(0, 1, 0))
    buy, sell = views.action_masks(P, state, inv)
    np.testing.assert_array_equal(buy[0, 0, 0], [1, 1, 1, 1] + [0] * 7)
    np.testing.assert_array_equal(buy[0, 2, 1], [1] + [0] * 10)
    np.testing.assert_array_equal(sell[0, :, 0].max(axis=-1), [0, 1, 0])
    cb.market_step(P, state, _orders(a0=(0, 4)), NONE, inv, esc, lab)
    assert not state.books.any() and inv[0, 0, 2] == 3.0 and lab[0, 0] == 0.0
    cb.market_step(P, state, _orders(a1=(0, 0)), _orders(a1=(0, 5)), inv, esc, lab)
    cb.market_step(P, state, _orders(a1=(0, 0)), NONE, inv, esc, lab)
    assert state.n_orders[0, 0, 1] == P.max_num_orders  # at the limit every price is masked
    buy, _ = views.action_masks(P, state, inv)
    assert not buy[0, 1, 0].any() and buy[0, 1, 1].all()


def test_order_expires_after_order_duration() -> None:
    state = cb.initial_state(P, 1)
    inv, esc, lab = _goods()
    cb.market_step(P, state, _orders(a0=(1, 4)), NONE, inv, esc, lab)
    for _ in range(P.order_duration - 1):  # lifetimes 1..order_duration stay
        cb.market_step(P, state, NONE, NONE, inv, esc, lab)
        assert state.n_orders[0, 1, 0] == 1 and esc[0, 0, 2] == 4.0 and inv[0, 0, 2] == 6.0
    cb.market_step(P, state, NONE, NONE, inv, esc, lab)
    assert state.n_orders[0, 1, 0] == 0 and esc[0, 0, 2] == 0.0 and inv[0, 0, 2] == 10.0
    assert not state.books.any() and (state.bid_price == cb.EMPTY).all()


def test_trades_conserve_coin_and_resources() -> None:
    rng = np.random.default_rng(3)
    params = cb.MarketParams(("Stone", "Wood"), 4, 10, 0.25, 5, 4, 0.01)
    n = 50
    state = cb.initial_state(params, n)
    inv = np.concatenate(
        [rng.integers(0, 4, (n, 4, 2)), rng.uniform(0, 20, (n, 4, 1))], axis=-1
    ).astype(np.float64)
    esc, lab = np.zeros_like(inv), np.zeros((n, 4))
    total = (inv + esc).sum(axis=1)
    n_trades = 0
    for _ in range(40):
        bids = rng.integers(0, params.n_prices + 1, (n, 4, 2)) * (rng.random((n, 4, 2)) < 0.5)
        asks = rng.integers(0, params.n_prices + 1, (n, 4, 2)) * (rng.random((n, 4, 2)) < 0.5)
        cb.market_step(params, state, bids, asks, inv, esc, lab)
        n_trades += int(state.trades.count.sum())
        np.testing.assert_allclose((inv + esc).sum(axis=1), total, rtol=0, atol=1e-9)
        assert (inv >= 0).all() and (esc >= 0).all()
        hist = np.zeros_like(state.books)  # the books are the open orders' histogram
        for side, price in ((cb.ASKS, state.ask_price), (cb.BIDS, state.bid_price)):
            e, c, a, _ = np.nonzero(price != cb.EMPTY)
            np.add.at(hist, (e, side, c, a, price[price != cb.EMPTY]), 1)
        np.testing.assert_array_equal(hist, state.books)
    assert n_trades > 200


def test_bad_actions_and_goods_are_rejected_with_their_name() -> None:
    state = cb.initial_state(P, 1)
    inv, esc, lab = _goods()
    with pytest.raises(ValueError, match=r"bid_actions\[\(0, 1, 0\)\] = 12 is out of range"):
        cb.market_step(P, state, _orders(a1=(0, 11)), NONE, inv, esc, lab)
    with pytest.raises(ValueError, match="ask_actions must have shape"):
        cb.market_step(P, state, NONE, np.zeros((1, 3)), inv, esc, lab)
    with pytest.raises(ValueError, match="escrow must be a float64 array"):
        cb.market_step(P, state, NONE, NONE, inv, esc.astype(int), lab)
    inv[0, 2, 1] = -1.0
    with pytest.raises(ValueError, match=r"inventory\[\(0, 2, 1\)\] = .*-1.0.*must be >= 0"):
        cb.market_step(P, state, NONE, NONE, inv, esc, lab)
    with pytest.raises(ValueError, match="max_num_orders must be an int >= 1, got 0"):
        cb.MarketParams(("Wood",), 2, 10, 0.25, 5, 0, 0.01)


def test_goods_arrays_round_trip_through_dict_envs() -> None:
    envs = [_make_env(seed, False) for seed in (0, 1)]
    for env in envs:
        env.reset()
    params = cb.MarketParams.from_component(envs[0].get_component(CDA))
    inventory, escrow, labor = views.goods_from_envs(params, envs)
    assert inventory.shape == (2, 4, 3) and (inventory[:, :, 2] == 30.0).all()
    inventory[1, 3] = [1.0, 2.0, 7.5]  # Stone, Wood, Coin
    escrow[0, 0, 2], labor[1, 2] = 4.0, 1.25
    views.goods_to_envs(params, envs, inventory, escrow, labor)
    assert envs[1].world.agents[3].state["inventory"] == {"Coin": 7.5, "Stone": 1.0, "Wood": 2.0}
    assert envs[0].world.agents[0].state["escrow"]["Coin"] == 4.0
    for got, want in zip(views.goods_from_envs(params, envs), (inventory, escrow, labor)):
        np.testing.assert_array_equal(got, want)
