"""The kernel cache cannot be poisoned: nothing in its folder makes cupynum run code, or
load a kernel, other than what it would itself have produced for that name.

NVRTC only (no GPU) but for the last test: two tiny kernels are compiled once for the
module, and each test tampers with a private copy of that warm folder.  Ownership tests
(a folder or file of uid 65534) need root and are skipped otherwise."""
from __future__ import annotations

import hashlib
import json
import marshal
import os
import random
import shutil
import stat
import struct
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import warnings
from pathlib import Path
from types import SimpleNamespace

import pytest

from cupynum._backends.cuda import compiler, disk_cache

ADD_ONE = 'extern "C" __global__ void cpn_tamper(float* p) { p[0] += 1.0f; }'
ADD_SEVEN = 'extern "C" __global__ void cpn_tamper(float* p) { p[0] += 7.0f; }'
NOBODY = 65534
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to chown to another user")


@pytest.fixture(scope="module")
def warm(tmp_path_factory):
    """A cache folder holding the entries of ADD_ONE and ADD_SEVEN and an alias for each."""
    root = tmp_path_factory.mktemp("tamper")
    kernels = root / "kernels"
    kernels.mkdir()
    kc = compiler.KernelCache(root / "cache", kernels=kernels)
    one, seven = kc.compile(ADD_ONE), kc.compile(ADD_SEVEN)
    alias_one, alias_seven = kc.alias("recipe-one", "fp"), kc.alias("recipe-seven", "fp")
    kc.remember_alias(alias_one, one.key)
    kc.remember_alias(alias_seven, seven.key)
    assert one.cubin != seven.cubin
    return SimpleNamespace(dir=root / "cache", kernels=kernels, one=one, seven=seven,
                           alias_one=alias_one, alias_seven=alias_seven)


@pytest.fixture
def c(warm, tmp_path):
    """A private copy of the warm folder; ``c.fresh()`` is a new KernelCache over it (a new
    process, as far as the cache can tell)."""
    d = tmp_path / "cache"
    shutil.copytree(warm.dir, d)  # modes kept: 0700 folder, 0600 files
    ns = SimpleNamespace(**vars(warm))
    ns.dir = d
    ns.fresh = lambda: compiler.KernelCache(d, kernels=warm.kernels)
    ns.entry = lambda key: d / f"{key}.cubin"
    ns.alias_file = lambda alias: d / f"{alias}.alias"
    return ns


def _listing(d):
    return sorted((p.name, p.read_bytes() if p.is_file() else None) for p in Path(d).iterdir())


def _rejected(kc, key):
    """``key``'s entry is rejected without being used: no hit, counted as corrupt."""
    return kc.load(key) is None and kc.stats["corrupt"] == 1 and kc.stats["disk_hits"] == 0


def _refused(kc, c, match):
    """The folder is refused with one warning matching ``match``: the valid entries in it
    are not used, kernels still compile (into memory), and nothing is written to it."""
    before = _listing(c.dir)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert kc.load(c.one.key) is None
        assert kc.alias_key(c.alias_one) is None
        got = kc.compile(ADD_ONE)
        kc.remember_alias(c.alias_seven, c.one.key)
    messages = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert len(messages) == 1 and match in messages[0] and "memory only" in messages[0], messages
    assert kc.stats["disk_hits"] == 0 and kc.stats["compiles"] == 1
    assert got.cubin == c.one.cubin
    assert kc.store.problem and match in kc.store.problem
    assert _listing(c.dir) == before


def test_the_copy_serves_hits(c):
    kc = c.fresh()
    assert kc.load(c.one.key).cubin == c.one.cubin
    assert kc.alias_key(c.alias_seven) == c.seven.key
    assert kc.compile(ADD_SEVEN).cubin == c.seven.cubin
    assert kc.stats == {"memory_hits": 0, "disk_hits": 2, "compiles": 0, "corrupt": 0}


# --- corrupted --------------------------------------------------------------------------


