"""The loop-heavy program suite under NumPy, cupynum (placement ``auto`` and ``device``) and
CuPy, side by side.

    python benchmarks/programs/run.py [--small] [--only NAME,...] [--reps 3] [--timeout 60]
        [--budget 8] [--libs numpy,auto,device,cupy] [--fusion 0|1|both] [--threads 1]
        [--turns] [--json out.json]

Every other ``.py`` file in this folder is a program: plain NumPy code in a function
``run(np, size)`` over the module it is given, with ``SIZES`` (``"full"`` and ``"small"``),
``describe(size)`` and the tolerance its result is checked with (``RTOL``, ``ATOL``, and
``DIFFERING_FRACTION``, the fraction of elements allowed to differ; see ``compare``).

Each library runs in a subprocess of its own (a "worker"), so that cupynum reads
``CUPYNUM_PLACEMENT`` (and ``CUPYNUM_FUSION`` where ``--fusion`` is given) at import. A
worker runs the programs one after the other: one warm-up run (its time is reported as
``first``; compiles and caches fill there), then timed runs, each closed by a device
synchronisation, until ``--reps`` runs are done or the next one would take the program past
``--budget`` seconds (at least one timed run); the best timed run is reported.
(``--turns`` times each program's libraries in turns instead: ``run_in_turns``.) A program that
runs past ``--timeout`` seconds (warm-up included) is stopped with its worker, and a fresh
worker goes on with the next program. Each result is checked against NumPy's: same shape,
same dtype, values within the program's tolerance.

NumPy's BLAS and OpenMP threads are set to ``--threads`` (1 by default: NumPy on one core,
as a single-threaded scientist's script runs) in every worker alike, so that cupynum's host
work runs under the same setting as NumPy's. ``--threads 0`` leaves the environment as is.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import platform
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
MARK = "@@program-suite "  # prefix of the worker's report lines on its stdout
LIBRARIES = ("numpy", "auto", "device", "cupy")


# programs ----------------------------------------------------------------------------------
def program_names():
    return sorted(p.stem for p in HERE.glob("*.py")
                  if not p.stem.startswith("_") and p.stem != "run")


def load(name):
    """The program module ``name`` (loaded from its file under a private module name, so that
    no program shadows an installed package)."""
    spec = importlib.util.spec_from_file_location(f"_program_{name}", HERE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def compare(got, want, program):
    """None when ``got`` matches NumPy's result ``want`` (shape, dtype, and values within the
    program's ``RTOL``/``ATOL``, with at most a ``DIFFERING_FRACTION`` of the elements
    allowed to differ), else a message saying how it differs."""
    got, want = numpy.asarray(got), numpy.asarray(want)
    if got.shape != want.shape:
        return f"shape {got.shape}, NumPy {want.shape}"
    if got.dtype != want.dtype:
        return f"dtype {got.dtype}, NumPy {want.dtype}"
    rtol, atol = getattr(program, "RTOL", 0), getattr(program, "ATOL", 0)
    if want.dtype.kind in "fc":
        close = numpy.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    else:
        close = got == want
    bad = close.size - int(numpy.count_nonzero(close))
    allowed = math.floor(getattr(program, "DIFFERING_FRACTION", 0) * close.size)
    if bad > allowed:
        first = numpy.unravel_index(int(numpy.argmin(close)), close.shape) if close.ndim else ()
        return (f"{bad} of {close.size} values differ (allowed {allowed}); at {first}: "
                f"{got[first]!r}, NumPy {want[first]!r}")
    return None


# the worker: one library, timing programs in turn -------------------------------------------
def _emit(**message):
    print(MARK + json.dumps(message), flush=True)


def _library(name):
    """(module, synchronise, to_host, description) of the worker's library."""
    if name == "numpy":
        return numpy, lambda: None, numpy.asarray, {"version": numpy.__version__}
    if name == "cupy":
        import cupy

        cupy.cuda.runtime.getDeviceCount()  # raises where there is no GPU

        def sync():
            cupy.cuda.Device().synchronize()

        return cupy, sync, cupy.asnumpy, {"version": cupy.__version__}
    # the working tree's cupynum, as benchmarks/ does (PROGRAMS_TREE: another tree's, to
    # compare two commits)
    sys.path.insert(0, os.environ.get("PROGRAMS_TREE") or str(REPO))
    import cupynum

    sync = getattr(getattr(cupynum, "cuda", None), "synchronize", None)
    try:
        sync()
    except Exception:  # noqa: BLE001 - no CUDA here: the backend's own wait (host, simulated)
        from cupynum import _backends

        sync = _backends.get().synchronize
    backend = None
    try:
        from cupynum import _backends

        backend = _backends.name()
    except Exception:  # noqa: BLE001 - the name is for the report only
        pass
    return cupynum, sync, cupynum.asnumpy, {"version": getattr(cupynum, "__version__", "?"),
                                            "backend": backend}


