"""ndindex, ndenumerate, broadcast, nditer, flatiter, poly1d, NumPy's bit generators and
the host-only utilities: each behaves as NumPy's does, with cupynum values."""
import warnings

import numpy
import pytest

import cupynum
from helpers import assert_same


def test_ndindex_is_numpys():
    assert list(cupynum.ndindex(2, 3)) == list(numpy.ndindex(2, 3))
    assert list(cupynum.ndindex((0, 2))) == []


@pytest.mark.parametrize("shape", [(), (0,), (4,), (2, 3), (2, 1, 3)])
def test_ndenumerate(shape):
    host = numpy.arange(int(numpy.prod(shape)), dtype=numpy.float32).reshape(shape)
    got = list(cupynum.ndenumerate(cupynum.asarray(host)))
    want = list(numpy.ndenumerate(host))
    assert [i for i, _ in got] == [i for i, _ in want]
    for (_, g), (_, w) in zip(got, want):
        assert_same(g, w)


def test_broadcast_object():
    a, b = numpy.arange(3), numpy.arange(2)[:, None] * 10
    want = numpy.broadcast(a, b)
    got = cupynum.broadcast(cupynum.asarray(a), cupynum.asarray(b))
    assert (got.shape, got.ndim, got.nd, got.size, got.numiter) == \
        (want.shape, want.ndim, want.nd, want.size, want.numiter)
    pairs = list(got)
    assert [tuple(int(v) for v in p) for p in pairs] == [tuple(int(v) for v in p) for p in want]
    assert got.index == want.index == 6
    got.reset()
    assert got.index == 0 and len(list(got)) == 6
    assert [list(map(int, it)) for it in got.iters] == [list(map(int, it)) for it in
                                                        numpy.broadcast(a, b).iters]
    nested = cupynum.broadcast(got, cupynum.asarray(numpy.zeros((4, 1, 1))))
    assert nested.shape == (4, 2, 3) and nested.numiter == 3
    with pytest.raises(ValueError):
        cupynum.broadcast(cupynum.arange(3), cupynum.arange(2))


def test_nditer_read_only_matches_numpy():
    host = numpy.arange(6.0).reshape(2, 3)
    x = cupynum.asarray(host)
    assert [float(v) for v in cupynum.nditer(x)] == [float(v) for v in numpy.nditer(host)]
    got = [(float(a), float(b)) for a, b in cupynum.nditer([x, cupynum.asarray([1.0, 2, 3])])]
    want = [(float(a), float(b)) for a, b in numpy.nditer([host, numpy.array([1.0, 2, 3])])]
    assert got == want


def test_nditer_indices():
    host = numpy.arange(6).reshape(2, 3)
    for flag in ("multi_index", "c_index", "f_index"):
        want_it = numpy.nditer(host, flags=[flag], order="C")
        got_it = cupynum.nditer(cupynum.asarray(host), flags=[flag])
        want, got = [], []
        while not want_it.finished:
            want.append(want_it.multi_index if flag == "multi_index" else want_it.index)
            want_it.iternext()
        while not got_it.finished:
            got.append(got_it.multi_index if flag == "multi_index" else got_it.index)
            got_it.iternext()
        assert got == want, flag


def test_nditer_readwrite_writes_into_the_operand():
    host = numpy.arange(6.0).reshape(2, 3)
    x = cupynum.asarray(host)
    with numpy.nditer(host, op_flags=["readwrite"]) as it:
        for v in it:
            v[...] = v * v + 1
    with cupynum.nditer(x, op_flags=["readwrite"]) as it:
        for v in it:
            v[...] = v * v + 1
    assert_same(x, host)


def test_nditer_op_dtypes_and_errors():
    x = cupynum.arange(4, dtype=numpy.int32)
    vals = list(cupynum.nditer(x, op_dtypes=[numpy.float64]))
    assert all(v.dtype == numpy.float64 for v in vals)
    with pytest.raises(TypeError):  # as NumPy: float -> int is not a safe cast
        list(cupynum.nditer(cupynum.arange(3.0), op_dtypes=[numpy.int64]))
    with pytest.raises(TypeError):
        numpy.nditer(numpy.arange(3.0), op_dtypes=[numpy.int64])
    with pytest.raises(ValueError):  # a write operand must have the broadcast shape
        cupynum.nditer([cupynum.zeros(3), cupynum.zeros((2, 3))],
                       op_flags=[["readwrite"], ["readonly"]])
    with pytest.raises(ValueError):
        numpy.nditer([numpy.zeros(3), numpy.zeros((2, 3))],
                     op_flags=[["readwrite"], ["readonly"]])


