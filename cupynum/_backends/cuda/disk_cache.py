"""The kernel cache's folder: entries that only this user's cupynum can have written.

The cache keeps compiled cubins (and which cubin a recipe compiled to), never host code.
What it protects against, and what it does not, is in docs/settings.md ("Trust"); in
short: files in the folder may have been planted, damaged, swapped or linked by anything
but cupynum running as this user, and none of them may make us load a kernel other than
the one we compiled for that name.

- The folder is used only if this user owns it and no one else can write to it (checked
  on the opened directory, which is never a symbolic link); otherwise we warn once and the
  cache lives in memory only.  It is created with mode 0700 in one step, so another user
  cannot slip in between creating and checking it (the ``/tmp`` fallback).
- Every name is validated (64 lowercase hex digits and a known suffix), and every file is
  opened relative to the opened folder without following links, and must be a regular
  file of ours that others cannot write.
- Every entry carries an HMAC-SHA256 of its name and its contents under a random 32-byte
  key kept in the folder (``hmac.key``, mode 0600), checked before anything is used: a
  damaged, truncated, planted or renamed entry is rejected (``EntryRejected``) and the
  caller compiles again.
- Writes go to a temp file of ours, renamed into place; the first write of a process
  removes crashed writers' temp files older than ``STALE_TEMP_SECONDS``.
"""
from __future__ import annotations

import errno
import hashlib
import hmac
import os
import re
import secrets
import stat
import threading
import time
import warnings
from pathlib import Path

__all__ = ["DiskStore", "EntryRejected", "SUFFIXES", "valid_name"]

MAGIC = b"CPNKC002"
TAG_BYTES = 32
KEY_FILE = "hmac.key"
KEY_BYTES = 32
SUFFIXES = (".cubin", ".alias")
MAX_ENTRY_BYTES = 512 << 20  # far above any cubin; a bigger file is not ours
STALE_TEMP_SECONDS = 600  # a writer that has not renamed its temp file by then has died

_NAME = re.compile(r"[0-9a-f]{64}")
_TEMP = re.compile(r"\.tmp-\d+-[0-9a-f]{16}\.(?:cubin|alias|key)")
# Files of earlier cupynum versions: mkstemp temp files, and the launchers' bytecode, which
# is no longer read (it was host code: see python_code in compiler.py).
_OLD_TEMP = re.compile(r"\.tmp-[a-z0-9_]{8}\.(?:cubin|alias|marshal)")
_OLD_CODE = re.compile(r"py-[a-z0-9_.-]+-[0-9a-f]{40}\.marshal")

_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) \
    | getattr(os, "O_CLOEXEC", 0)
# O_NONBLOCK: opening a planted FIFO must not wait for a writer (fstat then rejects it).
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) \
    | getattr(os, "O_CLOEXEC", 0)
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) \
    | getattr(os, "O_CLOEXEC", 0)
_SUPPORTED = (hasattr(os, "O_NOFOLLOW") and hasattr(os, "O_DIRECTORY")
              and os.open in os.supports_dir_fd and os.stat in os.supports_dir_fd)


class EntryRejected(Exception):
    """A file stands under an entry's name that this cache did not write for that name."""


def valid_name(name) -> bool:
    """Whether ``name`` can name an entry: a sha256 in lowercase hex, nothing else (no
    separators, no absolute paths, no dots)."""
    return isinstance(name, str) and _NAME.fullmatch(name) is not None


def _entry_file(name: str, suffix: str) -> str:
    if not valid_name(name) or suffix not in SUFFIXES:
        raise ValueError(f"not a kernel cache entry name: {name!r}{suffix}")
    return name + suffix


def _distrust(st, *, private: bool) -> str | None:
    """Why a file or folder with this ``lstat``/``fstat`` result cannot be trusted, or None:
    it must belong to us and no one else may write it (``private``: nor read it)."""
    uid = os.geteuid()
    if st.st_uid != uid:
        return f"it belongs to uid {st.st_uid}, not to this user (uid {uid})"
    mode = stat.S_IMODE(st.st_mode)
    if mode & (0o077 if private else 0o022):
        return (f"its mode {mode:04o} lets other users "
                f"{'read or write' if private else 'write to'} it")
    return None