def worker(args):
    try:
        xp, sync, to_host, about = _library(args.library)
    except Exception as e:  # noqa: BLE001 - reported as "unavailable" for every program
        _emit(event="unavailable", reason=f"{type(e).__name__}: {e}")
        return
    _emit(event="library", **about)
    if args.serve:
        return _serve(args.programs, args, xp, sync, to_host)
    for name in args.programs.split(","):
        _emit(event="start", program=name)
        try:
            _emit(event="done", program=name, **_time_program(name, args, xp, sync, to_host))
        except Exception as e:  # noqa: BLE001 - reported, the next program runs
            _emit(event="done", program=name, status="error", error=f"{type(e).__name__}: {e}")


def _timed_runner(name, args, xp, sync):
    """``timed()``: one run of program ``name`` closed by a sync, as ``(seconds, result)``;
    the program's host inputs are made here, outside every timed run."""
    program = load(name)
    size = program.SIZES[args.size]
    if hasattr(program, "inputs"):
        program.inputs(size)

    def timed():
        sync()
        t0 = time.perf_counter()
        result = program.run(xp, size)
        sync()
        return time.perf_counter() - t0, result

    return timed


def _save(result, args, name, to_host):
    path = Path(args.outdir) / f"{args.key}-{name}.npy"
    numpy.save(path, numpy.asarray(to_host(result)), allow_pickle=False)
    return str(path)


def _serve(name, args, xp, sync, to_host):
    """``--turns``' worker: program ``name`` warmed up (``ready``), then one timed run per
    ``run`` line on stdin (``time``), until ``stop`` (``done``, its result saved)."""
    _emit(event="start", program=name)
    try:
        timed = _timed_runner(name, args, xp, sync)
        first, result = timed()
    except Exception as e:  # noqa: BLE001 - reported; the parent stops asking
        _emit(event="done", program=name, status="error", error=f"{type(e).__name__}: {e}")
        return
    _emit(event="ready", first=first)
    for line in sys.stdin:
        if line.strip() != "run":
            break
        result = None
        try:
            t, result = timed()
        except Exception as e:  # noqa: BLE001
            _emit(event="done", program=name, status="error", error=f"{type(e).__name__}: {e}")
            return
        _emit(event="time", seconds=t)
    _emit(event="done", program=name, status="ok", result=_save(result, args, name, to_host))


def _time_program(name, args, xp, sync, to_host):
    timed = _timed_runner(name, args, xp, sync)
    started = time.perf_counter()
    first, result = timed()
    times = []
    while len(times) < args.reps:
        expected = min(times) if times else first
        if times and time.perf_counter() - started + expected > args.budget:
            break
        result = None
        t, result = timed()
        times.append(t)
    return {"status": "ok", "first": first, "times": times, "best": min(times),
            "result": _save(result, args, name, to_host)}


