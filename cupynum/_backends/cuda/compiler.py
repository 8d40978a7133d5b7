"""NVRTC compilation to cubin, with an in-memory and an on-disk cache.

Works without a GPU (NVRTC only): ``python -m cupynum precompile`` fills the disk cache on
a CPU machine.  The architecture defaults to the GPU's ``sm_XY`` when one is present, else
``sm_90``; ``CUPYNUM_ARCH`` overrides both.

Disk cache (``CUPYNUM_CACHE_DIR`` or ``~/.cache/cupynum``; ``disk_cache.py`` keeps its
files): one file per entry, named by a sha256 key over everything that can change the
cubin: source, options, name expressions, arch, NVRTC version, a digest of every file in
the kernels folder (editing a header never serves a stale cubin) and the versions of the
CUDA/CCCL headers.  Absolute include paths are *not* in the key, so a cache filled on one
machine serves another (copy the whole folder, key file included).  Entries are
authenticated with the folder's HMAC key and bound to their name: a damaged, planted or
renamed entry is rejected and recompiled.  The folder is used only if this user owns it
and no one else can write it; if it is refused or cannot be written, we warn once and keep
going with the memory cache (a read-only, pre-filled folder of ours still serves hits).
Nothing in the folder is host code: generated Python launchers are compiled in memory.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import struct
import tempfile
import threading
from pathlib import Path
from typing import NamedTuple

from . import disk_cache

__all__ = [
    "CompileError", "Compiled", "KernelCache", "compile_cubin", "default_arch",
    "default_cache", "include_dirs", "kernel_dir", "nvrtc_version",
]

_FORMAT = "cupynum-kernel-cache-2"
_DEFAULT_OPTIONS = ("-std=c++17", "--fmad=false")
# Prefixes of options that replace one of ours when the caller passes them.
_OVERRIDES = {
    "-std=c++17": ("-std=", "--std=", "-std ", "--std "),
    "--fmad=false": ("-fmad=", "--fmad=", "-fmad ", "--fmad "),
    "-arch": ("-arch", "--gpu-architecture"),
}


class CompileError(RuntimeError):
    """NVRTC rejected a program.  ``.log`` holds NVRTC's log, ``.source`` the program."""

    def __init__(self, message: str, log: str = "", source: str = "", options=()):
        self.log = log
        self.source = source
        self.options = tuple(options)
        super().__init__(message)


class Compiled(NamedTuple):
    """A compiled program: the cubin, and the lowered (mangled) name of each name
    expression, to pass to ``runtime.Module.get_function``."""

    cubin: bytes
    lowered_names: dict
    log: str = ""
    key: str = ""

    def lowered(self, name_expression: str) -> str:
        return self.lowered_names.get(name_expression, name_expression)


# --- environment -------------------------------------------------------------------


def kernel_dir() -> Path:
    """The CUDA C++ sources: ``cupynum/kernels`` in a wheel, ``<repo>/kernels`` in a checkout."""
    pkg = Path(__file__).resolve().parents[2]  # .../cupynum
    for cand in (pkg / "kernels", pkg.parent / "kernels"):
        if cand.is_dir():
            return cand
    return pkg.parent / "kernels"


_nvrtc_version = None


def nvrtc_version() -> tuple[int, int]:
    """(major, minor) of the NVRTC library in use."""
    global _nvrtc_version
    if _nvrtc_version is None:
        from cuda.bindings import nvrtc

        err, major, minor = nvrtc.nvrtcVersion()
        if err:
            raise CompileError(f"nvrtcVersion failed: {err!r}")
        _nvrtc_version = (int(major), int(minor))
    return _nvrtc_version


_default_arch = None


def _normalise_arch(a: str) -> str:
    a = str(a).strip().lower()
    for p in ("sm_", "compute_"):
        if a.startswith(p):
            a = a[len(p):]
    a = a.replace(".", "")
    if not re.fullmatch(r"\d+[a-z]?", a):
        raise ValueError(f"bad CUDA architecture {a!r} (expected e.g. 'sm_90' or '90')")
    return "sm_" + a


def default_arch() -> str:
    """``CUPYNUM_ARCH``, else the GPU's ``sm_XY``, else ``sm_90`` (no GPU: NVRTC only)."""
    global _default_arch
    if _default_arch is None:
        env = os.environ.get("CUPYNUM_ARCH", "").strip()
        if env:
            arch = _normalise_arch(env)
        else:
            from . import driver

            arch = "sm_90"
            if driver.available():
                from . import runtime

                major, minor = runtime.compute_capability()
                arch = f"sm_{major}{minor}"
        _default_arch = arch
    return _default_arch


