"""Reporting for benchmarks/side_by_side.py: run metadata, a Markdown table, a PNG chart.

Used by side_by_side.py (``--out DIR`` writes DIR/latest.json, latest.md, latest.png) and by
the docs build (docs/_ext/cupynum_docs.py renders the committed benchmarks/results/latest.json).
Needs NumPy only; the chart needs matplotlib and is skipped with a note without it.
"""
from __future__ import annotations

import datetime
import math
import platform
import subprocess
import sys

LIBS = ("numpy", "cupynum", "cupy")
LABELS = {"numpy": "NumPy", "cupynum": "cupynum", "cupy": "CuPy"}
COLORS = {"numpy": "#4d77b3", "cupynum": "#76b900", "cupy": "#d9822b"}


# metadata ------------------------------------------------------------------------------
def _version(dist):
    try:
        from importlib.metadata import version

        return version(dist)
    except Exception:  # noqa: BLE001 - not installed
        return None


def collect_meta(libs, quick):
    """Date, machine, GPU, driver and library versions for the run's report."""
    import numpy

    import cupynum
    from cupynum import _backends

    meta = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "quick": bool(quick),
        "backend": _backends.name(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu": platform.processor() or platform.machine(),
        "versions": {
            "cupynum": cupynum.__version__,
            "numpy": numpy.__version__,
            "cupy": getattr(libs.get("cupy"), "__version__", None),
            "cuda-bindings": _version("cuda-bindings"),
            "cuda-core": _version("cuda-core"),
            "nvmath-python": _version("nvmath-python"),
        },
        "gpu": None,
        "driver": None,
    }
    try:  # nvidia-smi names the GPU whichever library is installed
        out = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                              "--format=csv,noheader"], capture_output=True, text=True,
                             timeout=30)
        if out.returncode == 0 and out.stdout.strip():
            name, driver, mem = [s.strip() for s in out.stdout.splitlines()[0].split(",")]
            meta.update(gpu=f"{name} ({mem})", driver=driver)
    except Exception:  # noqa: BLE001 - no nvidia-smi: no GPU to name
        pass
    if meta["gpu"] is None and meta["backend"] == "cuda":
        try:
            from cupynum import cuda

            meta["gpu"] = cuda.Device().name
        except Exception:  # noqa: BLE001
            pass
    return meta


# table ---------------------------------------------------------------------------------
def fmt_time(t):
    if t is None:
        return "-"
    if t < 1e-3:
        return f"{t * 1e6:.2f} µs"
    if t < 1.0:
        return f"{t * 1e3:.3f} ms"
    return f"{t:.3f} s"


def present_libs(results):
    return [lib for lib in LIBS if any(r.get(lib) for r in results)]


def markdown_report(data, heading_level=2):
    """The run's metadata as a list and its results as a Markdown table."""
    meta = data.get("meta", {})
    results = data.get("results", [])
    libs = present_libs(results)
    v = meta.get("versions", {})
    h = "#" * heading_level
    lines = [f"{h} Latest results", ""]
    if meta:
        lines += [
            f"- date: {meta.get('date', '?')}" + (" (`--quick` run)" if meta.get("quick") else ""),
            f"- GPU: {meta.get('gpu') or 'none'}"
            + (f", driver {meta['driver']}" if meta.get("driver") else ""),
            f"- cupynum {v.get('cupynum', '?')} on its `{meta.get('backend', '?')}` backend; "
            f"NumPy {v.get('numpy', '?')}; CuPy {v.get('cupy') or 'not installed'}; "
            f"Python {meta.get('python', '?')}",
            f"- host: {meta.get('cpu', '?')}, {meta.get('platform', '?')}",
            "",
        ]
    head = ["workload"] + [LABELS[lib] for lib in libs]
    if "cupy" in libs and "cupynum" in libs:
        head.append("cupynum / CuPy time")
    if "numpy" in libs and "cupynum" in libs:
        head.append("speed-up over NumPy")
    # bandwidth as a share of the device copy's, measured in the same run (side_by_side.py)
    bw_libs = [lib for lib in libs if any(r.get(f"{lib}_frac_copy") for r in results)]
    head += [f"{LABELS[lib]} % of copy bandwidth" for lib in bw_libs]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("| --- |" + " ---: |" * (len(head) - 1))
    for r in results:
        cells = [r["workload"].replace("|", "\\|")]
        for lib in libs:
            t = r.get(lib)
            cells.append("error" if t is None and r.get(f"{lib}_error") else fmt_time(t))
        if "cupy" in libs and "cupynum" in libs:
            cells.append(f"{r['cupynum'] / r['cupy']:.2f}" if r.get("cupynum") and r.get("cupy")
                         else "-")
        if "numpy" in libs and "cupynum" in libs:
            cells.append(f"{r['numpy'] / r['cupynum']:.1f}x"
                         if r.get("cupynum") and r.get("numpy") else "-")
        for lib in bw_libs:
            frac = r.get(f"{lib}_frac_copy")
            cells.append(f"{frac:.0%}" if frac else "-")
        lines.append("| " + " | ".join(cells) + " |")
    errors = [(r["workload"], lib, r[f"{lib}_error"]) for r in results for lib in LIBS
              if r.get(f"{lib}_error")]
    if errors:
        lines += ["", "Errors and skipped runs:", ""]
        lines += [f"- {w}, {LABELS[lib]}: `{e.replace('`', '')}`" for w, lib, e in errors]
    return "\n".join(lines) + "\n"