# the parent: workers per library, timeouts, checks, the report ------------------------------
def configurations(libs, fusion):
    """``[(key, column label, library, environment)]`` in the order they run."""
    out = []
    for lib in libs:
        if lib in ("numpy", "cupy"):
            out.append((lib, {"numpy": "NumPy", "cupy": "CuPy"}[lib], lib, {}))
            continue
        settings = {"both": ["1", "0"], None: [None]}.get(fusion, [fusion])
        for f in settings:
            env = {"CUPYNUM_PLACEMENT": lib}
            key, label = lib, f"cupynum {lib}"
            if f is not None:
                env["CUPYNUM_FUSION"] = f
            if fusion == "both" and f == "0":
                key, label = f"{lib}-nofusion", f"cupynum {lib}, fusion off"
            out.append((key, label, "cupynum", env))
    return out


def _reader(stream, lines):
    for line in stream:
        if line.startswith(MARK):
            lines.put(json.loads(line[len(MARK):]))
    lines.put(None)


def _spawn(key, library, env, programs, args, outdir, err, serve=False):
    """A worker process of ``library`` for ``programs`` and the queue of its messages
    (None once its output ends); ``serve``: ``--turns``' worker, driven through stdin."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", "--key", key,
           "--library", library, "--programs", ",".join(programs),
           "--size", "small" if args.small else "full", "--reps", str(args.reps),
           "--budget", str(args.budget), "--outdir", outdir] + (["--serve"] if serve else [])
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True,
                            stdin=subprocess.PIPE if serve else None,
                            env={**os.environ, **env}, cwd=str(REPO), start_new_session=True)
    lines = queue.Queue()
    threading.Thread(target=_reader, args=(proc.stdout, lines), daemon=True).start()
    return proc, lines


def run_library(key, library, env, names, args, outdir, log):
    """``({program: result}, about)`` of one library, each program in a worker that is
    replaced when a program times out or crashes it."""
    results, about, remaining = {}, {}, list(names)
    while remaining:
        with tempfile.TemporaryFile("w+") as err:
            proc, lines = _spawn(key, library, env, remaining, args, outdir, err)
            current, deadline = remaining[0], time.monotonic() + args.timeout
            while remaining:
                try:
                    msg = lines.get(timeout=max(0.0, deadline - time.monotonic()))
                except queue.Empty:
                    os.killpg(proc.pid, signal.SIGKILL)  # the worker this call started
                    results[current] = {"status": "timeout",
                                        "error": f"over {args.timeout:g} s"}
                    log(key, current, results[current])
                    remaining.remove(current)
                    break
                if msg is None:  # the worker died
                    code = proc.wait()
                    err.seek(0)
                    tail = err.read().strip().splitlines()[-3:]
                    results[current] = {"status": "crashed",
                                        "error": " | ".join([f"exit code {code}"] + tail)}
                    log(key, current, results[current])
                    remaining.remove(current)
                    break
                if msg["event"] == "unavailable":
                    for name in remaining:
                        results[name] = {"status": "unavailable", "error": msg["reason"]}
                    log(key, None, results[remaining[0]])
                    remaining = []
                elif msg["event"] == "library":
                    about = {k: v for k, v in msg.items() if k != "event"}
                elif msg["event"] == "start":
                    current = msg["program"]
                    deadline = time.monotonic() + args.timeout
                elif msg["event"] == "done":
                    results[msg["program"]] = {k: v for k, v in msg.items()
                                               if k not in ("event", "program")}
                    log(key, msg["program"], results[msg["program"]])
                    remaining.remove(msg["program"])
                    if remaining:  # the next program's clock starts now
                        current, deadline = remaining[0], time.monotonic() + args.timeout
            proc.wait()
            proc.stdout.close()
    return results, about


class _Turns:
    """One program's worker of one library under ``--turns``."""

    def __init__(self, key, library, env, name, args, outdir):
        self.key, self.name, self.timeout = key, name, args.timeout
        self.err = tempfile.TemporaryFile("w+")
        self.proc, self.lines = _spawn(key, library, env, [name], args, outdir, self.err,
                                       serve=True)
        self.about, self.first, self.times, self.result = {}, None, [], None

    def wait(self, *events):
        """The next message of one of ``events`` (others are kept: ``library``), or None
        with ``self.result`` set when the worker failed, timed out or is unavailable."""
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                msg = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                return self.fail("timeout", f"over {self.timeout:g} s")
            if msg is None:
                code = self.proc.wait()
                self.err.seek(0)
                tail = self.err.read().strip().splitlines()[-3:]
                return self.fail("crashed", " | ".join([f"exit code {code}"] + tail))
            if msg["event"] == "unavailable":
                return self.fail("unavailable", msg["reason"])
            if msg["event"] == "library":
                self.about = {k: v for k, v in msg.items() if k != "event"}
            elif msg["event"] == "done" and msg.get("status") != "ok":
                return self.fail(msg["status"], msg.get("error", ""))
            elif msg["event"] in events:
                return msg

    def fail(self, status, error):
        self.result = {"status": status, "error": error}
        self.close()
        return None

    def ask(self, line):
        try:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
        except OSError:
            pass  # (the worker is gone: wait() reports it)

    def close(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)  # the worker this run started
        self.proc.wait()
        self.err.close()


