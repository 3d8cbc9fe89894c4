"""Where the chunks of a sweep run: this process, ``workers`` local processes, or a Ray cluster.

Every executor yields ``(row numbers, outcomes)`` per chunk as chunks finish; the caller puts
the rows in place, so the order in which chunks finish never changes the table.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any

from ai_economist.simulate.errors import RayConnectionError, SimulateError
from ai_economist.simulate.runner import run_chunk

Result = tuple  # (row numbers (E,), {outcome: (E,) values})


def run_chunks(
    chunks: Sequence[Any],
    workers: int = 1,
    ray_address: str | None = None,
    runner: Callable[[Any], Result] = run_chunk,
) -> Iterator[Result]:
    """Run ``chunks`` on Ray when ``ray_address`` is given, else on ``workers`` local processes
    (1: in this process). ``runner`` (a module-level function, so that it pickles) computes
    one chunk; the default runs COVID-19 chunks."""
    if ray_address:
        yield from _on_ray(chunks, ray_address, runner)
        return
    check_workers(workers)
    if workers == 1 or len(chunks) == 1:
        for chunk in chunks:
            yield runner(chunk)
        return
    with ProcessPoolExecutor(max_workers=min(workers, len(chunks))) as pool:
        futures = [pool.submit(runner, chunk) for chunk in chunks]
        for future in as_completed(futures):
            yield future.result()


def check_workers(workers: object) -> int:
    """``workers`` when it is an integer >= 1, else :class:`SimulateError`."""
    if not isinstance(workers, int) or isinstance(workers, bool) or workers < 1:
        raise SimulateError(f"workers={workers!r}: expected an integer >= 1 (local processes)")
    return workers


def check_ray_address(address: str, timeout: float = 3.0) -> None:
    """Raise :class:`RayConnectionError` unless ``HOST:PORT`` (or ``ray://HOST:PORT``) accepts a
    TCP connection within ``timeout`` seconds; ``local`` and ``auto`` are left to Ray."""
    if address in ("local", "auto"):
        return
    target = address.removeprefix("ray://")
    host, sep, port = target.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise RayConnectionError(
            f"--ray_address {address!r} is not HOST:PORT, ray://HOST:PORT, 'auto' or 'local'"
        )
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as exc:
        raise RayConnectionError(
            f"cannot reach the Ray cluster at --ray_address {address!r} ({exc}); start one with "
            "`ray start --head` and pass the address it prints, or run without --ray_address"
        ) from None


def _import_ray():
    try:
        import ray
    except ImportError:
        raise RayConnectionError(
            "--ray_address needs Ray, which is not installed: pip install 'ray[default]'"
        ) from None
    return ray


def _on_ray(
    chunks: Sequence[Any], address: str, runner: Callable[[Any], Result] = run_chunk
) -> Iterator[Result]:
    check_ray_address(address)  # first: an unreachable address is named with or without Ray
    ray = _import_ray()
    started = not ray.is_initialized()
    if started:
        try:
            ray.init(address=address, include_dashboard=False, log_to_driver=False)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise RayConnectionError(f"Ray could not connect to {address!r}: {exc}") from None
    try:
        remote = ray.remote(runner)
        pending = [remote.remote(chunk) for chunk in chunks]
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            yield ray.get(done[0])
    finally:
        if started:
            ray.shutdown()


def progress_bar(total: int, enabled: bool) -> Callable[[int], None]:
    """``advance(n)``: a tqdm bar on stderr when ``enabled`` and tqdm is installed, else a
    no-op; call ``advance(0)`` at the end to close it."""
    if not enabled:
        return lambda n: None
    try:
        from tqdm import tqdm
    except ImportError:
        return lambda n: None
    bar = tqdm(total=total, unit="run", desc="simulating", smoothing=0.1)

    def advance(n: int) -> None:
        bar.update(n)
        if bar.n >= total:
            bar.close()

    return advance
