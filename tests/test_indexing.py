"""Advanced indexing and the indexing routines, compared with NumPy."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cupynum as cp
from cupynum import _backends
from helpers import compare

DTYPES = [np.bool_, np.int8, np.uint16, np.int32, np.int64, np.float16, np.float32,
          np.float64, np.complex64, np.complex128]


def sample(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.integers(0, 2, shape).astype(dt)
    x = rng.standard_normal(shape) * 10
    if dt.kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dt)


KEYS = [
    ([0, 2],), ([[0], [1]],), (slice(None), [1, -1]), ([0], None, [0]), (0, slice(None), [1, 2]),
    (slice(None), 0, [1, 2]), ([1, 2], slice(None), 0), (Ellipsis, [1, 0]), (True,), (False,),
    (slice(None), np.array(True)), ([True, False, True],), (np.array([[True] * 4] * 3),),
    (slice(1, None), [[0, 1], [2, 3]], slice(None, None, -2)), ([],), (np.array([], int),),
    ([2, 0], [3, 3], [4, -5]), (None, [1], Ellipsis, None), (-1, [0, 0, 0]),
    ([0, 1], Ellipsis, [True, False, True, False, True]),
]


@pytest.mark.parametrize("key", KEYS, ids=[str(i) for i in range(len(KEYS))])
def test_getitem_key_forms(key):
    a = np.arange(60).reshape(3, 4, 5)
    compare(lambda xp, a: a[key], a)
    compare(lambda xp, a: a[tuple(xp.asarray(k) if isinstance(k, np.ndarray) else k
                                  for k in key)], a)


@pytest.mark.parametrize("dtype", DTYPES)
def test_getitem_dtypes_and_views(dtype):
    a = sample((6, 8), dtype)
    compare(lambda xp, a: a[[1, 3, 3, -1]], a)
    compare(lambda xp, a: a.T[::-1][xp.asarray([0, 2]), 1:5], a)
    compare(lambda xp, a: a[a != a[0, 0]], a)
    compare(lambda xp, a: a[:, ::2][xp.asarray(np.array([[True, False, True, True]] * 6))], a)


@pytest.mark.parametrize("dtype", DTYPES)
def test_setitem(dtype):
    a = sample((5, 6), dtype)
    v = sample((2, 6), dtype, seed=1)

    def f(xp, a, v):
        a[[0, -1]] = v
        a[a == a[1, 1]] = a[2, 2] if a.dtype.kind != "b" else True
        a[xp.asarray([1, 2]), xp.asarray([[0], [5]])] = v[0, 0]
        a[:, [True, False, True, False, True, False]] = v[1, :3]
        return a

    compare(f, a, v)


def test_setitem_broadcast_cast_and_overlap():
    def f(xp, a):
        a[[2, 0], 1:] = [[7.9], [-3.2]]  # float into int: NumPy's unsafe cast
        a[xp.asarray([1, 3])] = a[[3, 1]]  # overlapping source
        a[[0]] = xp.asarray([1, 2, 3, 4], dtype=xp.int8)
        return a

    compare(f, np.arange(16).reshape(4, 4))


def test_setitem_repeated_indices_take_one_value():
    d = cp.zeros((4, 3))
    vals = cp.asarray(np.arange(30.0).reshape(10, 3))
    d[cp.asarray([1] * 10)] = vals
    row = d.get()[1]
    # Each target element holds one of the values assigned to it (which one is unspecified,
    # and threads writing a row's elements need not agree on the winner).
    assert all(row[j] in vals.get()[:, j] for j in range(3))
    assert not d.get()[[0, 2, 3]].any()


BAD = [
    lambda xp, a: a[[0, 9]],
    lambda xp, a: a[xp.asarray([0, -10])],
    lambda xp, a: a[:, xp.asarray([4])],
    lambda xp, a: a[[True, False]],
    lambda xp, a: a[xp.asarray([[True] * 4] * 2)],
    lambda xp, a: a[[0], [0], [0]],
    lambda xp, a: a[[1.5]],
    lambda xp, a: a[xp.asarray([1.0])],
    lambda xp, a: a[1.0],
    lambda xp, a: a[[0, 1], [0, 1, 2]],
    lambda xp, a: a[..., ..., [0]],
    lambda xp, a: a[xp.asarray([0]), 5],
]


@pytest.mark.parametrize("i", range(len(BAD)))
def test_bad_keys(i):
    compare(BAD[i], np.arange(12.0).reshape(3, 4))


def test_bad_setitem():
    def shape(xp, a):
        a[[0, 1]] = xp.ones((3, 4))

    def oob(xp, a):
        a[xp.asarray([5])] = 1

    def overflow(xp, a):
        a[[0]] = 300

    compare(shape, np.zeros((3, 4)))
    compare(oob, np.zeros((3, 4)))
    compare(overflow, np.zeros(3, np.int8))


@st.composite
def index_case(draw):
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=1, max_size=4)))
    key, dim = [], 0
    while dim < len(shape):
        kind = draw(st.sampled_from(["slice", "int", "arr", "mask", "none", "full"]))
        n = shape[dim]
        if kind == "slice":
            key.append(slice(draw(st.integers(-n, n)), draw(st.integers(-n, n)),
                             draw(st.sampled_from([1, 2, -1]))))
        elif kind == "int":
            key.append(draw(st.integers(-n, n - 1)))
        elif kind == "arr":
            ishape = tuple(draw(st.lists(st.integers(0, 3), max_size=2)))
            key.append(np.asarray(draw(st.lists(st.integers(-n, n - 1), min_size=int(
                np.prod(ishape)), max_size=int(np.prod(ishape))))).reshape(ishape).astype(int))
        elif kind == "mask":
            k = draw(st.integers(1, len(shape) - dim))
            key.append(np.asarray(draw(st.lists(st.booleans(), min_size=int(np.prod(
                shape[dim:dim + k])), max_size=int(np.prod(shape[dim:dim + k]))))).reshape(
                    shape[dim:dim + k]))
            dim += k - 1
        elif kind == "none":
            key.append(None)
            dim -= 1
        else:
            key.append(Ellipsis if not any(k is Ellipsis for k in key) else slice(None))
            if key[-1] is Ellipsis:
                break
        dim += 1
    return shape, tuple(key), draw(st.booleans())


@settings(max_examples=150, deadline=None)
@given(index_case())
def test_hypothesis_getitem_setitem(case):
    shape, key, on_device = case
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)

    def dkey(xp):
        if xp is np or not on_device:
            return key
        return tuple(xp.asarray(k) if isinstance(k, np.ndarray) else k for k in key)

    compare(lambda xp, a: a[dkey(xp)], a)

    def setf(xp, a):
        a[dkey(xp)] = -1.0
        return a

    compare(setf, a)

    def seta(xp, a):
        res_shape = np.empty(shape)[key].shape
        a[dkey(xp)] = xp.asarray(np.arange(np.prod(res_shape), dtype=np.float32).reshape(
            res_shape)) if xp is not np else np.arange(np.prod(res_shape),
                                                        dtype=np.float32).reshape(res_shape)
        return a

    # repeated indices leave the winner unspecified: only compare when they are unique
    try:
        res_shape = np.empty(shape)[key].shape
    except IndexError:
        return
    flat = np.arange(int(np.prod(shape))).reshape(shape)[key].ravel()
    if len(np.unique(flat)) == flat.size:
        compare(seta, a)


@st.composite
def basic_view_case(draw):
    """An array (maybe a strided or transposed view) and a chain of keys of Python ints and
    slices: what the host path of getitem takes (docs/internals.md)."""
    shape = tuple(draw(st.lists(st.integers(0, 5), min_size=1, max_size=3)))
    keys = []
    for _ in range(draw(st.integers(1, 3))):
        key = []
        for _ in range(draw(st.integers(0, 3))):
            if draw(st.booleans()):
                key.append(draw(st.integers(-6, 5)))
            else:
                key.append(slice(draw(st.one_of(st.none(), st.integers(-7, 7),
                                                st.integers(-7, 7).map(np.intp))),
                                 draw(st.one_of(st.none(), st.integers(-7, 7))),
                                 draw(st.sampled_from([None, 1, 2, -1, -3]))))
        keys.append(tuple(key) if len(key) != 1 or draw(st.booleans()) else key[0])
    return shape, draw(st.sampled_from(["plain", "transposed", "strided"])), keys


@settings(max_examples=200, deadline=None)
@given(basic_view_case())
def test_hypothesis_views_of_ints_and_slices(case):
    """Each view of the chain has NumPy's layout, flags, byte offset and values, and a write
    through the last one lands where NumPy's does (on the host: the host path's views)."""
    shape, layout, keys = case
    ref = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    a = cp.asarray(ref)
    base_ref, base = ref, a
    if layout == "transposed":
        ref, a = ref.T, a.T
    elif layout == "strided":
        ref, a = ref[..., ::-2], a[..., ::-2]

    def address(x):
        return x.__array_interface__["data"][0]

    for key in keys:
        try:
            want = ref[key]
        except IndexError:
            with pytest.raises(IndexError):
                a[key]
            return
        got = a[key]
        if not isinstance(want, np.ndarray):
            # (CUPYNUM_PLACEMENT=random may move the data to the host inside the read, after
            # the read took the device's way: a 0-d array on a host array then)
            assert type(got) is type(want) or cp.placement(a) != "host" or (
                _backends._chaos is not None)
            assert got == want
            return
        assert got.shape == want.shape and got._buf is base._buf
        if want.size:  # (an empty view's strides and offset are nobody's business)
            assert got.strides == want.strides
            assert (got.flags.c_contiguous, got.flags.f_contiguous) == (
                want.flags.c_contiguous, want.flags.f_contiguous)
            assert got._offset == address(want) - address(base_ref)
        np.testing.assert_array_equal(got.get(), want)
        ref, a = want, got
    a += 1000.0
    ref += 1000.0
    np.testing.assert_array_equal(base.get(), base_ref)


# --- routines --------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_take_put(dtype):
    a = sample((4, 5), dtype)
    compare(lambda xp, a: xp.take(a, [3, 0, -1]), a)
    compare(lambda xp, a: xp.take(a, [[1], [4]], axis=1), a)
    compare(lambda xp, a: a.take(xp.asarray([7, -9]), mode="wrap"), a)
    compare(lambda xp, a: xp.take(a, [7, -9], axis=0, mode="clip"), a)
    compare(lambda xp, a: xp.take(a, [20]), a)

    def put(xp, a):
        xp.put(a, [0, 7, -1], a.ravel()[[1, 2]])
        a.put([19], a.ravel()[0])
        return a

    compare(put, a)
    compare(put, a.T)


def test_take_along_put_along():
    a = sample((3, 5), np.float64)
    idx = np.argsort(a, axis=1)
    compare(lambda xp, a, i: xp.take_along_axis(a, i, axis=1), a, idx)
    compare(lambda xp, a, i: xp.take_along_axis(a, i[:, :2], axis=1), a, idx)

    def f(xp, a, i):
        xp.put_along_axis(a, i[:, :1], -5.0, axis=1)
        return a

    compare(f, a, idx)


def test_place_putmask_choose_compress_extract_select():
    a = np.arange(12.0).reshape(3, 4)

    def place(xp, a):
        xp.place(a, a > 5, [10, 20])
        return a

    def putmask(xp, a):
        xp.putmask(a, a % 2 == 0, xp.asarray([-1.0, -2.0, -3.0]))
        return a

    compare(place, a)
    compare(putmask, a)
    compare(lambda xp: xp.choose(xp.asarray([[0, 1], [2, 0]]), [[1, 2], [3, 4], [5, 6]]))
    compare(lambda xp: xp.choose(xp.asarray([0, 3]), [[1, 2], [3, 4]], mode="clip"))
    compare(lambda xp: xp.choose(xp.asarray([0, 3]), [[1, 2], [3, 4]]))
    compare(lambda xp, a: xp.compress([True, False, True], a, axis=0), a)
    compare(lambda xp, a: xp.compress([False, True], a), a)
    compare(lambda xp, a: a.compress([True, False, True], axis=0), a)  # the method's order
    compare(lambda xp: xp.choose(xp.asarray([0]), []))  # ValueError, as NumPy

    def put_cycled(xp, a):  # fewer values than indices: NumPy repeats them in order
        xp.put(a, [0, 5, 7, 11], xp.asarray([-1.0, -2.0, -3.0]))
        return a

    compare(put_cycled, a)
    compare(lambda xp, a: xp.extract(a > 4, a), a)
    compare(lambda xp, a: xp.select([a < 3, a > 8], [a, a ** 2], default=-1), a)


@pytest.mark.parametrize("dtype", DTYPES)
def test_nonzero_family(dtype):
    a = sample((4, 6), dtype) * (sample((4, 6), np.float64, 3) > 0).astype(dtype)
    compare(lambda xp, a: xp.nonzero(a), a)
    compare(lambda xp, a: a.nonzero(), a)
    compare(lambda xp, a: xp.flatnonzero(a), a)
    compare(lambda xp, a: xp.argwhere(a), a)
    compare(lambda xp, a: xp.where(a), a)
    compare(lambda xp, a: xp.count_nonzero(a), a)


def test_nonzero_edge():
    compare(lambda xp: xp.nonzero(xp.asarray(3)))
    compare(lambda xp: xp.argwhere(xp.asarray(3)))
    compare(lambda xp: xp.argwhere(xp.asarray(0)))
    compare(lambda xp: xp.nonzero(xp.zeros((0, 3))))
    compare(lambda xp: xp.flatnonzero(xp.zeros(5)))


def test_diagonal_and_indices():
    a = np.arange(60).reshape(3, 4, 5)
    compare(lambda xp, a: xp.diagonal(a), a)
    compare(lambda xp, a: a.diagonal(1, 1, 2), a)
    compare(lambda xp, a: xp.diagonal(a, -1, 2, 0), a)
    compare(lambda xp: xp.diag_indices(3))
    compare(lambda xp: xp.diag_indices_from(xp.zeros((4, 4))))
    for f in ("tril_indices", "triu_indices"):
        compare(lambda xp: getattr(xp, f)(4, 1, 5))
        compare(lambda xp: getattr(xp, f + "_from")(xp.zeros((3, 5)), -1))
    compare(lambda xp: xp.mask_indices(4, xp.triu, 1))
    compare(lambda xp: xp.ix_([0, 2], [True, False, True]))
    compare(lambda xp: xp.arange(12).reshape(3, 4)[xp.ix_([0, 2], [1, 3])])


def test_fill_diagonal():
    def f(xp, a):
        xp.fill_diagonal(a, 5)
        return a

    def g(xp, a):
        xp.fill_diagonal(a, [1, 2], wrap=True)
        return a

    compare(f, np.zeros((4, 4)))
    compare(f, np.zeros((3, 3, 3)))
    compare(g, np.zeros((7, 3)))
    compare(f, np.zeros((5, 3)).T)


def test_ravel_unravel():
    compare(lambda xp: xp.ravel_multi_index(([1, 2], [3, 0]), (3, 4)))
    compare(lambda xp: xp.ravel_multi_index(xp.asarray([[1, 2], [3, 0]]), (3, 4), order="F"))
    compare(lambda xp: xp.ravel_multi_index(([1, 5], [3, 0]), (3, 4), mode="clip"))
    compare(lambda xp: xp.ravel_multi_index(([1, 5], [3, 0]), (3, 4)))
    compare(lambda xp: xp.unravel_index([5, 11], (3, 4)))
    compare(lambda xp: xp.unravel_index(xp.asarray([5, 11]), (3, 4), order="F"))
    compare(lambda xp: xp.unravel_index([12], (3, 4)))


@pytest.mark.parametrize("knobs", [None, (2, 0), (2, 2), (2, 64)],
                         ids=["default", "min2-notail", "min2-div2", "min2-div64"])
@pytest.mark.parametrize("dtype", [np.int8, np.float32, np.complex128])
def test_gather_early_signal_path(knobs, dtype, request):
    """``a[idx]`` of a large array on the GPU: the gather answers its bounds check before
    the kernel's tail blocks finish (tuning.GATHER.early_signal); an out-of-bounds
    index anywhere, the tail included, still raises, and the next call is right again.
    (knobs: the early signal from that many blocks, the tail 1/DIV of them, 0: no tail;
    None: the defaults, over 2^21 + 5 indices.)"""
    from cupynum import _backends

    total = 2**21 + 5
    if knobs is not None:
        total = 7 * 1024 + 3
        if _backends.name() == "cuda":
            from cupynum._backends.cuda import tuning

            old = tuning.override("GATHER", signal_min_blocks=knobs[0],
                                  signal_tail_div=knobs[1])
            request.addfinalizer(lambda: tuning.restore("GATHER", old))
    rng = np.random.default_rng(5)
    a = sample(100_003, dtype)
    ix = rng.integers(-100_003, 100_003, total)
    compare(lambda xp, a: a[xp.asarray(ix)], a)
    for pos in (0, total // 2, total - 1500, total - 1):
        bad = ix.copy()
        bad[pos] = 100_003 if pos % 2 else -100_004
        compare(lambda xp, a: a[xp.asarray(bad)], a)  # IndexError
    compare(lambda xp, a: a[xp.asarray(ix)], a)


@pytest.mark.skipif(_backends.get().side != "device", reason="needs a device backend")
def test_rows_selected_by_a_mask_skip_the_bounds_check(monkeypatch, device_placement):
    """``X[mask]`` over the rows of ``X`` gathers at the mask's ``nonzero``, indices valid by
    construction: the gather is not asked to check them (on a GPU the check is a sync),
    while a user's index array still is."""
    backend = type(_backends.get())
    checks = []
    gather = backend.gather

    def spy(self, src, indices, axis, out, check):
        checks.append(check)
        return gather(self, src, indices, axis, out, check)

    monkeypatch.setattr(backend, "gather", spy)
    X = np.arange(20.0).reshape(10, 2)
    mask = np.arange(10) % 3 == 0
    np.testing.assert_array_equal(cp.asarray(X)[cp.asarray(mask)].get(), X[mask])
    assert checks == [False]
    np.testing.assert_array_equal(cp.asarray(X)[cp.asarray([0, 9, -1])].get(), X[[0, 9, -1]])
    assert checks == [False, True]
    with pytest.raises(IndexError):
        cp.asarray(X)[cp.asarray([10])]
