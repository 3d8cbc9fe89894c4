"""COVID-19 observations: per-key values and the flat per-policy layout the trainer reads.

The Foundation env returns observations as a dict (collated: agent axis last, as the
original).  Trainers want one flat float32 vector per agent: ``ObservationLayout`` fixes
that vector's layout once (fields in sorted key order, as Foundation's ``flatten_observations``
does) and every backend writes the same layout: the batched numpy simulator, the CUDA C
kernels and the Numba kernels (which receive the offsets as compile-time constants).
"""

from __future__ import annotations

import operator
from dataclasses import dataclass

import numpy as np

from ai_economist.foundation.scenarios.covid19.model import dynamics

# How a field is laid out for the two policies:
#   own      agent: its own value (1)               planner: every state's value (A)
#   own6     agent: its own 6 SIR/U values (6)      planner: (6, A) row-major (6A)
#   shared   agent: one value shared by all (1)     planner: the same value (1)
#   onehot   agent: one-hot of its index (A)        planner: absent
FIELD_KINDS = {
    "ControlUSStateOpenCloseStatus-agent_policy_indicators": "own",
    "FederalGovernmentSubsidy-current_subsidy_level": "shared",
    "FederalGovernmentSubsidy-t_until_next_subsidy": "shared",
    "VaccinationCampaign-next_vaccination_rate": "shared",
    "VaccinationCampaign-t_until_next_vaccines": "shared",
    "time": "shared",
    "world-agent_index": "onehot",
    "world-agent_postsubsidy_productivity": "own",
    "world-agent_state": "own6",
    "world-lagged_stringency_level": "own",
}
AGENT_STATE_KEYS = ("susceptible", "infected", "recovered", "deaths", "vaccinated", "unemployed")


def _sizes(kind: str, num_agents: int) -> tuple[int, int]:
    return {
        "own": (1, num_agents),
        "own6": (6, 6 * num_agents),
        "shared": (1, 1),
        "onehot": (num_agents, 0),
    }[kind]


@dataclass(frozen=True)
class ObservationLayout:
    """Offsets of each observation field in the flat agent ("a") and planner ("p") vectors."""

    num_agents: int
    keys: tuple[str, ...]

    @classmethod
    def for_keys(cls, keys, num_agents: int = 51) -> ObservationLayout:
        unknown = sorted(set(keys) - set(FIELD_KINDS))
        if unknown:
            raise KeyError(f"no flat layout for observation keys {unknown}")
        return cls(num_agents, tuple(sorted(set(keys))))

    def offsets(self, tag: str) -> dict[str, tuple[int, int]]:
        """``{key: (offset, size)}`` for policy ``tag`` ("a" or "p"); absent keys are left out."""
        out, offset = {}, 0
        for key in self.keys:
            size = _sizes(FIELD_KINDS[key], self.num_agents)[0 if tag == "a" else 1]
            if size:
                out[key] = (offset, size)
                offset += size
        return out

    def obs_dim(self, tag: str) -> int:
        return sum(size for _, size in self.offsets(tag).values())

    def flatten(
        self, fields: dict[str, np.ndarray], tag: str, out: np.ndarray | None = None
    ) -> np.ndarray:
        """Pack per-key field values (see :func:`observation_fields`) into flat vectors.

        Returns (E, A, obs_dim_a) for "a" and (E, 1, obs_dim_p) for "p".
        """
        a = self.num_agents
        first = next(iter(fields.values()))
        e = first.shape[0]
        rows = a if tag == "a" else 1
        if out is None:
            out = np.empty((e, rows, self.obs_dim(tag)), dtype=np.float32)
        for key, (offset, size) in self.offsets(tag).items():
            kind, value = FIELD_KINDS[key], fields[key]
            target = out[:, :, offset : offset + size]
            if kind == "shared":
                target[...] = value.reshape(e, 1, 1)
            elif kind == "onehot":
                target[...] = np.eye(a, dtype=np.float32)
            elif tag == "a":
                target[...] = value.reshape(e, a, size)
            else:  # planner sees every state: own (E, A) -> A values, own6 (E, A, 6) -> (6, A)
                v = value if kind == "own" else np.swapaxes(value, 1, 2)
                target[...] = v.reshape(e, 1, size)
        return out

    def unflatten(self, flat: np.ndarray, tag: str) -> dict[str, np.ndarray]:
        """Inverse of :meth:`flatten` for one env: ``flat`` (rows, obs_dim) -> collated dict.

        Shapes follow the original collated observations: for "a" the agent axis is last
        (e.g. ``world-agent_state`` (6, A)); for "p" per-state fields are (A,) or (6, A).
        """
        a, out = self.num_agents, {}
        for key, (offset, size) in self.offsets(tag).items():
            block = flat[:, offset : offset + size]
            if tag == "a":
                out[key] = block.T if size > 1 else block[:, 0]
            else:
                v = block[0]
                out[key] = (
                    v.reshape(6, a) if FIELD_KINDS[key] == "own6" else (v if size > 1 else v[:1])
                )
        return out


