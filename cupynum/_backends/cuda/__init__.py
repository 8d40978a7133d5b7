"""The CUDA backend (backend.py) and its parts."""


class CudaTraits:
    """What the CUDA backend is, answered without importing it or creating a context
    (``_backends._DeviceToCome``): ``CudaBackend``'s plain class attributes."""

    name = "cuda"
    side = "device"
    host_memory = False
    cuda_memory = True
    gram_svd = True
