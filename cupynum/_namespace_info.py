"""``cupynum.__array_namespace_info__()`` (Python array API standard)."""
from __future__ import annotations

import numpy as np


_KINDS = {
    "bool": "?", "signed integer": "bhil", "unsigned integer": "BHIL",
    "integral": "bhilBHIL", "real floating": "fd", "complex floating": "FD",
    "numeric": "bhilBHILfdFD",
}


class Info:
    def capabilities(self):
        return {"boolean indexing": True, "data-dependent shapes": True,
                "max dimensions": 64}

    def default_device(self):
        return self.devices()[0]

    def devices(self):
        from ._device import current_device

        return [current_device()]

    def default_dtypes(self, *, device=None):
        return {"real floating": np.dtype(np.float64), "complex floating": np.dtype(np.complex128),
                "integral": np.dtype(np.intp), "indexing": np.dtype(np.intp)}

    def dtypes(self, *, device=None, kind=None):
        if kind is None:
            chars = "?bhilBHILfdFD"
        elif isinstance(kind, tuple):
            chars = "".join(_KINDS[k] for k in kind)
        else:
            chars = _KINDS[kind]
        return {np.dtype(c).name: np.dtype(c) for c in chars}