class DiskStore:
    """Authenticated entries in one folder (see the module docstring).  Thread-safe; the
    folder is opened and checked on first use, and its descriptor kept."""

    def __init__(self, path):
        self.path = Path(path).expanduser()
        self._lock = threading.Lock()
        self._opened = False
        self._fd = None
        self._key = None
        self.problem = None  # why the folder is not used (or no longer written), or None
        self._writable = True
        self._swept = False

    # public ---------------------------------------------------------------------------

    def usable(self) -> bool:
        return self._dir() is not None

    def read(self, name: str, suffix: str):
        """The contents stored under ``name + suffix``; None if there is no such file (or the
        folder is not used).  Raises ``EntryRejected`` if a file is there that we did not
        write for this name, and ValueError for an invalid name."""
        fname = _entry_file(name, suffix)
        fd = self._dir()
        if fd is None:
            return None
        try:
            f = os.open(fname, _READ_FLAGS, dir_fd=fd)
        except FileNotFoundError:
            return None
        except OSError as e:
            if e.errno == errno.ELOOP:
                raise EntryRejected(f"{fname} is a symbolic link") from None
            return None  # unreadable: as if absent (we compile, and may replace it)
        try:
            st = os.fstat(f)
            if not stat.S_ISREG(st.st_mode):
                raise EntryRejected(f"{fname} is not a regular file")
            why = _distrust(st, private=False)
            if why:
                raise EntryRejected(f"{fname}: {why}")
            blob = _read_at_most(f, MAX_ENTRY_BYTES + 1)
        except OSError:
            return None  # an I/O error: as if absent
        finally:
            os.close(f)
        head = len(MAGIC) + TAG_BYTES
        if len(blob) < head or len(blob) > MAX_ENTRY_BYTES or blob[:len(MAGIC)] != MAGIC:
            raise EntryRejected(f"{fname} is not an entry of this cache format")
        payload = blob[head:]
        if not hmac.compare_digest(blob[len(MAGIC):head], self._tag(fname, payload)):
            raise EntryRejected(f"{fname} fails authentication")
        return payload

    def write(self, name: str, suffix: str, payload: bytes) -> None:
        """Store ``payload`` under ``name + suffix``, atomically (best effort: if the folder
        cannot be written, warn once and stop trying)."""
        fname = _entry_file(name, suffix)
        fd = self._dir()
        if fd is None or not self._writable:
            return
        blob = MAGIC + self._tag(fname, payload) + payload
        if not self._swept:
            self._swept = True
            self._remove_stale_files(fd)
        tmp = _temp_name(suffix)
        try:
            _create(fd, tmp, blob)
        except OSError as e:
            with self._lock:
                first, self._writable = self._writable, False
                if first:
                    self.problem = f"cannot write to it ({e.strerror or e})"
            if first:
                _warn(f"cupynum: cannot write the kernel cache directory {self.path} "
                      f"({e.strerror or e}); compiled kernels are cached in memory only "
                      "(set CUPYNUM_CACHE_DIR)")
            return
        try:
            os.replace(tmp, fname, src_dir_fd=fd, dst_dir_fd=fd)
        except OSError:  # e.g. a directory planted under the name: skip this one entry
            _unlink(fd, tmp)

    def close(self) -> None:
        with self._lock:
            fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    def __del__(self):
        fd = getattr(self, "_fd", None)
        if fd is not None:
            try:
                os.close(fd)
            except Exception:  # noqa: BLE001 - at interpreter exit os may be gone
                pass

    # internals ------------------------------------------------------------------------

    def _dir(self):
        if self._opened:
            return self._fd
        with self._lock:
            if not self._opened:
                try:
                    self._fd, self._key = self._open()
                except (_Refused, OSError) as e:
                    self.problem = str(e)
                    _warn(f"cupynum: not using the kernel cache directory {self.path}: {e}; "
                          "compiled kernels are cached in memory only (set CUPYNUM_CACHE_DIR "
                          "to a directory of your own)")
                self._opened = True
        return self._fd

    def _open(self):
        """(directory fd, HMAC key) of a trusted folder, created if missing; else _Refused."""
        if not _SUPPORTED:
            raise _Refused("this platform cannot open files without following links")
        path = os.fspath(self.path)
        try:
            os.mkdir(path, 0o700)  # in one step: the folder is ours from the start
        except FileExistsError:
            pass
        except FileNotFoundError:
            try:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                os.mkdir(path, 0o700)
            except FileExistsError:
                pass
            except OSError as e:
                raise _Refused(f"cannot create it ({e.strerror or e})") from None
        except OSError as e:
            raise _Refused(f"cannot create it ({e.strerror or e})") from None
        try:
            fd = os.open(path, _DIR_FLAGS)
        except OSError as e:
            raise _Refused("it is a symbolic link" if os.path.islink(path) else
                           f"cannot open it ({e.strerror or e})") from None
        try:
            st = os.fstat(fd)
            why = None if stat.S_ISDIR(st.st_mode) else "it is not a directory"
            why = why or _distrust(st, private=False)
            if why:
                raise _Refused(why)
            return fd, self._hmac_key(fd)
        except BaseException:
            os.close(fd)
            raise

    def _hmac_key(self, fd) -> bytes:
        """The folder's key, made on first use: a random key in a temp file linked into
        place, so a concurrent process sees either no key file or a complete one."""
        try:
            return _read_key(fd)
        except FileNotFoundError:
            pass
        tmp = _temp_name(".key")
        try:
            _create(fd, tmp, secrets.token_bytes(KEY_BYTES))
            try:
                os.link(tmp, KEY_FILE, src_dir_fd=fd, dst_dir_fd=fd)
            except FileExistsError:  # another process was first: use its key
                pass
            finally:
                _unlink(fd, tmp)
            return _read_key(fd)
        except OSError as e:
            raise _Refused(f"cannot create its key file {KEY_FILE} ({e.strerror or e})") \
                from None

    def _tag(self, fname: str, payload) -> bytes:
        h = hmac.new(self._key, b"cupynum kernel cache\0" + fname.encode() + b"\0",
                     hashlib.sha256)
        h.update(payload)
        return h.digest()

    def _remove_stale_files(self, fd) -> None:
        """Temp files of writers that died (our name pattern, ours, older than
        ``STALE_TEMP_SECONDS``) and bytecode files of earlier versions."""
        try:
            names = os.listdir(fd)
        except OSError:
            return
        now, uid = time.time(), os.geteuid()
        for n in names:
            old_code = _OLD_CODE.fullmatch(n) is not None
            if not (old_code or _TEMP.fullmatch(n) or _OLD_TEMP.fullmatch(n)):
                continue
            try:
                st = os.stat(n, dir_fd=fd, follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode) or st.st_uid != uid:
                continue
            if old_code or now - st.st_mtime > STALE_TEMP_SECONDS:
                _unlink(fd, n)


