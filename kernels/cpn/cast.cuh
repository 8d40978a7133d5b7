// cupynum kernels: cpn::cast<To>(from), NumPy's (unsafe) casting semantics.
//
//   to bool          x != 0 (NaN is true; complex: real or imag nonzero)
//   bool to number   0 or 1
//   int to int       two's-complement wrap
//   int to float     round to nearest (C conversion)
//   float to int     truncation toward zero; out-of-range and NaN give what NumPy gives on
//                    x86-64 (cvttsd2si "integer indefinite" and the code compilers emit
//                    for unsigned targets), e.g. float32(-1) -> uint8 255, nan -> int64 min,
//                    3e9 -> int32 min, inf -> uint64 0.  NumPy warns there; we don't.
//   float to float   round to nearest; double -> half rounds once
//   half             through float (exact), except double -> half (direct)
//   complex -> real  real part (NumPy's ComplexWarning is the frontend's business)
//   real -> complex  (x, 0)
// Complex specialisations live in cpn/complex.cuh.
#pragma once
#include "common.cuh"
#include "half.cuh"

namespace cpn {

namespace detail {
// x86 cvttss2si / cvttsd2si: truncate, or the "integer indefinite" value (INT_MIN) when the
// truncated value does not fit or x is NaN.
template <class F> CPN_INLINE int32_t cvt_i32(F x) {
  F t = math::trunc(x);
  return (t >= F(-2147483648.0) && t < F(2147483648.0)) ? (int32_t)t
                                                        : tt::int_min<int32_t>();
}
template <class F> CPN_INLINE int64_t cvt_i64(F x) {
  F t = math::trunc(x);
  return (t >= F(-9223372036854775808.0) && t < F(9223372036854775808.0))
             ? (int64_t)t
             : tt::int_min<int64_t>();
}

template <class To, class F> CPN_INLINE To float_to_int(F x) {
  constexpr int bits = tt::int_info<To>::bits;
  if constexpr (bits == 64 && tt::int_info<To>::is_signed) {
    return (To)cvt_i64(x);
  } else if constexpr (bits == 64) {
    // if (x >= 2**63) cvt(x - 2**63) ^ 2**63 else cvt(x); NaN takes the else branch.
    if (x >= F(9223372036854775808.0))
      return (To)((uint64_t)cvt_i64(x - F(9223372036854775808.0)) ^ 0x8000000000000000ull);
    return (To)(uint64_t)cvt_i64(x);
  } else if constexpr (bits == 32 && !tt::int_info<To>::is_signed) {
    // if (x >= 2**31) cvt(x - 2**31) ^ 2**31 else cvt(x); NaN takes the else branch.
    if (x >= F(2147483648.0))
      return (To)((uint32_t)cvt_i32(x - F(2147483648.0)) ^ 0x80000000u);
    return (To)(uint32_t)cvt_i32(x);
  } else {
    // int32 and all 8/16-bit targets: 32-bit conversion, then keep the low bits.
    return (To)(uint32_t)cvt_i32(x);
  }
}
}  // namespace detail

template <class To, class From> struct cast_impl {
  CPN_HD static To run(From x) {
    if constexpr (tt::is_same_v<To, From>) {
      return x;
    } else if constexpr (tt::is_bool_v<To>) {
      return x != From(0);
    } else if constexpr (tt::is_bool_v<From>) {
      return x ? To(1) : To(0);
    } else if constexpr (tt::is_int_v<To> && tt::is_float_v<From>) {
      return detail::float_to_int<To>(x);
    } else {
      return (To)x;  // int <-> int (wraps), int -> float, float <-> float
    }
  }
};

// float16
template <class From> struct cast_impl<half, From> {
  CPN_HD static half run(From x) {
    if constexpr (tt::is_same_v<From, double>) {
      return double_to_half(x);
    } else {
      return float_to_half(cast_impl<float, From>::run(x));
    }
  }
};
template <class To> struct cast_impl<To, half> {
  CPN_HD static To run(half x) {
    if constexpr (tt::is_bool_v<To>) {
      return (x.bits & 0x7fffu) != 0;
    } else if constexpr (tt::is_int_v<To> && tt::int_info<To>::bits == 32 &&
                         !tt::int_info<To>::is_signed) {
      // NumPy's (scalar) float16 -> uint32 loop converts through int64: nan, +-inf -> 0.
      return (To)(uint64_t)detail::cvt_i64(half_to_float(x));
    } else {
      return cast_impl<To, float>::run(half_to_float(x));
    }
  }
};
template <> struct cast_impl<half, half> {
  CPN_HD static half run(half x) { return x; }
};

template <class To, class From> CPN_INLINE To cast(From x) { return cast_impl<To, From>::run(x); }

}  // namespace cpn
