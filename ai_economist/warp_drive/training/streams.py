"""CUDA streams per policy, so that the policies' small kernels run side by side."""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext

import torch


class PolicyStreams:
    """CUDA streams per policy, so that independent per-policy work runs concurrently.

    ``on(tag)`` makes the policy's stream current after it has waited for the current
    stream's work so far (``on(tag, side=True)``: a second stream of the policy's, for copies
    beside its main work); ``join()`` makes that current stream wait for every policy stream.
    With one policy, or off a GPU, ``on`` changes nothing.  Works inside CUDA graph capture
    (the streams fork from and join the capturing stream).
    """

    def __init__(self, device: torch.device, tags: list[str], enabled: bool = True) -> None:
        self.enabled = enabled and device.type == "cuda" and len(tags) > 1
        self.device = device
        self._streams: dict[tuple[str, bool], torch.cuda.Stream] = {}
        if self.enabled:
            for tag in tags:
                for side in (False, True):
                    self._streams[tag, side] = torch.cuda.Stream(device)
        self._origin: torch.cuda.Stream | None = None
        self._used: set[tuple[str, bool]] = set()

    def on(self, tag: str, side: bool = False) -> AbstractContextManager:
        """The policy's stream (``side``: its side stream) as the current stream for the
        enclosed block; with ``side`` False and streams disabled, nothing changes."""
        if not self.enabled:
            return nullcontext()
        origin = self._origin
        if origin is None:
            origin = self._origin = torch.cuda.current_stream(self.device)
        stream = self._streams[tag, side]
        if (tag, side) not in self._used:  # fork once from the origin per join
            stream.wait_stream(origin)
            self._used.add((tag, side))
        return torch.cuda.stream(stream)

    def join(self) -> None:
        """The stream that was current at the first ``on`` waits for the streams used since."""
        if self._origin is None:
            return
        for key in self._used:
            self._origin.wait_stream(self._streams[key])
        self._origin = None
        self._used.clear()
