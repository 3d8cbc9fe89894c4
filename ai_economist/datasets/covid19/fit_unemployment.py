"""The unemployment model, fitted with PyTorch (the original notebook's section 2).

Each state's daily stringency changes (the policy pre-padded with ones, so day 0's change is
``policy_0 - 1``) drive five exponentially decaying responses shared by all states,

    r_i,k(t) = sum_{tau = t-L+1..t} dpolicy_i(tau) * exp(-(t - tau) / lambda_k),

weighted per state (the grouped 1x1 convolution, ``GROUPED_CONVOLUTIONAL_FILTER_WEIGHTS``):

    U_i(t) = softplus(sum_k w_i,k r_i,k(t)) + bias_i        (rate in %).

The loss is the MSE on the training days plus ``similarity`` times the mean squared deviation
of each state's weights from the cross-state mean; Adam, ``lr`` 0.01, 350 steps. The lambdas
start at logspace(30, 540, 5), the biases at 3.5, the weights uniform in [-1, 1] (PyTorch's
default for a 1x1 convolution with one input channel) from a seeded generator. The
convolution is computed with FFTs in float64, which gives the original's cropped ``conv1d``
output up to rounding (about 1e-13) at a fraction of its cost on a CPU.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ai_economist.datasets.covid19.fit_data import FitError

SOFTPLUS_THRESHOLD = 20.0


def initial_lambdas(num_filters: int = 5, low: float = 30.0, high: float = 540.0) -> np.ndarray:
    """The original's starting time constants: logspace(log10(low), log10(high), K)."""
    return np.logspace(np.log10(low), np.log10(high), num_filters)


def policy_changes(policy: np.ndarray) -> np.ndarray:
    """(states, days) daily stringency changes of a (days, states) policy padded with ones."""
    padded = np.vstack([np.ones((1, policy.shape[1])), np.asarray(policy, dtype=np.float64)])
    return np.diff(padded, axis=0).T


def predict_unemployment(
    policy: np.ndarray,
    weights: np.ndarray,
    lambdas: np.ndarray,
    bias: np.ndarray,
    filter_len: int,
) -> np.ndarray:
    """(days, states) unemployment rates (%) of the model on ``policy`` rows 0..days-1 (numpy)."""
    changes = policy_changes(policy)  # (A, T)
    days = changes.shape[1]
    age = np.arange(days)[:, None] - np.arange(days)[None, :]  # t - tau
    inside = (age >= 0) & (age < filter_len)
    decay = np.where(inside[None], np.exp(-np.maximum(age, 0)[None] / lambdas[:, None, None]), 0)
    response = np.einsum("ktu,iu->ikt", decay, changes)  # (A, K, T)
    signal = np.einsum("ik,ikt->it", np.asarray(weights).reshape(len(bias), -1), response)
    excess = np.where(
        signal > SOFTPLUS_THRESHOLD,
        signal,
        np.log1p(np.exp(np.minimum(signal, SOFTPLUS_THRESHOLD))),
    )
    return (excess + np.asarray(bias)[:, None]).T


@dataclass
class UnemploymentFit:
    """Fitted unemployment parameters (numpy), the errors and the loss history."""

    lambdas: np.ndarray  # (K,)
    bias: np.ndarray  # (A,)
    weights: np.ndarray  # (A, K)
    filter_len: int
    errors: dict[str, float]
    loss_history: list[float] = field(default_factory=list)


def _device(name: str):
    import torch

    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise FitError(f"device={name!r} was asked for, but PyTorch sees no CUDA GPU")
    return torch.device(name)


def _masked_mse(torch, prediction, target, mask):
    count = mask.sum()
    return torch.where(mask, (prediction - target) ** 2, 0.0).sum() / count.clamp(min=1)


