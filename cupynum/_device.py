"""The device an array lives on, as the array API's ``x.device`` reports it."""
from __future__ import annotations

from . import _backends


class _HostDevice:
    def __repr__(self):
        return "cpu"

    def __eq__(self, other):
        return isinstance(other, _HostDevice) or other == "cpu"

    def __hash__(self):
        return hash("cpu")


_HOST = _HostDevice()


def current_device():
    if _backends.for_side("device").cuda_memory:
        from .cuda import Device

        return Device()
    return _HOST