def test_bit_flips_are_rejected_then_recompiled(c):
    """100 random single-bit flips over a cubin entry (and every part of its layout:
    magic, tag, header): each is rejected, never loaded; the entry is then rewritten."""
    path = c.entry(c.one.key)
    good = path.read_bytes()
    rng = random.Random(13)
    bits = [0, 8 * 8, 8 * 40, 8 * 44] + rng.sample(range(8 * len(good)), 100)
    for bit in bits:
        blob = bytearray(good)
        blob[bit // 8] ^= 1 << (bit % 8)
        path.write_bytes(bytes(blob))
        assert _rejected(c.fresh(), c.one.key), bit
    kc = c.fresh()
    assert kc.compile(ADD_ONE).cubin == c.one.cubin
    assert kc.stats["corrupt"] == 1 and kc.stats["compiles"] == 1
    assert path.read_bytes() == good  # rewritten: same key, same cubin, same tag
    assert c.fresh().load(c.one.key).cubin == c.one.cubin


def test_bit_flips_in_an_alias_are_rejected(c):
    path = c.alias_file(c.alias_one)
    good = path.read_bytes()
    for bit in random.Random(5).sample(range(8 * len(good)), 40):
        blob = bytearray(good)
        blob[bit // 8] ^= 1 << (bit % 8)
        path.write_bytes(bytes(blob))
        kc = c.fresh()
        assert kc.alias_key(c.alias_one) is None and kc.stats["corrupt"] == 1, bit


@pytest.mark.parametrize("keep", [0, 7, 8, 39, 40, 44, "half", "all but one"])
def test_torn_entries_are_rejected(c, keep):
    path = c.entry(c.one.key)
    good = path.read_bytes()
    n = {"half": len(good) // 2, "all but one": len(good) - 1}.get(keep, keep)
    path.write_bytes(good[:n])
    assert _rejected(c.fresh(), c.one.key)


# --- forged and planted -------------------------------------------------------------------


def _payload(key, cubin, lowered=None):
    """An entry's contents as the cache lays them out (compiler.KernelCache._store)."""
    meta = json.dumps({"key": key, "lowered": lowered or {}, "log": ""}).encode()
    return struct.pack("<I", len(meta)) + meta + cubin


def test_an_entry_renamed_to_another_key_is_rejected(c):
    """The one-flipped-byte attack, done by renaming: ADD_SEVEN's valid entry under
    ADD_ONE's name must not load, and compiling ADD_ONE gives the +1 kernel."""
    shutil.copyfile(c.entry(c.seven.key), c.entry(c.one.key))
    assert _rejected(c.fresh(), c.one.key)
    kc = c.fresh()
    assert kc.compile(ADD_ONE).cubin == c.one.cubin and kc.stats["compiles"] == 1
    shutil.copyfile(c.alias_file(c.alias_seven), c.alias_file(c.alias_one))
    kc = c.fresh()
    assert kc.alias_key(c.alias_one) is None and kc.stats["corrupt"] == 1


def test_an_entry_forged_without_the_folders_key_is_rejected(c, tmp_path):
    """Whoever knows the format but not the folder's HMAC key (an entry of another cache
    folder, or one made up) cannot make one: ADD_SEVEN's cubin labelled as ADD_ONE's."""
    other = disk_cache.DiskStore(tmp_path / "other")
    other.write(c.one.key, ".cubin", _payload(c.one.key, c.seven.cubin))
    other.write(c.alias_one, ".alias", c.seven.key.encode())
    shutil.copyfile(tmp_path / "other" / f"{c.one.key}.cubin", c.entry(c.one.key))
    shutil.copyfile(tmp_path / "other" / f"{c.alias_one}.alias", c.alias_file(c.alias_one))
    assert _rejected(c.fresh(), c.one.key)
    kc = c.fresh()
    assert kc.alias_key(c.alias_one) is None and kc.stats["corrupt"] == 1


def test_an_entry_of_the_old_unauthenticated_format_is_rejected(c):
    """Format 1 carried a plain sha256 of its payload: anyone could compute it."""
    payload = _payload(c.one.key, c.seven.cubin)
    c.entry(c.one.key).write_bytes(b"CPNKC001" + hashlib.sha256(payload).digest() + payload)
    assert _rejected(c.fresh(), c.one.key)


@pytest.mark.parametrize("content", ["garbage", "empty", "valid entry of another key"])
def test_a_planted_entry_under_a_new_valid_looking_name_is_rejected(c, content):
    kc = c.fresh()
    name = kc.key(ADD_ONE + "\n// never compiled\n")
    data = {"garbage": os.urandom(4096), "empty": b"",
            "valid entry of another key": c.entry(c.seven.key).read_bytes()}[content]
    c.entry(name).write_bytes(data)
    os.chmod(c.entry(name), 0o600)
    assert _rejected(kc, name)


def test_python_code_is_never_read_from_or_written_to_the_folder(c):
    """Launchers' bytecode used to be cached as marshal files: a planted one ran as the
    user.  python_code now compiles in memory and never opens the folder."""
    source = "def f(x):\n    return x + 1\n"
    name = "<launcher tamper test>"
    evil = compile("def f(x):\n    return x + 7\n", name, "exec")
    digest = hashlib.sha256(f"{name}\0{source}".encode()).hexdigest()[:40]
    planted = c.dir / f"py-{sys.implementation.cache_tag}-{digest}.marshal"
    planted.write_bytes(marshal.dumps(evil))
    before = _listing(c.dir)
    kc = c.fresh()
    ns = {}
    exec(kc.python_code(source, name), ns)
    assert ns["f"](1) == 2
    assert kc.python_code(source, name) is kc.python_code(source, name)
    assert _listing(c.dir) == before


# --- links, odd files, ownership and modes --------------------------------------------------


def test_a_symlinked_entry_is_rejected_and_replaced_by_a_file(c, tmp_path):
    target = tmp_path / "elsewhere.cubin"
    shutil.move(c.entry(c.one.key), target)
    os.symlink(target, c.entry(c.one.key))
    assert _rejected(c.fresh(), c.one.key)
    kc = c.fresh()
    assert kc.compile(ADD_ONE).cubin == c.one.cubin and kc.stats["compiles"] == 1
    assert not c.entry(c.one.key).is_symlink() and c.entry(c.one.key).is_file()
    assert c.fresh().load(c.one.key).cubin == c.one.cubin
    assert target.read_bytes() == c.entry(c.one.key).read_bytes()  # the target untouched


@pytest.mark.parametrize("kind", ["fifo", "directory"])
def test_a_fifo_or_directory_under_an_entry_name_is_rejected(c, kind):
    """A FIFO is opened without waiting for a writer; neither crashes a compile."""
    path = c.entry(c.one.key)
    path.unlink()
    os.mkfifo(path, 0o600) if kind == "fifo" else path.mkdir(0o700)
    assert _rejected(c.fresh(), c.one.key)
    kc = c.fresh()
    assert kc.compile(ADD_ONE).cubin == c.one.cubin  # (a FIFO is replaced, a folder stays)
    assert kc.compile(ADD_SEVEN).cubin == c.seven.cubin and kc.stats["disk_hits"] == 1


def test_an_entry_writable_by_others_is_rejected(c):
    os.chmod(c.entry(c.one.key), 0o666)
    assert _rejected(c.fresh(), c.one.key)


@as_root
def test_an_entry_owned_by_another_user_is_rejected(c):
    os.chown(c.entry(c.one.key), NOBODY, NOBODY)
    assert _rejected(c.fresh(), c.one.key)


def test_a_symlinked_cache_directory_is_refused(c, tmp_path):
    link = tmp_path / "link"
    os.symlink(c.dir, link)
    _refused(compiler.KernelCache(link, kernels=c.kernels), c, "symbolic link")


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o702])
def test_a_cache_directory_writable_by_others_is_refused(c, mode):
    os.chmod(c.dir, mode)
    _refused(c.fresh(), c, "lets other users write")


@as_root
def test_a_cache_directory_owned_by_another_user_is_refused(c):
    os.chown(c.dir, NOBODY, NOBODY)
    _refused(c.fresh(), c, f"belongs to uid {NOBODY}")


@pytest.mark.parametrize("damage", ["readable by others", "symlink", "wrong size",
                                    pytest.param("owned by another user", marks=as_root)])
def test_a_key_file_that_is_not_private_and_ours_is_refused(c, tmp_path, damage):
    key = c.dir / disk_cache.KEY_FILE
    if damage == "readable by others":
        os.chmod(key, 0o644)
    elif damage == "symlink":
        shutil.move(key, tmp_path / "key")
        os.symlink(tmp_path / "key", key)
    elif damage == "wrong size":
        key.write_bytes(key.read_bytes() + b"\0")
    else:
        os.chown(key, NOBODY, NOBODY)
    _refused(c.fresh(), c, "key file")


def test_a_lost_key_file_makes_a_new_key_and_old_entries_recompile(c):
    (c.dir / disk_cache.KEY_FILE).unlink()
    assert _rejected(c.fresh(), c.one.key)
    key = c.dir / disk_cache.KEY_FILE
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and key.stat().st_size == 32
    kc = c.fresh()
    assert kc.compile(ADD_ONE).cubin == c.one.cubin and kc.stats["compiles"] == 1
    assert c.fresh().load(c.one.key).cubin == c.one.cubin


def test_processes_starting_together_agree_on_one_key(tmp_path):
    """The key file appears complete or not at all, and the first one made wins."""
    stores = [disk_cache.DiskStore(tmp_path / "new") for _ in range(8)]
    name = "ab" * 32
    errors = []

    def work(i, s):
        try:
            s.write(name, ".alias", b"x" * 64 if i == 0 else b"y" * 64)
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i, s)) for i, s in enumerate(stores)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len({s._key for s in stores}) == 1
    assert all(s.read(name, ".alias") in (b"x" * 64, b"y" * 64) for s in stores)
    assert not [p for p in (tmp_path / "new").iterdir() if p.name.startswith(".tmp-")]