def run_in_turns(configs, names, args, outdir, log):
    """``({key: {program: result}}, {key: about})``, each program's libraries timed in turns:
    one worker per library and program, all warmed up first, then one timed run of each
    in turn per round (the order reversed every other round), so that the machine's slow
    and fast phases fall on every library alike.  Rounds stop at ``--reps``, or once the
    program has used ``--budget`` seconds per library (at least one round)."""
    results = {key: {} for key, *_ in configs}
    about = {}
    for name in names:
        workers = []
        for key, _, library, env in configs:  # (warmed up one at a time)
            w = _Turns(key, library, env, name, args, outdir)
            ready = w.wait("ready")
            about.setdefault(key, w.about)
            if ready is None:
                results[key][name] = w.result
                log(key, name, w.result)
            else:
                w.first = ready["first"]
                workers.append(w)
        started = time.perf_counter()
        for r in range(args.reps):
            live = [w for w in workers if w.result is None]
            if not live or r and time.perf_counter() - started > args.budget * len(live):
                break
            for w in (live if r % 2 == 0 else live[::-1]):
                w.ask("run")
                msg = w.wait("time")
                if msg is not None:
                    w.times.append(msg["seconds"])
        for w in workers:
            if w.result is None:
                w.ask("stop")
                done = w.wait("done")
                if done is not None:
                    w.result = {"status": "ok", "first": w.first, "times": w.times,
                                "best": min(w.times), "result": done["result"]}
                    w.close()
            results[w.key][name] = w.result
            log(w.key, name, w.result)
    return results, about


def check_results(names, configs, results):
    """Compare every library's saved result with NumPy's; a mismatch turns ``ok`` into
    ``wrong``. Without a NumPy result, others stay unchecked."""
    for name in names:
        want = results.get("numpy", {}).get(name, {})
        if want.get("status") != "ok":
            continue
        program = load(name)
        reference = numpy.load(want["result"])
        for key, *_ in configs:
            got = results[key].get(name, {})
            if key == "numpy" or got.get("status") != "ok":
                continue
            problem = compare(numpy.load(got["result"]), reference, program)
            got["checked"] = problem is None
            if problem:
                got.update(status="wrong", error=problem)


def _best(results, key, name):
    r = results.get(key, {}).get(name, {})
    return r["best"] if r.get("status") == "ok" else None


