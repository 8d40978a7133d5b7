"""Selecting one element gives an independent value, as NumPy's scalars are (issue 20, item 1).

Each test runs a Python idiom with NumPy and with cupynum and compares the arrays after it:
an element read out (``a[i]``, ``A[i, j]``, iteration, ``list(a)``) must not follow later
writes to its array, and writes to it must not reach the array.  Rows (``A[i]``), slices and
``a[...]`` stay views, so the idioms that write through them keep working.
"""
from __future__ import annotations

import numpy as np
import pytest

from helpers import compare


def test_swap_two_elements():
    def swap(xp):
        a = xp.arange(5.0)
        a[1], a[3] = a[3], a[1]
        return a

    compare(swap)


def test_swap_elements_of_2d_array():
    def swap(xp):
        a = xp.arange(12).reshape(3, 4)
        a[0, 1], a[2, 3] = a[2, 3], a[0, 1]
        return a

    compare(swap)


def test_inplace_add_to_element_leaves_array():
    def bump(xp):
        a = xp.arange(5.0)
        x = a[0]
        x += 10
        return a, x

    compare(bump)


def test_inplace_multiply_2d_element_leaves_array():
    def bump(xp):
        a2 = xp.arange(12.0).reshape(3, 4)
        m = a2[1, 2]
        m *= 3
        return a2, m

    compare(bump)


def test_element_does_not_follow_later_write():
    def later_write(xp):
        a = xp.arange(5)
        t = a[2]
        a[2] = 50
        return a, t

    compare(later_write)


def test_negative_index_and_numpy_integer_index():
    def later_write(xp):
        a = xp.arange(6.0).reshape(2, 3)
        t, u = a[-1, -1], a[np.int64(1), np.intp(0)]
        a[...] = 0
        return t, u

    compare(later_write)


def test_loop_variable_is_independent():
    def loop(xp):
        a = xp.arange(4.0)
        for v in a:
            v += 1
        return a

    compare(loop)


def test_list_items_do_not_follow_array():
    def listed(xp):
        a = xp.arange(4)
        items = list(a)
        a[:] = -1
        return [int(v) for v in items]

    compare(listed)


def test_flat_element_is_independent():
    def flat(xp):
        a = xp.arange(6.0).reshape(2, 3)
        x = a.flat[4]
        a[1, 1] = 0
        return x

    compare(flat)


def test_zero_d_array_empty_tuple_key_is_a_value():
    def read(xp):
        a = xp.asarray(7.0)
        x = a[()]
        a[...] = 1
        return x

    compare(read)


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int64", "float16", "float32",
                                   "complex64", "complex128"])
def test_element_of_every_dtype_family(dtype):
    def read(xp):
        a = xp.arange(6).astype(dtype).reshape(2, 3)[:, ::-2]  # a strided view
        x = a[1, 0]
        a[...] = 0
        return x

    compare(read)


# --- views stay views -------------------------------------------------------------------

def test_row_of_2d_array_is_a_view():
    def write_through_row(xp):
        a = xp.zeros((3, 4))
        a[1][2] = 5
        row = a[2]
        row += 1
        return a

    compare(write_through_row)


def test_length_one_slice_is_a_view():
    def write_through_slice(xp):
        a = xp.arange(5.0)
        s = a[1:2]
        s += 100
        return a

    compare(write_through_slice)


def test_ellipsis_keeps_a_zero_d_view():
    def write_through_ellipsis(xp):
        a = xp.arange(5.0)
        v = a[3, ...]
        v[...] = -1
        z = xp.asarray(2.0)
        w = z[...]
        w[...] = 9
        return a, z

    compare(write_through_ellipsis)


def test_element_supports_scalar_protocols():
    import cupynum as cp

    a = cp.arange(6).reshape(2, 3)
    x = a[1, 2]
    assert x.ndim == 0 and x.base is None
    assert f"{x:03d}" == "005"
    assert [10, 11, 12, 13, 14, 15][x] == 15
    assert float(x) == 5.0 and int(x) == 5 and bool(x)
    assert x == 5 and x > 4 and x < 6


def test_augmented_assignment_through_views():
    """``A[k] op= x`` ends in ``A[k] = A[k]'s view``, which writes nothing new (the in-place
    op already wrote through the view)."""
    def statements(xp):
        a = xp.arange(20.0).reshape(4, 5)
        a[1, 1:-1] += a[0, :-2]
        a[2:, ::2] *= 2
        a[-1] -= a[0]
        a[1:3] /= 4
        a[::-1, 3] += 1
        k = (1, slice(None, 3))
        v = a[k]
        a[1, 0] = 99  # (the view sees it)
        a[k] = v  # the view written back with the same key object: nothing changes
        return a, v

    compare(statements)


def test_view_written_back_after_its_array_changed_shape():
    def reshaped(xp):
        a = xp.arange(12.0)
        k = slice(0, 6)
        v = a[k]
        a.shape = (2, 6)  # the same key now selects both rows: v is broadcast into them
        a[k] = v
        return a

    compare(reshaped)


def test_view_written_back_after_it_changed_shape():
    def reshaped(xp):
        a = xp.arange(12.0)
        k = slice(0, 6)
        v = a[k]
        v.shape = (6, 1)
        a[k] = v  # (6, 1) does not fit (6,): NumPy's error
        return a

    compare(reshaped)


def test_view_written_through_another_array_of_its_data():
    def other(xp):
        a = xp.arange(16.0).reshape(4, 4)
        t = a.T
        t[0, 0]  # (t's kept view is built, and is not a's)
        b = a.view()  # (b's is never built)
        k = (0, slice(None))
        v = a[k]
        t[k] = v  # row 0 of a into its column 0
        k = (2, slice(1, 3))
        w = a[k]
        b[k] = w  # (the same key object, but b is not a: the plain write)
        b[k] = w + 1  # (a new array: the plain write)
        return a

    compare(other)


def test_view_written_back_after_its_data_moved():
    """A view's data moved between the read and the write back (to the device, and back to
    the host into a new allocation): the write back is a plain write."""
    import cupynum as cp
    from cupynum.testing import place

    a = cp.arange(20.0).reshape(4, 5)
    want = np.arange(20.0).reshape(4, 5)
    for where in ("device", "both", "host"):
        k = (2, slice(1, -1))
        v = a[k]
        v += 1
        place(a, where)
        a[k] = v
        want[2, 1:-1] += 1
        np.testing.assert_array_equal(a.get(), want)
        v = a[k]
        place(a, "device")
        place(a, "host")
        v *= 2  # (v's kept NumPy view is the old allocation's: rebuilt)
        a[k] = v
        want[2, 1:-1] *= 2
        np.testing.assert_array_equal(a.get(), want)