_include_info = None


def include_dirs() -> list[tuple[str, str]]:
    """[(path, fingerprint)] for the CUDA runtime and CCCL headers found by cuda.pathfinder.

    ``CUPYNUM_CCCL_INCLUDE`` (the folder holding ``cub/`` and ``cuda/``) replaces the CCCL
    headers found, e.g. to check that our CUB kernels build with another CCCL release.
    The fingerprint (the header version) goes into cache keys instead of the path."""
    global _include_info
    if _include_info is None:
        found = []
        try:
            from cuda.pathfinder import find_nvidia_header_directory
        except ImportError:
            find_nvidia_header_directory = None
        probes = (
            ("cudart", "cuda_runtime_api.h", r"#define\s+CUDART_VERSION\s+(\d+)"),
            ("cccl", "cuda/std/__cccl/version.h", r"#define\s+CCCL_VERSION\s+(\d+)"),
        )
        overrides = {"cccl": os.environ.get("CUPYNUM_CCCL_INCLUDE", "").strip()}
        for lib, header, pattern in probes:
            path = overrides.get(lib) or None
            if path is None and find_nvidia_header_directory is not None:
                try:
                    path = find_nvidia_header_directory(lib)
                except Exception:
                    path = None
            if not path:
                continue
            try:
                with open(Path(path) / header, "rb") as fh:  # the define is near the top:
                    head = fh.read(1 << 16).decode(errors="replace")  # not all 660 KB
                m = re.search(pattern, head)
                version = m.group(1) if m else "?"
            except OSError:
                version = "?"
            found.append((str(path), f"{lib}={version}"))
        _include_info = found
    return _include_info


# --- NVRTC -------------------------------------------------------------------------


