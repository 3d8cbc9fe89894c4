"""Static comparison of a GPU env's Numba step kernel and its CUDA C twin, without a GPU.

    python benchmarks/numba_ptx_report.py [--economy phase2] [--kernel gtb_economy_step]
        [--arch sm_90] [--keep DIR] [--runtime_shapes]

Numba's PTX is made through libNVVM for the exact argument types the generic backend binds
(the env's declared fields on a few envs: C-contiguous arrays, numpy scalars) of the kernel
the backend builds (the env's ``numba_factory``'s where it has one; with
``--runtime_shapes`` the Numba module's own kernel, every dimension a runtime value), the CUDA C
one by nvcc with the generated state header the pycuda build uses; ``ptxas -v`` gives each
kernel's registers, stack frame, spills and shared memory, and the step kernel's PTX body is
counted by instruction class (64-bit integer work, the selects of negative-index
wraparound, integer divisions, float64 arithmetic, local memory, calls). Static counts, not
timings: a loop counts once however often it runs.

Without a CUDA driver Numba cannot ask a device for its compute capability, and without
NVRTC it cannot list the supported architectures: both are answered here with ``--arch``
(``NUMBA_FORCE_CUDA_CC``, and device functions compiled for that capability).
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout

#: Instruction classes counted in the step kernel's PTX: (label, predicate on the opcode).
CLASSES: tuple[tuple[str, object], ...] = (
    ("instructions", lambda op: True),
    ("ld.param", lambda op: op.startswith("ld.param")),
    ("ld.global", lambda op: op.startswith("ld.global")),
    ("st.global", lambda op: op.startswith("st.global")),
    ("ld/st.shared", lambda op: op.startswith(("ld.shared", "st.shared"))),
    ("ld/st.local", lambda op: op.startswith(("ld.local", "st.local"))),
    ("64-bit int ops", lambda op: _is_int64_arith(op)),
    ("mul.lo/wide 64", lambda op: op in ("mul.lo.s64", "mul.lo.u64")),
    ("selp 64-bit", lambda op: op.startswith("selp") and op.endswith(("64",)) and "f64" not in op),
    ("int div/rem 64", lambda op: op.startswith(("div.s64", "div.u64", "rem.s64", "rem.u64"))),
    ("int div/rem 32", lambda op: op.startswith(("div.s32", "div.u32", "rem.s32", "rem.u32"))),
    ("f64 arith", lambda op: op.endswith(".f64") and op.split(".")[0] not in _MOVES),
    ("div.rn.f64", lambda op: op == "div.rn.f64"),
    ("cvt", lambda op: op.startswith("cvt.") and not op.startswith("cvta")),
    ("branches", lambda op: op.startswith("bra")),
    ("call", lambda op: op.startswith("call")),
    ("bar.sync", lambda op: op.startswith("bar")),
)
_MOVES = {"ld", "st", "mov", "cvt", "selp", "setp"}
PTXAS_KEYS = ("registers", "stack frame", "spill stores", "spill loads", "smem")


def _is_int64_arith(op: str) -> bool:
    head, *rest = op.split(".")
    if head in ("ld", "st", "mov", "cvta", "cvt", "setp", "selp") or not rest:
        return False
    return rest[-1] in ("s64", "u64", "b64")


def toolkit_root() -> str:
    """The CUDA toolkit nvcc belongs to (nvcc's own ``TOP``, through any wrapper script)."""
    proc = subprocess.run(["nvcc", "--dryrun", "-x", "cu", os.devnull],
                          capture_output=True, text=True, check=False)  # fmt: skip
    m = re.search(r"^#\$ _HERE_=(.*)$", proc.stderr + proc.stdout, re.M)
    if m is None:
        raise RuntimeError(f"nvcc --dryrun named no toolkit:\n{proc.stderr}")
    return str(Path(m.group(1).strip()).parent)


def offline_numba(arch: str) -> None:
    """Let Numba compile for ``arch`` with no driver and no NVRTC (libNVVM and libdevice
    of the toolkit only). Call before ``numba.cuda`` compiles anything."""
    cc = (int(arch[3:-1]), int(arch[-1]))
    os.environ.setdefault("NUMBA_FORCE_CUDA_CC", f"{cc[0]}.{cc[1]}")
    if "CUDA_HOME" not in os.environ:
        os.environ["CUDA_HOME"] = toolkit_root()
    import numba.cuda.cuda_paths as cuda_paths
    import numba.cuda.dispatcher as dispatcher

    try:
        cuda_paths._get_nvrtc_path()
    except Exception:  # noqa: BLE001 - no NVRTC: nothing here needs it
        cuda_paths._get_nvrtc_path = lambda: ("<none>", None)
    device = types.SimpleNamespace(compute_capability=cc)
    dispatcher.get_current_device = lambda: device


def economy_env(economy: str):
    """The full gather-trade-build economy of a published config."""
    from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import economy_env as ee

    return ee.GatherTradeBuildEconomyGpu(dict(getattr(ee, f"{economy.upper()}_CONFIG")))


def numba_signature(env, num_envs: int = 4) -> tuple:
    """The Numba types of the step kernel's arguments as the generic backend binds them."""
    import numba

    from ai_economist.warp_drive.backends.numpy import NumpyBackend

    backend = NumpyBackend(env, num_envs, 0)
    args = env.state_spec().kernel_args(backend.data_manager, backend="torch")
    return tuple(numba.typeof(a.numpy() if hasattr(a, "numpy") else a) for a in args)


def numba_ptx(env, kernel: str, arch: str, runtime_shapes: bool = False) -> str:
    """Numba's PTX of ``kernel`` for the bound argument types: the one the backend builds
    (the ``numba_factory``'s, when the env has one), or with ``runtime_shapes`` the Numba
    module's own kernel."""
    from numba import cuda

    from ai_economist.warp_drive.backends.gpu import factory_module
    from ai_economist.warp_drive.function_manager import _import_module

    module = _import_module(env.kernels().numba_module)
    if not runtime_shapes:
        module = factory_module(env, module)
    cc = (int(arch[3:-1]), int(arch[-1]))
    ptx, _ = cuda.compile_ptx(getattr(module, kernel).py_func, numba_signature(env),
                              device=False, cc=cc)  # fmt: skip
    return ptx


def cuda_c_ptx(env, arch: str, work: Path) -> str:
    """nvcc's PTX of the env's ``.cu`` file with the generated state header."""
    from ai_economist.warp_drive import codegen
    from ai_economist.warp_drive.backends.gpu import header_for

    headers = codegen.write_header(env.name, header_for(env, env.state_spec()), work / "hdr")
    out = work / "cuda_c.ptx"
    cmd = ["nvcc", "-ptx", f"-arch={arch}", "-o", str(out), str(env.kernels().cuda_source),
           "-I", str(headers)]  # fmt: skip
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    return out.read_text()


def ptxas_info(ptx_path: Path, arch: str, kernel: str) -> dict[str, int]:
    """``ptxas -v``'s figures of the entry whose name contains ``kernel``."""
    proc = subprocess.run(["ptxas", f"-arch={arch}", "-v", str(ptx_path), "-o",
                           str(ptx_path.with_suffix(".cubin"))],
                          capture_output=True, text=True, check=True)  # fmt: skip
    text = proc.stderr
    blocks = re.split(r"ptxas info\s+: Function properties for ", text)
    for block in blocks[1:]:
        name = block.split("\n", 1)[0]
        if kernel in name and "_internal" not in name:

            def grab(pattern: str, block: str = block) -> int:
                m = re.search(pattern, block)
                return int(m.group(1)) if m else 0

            return {
                "registers": grab(r"Used (\d+) registers"),
                "stack frame": grab(r"(\d+) bytes stack frame"),
                "spill stores": grab(r"(\d+) bytes spill stores"),
                "spill loads": grab(r"(\d+) bytes spill loads"),
                "smem": grab(r"(\d+) bytes smem"),
            }
    raise RuntimeError(f"ptxas reported no entry {kernel!r}:\n{text}")


def entry_body(ptx: str, kernel: str) -> list[str]:
    """The lines of the ``.entry`` whose name contains ``kernel``."""
    lines = ptx.splitlines()
    start = next(i for i, line in enumerate(lines)
                 if line.startswith(".visible .entry") and kernel in line)  # fmt: skip
    body, depth, opened = [], 0, False
    for line in lines[start:]:
        depth += line.count("{") - line.count("}")
        opened = opened or "{" in line
        body.append(line)
        if opened and depth == 0:
            break
    return body


def opcodes(body: list[str]) -> collections.Counter:
    """Opcode counts of PTX lines (predicates dropped; labels, directives skipped)."""
    counts: collections.Counter = collections.Counter()
    for line in body:
        s = line.strip()
        if not s or s.startswith(("//", ".", "{", "}", "$", ")", "(")):
            continue
        if s.startswith("@"):
            s = s.split(None, 1)[1]
        counts[s.split()[0].rstrip(";")] += 1
    return counts


def classify(counts: collections.Counter) -> dict[str, int]:
    """The :data:`CLASSES` totals of opcode counts."""
    return {label: sum(n for op, n in counts.items() if pred(op)) for label, pred in CLASSES}


def report(rows: dict[str, dict[str, int]]) -> str:
    """A text table, one column per build."""
    names = list(rows)
    keys = list(next(iter(rows.values())))
    width = max(len(k) for k in keys) + 2
    out = ["".ljust(width) + "".join(n.rjust(14) for n in names)]
    for key in keys:
        out.append(key.ljust(width) + "".join(str(rows[n][key]).rjust(14) for n in names))
    return "\n".join(out)


def main(argv: list[str] | None = None) -> dict[str, dict[str, int]]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--economy", choices=("phase1", "phase2"), default="phase2")
    parser.add_argument("--kernel", default="gtb_economy_step")
    parser.add_argument("--arch", default="sm_90")
    parser.add_argument("--keep", default=None, help="folder to keep the PTX and cubins in")
    parser.add_argument("--runtime_shapes", action="store_true",
                        help="the Numba module's kernel of runtime shapes, not the factory's")  # fmt: skip
    args = parser.parse_args(argv)
    offline_numba(args.arch)
    env = economy_env(args.economy)
    work = Path(args.keep or tempfile.mkdtemp(prefix="numba_ptx_"))
    work.mkdir(parents=True, exist_ok=True)
    sources = {"numba": numba_ptx(env, args.kernel, args.arch, args.runtime_shapes),
               "cuda_c": cuda_c_ptx(env, args.arch, work)}  # fmt: skip
    rows = {}
    for name, ptx in sources.items():
        path = work / f"{name}.ptx"
        path.write_text(ptx)
        info = ptxas_info(path, args.arch, args.kernel)
        rows[name] = {**info, **classify(opcodes(entry_body(ptx, args.kernel)))}
    print(f"{env.name} {args.economy}: {args.kernel} for {args.arch} (static counts of the "
          f"entry's PTX; ptxas -v figures; files in {work})")  # fmt: skip
    print(report(rows))
    return rows


if __name__ == "__main__":
    main()
