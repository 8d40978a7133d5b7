"""``python -m cupynum info`` and ``python -m cupynum precompile [--arch sm_90]``."""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time


def info() -> int:
    import numpy

    import cupynum
    from cupynum import _backends, _config
    from cupynum._backends.cuda import compiler, driver

    lines = [("cupynum", cupynum.__version__), ("python", platform.python_version()),
             ("numpy", numpy.__version__)]
    for mod in ("cuda.bindings", "cuda.core", "cuda.pathfinder", "nvmath"):
        try:
            m = __import__(mod, fromlist=["__version__"])
            lines.append((mod, getattr(m, "__version__", "?")))
        except ImportError:
            lines.append((mod, "not installed"))
    try:
        lines.append(("nvrtc", ".".join(map(str, compiler.nvrtc_version()))))
    except Exception as e:  # noqa: BLE001 - report, do not fail
        lines.append(("nvrtc", f"unavailable ({type(e).__name__}: {e})"))
    lines.append(("CUPYNUM_BACKEND", _config.BACKEND))
    lines.append(("CUPYNUM_FALLBACK", _config.FALLBACK))
    lines.append(("backend", _backends.name()))
    lines.append(("cuda driver", "found" if driver.available() else
                  f"not available ({driver.reason()})"))
    if _backends.for_side("device").cuda_memory:
        from cupynum._backends.cuda import memory, runtime

        free, total = runtime.mem_info()
        lines += [("device", f"0: {runtime.device_name()} (sm_{''.join(map(str, runtime.compute_capability()))}, "
                             f"{runtime.multiprocessor_count()} SMs)"),
                  ("device memory", f"{free / 2**30:.1f} GiB free of {total / 2**30:.1f} GiB"),
                  ("memory pool", f"{memory.get_pool().used_bytes()} B used, "
                                  f"{memory.get_pool().total_bytes()} B held")]
    cache = compiler.default_cache()
    lines.append(("kernel cache", str(cache.cache_dir) if cache.store.usable() else
                  f"memory only ({cache.cache_dir} not used: {cache.store.problem})"))
    lines.append(("kernel arch", compiler.default_arch()))
    lines.append(("kernels folder", str(compiler.kernel_dir())))
    # The header versions enter every cache key: a cache filled elsewhere is only reused
    # where they match.
    lines.append(("kernel headers", " ".join(fp for _, fp in compiler.include_dirs())
                  or "none found"))
    width = max(len(k) for k, _ in lines)
    for k, v in lines:
        print(f"{k:<{width}}  {v}")
    return 0


def precompile(arch: str | None, jobs: int | None) -> int:
    from cupynum._backends.cuda import compiler, elementwise

    groups = [g for g in elementwise.default_groups() if elementwise.group_specs(g)]
    total, done, compiled, kernels = len(groups), 0, 0, 0
    t0 = time.perf_counter()
    step = max(1, jobs or os.cpu_count() or 1)
    tty = sys.stderr.isatty()
    for i in range(0, total, step):
        chunk = groups[i : i + step]
        stats = elementwise.precompile(arch=arch, jobs=jobs, groups=chunk)
        done += len(chunk)
        compiled += stats["compiled"]
        kernels += stats["kernels"]
        bar = "#" * (30 * done // total)
        elapsed = time.perf_counter() - t0
        left = elapsed / done * (total - done)  # the programs so far set the pace
        line = (f"[{bar:<30}] {done}/{total} programs, {kernels} kernels, "
                f"{elapsed:5.1f} s, about {left:5.1f} s left")
        if tty:
            print("\r" + line, end="", file=sys.stderr, flush=True)
        elif 4 * done // total != 4 * (done - len(chunk)) // total or done == total:
            print(line, file=sys.stderr, flush=True)  # a log gets a line per quarter
    if tty:
        print(file=sys.stderr)
    from cupynum._backends.cuda import reduction

    rstats = reduction.precompile(arch=arch, jobs=jobs)
    print(f"precompiled {rstats['programs']} reduction programs in {rstats['seconds']:.1f} s")
    from cupynum._backends.cuda import tuning

    if tuning.SORT.engine == "cub":  # CUB's onesweep kernels: ~4 s a program through NVRTC
        from cupynum._backends.cuda import cub_sort

        print(f"precompiled {cub_sort.precompile(arch=arch, jobs=jobs)} CUB sort programs")
    print(f"precompiled {kernels} kernels in {total} programs for "
          f"{arch or compiler.default_arch()} ({compiled} compiled, {total - compiled} from the "
          f"cache) in {time.perf_counter() - t0:.1f} s")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m cupynum")
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("info", help="versions, backend, device, memory, kernel cache")
    p = sub.add_parser("precompile", help="compile the default kernel set into the cache "
                                          "(needs NVRTC, not a GPU)")
    p.add_argument("--arch", default=None, help="target, e.g. sm_90 (default: this GPU, or "
                                                "CUPYNUM_ARCH, or sm_90)")
    p.add_argument("--jobs", type=int, default=None, help="programs compiled at once")
    args = ap.parse_args(argv)
    if args.cmd == "info":
        return info()
    return precompile(args.arch, args.jobs)


if __name__ == "__main__":
    sys.exit(main())
