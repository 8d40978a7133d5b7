"""The wheel ships the package and its CUDA headers, and the installed package finds them.

Builds the wheel from a copy of the repository (the files a clone has), installs it with
``pip install --target`` into a temporary folder, and imports it from there in a
subprocess that runs outside the source tree, so the source tree cannot be what is tested.
"""
import json
import os
import shutil
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_SKIP_PARTS = {".git", "__pycache__", "build", "dist", ".pytest_cache", ".hypothesis"}


def _repo_files():
    """Relative paths of the files a clone would have (tracked, plus untracked ones git
    does not ignore); without git, the files that make the package."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT, capture_output=True, check=True,
        ).stdout
        files = [Path(p) for p in out.decode().split("\0") if p]
    except (OSError, subprocess.CalledProcessError):
        files = [p.relative_to(ROOT) for top in ("cupynum", "kernels") for p in (ROOT / top).rglob("*")]
        files += [Path(p) for p in ("pyproject.toml", "setup.py", "README.md")]
    return [
        p for p in files
        if (ROOT / p).is_file() and not _SKIP_PARTS.intersection(p.parts) and not p.name.endswith(".pyc")
        and not any(part.endswith(".egg-info") for part in p.parts)
    ]


def _local_setuptools_ok():
    """A setuptools new enough to build without an isolated build environment."""
    try:
        version = metadata.version("setuptools")
    except metadata.PackageNotFoundError:
        return False
    try:
        return tuple(int(x) for x in version.split(".")[:2]) >= (70, 1)
    except ValueError:
        return False


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(wheel path, folder the wheel was installed into)."""
    tmp = tmp_path_factory.mktemp("packaging")
    src, wheels, site = tmp / "src", tmp / "wheels", tmp / "site"
    for rel in _repo_files():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, src / rel)

    env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1")
    isolated = not _local_setuptools_ok()
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(wheels), str(src)]
    if not isolated:
        cmd.insert(4, "--no-build-isolation")
    build = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    if build.returncode != 0:
        log = f"{' '.join(cmd)}\n{build.stdout}\n{build.stderr}"
        if isolated:
            pytest.skip(f"no setuptools>=70.1 here and an isolated build failed (no network?):\n{log}")
        pytest.fail(f"building the wheel failed:\n{log}")
    (wheel,) = wheels.glob("cupynum-*.whl")

    install = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--no-compile",
         "--target", str(site), str(wheel)],
        capture_output=True, text=True, env=env, timeout=600,
    )
    assert install.returncode == 0, f"{install.stdout}\n{install.stderr}"
    return wheel, site


def test_wheel_holds_only_the_package(installed):
    wheel, _ = installed
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
    others = {name.split("/")[0] for name in names} - {"cupynum"}
    assert len(others) == 1 and others.pop().endswith(".dist-info"), f"unexpected top-level entries: {names}"
    assert any(n.startswith("cupynum/kernels/cpn/") and n.endswith(".cuh") for n in names), names


def test_wheel_ships_every_module_and_header(installed):
    """Every .py file under cupynum/ and every file under kernels/ of the source tree is
    installed (kernels/ as cupynum/kernels/)."""
    _, site = installed
    files = _repo_files()
    expected = {p for p in files if p.parts[0] == "cupynum" and p.suffix == ".py"}
    expected |= {
        Path("cupynum", *p.parts) for p in files
        if p.parts[0] == "kernels" and not any(part.startswith(".") for part in p.parts)
    }
    missing = sorted(str(p) for p in expected if not (site / p).is_file())
    assert not missing, f"not in the installed package: {missing}"


def test_installed_package_finds_its_kernels(installed, tmp_path):
    _, site = installed
    probe = (
        "import json, pathlib, cupynum\n"
        "from cupynum._backends.cuda import compiler\n"
        "pkg = pathlib.Path(cupynum.__file__).resolve().parent\n"
        "print(json.dumps({'pkg': str(pkg), 'kernel_dir': str(pathlib.Path(compiler.kernel_dir()).resolve()),\n"
        "  'cuh': sorted(p.name for p in (pkg / 'kernels' / 'cpn').glob('*.cuh'))}))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env.update(PYTHONPATH=str(site), CUPYNUM_BACKEND="host", PYTHONDONTWRITEBYTECODE="1")
    proc = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    info = json.loads(proc.stdout.strip().splitlines()[-1])
    site = site.resolve()
    pkg, kernel_dir = Path(info["pkg"]), Path(info["kernel_dir"])
    assert pkg == site / "cupynum", f"imported {pkg}, not the installed package"
    assert info["cuh"], f"no .cuh files in {pkg / 'kernels' / 'cpn'}"
    assert kernel_dir.is_relative_to(site), f"kernel_dir() is {kernel_dir}, outside the installed tree {site}"
    assert any(kernel_dir.rglob("*.cuh")), f"no .cuh files below kernel_dir() {kernel_dir}"
