"""Advanced indexing (integer arrays, lists, boolean masks).

For now NumPy computes the advanced part on a host copy (correct, including errors);
basic indexing never comes here (see _indexing.py).
"""
from __future__ import annotations

import numpy as np

from .._array import from_host, ndarray


def _host_key(key):
    if isinstance(key, tuple):
        return tuple(_host_key(k) for k in key)
    if isinstance(key, ndarray):
        return key.get()
    if isinstance(key, list):
        return [_host_key(k) for k in key]
    return key


def getitem_advanced(a, key):
    result = a._host()[_host_key(key)]
    return from_host(np.asarray(result))


def setitem_advanced(a, key, value):
    host = a._host()
    host[_host_key(key)] = value.get() if isinstance(value, ndarray) else value
    from .. import _backends

    _backends.get().write_host(a, host)
