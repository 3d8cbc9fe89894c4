"""Evaluation plots say what they show: the COVID-19 states' stringency level 1..10 and the
planner's subsidy level 0..20 in effect each day, not action indices."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from ai_economist.foundation.scenarios.covid19.registration import build_covid_eval_env
from ai_economist.plotting import pyplot
from ai_economist.training import evaluate
from ai_economist.training.config import load_run_config, packaged_config_path


@pytest.fixture(scope="module")
def covid_episode():
    """12 days of one COVID-19 env: every state asks for level 3, the planner for level 5."""
    pytest.importorskip("ai_economist.foundation.env_wrapper")
    config = load_run_config(packaged_config_path("covid_and_economy_cpu_demo"))
    config["env"]["episode_length"] = 12
    env, scenario = build_covid_eval_env(config)
    env.reset_all_envs()
    for _ in range(12):
        env.actions("a").copy_(torch.full_like(env.actions("a"), 3))
        env.actions("p").fill_(5)
        env.step_all_envs()
    return scenario, evaluate.scenario_snapshot(scenario)


def test_covid_level_plots_hold_levels_not_actions(covid_episode):
    scenario, state = covid_episode
    plots = evaluate.scenario_level_plots(scenario, state)
    a, p = plots["a"], plots["p"]
    assert a.label == "stringency level (1 = open, 10 = closed)" and (a.low, a.high) == (1, 10)
    assert p.label == "subsidy level (0 = none, 20 = full)" and (p.low, p.high) == (0, 20)
    assert a.values.shape == (13, 51) and p.values.shape == (13, 1)  # day 0 is the reset
    assert np.all(a.values[1:] == 3) and np.all((a.values >= 1) & (a.values <= 10))
    assert np.all(p.values[1:] == 5) and p.values[0, 0] == 0
    assert a.agent_names[:2] == ["Alabama", "Alaska"] and len(a.agent_names) == 51


def test_plot_axes_are_labelled_with_the_levels(covid_episode):
    pytest.importorskip("matplotlib")
    plt = pyplot()
    scenario, state = covid_episode
    plots = evaluate.scenario_level_plots(scenario, state)
    fig = evaluate._level_plot(plt, plots["a"], plots["a"].title)
    ax, bar = fig.axes
    assert ax.get_xlabel() == "day" and ax.get_ylabel() == "state"
    assert bar.get_ylabel() == "stringency level (1 = open, 10 = closed)"
    assert list(bar.get_yticks()) == list(range(1, 11))
    assert ax.get_yticklabels()[0].get_text() == "Alabama"
    plt.close(fig)
    fig = evaluate._level_plot(plt, plots["p"], plots["p"].title)
    (ax,) = fig.axes
    assert ax.get_ylabel() == "subsidy level (0 = none, 20 = full)"
    assert list(ax.get_yticks()) == list(range(0, 21, 2))
    assert ax.get_title() == "federal subsidy level each day (policy p)"
    plt.close(fig)


def test_other_envs_keep_action_indices(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    log = {"steps": [{"actions": {"a": [0, 2]}, "rewards": {"a": [1.0, 0.0]}} for _ in range(3)]}
    titles = []
    real = evaluate._heat_map

    def spy(plt, plot, title, xlabel):
        titles.append((title, plot.label, xlabel))
        return real(plt, plot, title, xlabel)

    monkeypatch.setattr(evaluate, "_heat_map", spy)
    paths = evaluate.write_plots(log, tmp_path)
    assert [p.name for p in paths] == ["rewards.png", "actions_a.png"]
    assert titles == [("actions of policy a", "action index", "step")]