# --- the folder's place and names ---------------------------------------------------------


def _no_home():
    raise RuntimeError("no home directory")


def test_without_a_home_directory_the_tmp_fallback_is_made_private(monkeypatch, tmp_path):
    monkeypatch.setattr(Path, "home", staticmethod(_no_home))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    d = compiler._default_cache_dir()
    assert d == tmp_path / f"cupynum-cache-{os.geteuid()}"
    old = os.umask(0o000)  # the folder is created 0700 whatever the umask
    try:
        assert compiler.KernelCache(d).store.usable()
    finally:
        os.umask(old)
    st = os.lstat(d)
    assert stat.S_ISDIR(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o700
    assert st.st_uid == os.geteuid()


@as_root
def test_a_tmp_fallback_made_first_by_another_user_is_refused(monkeypatch, tmp_path, warm):
    monkeypatch.setattr(Path, "home", staticmethod(_no_home))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    d = compiler._default_cache_dir()
    d.mkdir(mode=0o700)
    os.chown(d, NOBODY, NOBODY)
    kc = compiler.KernelCache(d, kernels=warm.kernels)
    with pytest.warns(RuntimeWarning, match=f"belongs to uid {NOBODY}"):
        assert not kc.store.usable()
    assert kc.compile(ADD_ONE).cubin == warm.one.cubin
    assert list(d.iterdir()) == []


BAD_NAMES = ["", "0" * 63, "0" * 65, "A" * 64, "g" * 64, "../" + "0" * 61, "/etc/passwd",
             "/" + "0" * 63, "0" * 31 + "/" + "0" * 32, "0" * 62 + "..", "0" * 64 + "\0",
             "0" * 64 + ".cubin", None]


@pytest.mark.parametrize("bad", BAD_NAMES)
def test_invalid_names_are_refused_before_any_file_is_opened(c, bad):
    """Alias and entry names are 64 lowercase hex digits: no separator, absolute path,
    dot or NUL can send a read or write outside the folder."""
    before = _listing(c.dir)
    kc = c.fresh()
    for call in (lambda: kc.alias_key(bad), lambda: kc.load(bad), lambda: kc.path_for(bad),
                 lambda: kc.remember_alias(bad, c.one.key),
                 lambda: kc.remember_alias(c.alias_one, bad)):
        with pytest.raises(ValueError):
            call()
    assert _listing(c.dir) == before


def test_an_alias_must_name_a_valid_key(c):
    kc = c.fresh()
    kc.store.write(c.alias_one, ".alias", b"../../../../etc/passwd")  # authenticated, bad
    assert kc.alias_key(c.alias_one) is None


# --- temp files ------------------------------------------------------------------------


def test_stale_temp_files_of_crashed_writers_are_removed(c):
    old = time.time() - 2 * disk_cache.STALE_TEMP_SECONDS
    files = {
        ".tmp-4242-0123456789abcdef.cubin": True,  # ours, stale: removed
        ".tmp-4242-fedcba9876543210.alias": False,  # ours, recent: a live writer's
        ".tmp-abcd_123.cubin": True,  # an earlier version's mkstemp name, stale
        f"py-{sys.implementation.cache_tag}-{'0' * 40}.marshal": True,  # old bytecode
        ".tmp-not-ours": False,  # not our pattern
        "notes.txt": False,
    }
    for name, stale in files.items():
        (c.dir / name).write_bytes(b"x")
        if stale or name in (".tmp-not-ours", "notes.txt"):
            os.utime(c.dir / name, (old, old))
    (c.dir / ".tmp-4243-0000000000000000.cubin").mkdir()  # a folder: never removed
    os.utime(c.dir / ".tmp-4243-0000000000000000.cubin", (old, old))
    kc = c.fresh()
    assert kc.alias_key(c.alias_one) == c.one.key  # reading removes nothing
    assert all((c.dir / n).exists() for n in files)
    kc.remember_alias(c.alias_seven, c.seven.key)  # the first write of a process sweeps
    left = {p.name for p in c.dir.iterdir()}
    assert {n for n, gone in files.items() if gone} & left == set()
    assert {n for n, gone in files.items() if not gone} <= left
    assert ".tmp-4243-0000000000000000.cubin" in left


@as_root
def test_stale_temp_files_of_another_user_are_kept(c):
    name = ".tmp-4242-0123456789abcdef.cubin"
    (c.dir / name).write_bytes(b"x")
    os.chown(c.dir / name, NOBODY, NOBODY)
    old = time.time() - 2 * disk_cache.STALE_TEMP_SECONDS
    os.utime(c.dir / name, (old, old))
    c.fresh().remember_alias(c.alias_seven, c.seven.key)
    assert (c.dir / name).exists()


# --- on the GPU: a damaged cache never changes a result --------------------------------------


@pytest.mark.gpu
def test_flipped_bits_in_every_entry_never_change_a_result(tmp_path):
    """Fill a cache with the kernels of ``x + 1``, flip one random bit in every file of it,
    run again in a new process: the result is right and the process survives (3 rounds)."""
    script = textwrap.dedent("""
        import cupynum as cp
        x = cp.arange(5.0)
        print((x + 1).tolist(), (x * 3).tolist())
    """)
    env = dict(os.environ, CUPYNUM_CACHE_DIR=str(tmp_path / "cache"), CUPYNUM_BACKEND="cuda",
               CUPYNUM_PLACEMENT="device")  # (under auto, five elements stay on the host)
    expected = "[1.0, 2.0, 3.0, 4.0, 5.0] [0.0, 3.0, 6.0, 9.0, 12.0]"
    rng = random.Random(1)
    for round_ in range(4):
        p = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                           text=True, timeout=300)
        assert p.returncode == 0 and p.stdout.strip() == expected, (round_, p.stderr[-2000:])
        for f in (tmp_path / "cache").iterdir():
            if f.suffix in (".cubin", ".alias"):
                blob = bytearray(f.read_bytes())
                if blob:
                    bit = rng.randrange(8 * len(blob))
                    blob[bit // 8] ^= 1 << (bit % 8)
                    f.write_bytes(bytes(blob))
