"""One store of named device arrays (torch tensors) shared by the simulator kernels and the trainer.

``DataFeed`` describes host data and how it is treated; ``CUDADataManager`` pushes it to the
device once and hands out the live tensors.  Every array lives in exactly one torch tensor, so a
pycuda kernel (through ``tensor.data_ptr()``), a numba kernel (through
``numba.cuda.as_cuda_array``) and torch code all update the same memory.

Conventions (WarpDrive-compatible):

* per-env arrays have a leading dimension ``num_envs``; arrays without it are constants shared
  by every environment.  ``replicate_over_envs=True`` lets the caller give one environment's
  values and replicates them on the device.
* ``save_copy_and_apply_at_reset=True`` keeps a snapshot that ``CUDAEnvironmentReset`` copies
  back into the live array of the environments that are done; for an array pushed with
  ``replicate_over_envs=True`` the snapshot is the one row every env starts from.
* ``_done_`` and ``_timestep_`` (int32, shape ``(num_envs,)``) always exist.
* float64 / int64 host data is stored as float32 / int32 (what the kernels use) unless the
  manager is created with ``downcast_64bit=False``.
* Python scalars are kept as typed host scalars (``np.int32`` / ``np.float32``) and are passed to
  kernels by value.
"""

from __future__ import annotations

import difflib
import itertools
from collections.abc import Mapping
from typing import Any, TypeVar

import numpy as np

from ai_economist.warp_drive.errors import (
    DeviceMemoryError,
    UnknownNameError,
    require_cuda_device,
    require_torch,
)

DONE = "_done_"
TIMESTEP = "_timestep_"

SUPPORTED_DTYPES = tuple(
    np.dtype(t)
    for t in (np.float32, np.float64, np.int32, np.int64, np.int16, np.int8, np.uint8, np.bool_)
)
_DOWNCAST = {np.dtype(np.float64): np.dtype(np.float32), np.dtype(np.int64): np.dtype(np.int32)}
_V = TypeVar("_V")


def close_matches_message(name: str, known, what: str = "data") -> str:
    """``"unknown <what> 'x'; did you mean ...? Known: ..."``, for error messages."""
    known = sorted(known)
    close = difflib.get_close_matches(name, known, n=5, cutoff=0.5)
    hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    listing = ", ".join(known[:40]) + (" ..." if len(known) > 40 else "")
    return f"Unknown {what} {name!r}.{hint} Known: [{listing}]"


def lookup(mapping: Mapping[str, _V], name: str, what: str) -> _V:
    """``mapping[name]``; an :class:`UnknownNameError` (:func:`close_matches_message`) if absent."""
    try:
        return mapping[name]
    except KeyError:
        raise UnknownNameError(close_matches_message(name, mapping, what)) from None


def _fmt_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1024
    return f"{n} B"  # pragma: no cover


class DataFeed(dict):
    """Host data to push, keyed by name: ``{name: {"data": ..., "attributes": {...}}}``."""

    def add_data(
        self,
        name: str,
        data: Any,
        save_copy_and_apply_at_reset: bool = False,
        log_data_across_episode: bool = False,
        **kw: Any,
    ) -> None:
        """Add one array or scalar.

        Args:
            name: unique name; kernels and the trainer refer to the data by it.
            data: numpy array (or nested list) or a Python/numpy scalar.
            save_copy_and_apply_at_reset: keep a snapshot restored by the device reset
                (the array must then be per-env: leading dimension ``num_envs``).
            log_data_across_episode: recorded as an attribute (WarpDrive compatibility).
            **kw: extra attributes; understood ones: ``replicate_over_envs`` (bool, ``data``
                is one environment's value), ``per_env`` (bool, overrides the inference),
                ``reset_to_zero`` (bool, zeroed for done envs at reset, no snapshot needed),
                ``downcast_64bit`` (bool, overrides the manager's setting for this entry).
        """
        if not isinstance(name, str) or not name:
            raise ValueError(f"Data names must be non-empty strings, got {name!r}.")
        if name in self:
            raise ValueError(f"{name!r} was already added to this DataFeed.")
        attributes = {
            "save_copy_and_apply_at_reset": bool(save_copy_and_apply_at_reset),
            "log_data_across_episode": bool(log_data_across_episode),
            **kw,
        }
        self[name] = {"data": data, "attributes": attributes}

    def add_data_list(self, data_list) -> None:
        """Add several entries given as tuples ``(name, data[, save_copy[, log_data]])``."""
        for item in data_list:
            if not isinstance(item, (tuple, list)) or not 2 <= len(item) <= 4:
                raise ValueError(
                    "add_data_list expects tuples (name, data[, save_copy_and_apply_at_reset"
                    f"[, log_data_across_episode]]), got {item!r}."
                )
            self.add_data(*item)