def scenario_observation_fields(sim) -> dict[str, np.ndarray]:
    """``world-*`` and ``time`` fields of a :class:`CovidSimulation` (per-agent values last)."""
    p, t = sim.params, sim.timestep
    state = (
        np.stack(
            [
                sim.susceptible,
                sim.infected,
                sim.recovered,
                sim.deaths,
                sim.vaccinated,
                sim.unemployed,
            ],
            axis=-1,
        )
        / p.population[:, None]
    )
    lagged = sim.history_row(t - p.beta_delay + 1)
    return {
        "world-agent_state": state,  # (E, A, 6)
        "world-agent_postsubsidy_productivity": sim.postsubsidy_productivity
        / p.maximum_productivity,
        "world-lagged_stringency_level": lagged / p.num_stringency_levels,
        "world-agent_index": np.empty(0),
        "time": t / p.episode_length,
    }


def one_env_scenario_fields(sim) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ``world-*`` fields of a one-env simulation in the collated Foundation layout:
    ``agent_state`` (6, A) rows [S, I, R, D, V, U] / population, ``postsubsidy_productivity``
    (A,) and ``lagged_stringency_level`` (A,) (the values of :func:`scenario_observation_fields`).
    """
    p = sim.params
    divisors = _one_env_divisors(sim)
    state = np.concatenate(_AGENT_STATE(sim), axis=0) / divisors[0]
    t = int(sim.timestep[0])
    lagged = sim.history[0, (t - p.beta_delay + 1) % p.history_len]
    return (
        state,
        sim.postsubsidy_productivity[0] / divisors[1],
        lagged.astype(np.float64) / divisors[2],  # int / int divides as float64 too
    )


_AGENT_STATE = operator.attrgetter(*AGENT_STATE_KEYS)


def _one_env_divisors(sim) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(population (6, A), maximum productivity (A,), number of levels (0-d float64)) of
    ``sim.params``, shaped so that no division broadcasts (cached on ``sim``)."""
    p = sim.params
    cached = getattr(sim, "_observation_divisors", None)
    if cached is None or cached[0] is not p:
        population = np.broadcast_to(p.population, (len(AGENT_STATE_KEYS), p.num_agents))
        divisors = (
            population.copy(),
            np.asarray(p.maximum_productivity),
            np.array(p.num_stringency_levels, dtype=np.float64),
        )
        cached = sim._observation_divisors = (p, divisors)
    return cached[1]


def open_close_observation_fields(sim) -> dict[str, np.ndarray]:
    return {
        "ControlUSStateOpenCloseStatus-agent_policy_indicators": sim.stringency_level
        / sim.params.num_stringency_levels
    }


def t_until_next_subsidy(timestep, subsidy_interval: int):
    """Fraction of the subsidy interval left (an int step gives a float)."""
    return (subsidy_interval - timestep % subsidy_interval) / subsidy_interval


def current_subsidy_level(subsidy_level, num_subsidy_levels: int):
    """The planner's subsidy level as a fraction of the number of levels."""
    return subsidy_level / num_subsidy_levels


def subsidy_observation_fields(
    sim, subsidy_interval: int, num_subsidy_levels: int
) -> dict[str, np.ndarray]:
    return {
        "FederalGovernmentSubsidy-t_until_next_subsidy": t_until_next_subsidy(
            sim.timestep, subsidy_interval
        ),
        "FederalGovernmentSubsidy-current_subsidy_level": current_subsidy_level(
            np.asarray(sim.subsidy_level), num_subsidy_levels
        ),
    }


def vaccination_observation_fields(
    sim,
    first_delivery_step: int,
    delivery_interval: int,
    daily_vaccines_per_million_people: float,
    observe_rate: bool,
) -> dict[str, np.ndarray]:
    t = sim.timestep
    fields = {
        "VaccinationCampaign-t_until_next_vaccines": dynamics.time_until_next_vaccines(
            t, first_delivery_step, delivery_interval
        )
    }
    if observe_rate:
        fields["VaccinationCampaign-next_vaccination_rate"] = np.where(
            t >= first_delivery_step, daily_vaccines_per_million_people / 1e6, 0.0
        )
    return fields