def ratios(results, name):
    """The issue's ratios of one program: auto against the faster of device and NumPy, auto
    against CuPy, and device with fusion against device without."""
    auto, device, np_t = (_best(results, k, name) for k in ("auto", "device", "numpy"))
    cupy, nofusion = _best(results, "cupy", name), _best(results, "device-nofusion", name)
    out = {}
    if auto is not None and device is not None and np_t is not None:
        out["auto / min(device, NumPy)"] = auto / min(device, np_t)
    if auto is not None and cupy is not None:
        out["auto / CuPy"] = auto / cupy
    if device is not None and nofusion is not None:
        out["device / device fusion off"] = device / nofusion
    return out


def _geomean(values):
    values = [v for v in values if v is not None and v > 0]
    return (math.exp(sum(map(math.log, values)) / len(values)), len(values)) if values else None


def _ms(seconds):
    ms = seconds * 1e3
    return f"{ms:.0f}" if ms >= 100 else f"{ms:.3g}"


def _cell(r):
    if not r or r.get("status") == "unavailable":
        return "-"
    if r["status"] == "ok":
        return _ms(r["best"])
    if r["status"] == "wrong":
        return f"wrong ({_ms(r['best'])})"
    return r["status"]


def report(names, sizes, configs, results, per_program_ratios):
    """The markdown table, geometric means and target counts, as a list of lines."""
    ratio_names = [k for k in ("auto / min(device, NumPy)", "auto / CuPy",
                               "device / device fusion off")
                   if any(k in r for r in per_program_ratios.values())]
    head = ["program", "size"] + [f"{label} ms" for _, label, *_ in configs] + ratio_names
    lines = ["| " + " | ".join(head) + " |",
             "|" + "|".join(["---"] * 2 + ["---:"] * (len(head) - 2)) + "|"]
    for name in names:
        cells = [name, sizes[name]] + [_cell(results[key].get(name)) for key, *_ in configs]
        cells += [f"{per_program_ratios[name][k]:.2f}" if k in per_program_ratios[name] else "-"
                  for k in ratio_names]
        lines.append("| " + " | ".join(cells) + " |")
    # geometric means: each library's speed-up over NumPy, and each ratio
    cells = ["geometric mean", "speed-up over NumPy"]
    for key, *_ in configs:
        g = _geomean([(_best(results, "numpy", n) / _best(results, key, n))
                      if _best(results, key, n) and _best(results, "numpy", n) else None
                      for n in names])
        cells.append(f"{g[0]:.2f}x ({g[1]})" if g else "-")
    for k in ratio_names:
        g = _geomean([per_program_ratios[n].get(k) for n in names])
        cells.append(f"{g[0]:.2f} ({g[1]})" if g else "-")
    lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("Times are the best timed run in milliseconds; the geometric-mean row counts "
                 "the programs it covers in parentheses.")
    targets = [("auto / min(device, NumPy)", 1.25, "auto at most 1.25x the faster of device "
                "and NumPy (placement issue)"),
               ("auto / CuPy", 0.5, "auto at most half of CuPy's time (fusion issue)"),
               ("device / device fusion off", 0.5, "device with fusion at least 2x faster than "
                "without (fusion issue; meant for the stencil programs)")]
    for k, limit, text in targets:
        have = [n for n in names if k in per_program_ratios[n]]
        if have:
            met = [n for n in have if per_program_ratios[n][k] <= limit]
            lines.append(f"- {text}: {len(met)} of {len(have)}"
                         + (f"; not met: {', '.join(sorted(set(have) - set(met)))}"
                            if len(met) < len(have) else ""))
    problems = [(key, n, r) for key, *_ in configs for n, r in results[key].items()
                if r.get("status") not in ("ok", "unavailable")]
    for key, n, r in problems:
        lines.append(f"- {key} {n}: {r['status']}: {r.get('error', '')}")
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--small", action="store_true", help="the CI sizes")
    ap.add_argument("--only", help="programs to run, comma-separated")
    ap.add_argument("--reps", type=int, default=3, help="timed runs per program (best kept)")
    ap.add_argument("--timeout", type=float, default=60.0,
                    help="seconds one program may run under one library, warm-up included")
    ap.add_argument("--budget", type=float, default=8.0,
                    help="seconds of runs per program and library before timed runs stop early")
    ap.add_argument("--libs", default=",".join(LIBRARIES),
                    help="which of numpy,auto,device,cupy to run (auto and device: cupynum)")
    ap.add_argument("--fusion", choices=("0", "1", "both"),
                    help="CUPYNUM_FUSION for the cupynum runs; 'both' adds fusion-off columns")
    ap.add_argument("--threads", type=int, default=1,
                    help="BLAS/OpenMP threads of every worker (0: leave the environment)")
    ap.add_argument("--turns", action="store_true",
                    help="time each program's libraries in turns, one run each per round")
    ap.add_argument("--json", help="write the results here")
    # the worker's own arguments
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    for hidden in ("--key", "--library", "--programs", "--size", "--outdir"):
        ap.add_argument(hidden, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        return worker(args)

    names = program_names()
    if args.only:
        wanted = args.only.split(",")
        unknown = sorted(set(wanted) - set(names))
        if unknown:
            ap.error(f"no program {', '.join(unknown)}; programs: {', '.join(names)}")
        names = [n for n in names if n in wanted]
    libs = args.libs.split(",")
    if set(libs) - set(LIBRARIES):
        ap.error(f"--libs takes {', '.join(LIBRARIES)}")
    if args.threads:
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[var] = str(args.threads)
    size_key = "small" if args.small else "full"
    sizes = {}
    for n in names:
        program = load(n)
        sizes[n] = program.describe(program.SIZES[size_key])
    configs = configurations(libs, args.fusion)

    def log(key, name, r):
        what = _cell(r) + (" ms" if r.get("status") == "ok" else f": {r.get('error', '')}")
        print(f"  {key:16} {name or '(all)':16} {what}", file=sys.stderr, flush=True)

    results, about = {}, {}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="program-suite-") as outdir:
        if args.turns:
            results, about = run_in_turns(configs, names, args, outdir, log)
        for key, _, library, env in configs:
            if not args.turns:
                results[key], about[key] = run_library(key, library, env, names, args,
                                                       outdir, log)
            if env:
                about.setdefault(key, {})["env"] = env
        check_results(names, configs, results)
    per_program_ratios = {n: ratios(results, n) for n in names}
    lines = [f"Program suite, {size_key} sizes, best of {args.reps}"
             f"{', libraries in turns' if args.turns else ''} "
             f"({time.perf_counter() - started:.0f} s in all)"]
    for key, label, library, _ in configs:
        a = about.get(key) or {}
        missing = [r for r in results[key].values() if r.get("status") == "unavailable"]
        if missing:
            lines.append(f"- {label}: not run ({missing[0]['error']})")
        elif a:
            lines.append(f"- {label}: {library} {a.get('version', '')}"
                         + (f", backend {a['backend']}" if a.get("backend") else "")
                         + (f", {' '.join(f'{k}={v}' for k, v in a.get('env', {}).items())}"
                            if a.get("env") else ""))
    lines.append("")
    lines += report(names, sizes, configs, results, per_program_ratios)
    print("\n".join(lines))
    if args.json:
        for per_lib in results.values():
            for r in per_lib.values():
                r.pop("result", None)  # a temporary file, gone by now
        meta = {"date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "size": size_key,
                "reps": args.reps, "budget": args.budget, "timeout": args.timeout,
                "threads": args.threads, "fusion": args.fusion, "turns": args.turns,
                "python": platform.python_version(), "machine": platform.machine(),
                "libraries": {key: {"label": label, **(about.get(key) or {})}
                              for key, label, *_ in configs}}
        data = {"meta": meta,
                "programs": [{"program": n, "size": sizes[n],
                              "results": {key: results[key].get(n) for key, *_ in configs},
                              "ratios": per_program_ratios[n]} for n in names]}
        with open(args.json, "w") as f:
            json.dump(data, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