class _Refused(Exception):
    """The folder cannot be trusted or used; the message says why."""


def _read_key(fd) -> bytes:
    try:
        f = os.open(KEY_FILE, _READ_FLAGS, dir_fd=fd)
    except OSError as e:
        if e.errno == errno.ENOENT:
            raise FileNotFoundError(KEY_FILE) from None
        raise _Refused(f"its key file {KEY_FILE} is a symbolic link" if e.errno == errno.ELOOP
                       else f"cannot read its key file {KEY_FILE} ({e.strerror or e})") \
            from None
    try:
        st = os.fstat(f)
        why = (None if stat.S_ISREG(st.st_mode) and st.st_size == KEY_BYTES
               else "it is not a 32-byte file")
        why = why or _distrust(st, private=True)
        if why:
            raise _Refused(f"its key file {KEY_FILE} cannot be trusted: {why}")
        key = _read_at_most(f, KEY_BYTES + 1)
    finally:
        os.close(f)
    if len(key) != KEY_BYTES:
        raise _Refused(f"its key file {KEY_FILE} changed while read")
    return key


def _read_at_most(f, limit: int) -> bytes:
    chunks, n = [], 0
    while n < limit:
        chunk = os.read(f, min(limit - n, 1 << 24))
        if not chunk:
            break
        chunks.append(chunk)
        n += len(chunk)
    return b"".join(chunks)


def _temp_name(suffix: str) -> str:
    return f".tmp-{os.getpid()}-{secrets.token_hex(8)}{suffix}"


def _create(fd, name: str, data: bytes) -> None:
    """Write a new private file ``name`` in folder ``fd`` (never an existing file or link)."""
    f = os.open(name, _CREATE_FLAGS, 0o600, dir_fd=fd)
    try:
        with os.fdopen(f, "wb") as fh:
            fh.write(data)
    except BaseException:
        _unlink(fd, name)
        raise


def _unlink(fd, name: str) -> None:
    try:
        os.unlink(name, dir_fd=fd)
    except OSError:
        pass


def _warn(message: str) -> None:
    warnings.warn(message, RuntimeWarning, stacklevel=5)