class CUDADataManager:
    """Named device tensors for ``num_envs`` environments of ``num_agents`` agents.

    Args:
        num_agents: agents per environment (planner included); the kernels' block size.
        episode_length: steps per episode.
        num_envs: environments stepped together (one block each).
        device: torch device; ``"cuda"`` by default, ``"cpu"`` for the CPU backend or Numba's
            CUDA simulator.
        downcast_64bit: store float64/int64 host data as float32/int32.
    """

    def __init__(
        self,
        num_agents: int,
        episode_length: int,
        num_envs: int,
        device: Any = None,
        *,
        downcast_64bit: bool = True,
    ) -> None:
        for label, value in (
            ("num_agents", num_agents),
            ("episode_length", episode_length),
            ("num_envs", num_envs),
        ):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
                raise ValueError(f"{label} must be a positive integer, got {value!r}.")
        torch = require_torch()
        self._torch = torch
        device = torch.device("cuda" if device is None else device)
        if device.type == "cuda":
            device = require_cuda_device(device.index)
        self.device = device
        self.num_agents = int(num_agents)
        self.episode_length = int(episode_length)
        self.num_envs = int(num_envs)
        self.downcast_64bit = bool(downcast_64bit)
        self._tensors: dict[str, Any] = {}
        self._scalars: dict[str, np.generic] = {}
        self._snapshots: dict[str, Any] = {}
        self._attributes: dict[str, dict] = {}
        self._per_env: dict[str, bool] = {}
        self._meta: dict[str, Any] = {
            "n_agents": self.num_agents,
            "num_agents": self.num_agents,
            "episode_length": self.episode_length,
            "num_envs": self.num_envs,
        }
        self.version = 0  # bumped on every push; lets users cache derived argument lists
        feed = DataFeed()
        feed.add_data(DONE, np.zeros(self.num_envs, np.int32), per_env=True)
        feed.add_data(TIMESTEP, np.zeros(self.num_envs, np.int32), per_env=True)
        self.push_data_to_device(feed, torch_accessible=True)

    # ------------------------------------------------------------------ pushing
    def _prepare(self, name: str, entry: dict) -> dict:
        if not isinstance(entry, dict) or "data" not in entry:
            raise ValueError(
                f"DataFeed entry {name!r} must be a dict with 'data' and 'attributes'."
            )
        attrs = dict(entry.get("attributes", {}))
        data = entry["data"]
        replicate = bool(attrs.get("replicate_over_envs", False))
        downcast = bool(attrs.get("downcast_64bit", self.downcast_64bit))
        save_copy = bool(attrs.get("save_copy_and_apply_at_reset", False))
        if isinstance(data, (bool, int, float, np.generic)) or (
            isinstance(data, np.ndarray) and data.ndim == 0 and not replicate
        ):
            if save_copy:
                raise ValueError(
                    f"{name!r} is a scalar; save_copy_and_apply_at_reset needs an array."
                )
            value = np.asarray(data)
            if value.dtype.kind == "b":
                value = value.astype(np.int32)
            value = self._check_dtype(name, value, downcast)
            return {"scalar": value.reshape(()).dtype.type(value.reshape(())), "attrs": attrs}
        arr = self._check_dtype(name, np.asarray(data), downcast)
        shape = ((self.num_envs,) if replicate else ()) + arr.shape
        has_env_dim = len(shape) >= 1 and shape[0] == self.num_envs
        reset_to_zero = bool(attrs.get("reset_to_zero", False))
        per_env = bool(attrs.get("per_env", save_copy or replicate or reset_to_zero or has_env_dim))
        if (save_copy or reset_to_zero or per_env) and not has_env_dim:
            raise ValueError(
                f"{name!r} has shape {arr.shape} but per-env arrays need a leading dimension of "
                f"num_envs={self.num_envs}: stack the array num_envs times or add it with "
                f"replicate_over_envs=True."
            )
        nbytes = int(np.prod(shape, dtype=np.int64)) * arr.dtype.itemsize
        # a replicated array's snapshot is one row, shared by every env (see ``snapshot``)
        snapshot_nbytes = (arr.nbytes if replicate else nbytes) if save_copy else 0
        return {
            "array": arr,
            "shape": shape,
            "replicate": replicate,
            "per_env": per_env,
            "save_copy": save_copy,
            "reset_to_zero": reset_to_zero,
            "nbytes": nbytes + (0 if replicate else snapshot_nbytes),
            "const_nbytes": snapshot_nbytes if replicate else 0,
            "attrs": attrs,
        }

    def _check_dtype(self, name: str, arr: np.ndarray, downcast: bool) -> np.ndarray:
        if arr.dtype not in SUPPORTED_DTYPES:
            raise TypeError(
                f"dtype {arr.dtype} of {name!r} is not supported on the device; supported: "
                + ", ".join(str(d) for d in SUPPORTED_DTYPES)
                + ". Convert it first, e.g. np.asarray(data, dtype=np.float32)."
            )
        target = _DOWNCAST.get(arr.dtype) if downcast else None
        if target is not None:
            if target.kind == "i" and arr.size:
                info = np.iinfo(target)
                if arr.min() < info.min or arr.max() > info.max:
                    raise OverflowError(f"{name!r} has int64 values outside the int32 range.")
            arr = arr.astype(target)
        return arr

    def _available_device_memory(self) -> int | None:
        """Free bytes on the device, or ``None`` when it is not a CUDA device."""
        if self.device.type != "cuda":
            return None
        free, _total = self._torch.cuda.mem_get_info(self.device)
        return int(free)

    def _check_memory(self, prepared: dict[str, dict]) -> None:
        free = self._available_device_memory()
        if free is None:
            return
        arrays = [p for p in prepared.values() if "array" in p]
        need = sum(p["nbytes"] + p["const_nbytes"] for p in arrays)
        if need <= free:
            return
        per_env = sum(p["nbytes"] for p in arrays if p["per_env"]) / self.num_envs
        const = need - per_env * self.num_envs
        fit = int((free - const) // per_env) if per_env and free > const else 0
        raise DeviceMemoryError(
            f"Not enough free memory on {self.device} for the requested arrays: they need "
            f"{_fmt_bytes(need)} ({_fmt_bytes(per_env)} per env x {self.num_envs} envs + "
            f"{_fmt_bytes(const)} of constants, reset snapshots included) but only "
            f"{_fmt_bytes(free)} are free. At most {fit} envs would fit; lower num_envs."
        )

    def push_data_to_device(self, data_feed: dict, torch_accessible: bool = False) -> None:
        """Copy every entry of ``data_feed`` to the device (all or nothing).

        Args:
            data_feed: a ``DataFeed`` (or a dict of the same layout).
            torch_accessible: recorded only; every array is a torch tensor here.
        """
        prepared: dict[str, dict] = {}
        for name, entry in data_feed.items():
            if name in self._tensors or name in self._scalars:
                raise ValueError(
                    f"{name!r} is already on the device; pushing twice is not allowed. Write into "
                    f"data_on_device_via_torch({name!r}) (e.g. .copy_()) instead."
                )
            prepared[name] = self._prepare(name, entry)
        self._check_memory(prepared)
        torch = self._torch
        for name, p in prepared.items():
            attrs = dict(p["attrs"], torch_accessible=bool(torch_accessible))
            self._attributes[name] = attrs
            if "scalar" in p:
                self._scalars[name] = p["scalar"]
                self._per_env[name] = False
                continue
            arr = p["array"]
            arr = arr if arr.flags.c_contiguous else np.ascontiguousarray(arr)
            host = torch.from_numpy(arr if arr.flags.writeable else arr.copy())
            if p["replicate"]:
                one = host.to(self.device).unsqueeze(0)
                tensor = one.expand(p["shape"]).contiguous()
            else:
                one, tensor = None, host.to(self.device, copy=True)
            self._tensors[name] = tensor
            self._per_env[name] = p["per_env"]
            if p["save_copy"]:
                self._snapshots[name] = one.clone() if one is not None else tensor.clone()
        self.version += 1

    def add_meta_info(self, meta: dict[str, Any]) -> None:
        """Add extra meta information (host values) readable through ``meta_info``."""
        self._meta.update(meta)

    # ------------------------------------------------------------------ access
    @property
    def names(self) -> list[str]:
        """Names of every pushed array and scalar, built-ins included."""
        return list(itertools.chain(self._tensors, self._scalars))

    def __contains__(self, name: object) -> bool:
        return name in self._tensors or name in self._scalars

    def _unknown(self, name: str) -> UnknownNameError:
        return UnknownNameError(close_matches_message(name, self.names, "device data"))

    def is_data_on_device(self, name: str) -> bool:
        """True if ``name`` was pushed (arrays live on the device; scalars are host constants)."""
        return name in self

    def is_scalar(self, name: str) -> bool:
        """True if ``name`` is a scalar constant passed to kernels by value."""
        if name not in self:
            raise self._unknown(name)
        return name in self._scalars

    def is_per_env(self, name: str) -> bool:
        """True if ``name`` has a leading ``num_envs`` dimension (one slice per environment)."""
        if name not in self:
            raise self._unknown(name)
        return self._per_env[name]

    def data_on_device_via_torch(self, name: str):
        """The live torch tensor of ``name`` (no copy)."""
        try:
            return self._tensors[name]
        except KeyError:
            if name in self._scalars:
                raise TypeError(
                    f"{name!r} is a scalar constant, not a device array; read it with "
                    f"scalar_value({name!r})."
                ) from None
            raise self._unknown(name) from None

    def device_data(self, name: str):
        """A kernel argument: the live tensor of an array, or the typed scalar of a constant."""
        if name in self._scalars:
            return self._scalars[name]
        return self.data_on_device_via_torch(name)

    def scalar_value(self, name: str) -> np.generic:
        """The typed value (``np.int32`` / ``np.float32`` ...) of a scalar constant."""
        if name in self._scalars:
            return self._scalars[name]
        if name in self._tensors:
            raise TypeError(f"{name!r} is an array; use data_on_device_via_torch({name!r}).")
        raise self._unknown(name)

    def pull_data_from_device(self, name: str) -> np.ndarray:
        """A host copy of ``name`` as a numpy array."""
        if name in self._scalars:
            return np.array(self._scalars[name])
        return self.data_on_device_via_torch(name).detach().to("cpu", copy=True).numpy()

    def meta_info(self, name: str) -> Any:
        """``n_agents`` (alias ``num_agents``), ``episode_length``, ``num_envs`` or added meta info."""
        return lookup(self._meta, name, "meta info")

    def get_shape(self, name: str) -> tuple[int, ...]:
        """Shape on the device (``()`` for scalars)."""
        if name in self._scalars:
            return ()
        return tuple(self.data_on_device_via_torch(name).shape)

    def get_dtype(self, name: str) -> np.dtype:
        """numpy dtype of ``name`` as stored."""
        if name in self._scalars:
            return np.asarray(self._scalars[name]).dtype
        dtype = self.data_on_device_via_torch(name).dtype
        return self._torch.empty(0, dtype=dtype).numpy().dtype

    def get_attributes(self, name: str) -> dict[str, Any]:
        """The DataFeed attributes ``name`` was pushed with."""
        if name not in self:
            raise self._unknown(name)
        return dict(self._attributes[name])

    def reset_snapshot_names(self) -> list[str]:
        """Arrays pushed with ``save_copy_and_apply_at_reset=True``, in push order."""
        return list(self._snapshots)

    def reset_zero_names(self) -> list[str]:
        """Arrays pushed with ``reset_to_zero=True`` (zeroed for done envs at reset)."""
        return [
            n for n, a in self._attributes.items() if a.get("reset_to_zero") and n in self._tensors
        ]

    def snapshot(self, name: str):
        """The reset snapshot tensor of ``name``: shape ``(num_envs, ...)``, or ``(1, ...)``
        for an array pushed with ``replicate_over_envs=True`` (one row that every env resets
        to: half the reset's memory traffic and none of the snapshot's memory per env)."""
        return lookup(self._snapshots, name, "reset snapshot")

    def snapshot_is_shared(self, name: str) -> bool:
        """Whether ``name``'s snapshot is one row shared by every env (see ``snapshot``)."""
        return self.num_envs > 1 and int(self.snapshot(name).shape[0]) == 1

    def update_snapshot(self, names: list[str] | None = None) -> None:
        """Copy the live arrays into their snapshots (all snapshot arrays by default). A
        shared snapshot becomes a per-env one first (envs may differ by now); ``version`` is
        then bumped, as after a push, so cached reset plans are rebuilt."""
        for name in self.reset_snapshot_names() if names is None else names:
            live = self.data_on_device_via_torch(name)
            if self.snapshot_is_shared(name):
                self._snapshots[name] = live.clone()
                self.version += 1
            else:
                self.snapshot(name).copy_(live)

    def memory_bytes(self) -> int:
        """Device bytes held by live arrays and snapshots."""
        tensors = itertools.chain(self._tensors.values(), self._snapshots.values())
        return sum(t.numel() * t.element_size() for t in tensors)
