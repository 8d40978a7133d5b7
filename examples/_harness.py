"""What the programs in examples/ share: the command line, the timing of the example's
computation on cupynum (or NumPy, with ``EXAMPLE_BACKEND=numpy``) and on NumPy from the
same inputs, the checksum and the "agree" line.  Each example keeps its numerical code and
calls ``main()`` here with its specifics.
"""
import argparse
import time
from types import SimpleNamespace

import numpy


def timed(fn, repeat):
    """(median wall time of ``fn()``, its last result); fn ends with a sync (a float)."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return sorted(times)[len(times) // 2], out


def runs_on(np):
    """Where the example's ``np`` runs, for the first printed line."""
    if np.__name__ == "numpy":
        return "NumPy (EXAMPLE_BACKEND=numpy)"
    try:
        from cupynum._backends import name

        return f"cupynum, {name()} backend"
    except Exception:  # the backend's name is only informative
        return "cupynum"


def _as_tuple(result):
    return result if isinstance(result, tuple) else (result,)


def main(argv, doc, np, *, sizes, small_help, title, inputs, compute, checksum, tolerance,
         dtype="float64", repeat=3, compare=None, check=None):
    """Parse the command line, run ``compute`` on ``np`` and on NumPy, print, return 0 if they agree.

    sizes: {name: (help, default, small)}; integer options ``-x`` (one letter) or ``--name``,
        resolved (``--small`` picks the small value) into the attributes of ``p``.
    title(p): the first printed line, before " on <where>".
    inputs(p): a tuple of host (NumPy) arrays; they are moved with ``np.asarray``.
    compute(p, xp, *arrays): the example's computation on namespace xp: an array or a tuple.
    checksum(*results): a scalar that ``float()`` reads back (the sync for the timings).
    tolerance: {dtype name: (rtol, atol)} for comparing the results with NumPy's.
    compare: how many leading results to compare (default all); check(p, host, got, ref)
        sees all of them and returns (ok, note for the agree line); it may print lines.
    """
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--small", action="store_true", help=f"a quick run: {small_help}")
    for name, (help_, default, small) in sizes.items():
        flag = f"-{name}" if len(name) == 1 else f"--{name}"
        parser.add_argument(flag, type=int, default=None,
                            help=f"{help_} (default {default:,}; --small: {small:,})")
    parser.add_argument("--dtype", default=dtype, choices=["float32", "float64"])
    parser.add_argument("--repeat", type=int, default=repeat, help="timed runs; the median is shown")
    parser.add_argument("--seed", type=int, default=2024)
    args = parser.parse_args(argv)
    p = SimpleNamespace(small=args.small, dtype=numpy.dtype(args.dtype), seed=args.seed,
                        repeat=args.repeat)
    for name, (_, default, small) in sizes.items():
        setattr(p, name, getattr(args, name) or (small if args.small else default))

    # Inputs are made on the host by NumPy's seeded generator, then moved to the device.
    host = tuple(inputs(p))
    device = [np.asarray(a) for a in host]

    def run(xp, arrays):
        result = _as_tuple(compute(p, xp, *arrays))
        return result, float(checksum(*result))  # waits for the device

    print(f"{title(p)} on {runs_on(np)}")
    run(np, device)  # warm-up: compiles and caches the kernels on a GPU
    t, (got, value) = timed(lambda: run(np, device), p.repeat)
    t_ref, (ref, ref_value) = timed(lambda: run(numpy, host), p.repeat)
    got = tuple(numpy.asarray(g) if hasattr(g, "shape") else g for g in got)
    ok, note = check(p, host, got, ref) if check else (True, "")

    runs = "one run" if p.repeat == 1 else f"median of {p.repeat} runs"
    print(f"checksum: {value:.12e} (NumPy: {ref_value:.12e})")
    print(f"time: {np.__name__} {t * 1e3:.3f} ms ({runs} after a warm-up)")
    print(f"time: numpy {t_ref * 1e3:.3f} ms (same inputs); speed-up {t_ref / t:.1f}x")

    rtol, atol = tolerance[p.dtype.name]
    max_diff = 0.0
    for g, r in zip(got[:compare], ref[:compare]):
        same = g.shape == r.shape and g.dtype == r.dtype
        ok = ok and same and numpy.allclose(g, r, rtol, atol)
        max_diff = (max(max_diff, float(numpy.max(numpy.abs(g.astype(numpy.float64) - r))))
                    if g.shape == r.shape else numpy.inf)
    print(f"agree: {'yes' if ok else 'NO'} (max |diff| {max_diff:.3g}, rtol {rtol:g}, "
          f"atol {atol:g}, dtype {got[0].dtype}{'; ' + note if note else ''})")
    return 0 if ok else 1