def test_flatiter_is_the_type_of_flat():
    assert isinstance(cupynum.arange(3).flat, cupynum.flatiter)


COEFFS = [[1.0, -3.0, 2.0], [0.0, 0.0, 2.0, 1.0], [5.0], [1.0, 0.0, 0.0, -1.0]]


@pytest.mark.parametrize("c", COEFFS)
def test_poly1d(c):
    p, q = cupynum.poly1d(c), numpy.poly1d(c)
    assert_same(p.coeffs, q.coeffs)
    assert (p.order, len(p), p.variable) == (q.order, len(q), q.variable)
    x = numpy.linspace(-2, 2, 7)
    assert_same(p(cupynum.asarray(x)), q(x))
    assert_same((p * p).coeffs, (q * q).coeffs)
    assert_same((p + [1.0, 1.0]).coeffs, (q + [1.0, 1.0]).coeffs)
    assert_same((p - q).coeffs, (q - q).coeffs)
    assert_same((2 * p).coeffs, (2 * q).coeffs)
    assert_same((p ** 2).coeffs, (q ** 2).coeffs)
    assert_same(p.deriv().coeffs, q.deriv().coeffs)
    assert_same(p.integ(k=1.5).coeffs, q.integ(k=1.5).coeffs)
    assert str(p) == str(q) and repr(p) == repr(q)
    assert p == cupynum.poly1d(c) and not (p != cupynum.poly1d(c))
    assert p[0] == q[0] and p[7] == q[7]


def test_poly1d_roots_division_and_setitem():
    p, q = cupynum.poly1d([1.0, 2.0], r=True), numpy.poly1d([1.0, 2.0], r=True)
    assert_same(p.coeffs, q.coeffs)
    numpy.testing.assert_allclose(numpy.sort(cupynum.asnumpy(p.roots)), numpy.sort(q.roots))
    (gq, gr), (wq, wr) = p / cupynum.poly1d([1.0, -1.0]), q / numpy.poly1d([1.0, -1.0])
    assert_same(gq.coeffs, wq.coeffs)
    assert_same(gr.coeffs, wr.coeffs)
    p[4] = 7.0
    q[4] = 7.0
    assert_same(p.coeffs, q.coeffs)
    assert isinstance(p.coeffs, cupynum.ndarray)


def test_bit_generators_and_seed_sequence():
    for bits in (cupynum.random.PCG64, cupynum.random.MT19937, cupynum.random.SFC64,
                 cupynum.random.PCG64DXSM):
        assert bits is getattr(numpy.random, bits.__name__)
        a = cupynum.random.Generator(bits(12)).random(5)
        b = cupynum.random.Generator(bits(12)).random(5)
        assert isinstance(a, cupynum.ndarray)
        assert_same(a, cupynum.asnumpy(b))  # the same seed, the same values
    ss = cupynum.random.SeedSequence(3)
    assert ss.entropy == 3
    assert_same(cupynum.random.default_rng(ss).random(4),
                cupynum.asnumpy(cupynum.random.default_rng(cupynum.random.SeedSequence(3))
                                .random(4)))


@pytest.mark.parametrize("name", ["asmatrix", "bmat", "matrix", "recarray", "memmap",
                                  "busday_count", "busday_offset", "busdaycalendar",
                                  "is_busday", "datetime_as_string", "datetime_data",
                                  "get_include", "info", "show_config", "show_runtime",
                                  "frompyfunc"])
def test_host_utilities_are_numpys_own(name):
    assert getattr(cupynum, name) is getattr(numpy, name)


def test_host_utilities_take_cupynum_arrays_without_a_fallback_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error", cupynum.FallbackWarning)
        assert cupynum.busday_count("2026-12-01", "2026-12-31") == 22
        out = cupynum.frompyfunc(lambda v: v + 1, 1, 1)(cupynum.arange(3))
    assert out.dtype == object and list(out) == [1, 2, 3]
