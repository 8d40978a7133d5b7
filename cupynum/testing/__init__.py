"""cupynum.testing: NumPy's assertions, which read cupynum arrays through ``__array__``."""
from numpy.testing import (  # noqa: F401
    assert_, assert_allclose, assert_almost_equal, assert_approx_equal, assert_array_almost_equal,
    assert_array_almost_equal_nulp, assert_array_compare, assert_array_equal, assert_array_less,
    assert_array_max_ulp, assert_equal, assert_no_warnings, assert_raises, assert_raises_regex,
    assert_string_equal, assert_warns, suppress_warnings,
)
