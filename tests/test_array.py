"""ndarray: attributes, views, reshape, basic indexing, conversions (compared with NumPy)."""
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import cupynum as cp
from helpers import assert_same, compare

DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
          np.uint64, np.float16, np.float32, np.float64, np.complex64, np.complex128]


def sample(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return np.asarray(rng.integers(0, 2, shape)).astype(dt)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return np.asarray(rng.integers(max(info.min, -1000), min(info.max, 1000), shape,
                                       endpoint=True)).astype(dt)
    x = rng.standard_normal(shape) * 10
    if dt.kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return np.asarray(x).astype(dt)


@pytest.mark.parametrize("dtype", DTYPES)
def test_round_trip_and_attributes(dtype):
    h = sample((3, 4), dtype)
    d = cp.asarray(h)
    assert d.shape == h.shape and d.strides == h.strides and d.dtype == h.dtype
    assert d.ndim == 2 and d.size == 12 and d.itemsize == h.itemsize and d.nbytes == h.nbytes
    assert d.flags.c_contiguous and not d.flags.f_contiguous and d.flags.owndata
    assert_same(d, h)
    assert d.get().tobytes() == h.tobytes()
    assert cp.asnumpy(d).tobytes() == h.tobytes()


def test_unsupported_dtypes_refused():
    for bad in (["a", "b"], np.array(["x"]), np.array([1], dtype=object),
                np.array(["2020-01-01"], dtype="datetime64[D]")):
        with pytest.raises(TypeError, match="dtype"):
            cp.asarray(bad)
    with pytest.raises(TypeError):
        cp.zeros(3, dtype="U4")
    with pytest.raises(TypeError):
        cp.empty(3, dtype=[("a", "f4")])


def test_bad_input_errors():
    compare(lambda xp: xp.array([[1, 2], [3]]))  # ragged
    compare(lambda xp: xp.zeros((2, -1)))
    compare(lambda xp: xp.zeros(3, dtype="not-a-dtype"))
    compare(lambda xp, a: a.reshape(4, 4), np.arange(12))
    compare(lambda xp, a: a[5], np.arange(5))
    compare(lambda xp, a: a[0, 0], np.arange(5))
    compare(lambda xp, a: a[..., ..., 0], np.arange(5))


@pytest.mark.parametrize("key", [
    0, -1, slice(None), slice(1, -1), slice(None, None, -1), slice(4, 1, -2), slice(10, 20),
    (0, slice(None)), (Ellipsis, 1), (None, 0), (slice(None), None, slice(1, 3)),
    (Ellipsis, None), (1, 2, 3), (-1, Ellipsis, slice(None, None, 3)), (),
])
def test_basic_getitem(key):
    compare(lambda xp, a: a[key], sample((4, 5, 6), np.float32))


def test_views_share_memory_and_write_through():
    h = np.arange(24, dtype=np.int32).reshape(4, 6)
    d = cp.asarray(h)
    v = d[1:3, ::2]
    assert v.base is d and cp.shares_memory(v, d)
    v[...] = -1
    h[1:3, ::2] = -1
    assert_same(d, h)
    assert not cp.shares_memory(d[:, ::2], d[:, 1::2])
    assert cp.may_share_memory(d[:, ::2], d[:, 1::2])


@pytest.mark.parametrize("key,value", [
    (slice(1, -1), 7), (slice(None, None, -1), np.arange(6.0)), ((0, slice(None)), 2.5),
    ((Ellipsis, 0), np.array([1, 2, 3, 4])), ((slice(None), 2), np.array([[9], [8], [7], [6]])[:, 0]),
    ((slice(0, 2), slice(1, 3)), np.array([[1.5, 2.5]])), (Ellipsis, 3 + 0j if False else 3),
])
def test_basic_setitem(key, value):
    def f(xp, a, v):
        a = a.copy()
        a[key] = v if not isinstance(v, np.ndarray) else xp.asarray(v)
        return a
    compare(f, sample((4, 6), np.float64), value)


def test_setitem_errors_and_casting():
    def bad_broadcast(xp, a):
        a[0:2] = xp.asarray(np.ones(3))
    compare(bad_broadcast, np.zeros((4, 6)))

    def overflow(xp, a):
        a[0] = 300
        return a
    compare(overflow, np.zeros(3, np.uint8))

    def float_into_int(xp, a):
        a[1:] = 2.75
        return a
    compare(float_into_int, np.zeros(3, np.int64))


def test_overlapping_slice_assignment():
    def f(xp, a):
        a[1:] = a[:-1]
        return a
    compare(f, np.arange(10.0))

    def g(xp, a):
        a[::-1] = a
        return a
    compare(g, np.arange(10.0))


@pytest.mark.parametrize("shape,new", [((12,), (3, 4)), ((3, 4), (-1,)), ((3, 4), (2, 2, 3)),
                                       ((3, 4), (4, -1)), ((2, 3, 4), (6, 4)), ((0, 3), (3, 0)),
                                       ((), (1, 1)), ((1,), ())])
@pytest.mark.parametrize("order", ["C", "F", "A"])
def test_reshape(shape, new, order):
    compare(lambda xp, a: a.reshape(new, order=order), sample(shape, np.int16))


def test_reshape_view_or_copy():
    d = cp.arange(24).reshape(4, 6)
    assert d.reshape(6, 4).base is d.base or d.reshape(6, 4).base is d
    t = d.T
    r = t.reshape(24)  # needs a copy
    assert not cp.shares_memory(r, d)
    assert_same(r, np.arange(24).reshape(4, 6).T.reshape(24))
    with pytest.raises(ValueError):
        t.reshape(24, copy=False)
    s = d[:, 1:5]
    assert cp.shares_memory(s.reshape(4, 2, 2), d)


def test_transpose_swapaxes_T_mT():
    h = sample((2, 3, 4), np.float32)
    compare(lambda xp, a: a.T, h)
    compare(lambda xp, a: a.mT, h)
    compare(lambda xp, a: a.transpose(1, 0, 2), h)
    compare(lambda xp, a: a.transpose((2, 0, 1)), h)
    compare(lambda xp, a: a.swapaxes(0, -1), h)
    compare(lambda xp, a: a.transpose(0, 0, 1), h)
    d = cp.asarray(h)
    assert d.T.flags.f_contiguous and not d.T.flags.c_contiguous


@pytest.mark.parametrize("dtype", [np.float32, np.complex128, np.int64, np.uint8])
def test_view_dtype_and_real_imag(dtype):
    h = sample((4, 8), dtype)
    compare(lambda xp, a: a.view(np.uint8), h)
    compare(lambda xp, a: a.view(np.int16) if a.itemsize >= 2 else a.view(np.int8), h)
    compare(lambda xp, a: a.real, h)
    compare(lambda xp, a: a.imag, h)
    compare(lambda xp, a: a[:, ::2].view(np.uint8), h)


def test_real_imag_are_views():
    h = np.array([1 + 2j, 3 - 4j], np.complex64)
    d = cp.asarray(h)
    d.imag[...] = 0
    h.imag = 0
    assert_same(d, h)
    d.real = 5
    h.real = 5
    assert_same(d, h)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("to", [np.bool_, np.int8, np.uint16, np.int64, np.uint64, np.float16,
                                np.float32, np.float64, np.complex64])
def test_astype(dtype, to):
    h = sample((5, 3), dtype)[::2, ::-1]
    compare(lambda xp, a: a.astype(to), h)


def test_astype_casting_rule_and_copy():
    compare(lambda xp, a: a.astype(np.int32, casting="safe"), np.ones(3))
    d = cp.ones(3)
    assert d.astype(np.float64, copy=False) is d
    assert d.astype(np.float64) is not d


@pytest.mark.parametrize("order", ["C", "F", "A", "K"])
def test_copy_orders(order):
    h = sample((3, 4), np.float32).T
    got = compare(lambda xp, a: a.copy(order=order), h)
    assert got.flags.f_contiguous == h.copy(order=order).flags.f_contiguous


def test_fill_and_flatten_ravel_squeeze():
    def fill(xp, a):
        a.fill(3)
        return a
    compare(fill, np.zeros((2, 3), np.float16))
    h = sample((2, 1, 3), np.int32)
    compare(lambda xp, a: a.flatten(), h)
    compare(lambda xp, a: a.flatten("F"), h)
    compare(lambda xp, a: a.ravel(), h[:, :, ::2])
    compare(lambda xp, a: a.squeeze(), h)
    compare(lambda xp, a: a.squeeze(1), h)
    compare(lambda xp, a: a.squeeze(0), h)


def test_scalar_conversions():
    d = cp.asarray(np.float32(2.5))
    assert float(d) == 2.5 and int(cp.asarray(7)) == 7 and complex(d) == 2.5
    assert bool(cp.asarray([1])) is True
    # the truth of a size-1 array and of a view of one element, where the data lies
    v = cp.asarray(np.array([[0.0, 2.0], [np.nan, -0.0]]))
    assert [bool(v[0, 0:1]), bool(v[0, 1:]), bool(v[1:, 0]), bool(v[1, 1:])] == [
        False, True, True, False]
    assert bool(v[0:1, 1] > 1.0) is True and bool(cp.asarray(0) > 0) is False
    with pytest.raises(TypeError):
        float(cp.asarray([1.0]))  # (only 0-d arrays convert, as in NumPy)
    assert [10, 20, 30][cp.asarray(1)] == 20
    assert f"{cp.asarray(3.14159):.2f}" == "3.14"
    with pytest.raises(TypeError):
        [1, 2][cp.asarray(1.0)]
    with pytest.raises(ValueError):
        bool(cp.asarray([1, 2]))
    with pytest.raises(TypeError):
        float(cp.asarray([1.0, 2.0]))
    assert cp.asarray([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    assert cp.asarray([1.5, 2]).item(1) == 2.0
    assert len(cp.zeros((5, 2))) == 5
    with pytest.raises(TypeError):
        len(cp.asarray(1))
    assert [x.item() for x in cp.arange(3)] == [0, 1, 2]


@pytest.mark.parametrize("h", [np.arange(6).reshape(2, 3), np.array(2.5), np.zeros((0, 3)),
                               np.array([1 + 2j, np.nan], np.complex64),
                               np.linspace(0, 1, 2000), np.array([True, False])])
def test_repr_str_match_numpy(h):
    d = cp.asarray(h)
    assert repr(d) == repr(h)
    assert str(d) == str(h)


def test_pickle():
    d = cp.asarray(sample((3, 4), np.complex64))[:, 1:]
    back = pickle.loads(pickle.dumps(d))
    assert_same(back, np.asarray(d))


def test_array_protocol():
    d = cp.arange(4.0)
    assert np.asarray(d).tolist() == [0.0, 1.0, 2.0, 3.0]
    assert np.asarray(d, dtype=np.float32).dtype == np.float32
    if cp.placement(d) != "device":  # a zero-copy view of host data (guide/placement.md)
        view = np.asarray(d, copy=False)
        view[1] = 7.0
        assert d.tolist() == [0.0, 7.0, 2.0, 3.0]
        with pytest.raises(ValueError):  # (a cast cannot be a view)
            np.asarray(d, dtype=np.float32, copy=False)
    else:
        with pytest.raises(ValueError):
            np.asarray(d, copy=False)


def test_shape_setter():
    d = cp.arange(6)
    d.shape = (2, 3)
    assert d.shape == (2, 3)
    with pytest.raises(AttributeError):
        t = d.T
        t.shape = (6,)


def test_data_ptr_and_device():
    d = cp.arange(10, dtype=np.int32)
    assert d[2:].data.ptr - d.data.ptr == 8
    assert d.device is not None


@st.composite
def strided_arrays(draw):
    dtype = draw(st.sampled_from([np.int8, np.uint16, np.float32, np.complex128, np.bool_]))
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5))
    h = sample(shape, dtype, seed=draw(st.integers(0, 100)))
    key = draw(hnp.basic_indices(shape, allow_newaxis=True, allow_ellipsis=True))
    return h, key


@settings(max_examples=60, deadline=None)
@given(strided_arrays())
def test_hypothesis_views_and_copies(case):
    h, key = case
    compare(lambda xp, a: a[key], h)
    if isinstance(h[key], np.generic) and cp.placement(cp.asarray(h)) == "host":
        return  # an element of a host array is NumPy's scalar, its methods NumPy's own
    compare(lambda xp, a: a[key].copy(), h)
    compare(lambda xp, a: a[key].T.copy(order="F"), h)
    compare(lambda xp, a: a[key].astype(np.float64), h)
    compare(lambda xp, a: a[key].reshape(-1), h)


@settings(max_examples=40, deadline=None)
@given(strided_arrays(), st.integers(0, 3))
def test_hypothesis_setitem(case, fill):
    h, key = case

    def f(xp, a):
        a = a.copy()
        a[key] = fill
        return a
    compare(f, h)

    def g(xp, a):
        a = a.copy()
        a[key] = a[key][::-1] if a[key].ndim else a[key]
        return a
    compare(g, h)


@pytest.mark.parametrize("dtype", [np.int16, np.uint32, np.float64, np.complex64, np.uint8])
def test_byteswap(dtype):
    h = sample((3, 4), dtype)
    compare(lambda xp, a: a.byteswap(), h)
    compare(lambda xp, a: a[:, ::2].byteswap(), h)

    def inplace(xp, a):
        a.byteswap(inplace=True)
        return a
    compare(inplace, h)


def test_getfield_setfield():
    h = sample((4,), np.complex128)
    compare(lambda xp, a: a.getfield(np.float64, 8), h)
    compare(lambda xp, a: a.getfield(np.float64, 12), h)

    def set_imag(xp, a):
        a.setfield(np.ones(4), np.float64, 8) if xp is np else a.setfield(
            xp.ones(4), np.float64, 8)
        return a
    compare(set_imag, h)


@pytest.mark.parametrize("shape", [(2, 3), (8,), (1,), (0,), (3, 3)])
def test_resize_in_place(shape):
    def f(xp, a):
        a = a.copy()
        a.resize(shape, refcheck=False) if xp is np else a.resize(shape)
        return a
    compare(f, np.arange(6.0))
    with pytest.raises(ValueError):
        cp.arange(6.0)[::2].resize((2,))


def test_flat():
    h = sample((3, 4), np.int32)
    compare(lambda xp, a: a.flat[5], h)
    compare(lambda xp, a: a.flat[2:7], h)
    compare(lambda xp, a: a.T.flat[2:7], h)
    compare(lambda xp, a: a.flat.copy(), h)

    def setflat(xp, a):
        a.flat[[1, 3]] = 7
        b = a.T
        b.flat[0:2] = -1
        return a
    compare(setflat, h)
    d = cp.asarray(h)
    assert len(d.flat) == 12 and [int(x) for x in d.flat][:3] == h.ravel()[:3].tolist()


def test_files_and_pickles(tmp_path):
    d = cp.asarray(sample((2, 3), np.float32))
    d.tofile(tmp_path / "a.bin")
    assert_same(cp.fromfile(tmp_path / "a.bin", dtype=np.float32).reshape(2, 3), np.asarray(d))
    d.dump(tmp_path / "a.pkl")
    assert_same(np.load(tmp_path / "a.pkl", allow_pickle=True), np.asarray(d))
    assert_same(pickle.loads(d.dumps()), np.asarray(d))
    assert d.to_device(d.device) is d
    with pytest.raises(ValueError):
        d.to_device("elsewhere")


def test_contiguity_flags_are_numpys_for_every_small_layout():
    """``_shapes._contiguity`` (the flags of every view the frontend makes; its 2-D case
    unrolled) against NumPy's flags, for all 1-, 2- and 3-D shapes of up to 3 per axis
    and strides from a set of multiples of the itemsize, zero and negative ones included."""
    import itertools

    from cupynum._shapes import _contiguity

    base = np.zeros(4096, np.uint8)
    checked = 0
    for ndim in (1, 2, 3):
        for shape in itertools.product(range(4), repeat=ndim):
            for strides in itertools.product((-8, 0, 4, 8, 16, 24, 32, 48, 96), repeat=ndim):
                for itemsize in (4, 8):
                    view = np.lib.stride_tricks.as_strided(
                        base[2048:].view(f"u{itemsize}"), shape, strides, writeable=False)
                    want = (view.flags.c_contiguous, view.flags.f_contiguous)
                    assert _contiguity(shape, strides, itemsize) == want, (shape, strides)
                    checked += 1
    assert checked == 95_976