# chart ---------------------------------------------------------------------------------
def draw_chart(data, path):
    """Time per library per workload (log scale) and the cupynum/CuPy time ratio.

    Returns None on success, else a note saying why no chart was drawn."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception as e:  # noqa: BLE001 - matplotlib is optional
        return f"chart skipped (matplotlib not available: {type(e).__name__})"
    results = [r for r in data.get("results", []) if any(r.get(lib) for lib in LIBS)]
    if not results:
        return "chart skipped (no timings)"
    libs = present_libs(results)
    ratio_lib = "cupy" if "cupy" in libs else ("numpy" if "numpy" in libs else None)
    n = len(results)
    fig, (ax, axr) = plt.subplots(1, 2, figsize=(13, 0.34 * n * len(libs) / 2 + 2.2),
                                  sharey=True, gridspec_kw={"width_ratios": [3, 1]},
                                  layout="constrained")
    ys = list(range(n))
    height = 0.8 / len(libs)
    for k, lib in enumerate(libs):
        ts = [r.get(lib) or math.nan for r in results]
        ax.barh([y + (k - (len(libs) - 1) / 2) * height for y in ys], ts, height=height,
                color=COLORS[lib], label=LABELS[lib])
    ax.set_xscale("log")
    ax.set_yticks(ys)
    ax.set_yticklabels([r["workload"] for r in results], fontsize=8)
    ax.set_ylim(n - 0.5, -0.5)  # first workload on top
    ax.set_xlabel("time per call or run (s, log scale; shorter is faster)")
    ax.legend(loc="lower right", fontsize=8)
    ax.grid(axis="x", which="major", alpha=0.3)
    if ratio_lib and "cupynum" in libs:
        ratios = [(r["cupynum"] / r[ratio_lib]) if r.get("cupynum") and r.get(ratio_lib)
                  else math.nan for r in results]
        axr.barh(ys, ratios, color=[COLORS["cupynum"] if x <= 1 else "#c0392b" for x in ratios])
        axr.axvline(1.0, color="black", lw=0.8)
        axr.set_xscale("log")
        axr.set_xlabel(f"cupynum time / {LABELS[ratio_lib]} time\n(< 1: cupynum faster)")
    else:
        axr.text(0.5, 0.5, "no ratio:\ncupynum or peer missing", ha="center",
                 transform=axr.transAxes)
    meta = data.get("meta", {})
    title = f"cupynum vs {', '.join(LABELS[lib] for lib in libs if lib != 'cupynum')}"
    if meta:
        title += (f" on {meta.get('gpu') or meta.get('backend', '?') + ' backend'}, "
                  f"{meta.get('date', '')[:10]}")
    fig.suptitle(title, fontsize=10)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return None


if __name__ == "__main__":  # python benchmarks/report.py results.json [chart.png]
    import json

    with open(sys.argv[1]) as f:
        d = json.load(f)
    print(markdown_report(d))
    if len(sys.argv) > 2:
        print(draw_chart(d, sys.argv[2]) or f"chart: {sys.argv[2]}")