class _Model:
    """The unemployment model's parameters and forward pass (torch)."""

    def __init__(self, torch, changes, num_filters, filter_len, seed, device, dtype):
        generator = torch.Generator().manual_seed(int(seed))
        num_states, days = changes.shape
        weights = torch.rand((num_states, num_filters), generator=generator, dtype=dtype) * 2 - 1
        self.weights = weights.to(device).requires_grad_()
        self.lambdas = torch.tensor(initial_lambdas(num_filters), dtype=dtype, device=device)
        self.lambdas.requires_grad_()
        self.bias = torch.full((num_states,), 3.5, dtype=dtype, device=device, requires_grad=True)
        self.ages = torch.arange(min(days, filter_len), dtype=dtype, device=device)
        self.days, self.fft_len = days, 2 * days
        changes = torch.as_tensor(changes, dtype=dtype, device=device)
        self.changes_fft = torch.fft.rfft(changes, n=self.fft_len)  # (A, F)
        self.torch = torch

    def parameters(self) -> list:
        return [self.weights, self.lambdas, self.bias]

    def forward(self):
        torch = self.torch
        filters = torch.exp(-self.ages[None] / self.lambdas[:, None])  # (K, ages)
        filters_fft = torch.fft.rfft(filters, n=self.fft_len)
        # sum_k w_ik (changes_i * filter_k) = changes_i * (sum_k w_ik filter_k): one inverse
        # transform per state
        mixed = self.weights.to(filters_fft.dtype) @ filters_fft  # (A, F)
        signal = torch.fft.irfft(self.changes_fft * mixed, n=self.fft_len)[:, : self.days]
        excess = torch.nn.functional.softplus(signal, beta=1.0, threshold=SOFTPLUS_THRESHOLD)
        return excess + self.bias[:, None]  # (A, T)

    def similarity_loss(self):
        deviation = self.weights - self.weights.mean(0, keepdim=True)
        return (deviation**2).mean()


def fit_unemployment(
    policy: np.ndarray,
    unemployment: np.ndarray,
    train_end: int,
    val_end: int,
    *,
    filter_len: int = 600,
    num_filters: int = 5,
    similarity: float = 0.5,
    lr: float = 0.01,
    steps: int = 350,
    seed: int = 0,
    device: str = "cpu",
) -> UnemploymentFit:
    """Fit the model on rows 0..train_end; report the error on rows train_end+1..val_end.

    ``policy`` and ``unemployment`` are (days, states) series; NaN rates are left out of the
    errors. Raises :class:`FitError` when the loss becomes NaN/infinite or does not decrease.
    """
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is in the [train] extra
        raise FitError("the unemployment fit needs PyTorch: pip install -e '.[train]'") from None
    dtype = torch.float64
    dev = _device(device)
    rows = val_end + 1
    target = torch.as_tensor(np.asarray(unemployment[:rows], dtype=np.float64).T, device=dev)
    mask = torch.isfinite(target)
    target = torch.nan_to_num(target)
    train = torch.zeros_like(mask)
    train[:, : train_end + 1] = True
    train_mask, val_mask = mask & train, mask & ~train
    model = _Model(torch, policy_changes(policy[:rows]), num_filters, filter_len, seed, dev, dtype)
    optimizer = torch.optim.Adam(model.parameters(), lr=float(lr))
    history = []
    for _ in range(int(steps)):
        optimizer.zero_grad()
        loss = _masked_mse(torch, model.forward(), target, train_mask)
        history.append(float(loss.detach()))
        if similarity:
            loss = loss + similarity * model.similarity_loss()
        if not torch.isfinite(loss):
            raise FitError(
                f"the unemployment fit did not converge: the loss became {float(loss)} after "
                f"{len(history)} steps (lr={lr}); try a smaller lr"
            )
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        prediction = model.forward()
        errors = {
            "train_mse": float(_masked_mse(torch, prediction, target, train_mask)),
            "val_mse": float(_masked_mse(torch, prediction, target, val_mask))
            if bool(val_mask.any())
            else float("nan"),
        }
    if not np.isfinite(errors["train_mse"]) or (history and errors["train_mse"] >= history[0]):
        raise FitError(
            f"the unemployment fit did not converge: the training MSE went from "
            f"{history[0] if history else float('nan'):.4g} to {errors['train_mse']:.4g} in "
            f"{steps} steps (lr={lr}); try more steps or another lr"
        )
    return UnemploymentFit(
        lambdas=model.lambdas.detach().cpu().numpy(),
        bias=model.bias.detach().cpu().numpy(),
        weights=model.weights.detach().cpu().numpy(),
        filter_len=int(filter_len),
        errors=errors,
        loss_history=history,
    )


def unemployment_errors(
    policy: np.ndarray,
    unemployment: np.ndarray,
    train_end: int,
    val_end: int,
    weights: np.ndarray,
    lambdas: np.ndarray,
    bias: np.ndarray,
    filter_len: int,
) -> dict[str, float]:
    """Train/validation MSE of given parameters (e.g. the original's) on the same days."""
    prediction = predict_unemployment(policy[: val_end + 1], weights, lambdas, bias, filter_len)
    residual = (prediction - unemployment[: val_end + 1]) ** 2
    train, val = residual[: train_end + 1], residual[train_end + 1 :]
    return {
        "train_mse": float(np.nanmean(train)),
        "val_mse": float(np.nanmean(val)) if np.isfinite(val).any() else float("nan"),
    }
