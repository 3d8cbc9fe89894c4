// The bracket tax's per-income device functions: mirror components/tax_brackets.py (shared by
// the one-step economy's step and gather-trade-build's tax). Needs N_BRACKETS.
#pragma once

// tax_brackets.bracket_index: searchsorted(cutoffs, income, "right") - 1, at least 0.
__device__ int bracket_index(double income, const double* cutoffs) {
  int count = 0;
  for (int b = 0; b < N_BRACKETS; b++) count += cutoffs[b] <= income ? 1 : 0;
  return count > 0 ? count - 1 : 0;
}

// tax_brackets.taxes_due: sum_b rate_b * min(size_b, max(0, income - cutoff_b)).
__device__ double taxes_due(double income, const double* cutoffs, const double* rates) {
  double total = 0.0;
  for (int b = 0; b < N_BRACKETS; b++) {
    const double past = fmax(0.0, income - cutoffs[b]);
    const double in_bracket = b + 1 < N_BRACKETS ? fmin(cutoffs[b + 1] - cutoffs[b], past) : past;
    total += __dmul_rn(rates[b], in_bracket);  // unfused: rounds as numpy does
  }
  return total;
}

// tax_brackets.NEGATIVE_INCOME_ATOL: a rounding residue below 0 is no negative income.
#define TAX_NEGATIVE_INCOME_ATOL 1e-9

// tax_brackets.period_income: coin endowment minus last_coin, a rounding residue as 0.
__device__ double period_income(double coin_endowment, double last_coin) {
  const double income = coin_endowment - last_coin;
  return fabs(income) < TAX_NEGATIVE_INCOME_ATOL ? 0.0 : income;
}

// tax_brackets.marginal_rate: the rate of the income's bracket, 0 for negative incomes.
__device__ double marginal_rate(double income, const double* cutoffs, const double* rates) {
  return income < -TAX_NEGATIVE_INCOME_ATOL ? 0.0 : rates[bracket_index(income, cutoffs)];
}
