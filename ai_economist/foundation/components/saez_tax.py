"""The Saez tax model of ``PeriodicBracketTax``: its sample buffer and formula methods.

A mixin, so the component keeps 1.7.1's method names (``get_saez_marginal_rates``,
``bracketize_schedule``, ``estimate_uniform_income_elasticity``, ``set_global_saez_buffer``,
``compute_and_set_new_period_rates_from_saez_formula``, ...); the arithmetic is in :mod:`saez`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ai_economist.foundation.components import saez

SAEZ_BUFFER_SIZE = 500
SAEZ_N_ESTIMATION_BINS = 100


class SaezTaxMixin:
    """Saez-model state and methods; needs the bracket attributes of ``PeriodicBracketTax``."""

    bracket_cutoffs: np.ndarray
    bracket_sizes: np.ndarray
    n_brackets: int
    rate_min: float
    pareto_weight_type: str
    _saez_fixed_elas: float | None

    def _init_saez(self) -> None:
        self.elas_tm1 = self.elas_t = 0.5
        self.log_z0_tm1 = self.log_z0_t = 0.0
        self._buffer_size = SAEZ_BUFFER_SIZE
        self.reset_saez_buffers()
        self._saez_n_estimation_bins = SAEZ_N_ESTIMATION_BINS
        self._saez_top_rate_cutoff = self.bracket_cutoffs[-1]
        self._saez_income_bin_edges = np.linspace(
            0, self._saez_top_rate_cutoff, self._saez_n_estimation_bins + 1
        )
        self._saez_income_bin_sizes = np.concatenate(
            [np.diff(self._saez_income_bin_edges), [np.inf]]
        )

    # ----------------------------------------------------------------- Saez
    def compute_and_set_new_period_rates_from_saez_formula(
        self, update_elas_tm1: bool = True, update_log_z0_tm1: bool = True
    ) -> None:
        """Set this period's rates from the Saez formula over the income buffer.

        Until the buffer holds ``500`` samples the rates are drawn uniformly from
        ``[rate_min, curr_rate_max]`` with the env's generator.
        """
        if not self._reached_min_samples and len(self.saez_buffer) >= self._buffer_size:
            self._reached_min_samples = True
        if not self._reached_min_samples:
            self.curr_bracket_tax_rates = self.world.rng.uniform(
                self.rate_min, self.curr_rate_max, size=self.n_brackets
            )
            return
        samples = np.array(self.saez_buffer, dtype=np.float64)
        if update_elas_tm1:
            self.elas_tm1 = float(self.elas_t)
        if update_log_z0_tm1:
            self.log_z0_tm1 = float(self.log_z0_t)
        elas_t, log_z0_t = self.estimate_uniform_income_elasticity(
            samples, elas_df=0.98, elas_tm1=self.elas_tm1, log_z0_tm1=self.log_z0_tm1
        )
        if update_elas_tm1:
            self.elas_t = float(elas_t)
        if update_log_z0_tm1:
            self.log_z0_t = float(log_z0_t)
        if self._saez_fixed_elas is not None:
            elas_t = self._saez_fixed_elas
        gzs, azs = self.get_binned_saez_welfare_weight_and_pareto_params(samples[:, 0])
        bin_rates = self.get_saez_marginal_rates(gzs, azs, elas_t)
        bracket_rates = self.bracketize_schedule(
            bin_rates, self._saez_income_bin_edges, self._saez_income_bin_sizes
        )
        self.curr_bracket_tax_rates = np.clip(bracket_rates, self.rate_min, self.curr_rate_max)
        self.running_avg_tax_rates = (
            0.99 * self.running_avg_tax_rates + 0.01 * self.curr_bracket_tax_rates
        )

    @property
    def saez_buffer(self) -> list[list[float]]:
        """``[income, marginal rate]`` samples: the global buffer plus this episode's own."""
        if not self._global_saez_buffer:
            return self._local_saez_buffer
        if self._additions_this_episode == 0:
            return self._global_saez_buffer
        return self._global_saez_buffer + self._local_saez_buffer[-self._additions_this_episode :]

    def get_local_saez_buffer(self) -> list[list[float]]:
        """This env's own samples (to merge across workers)."""
        return self._local_saez_buffer

    def set_global_saez_buffer(self, global_saez_buffer: list[list[float]]) -> None:
        """Install samples merged across workers (at least as many as the local buffer)."""
        if not isinstance(global_saez_buffer, list):
            raise TypeError(
                f"global_saez_buffer must be a list, got {type(global_saez_buffer).__name__}"
            )
        if len(global_saez_buffer) < len(self._local_saez_buffer):
            raise ValueError(
                f"global_saez_buffer holds {len(global_saez_buffer)} samples, fewer than the "
                f"local buffer's {len(self._local_saez_buffer)}"
            )
        self._global_saez_buffer = global_saez_buffer
        self._additions_this_episode = 0

    def _update_saez_buffer(self, incomes: np.ndarray, rates: np.ndarray) -> None:
        self._local_saez_buffer.extend([float(z), float(t)] for z, t in zip(incomes, rates))
        self._additions_this_episode = min(
            self._additions_this_episode + len(incomes), self._buffer_size
        )
        del self._local_saez_buffer[: max(0, len(self._local_saez_buffer) - self._buffer_size)]

    def reset_saez_buffers(self) -> None:
        """Forget every Saez sample (local and global)."""
        self._local_saez_buffer: list[list[float]] = []
        self._global_saez_buffer: list[list[float]] = []
        self._additions_this_episode = 0
        self._reached_min_samples = False

    def estimate_uniform_income_elasticity(
        self,
        observed_incomes_and_marginal_rates: Any,
        elas_df: float = 0.98,
        elas_tm1: float = 0.5,
        log_z0_tm1: float = 0.5,
        verbose: bool = False,
    ) -> tuple[float, float]:
        """See :func:`saez.estimate_uniform_income_elasticity` (``verbose`` is ignored)."""
        return saez.estimate_uniform_income_elasticity(
            observed_incomes_and_marginal_rates, elas_df, elas_tm1, log_z0_tm1
        )

    def get_binned_saez_welfare_weight_and_pareto_params(
        self, population_incomes: Any
    ) -> tuple[np.ndarray, np.ndarray]:
        """``(G(z), A(z))`` over the 100 income bins plus the top bin."""
        incomes = np.asarray(population_incomes, dtype=np.float64)
        edges = self._saez_income_bin_edges
        return (
            saez.binned_welfare_weights(incomes, edges, self.pareto_weight_type),
            saez.binned_pareto_params(incomes, edges),
        )

    get_saez_marginal_rates = staticmethod(saez.saez_marginal_rates)

    def bracketize_schedule(
        self, bin_marginal_rates: np.ndarray, bin_edges: np.ndarray, bin_sizes: np.ndarray
    ) -> np.ndarray:
        """Average binned marginal rates over this component's brackets."""
        return saez.bracketize_schedule(
            bin_marginal_rates, bin_edges, bin_sizes, self.bracket_cutoffs, self.bracket_sizes
        )