def _nvrtc_compile(source: str, name: str, options, name_expressions):
    from cuda.bindings import nvrtc

    def fail(what, err, log=""):
        raise CompileError(
            f"NVRTC {what} failed for {name} ({getattr(err, 'name', err)})"
            + (f":\n{log}" if log else ""), log, source, options)

    err, prog = nvrtc.nvrtcCreateProgram(source.encode(), name.encode(), 0, [], [])
    if err:
        fail("nvrtcCreateProgram", err)
    try:
        for expr in name_expressions:
            (err,) = nvrtc.nvrtcAddNameExpression(prog, expr.encode())
            if err:
                fail(f"nvrtcAddNameExpression({expr!r})", err)
        opts = [o.encode() for o in options]
        (err,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        log = ""
        e2, size = nvrtc.nvrtcGetProgramLogSize(prog)
        if not e2 and size > 1:
            buf = b" " * size
            nvrtc.nvrtcGetProgramLog(prog, buf)
            log = buf.rstrip(b"\0").decode(errors="replace").strip()
        if err:
            fail("compilation", err, log)
        err, size = nvrtc.nvrtcGetCUBINSize(prog)
        if err:
            fail("nvrtcGetCUBINSize", err, log)
        cubin = b" " * size
        (err,) = nvrtc.nvrtcGetCUBIN(prog, cubin)
        if err:
            fail("nvrtcGetCUBIN", err, log)
        lowered = {}
        for expr in name_expressions:
            err, low = nvrtc.nvrtcGetLoweredName(prog, expr.encode())
            if err:
                fail(f"nvrtcGetLoweredName({expr!r})", err, log)
            lowered[expr] = low.decode() if isinstance(low, bytes) else str(low)
        return cubin, lowered, log
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


# --- the cache ---------------------------------------------------------------------


def _default_cache_dir() -> Path:
    try:
        return Path.home() / ".cache" / "cupynum"
    except (RuntimeError, KeyError):  # no home directory (some service accounts)
        # Another user may have made this name first: DiskStore then refuses it.
        return Path(tempfile.gettempdir()) / f"cupynum-cache-{os.geteuid()}"


class KernelCache:
    """Compile-and-cache.  ``stats`` counts memory hits, disk hits, compiles and corrupt
    entries (the tests read it).  Thread-safe; different keys compile in parallel."""

    def __init__(self, cache_dir=None, kernels=None):
        if cache_dir is None:
            cache_dir = os.environ.get("CUPYNUM_CACHE_DIR") or _default_cache_dir()
        self.cache_dir = Path(cache_dir).expanduser()
        self.store = disk_cache.DiskStore(self.cache_dir)  # opened and checked on first use
        self.kernel_dir = Path(kernels) if kernels is not None else kernel_dir()
        self.stats = {"memory_hits": 0, "disk_hits": 0, "compiles": 0, "corrupt": 0}
        self._mem = {}
        self._by_key = {}  # key -> Compiled, for ``load``
        self._code = {}  # (filename, source) -> code object, for ``python_code``
        self._lock = threading.Lock()
        self._key_locks = {}
        self._digest_sig = None
        self._digest = ""

    # public ---------------------------------------------------------------------------

    def compile(self, source: str, *, options=(), name_expressions=(), arch=None,
                name: str = "cupynum_kernel.cu") -> Compiled:
        """Compile ``source`` to a cubin for ``arch`` (default ``default_arch()``)."""
        arch = _normalise_arch(arch) if arch else default_arch()
        options = tuple(options)
        name_expressions = tuple(name_expressions)
        mkey = (source, options, name_expressions, arch, name)
        c = self._mem.get(mkey)
        if c is not None:
            self.stats["memory_hits"] += 1
            return c
        with self._lock:
            klock = self._key_locks.setdefault(mkey, threading.Lock())
        with klock:
            c = self._mem.get(mkey)
            if c is not None:
                self.stats["memory_hits"] += 1
                return c
            key = self.key(source, options=options, name_expressions=name_expressions, arch=arch,
                           name=name)
            c = self._load(key)
            if c is None:
                cubin, lowered, log = _nvrtc_compile(
                    source, name, self._full_options(options, arch), name_expressions)
                c = Compiled(cubin, lowered, log, key)
                self.stats["compiles"] += 1
                self._store(key, c)
            else:
                self.stats["disk_hits"] += 1
            with self._lock:
                self._mem[mkey] = c
        return c

    def key(self, source: str, *, options=(), name_expressions=(), arch=None,
            name: str = "cupynum_kernel.cu") -> str:
        """The disk-cache key (hex sha256) for a compilation."""
        arch = _normalise_arch(arch) if arch else default_arch()
        parts = [
            _FORMAT, source, name, list(options), list(name_expressions), arch,
            list(_DEFAULT_OPTIONS), list(nvrtc_version()), self.kernels_digest(),
            [fp for _, fp in include_dirs()],
        ]
        return hashlib.sha256(json.dumps(parts).encode()).hexdigest()

    def alias(self, recipe: str, fingerprint: str, *, options=(), name_expressions=(),
              arch=None, name: str = "cupynum_kernel.cu") -> str:
        """A key for "the program this recipe generates": every input of ``key`` but the
        source, which the caller replaces by its recipe and the fingerprint of the code
        that turns the recipe into source.  See ``alias_key``."""
        arch = _normalise_arch(arch) if arch else default_arch()
        parts = [_FORMAT, "alias", recipe, fingerprint, name, list(options),
                 list(name_expressions), arch, list(_DEFAULT_OPTIONS), list(nvrtc_version()),
                 self.kernels_digest(), [fp for _, fp in include_dirs()]]
        return hashlib.sha256(json.dumps(parts).encode()).hexdigest()

    def alias_key(self, alias: str):
        """The cache key remembered for ``alias`` (``remember_alias``), or None.  ``alias``
        is what ``alias()`` returns (64 hex digits); any other name raises ValueError."""
        try:
            key = self.store.read(alias, ".alias")
        except disk_cache.EntryRejected:
            self.stats["corrupt"] += 1
            return None
        if key is None:
            return None
        key = key.decode("ascii", "replace")
        return key if disk_cache.valid_name(key) else None

    def remember_alias(self, alias: str, key: str) -> None:
        """Record that ``alias`` compiles to ``key`` (best effort: the cache may be
        read-only or refused)."""
        if not disk_cache.valid_name(key):
            raise ValueError(f"not a kernel cache key: {key!r}")
        self.store.write(alias, ".alias", key.encode())

    def python_code(self, source: str, filename: str):
        """``compile(source, filename, "exec")``, remembered for this process only.  Never
        on disk: bytecode read back from a file would be host code that whoever can write
        the file makes us run; compiling a launcher costs a fraction of a millisecond, once
        per process."""
        code = self._code.get((filename, source))
        if code is None:
            code = compile(source, filename, "exec")
            with self._lock:
                self._code[(filename, source)] = code
        return code

    def load(self, key: str):
        """The cached compilation of ``key`` (memory, then disk), or None."""
        c = self._by_key.get(key)
        if c is None:
            c = self._load(key)
            if c is not None:
                self.stats["disk_hits"] += 1
                self._by_key[key] = c
        return c

    def kernels_digest(self) -> str:
        """sha256 over every file of the kernels folder (recomputed when a file's size or
        mtime changes; a stat walk is cheap next to a disk lookup or a compile)."""
        root = str(self.kernel_dir)
        files = []  # (relative posix path, size, mtime, full path); plain os calls: this
        if os.path.isdir(root):  # runs on every program's first use in a process
            for dirpath, dirnames, filenames in os.walk(root):
                dirnames[:] = sorted(d for d in dirnames if not d.startswith((".", "__")))
                rel_dir = os.path.relpath(dirpath, root).replace(os.sep, "/")
                for f in sorted(filenames):
                    if f.startswith(".") or f.endswith((".pyc", ".pyo")):
                        continue
                    full = os.path.join(dirpath, f)
                    try:
                        st = os.stat(full)
                    except OSError:
                        continue
                    rel = f if rel_dir == "." else f"{rel_dir}/{f}"
                    files.append((rel, st.st_size, st.st_mtime_ns, full))
        sig = tuple(f[:3] for f in files)
        if sig != self._digest_sig:
            h = hashlib.sha256()
            for rel, _, _, p in files:
                try:
                    with open(p, "rb") as fh:
                        data = fh.read()
                except OSError:
                    data = b"<unreadable>"
                h.update(rel.encode() + b"\0" + len(data).to_bytes(8, "little") + data)
            self._digest, self._digest_sig = h.hexdigest(), sig
        return self._digest

    def clear_memory(self) -> None:
        """Forget the in-memory entries (the disk cache stays)."""
        with self._lock:
            self._mem.clear()
            self._by_key.clear()

    def path_for(self, key: str) -> Path:
        """Where ``key``'s entry lives (whether it is there, and valid, only ``load`` says)."""
        if not disk_cache.valid_name(key):
            raise ValueError(f"not a kernel cache key: {key!r}")
        return self.cache_dir / f"{key}.cubin"

    # internals ------------------------------------------------------------------------

    def _full_options(self, options, arch) -> list[str]:
        user = list(options)
        out = []
        for default in (*_DEFAULT_OPTIONS, f"-arch={arch}"):
            prefixes = _OVERRIDES["-arch" if default.startswith("-arch") else default]
            if not any(o.startswith(prefixes) for o in user):
                out.append(default)
        dirs = [str(self.kernel_dir)] if self.kernel_dir.is_dir() else []
        dirs += [p for p, _ in include_dirs()]
        out += [f"-I{d}" for d in dirs]
        return out + user

    def _load(self, key: str):
        try:
            payload = self.store.read(key, ".cubin")
        except disk_cache.EntryRejected:
            self.stats["corrupt"] += 1
            return None
        if payload is None:
            return None
        try:  # authenticated, so written by us for this key: this parses
            (mlen,) = struct.unpack_from("<I", payload, 0)
            meta = json.loads(payload[4:4 + mlen].decode())
            if meta["key"] != key:
                raise ValueError("entry of another key")
            cubin = payload[4 + mlen:]
            return Compiled(cubin, dict(meta["lowered"]), str(meta["log"]), key)
        except (ValueError, struct.error, KeyError, TypeError):
            self.stats["corrupt"] += 1
            return None

    def _store(self, key: str, c: Compiled) -> None:
        meta = json.dumps({"key": key, "lowered": c.lowered_names, "log": c.log}).encode()
        self.store.write(key, ".cubin", struct.pack("<I", len(meta)) + meta + c.cubin)


_default_cache = None
_default_lock = threading.Lock()


def default_cache() -> KernelCache:
    """The process's cache (``CUPYNUM_CACHE_DIR`` read on first use)."""
    global _default_cache
    if _default_cache is None:
        with _default_lock:
            if _default_cache is None:
                _default_cache = KernelCache()
    return _default_cache


def compile_cubin(source: str, *, options=(), name_expressions=(), arch=None,
                  name: str = "cupynum_kernel.cu") -> Compiled:
    """Compile CUDA C++ ``source`` to a cubin through the default cache.

    Default options: ``-std=c++17 --fmad=false -arch=<arch>`` plus include paths for the
    kernels folder, the CUDA runtime headers and CCCL; ``options`` are appended and replace
    a default of the same kind.  ``name_expressions`` (e.g. ``"add_kernel<float>"``) are
    lowered to mangled names, found in ``Compiled.lowered_names``.  Raises CompileError.
    """
    return default_cache().compile(source, options=options, name_expressions=name_expressions,
                                   arch=arch, name=name)
