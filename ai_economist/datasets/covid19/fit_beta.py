"""The SIR transmission model: beta_i,t = slope_i * policy_i,t-delay + intercept_i.

Two fits, as in the original ``fit_model_parameters.ipynb`` (section 1):

* :func:`fit_beta_delay`: the delay (days) at which the pooled correlation between the
  stringency level and the inferred beta is most negative, over delays -90..89;
* :func:`fit_beta_regression`: per-state slopes (<= 0) and intercepts (>= 0) minimising the
  squared error plus a penalty on their spread across states,
  ``SSE + lam * (mean(x) * sum((slope - mean slope)^2) + sum((intercept - mean intercept)^2))``.

The regression is a convex quadratic program with box bounds, solved exactly here
(:func:`solve_box_qp`); the original used ``scipy.optimize.minimize`` with numerical gradients,
which stopped at its evaluation limit within 0.7% of this optimum.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ai_economist.datasets.covid19.fit_data import FitError

DELAYS = tuple(range(-90, 90))


def pooled_correlation(x: np.ndarray, y: np.ndarray) -> float:
    """Pearson r of the pairs where both ``x`` and ``y`` are finite (NaN with < 3 pairs)."""
    x, y = np.ravel(x), np.ravel(y)
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    if x.size < 3:
        return float("nan")
    dx, dy = x - x.mean(), y - y.mean()
    denominator = np.sqrt((dx * dx).sum() * (dy * dy).sum())
    return float((dx * dy).sum() / denominator) if denominator > 0 else float("nan")


def shifted_pairs(policy: np.ndarray, beta: np.ndarray, delay: int) -> tuple:
    """(policy_t, beta_t+delay) over the rows both exist (both arrays: (days, states))."""
    if delay > 0:
        return policy[:-delay], beta[delay:]
    if delay < 0:
        return policy[-delay:], beta[:delay]
    return policy, beta


def fit_beta_delay(
    policy: np.ndarray, beta: np.ndarray, delays: tuple[int, ...] = DELAYS
) -> tuple[int, np.ndarray]:
    """The delay with the most negative pooled correlation, and every delay's r.

    ``policy`` and ``beta`` hold the rows of the search window (from the first day to the
    last validation day). Raises :class:`FitError` when the window is not longer than the
    largest delay searched, or when the best delay is not positive (the original asserts it).
    """
    longest = max(abs(d) for d in delays)
    if len(policy) <= longest:
        raise FitError(
            f"the beta-delay search over delays {min(delays)}..{max(delays)} needs more than "
            f"{longest} days of data up to the last validation date, got {len(policy)}"
        )
    r = np.array([pooled_correlation(*shifted_pairs(policy, beta, d)) for d in delays])
    if not np.isfinite(r).any():
        raise FitError("the beta-delay search found no day with both a policy and a beta value")
    best = int(delays[int(np.nanargmin(r))])
    if best <= 0:
        raise FitError(
            f"the most negative policy-beta correlation is at delay {best} (r={np.nanmin(r):.3f}); "
            "expected a positive delay (policy acting on later transmission)"
        )
    return best, r


def solve_box_qp(
    hessian: np.ndarray,
    linear: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    max_iter: int = 1000,
    tol: float = 1e-12,
) -> np.ndarray:
    """argmin 0.5 z'Hz + g'z subject to lower <= z <= upper (H positive definite).

    A primal active-set method started from the feasible point nearest 0: exact up to the
    linear solves.
    """
    n = len(linear)
    z = np.clip(np.zeros(n), lower, upper)
    bound = (z == lower) | (z == upper)  # the working set: variables held at a bound
    bound &= np.isfinite(np.where(z == lower, lower, upper))
    for _ in range(max_iter):
        free = ~bound
        target = z.copy()
        if free.any():
            rhs = -(linear[free] + hessian[np.ix_(free, bound)] @ z[bound])
            target[free] = np.linalg.solve(hessian[np.ix_(free, free)], rhs)
        step = target - z
        with np.errstate(divide="ignore", invalid="ignore"):
            to_upper = np.where(step > 0, (upper - z) / step, np.inf)
            to_lower = np.where(step < 0, (lower - z) / step, np.inf)
        limits = np.minimum(to_upper, to_lower)
        blocking = int(np.argmin(limits))
        if limits[blocking] < 1.0:  # a bound stops the step: hold that variable there
            z = z + limits[blocking] * step
            z[blocking] = upper[blocking] if step[blocking] > 0 else lower[blocking]
            bound[blocking] = True
            continue
        z = target
        gradient = hessian @ z + linear
        # multipliers of the held variables: >= 0 when the bound really binds
        multiplier = np.where(z <= lower, gradient, -gradient)
        multiplier[~bound] = np.inf
        worst = int(np.argmin(multiplier))
        if multiplier[worst] >= -tol * max(1.0, np.abs(gradient).max()):
            return z
        bound[worst] = False
    raise FitError(f"the bounded beta regression did not converge in {max_iter} iterations")


@dataclass
class BetaFit:
    """Per-state beta slopes and intercepts, with the train/validation errors."""

    slopes: np.ndarray
    intercepts: np.ndarray
    errors: dict[str, float]


def _regression_problem(x: np.ndarray, y: np.ndarray, lam: float) -> tuple:
    """Hessian and linear term of the regularised least squares (x, y: (states, days))."""
    n = x.shape[0]
    seen = np.isfinite(y)
    xs, ys = np.where(seen, x, 0.0), np.where(seen, y, 0.0)
    sxx, sx, sn = (xs * xs).sum(1), xs.sum(1), seen.sum(1).astype(np.float64)
    centre = np.eye(n) - np.full((n, n), 1.0 / n)
    hessian = np.zeros((2 * n, 2 * n))
    hessian[:n, :n] = np.diag(sxx) + lam * np.nanmean(x) * centre
    hessian[:n, n:] = hessian[n:, :n] = np.diag(sx)
    hessian[n:, n:] = np.diag(sn) + lam * centre
    linear = -np.concatenate([(xs * ys).sum(1), ys.sum(1)])
    return 2.0 * hessian, 2.0 * linear


def regression_errors(x: np.ndarray, y: np.ndarray, slopes, intercepts) -> dict[str, float]:
    """MSE and r^2 (1 - var(residual)/var(y), as the original prints) over the finite y."""
    residual = y - (x * slopes[:, None] + intercepts[:, None])
    if not np.isfinite(residual).any():
        return {"mse": float("nan"), "r2": float("nan")}
    return {
        "mse": float(np.nanmean(residual**2)),
        "r2": float(1.0 - np.nanvar(residual) / np.nanvar(y)),
    }


def fit_beta_regression(
    policy: np.ndarray,
    beta: np.ndarray,
    delay: int,
    train_end: int,
    val_end: int,
    lam: float = 1.0,
) -> BetaFit:
    """Fit slopes/intercepts on policy rows 0..train_end against beta ``delay`` days later.

    ``policy`` and ``beta`` are whole (days, states) series; beta rows past the data are
    treated as missing. The validation error uses policy rows train_end+1..val_end.
    """
    days = len(beta)
    padded = np.vstack([beta, np.full((max(0, val_end + delay + 1 - days), beta.shape[1]), np.nan)])
    x_train = policy[: train_end + 1].T.astype(np.float64)
    y_train = padded[delay : train_end + 1 + delay].T
    x_val = policy[train_end + 1 : val_end + 1].T.astype(np.float64)
    y_val = padded[train_end + 1 + delay : val_end + 1 + delay].T
    n = x_train.shape[0]
    empty = np.flatnonzero(~np.isfinite(y_train).any(axis=1))
    if empty.size:
        raise FitError(
            f"series 'beta' has no value {delay} days after the training days for state "
            f"index(es) {empty.tolist()}; the beta regression needs at least one per state"
        )
    hessian, linear = _regression_problem(x_train, y_train, lam)
    lower = np.concatenate([np.full(n, -np.inf), np.zeros(n)])
    upper = np.concatenate([np.zeros(n), np.full(n, np.inf)])
    z = solve_box_qp(hessian, linear, lower, upper)
    slopes, intercepts = z[:n], z[n:]
    errors = {
        f"train_{k}": v for k, v in regression_errors(x_train, y_train, slopes, intercepts).items()
    }
    errors.update(
        {f"val_{k}": v for k, v in regression_errors(x_val, y_val, slopes, intercepts).items()}
    )
    return BetaFit(slopes, intercepts, errors)
