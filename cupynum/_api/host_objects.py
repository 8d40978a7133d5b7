"""NumPy's own objects for what stays on the host: dates and business days, the ``matrix``
and record-array classes, memory maps, and the build and help utilities.

They are explicit attributes (not the fallback's), so using them raises no FallbackWarning:
a user who asks for ``matrix`` or ``memmap`` wants NumPy's class, and business-day
arithmetic has nothing for a GPU to do.  Given cupynum arrays, they read them through
``__array__`` and return NumPy objects.
"""
from __future__ import annotations

import numpy as np

_NAMES = ("asmatrix", "bmat", "matrix", "recarray", "memmap", "busday_count",
          "busday_offset", "busdaycalendar", "is_busday", "datetime_as_string",
          "datetime_data", "get_include", "info", "show_config", "show_runtime",
          "frompyfunc")

__all__ = list(_NAMES)
globals().update({name: getattr(np, name) for name in _NAMES})
