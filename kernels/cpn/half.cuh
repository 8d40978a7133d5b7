// cupynum kernels: float16 storage type and its exact conversions.
//
// cpn::half is the 16-bit IEEE binary16 bit pattern (what a float16 array stores), with no
// arithmetic: float16 loops load it, convert to float (exact), run the float functor and
// round back once on store, which is what NumPy's float16 loops do.  The few functors
// where that is not NumPy's result (spacing, nextafter: see _ops.UfuncDef.half_native)
// take and return cpn::half directly.
//
// Conversions round to nearest even, including into subnormals, and double -> half rounds
// once (directly, not through float), as NumPy's npy_double_to_half does.  On the device
// they are single PTX cvt instructions; on the host they are the bit manipulations below.
// NaN payloads: the host path keeps the high payload bits like NumPy; PTX cvt returns a
// canonical NaN.  Either way the result is a NaN of the same sign class.
#pragma once
#include "common.cuh"

namespace cpn {

struct alignas(2) half {
  uint16_t bits;
};

CPN_INLINE half half_from_bits(uint16_t b) {
  half h;
  h.bits = b;
  return h;
}

namespace detail {
// float -> binary16, round to nearest even (host reference implementation).
CPN_INLINE uint16_t float_to_half_bits_sw(float f) {
  uint32_t u = float_bits(f);
  uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
  uint32_t a = u & 0x7fffffffu;
  if (a >= 0x7f800000u) {  // inf or nan
    if (a == 0x7f800000u) return (uint16_t)(sign | 0x7c00u);
    uint16_t r = (uint16_t)(0x7c00u + ((a & 0x007fffffu) >> 13));
    if (r == 0x7c00u) r++;  // keep it a NaN
    return (uint16_t)(sign | r);
  }
  if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);  // >= 65520 rounds to inf
  if (a < 0x38800000u) {                                     // below 2**-14: subnormal or 0
    if (a <= 0x33000000u) return sign;                       // <= 2**-25 rounds to 0
    uint32_t e = a >> 23;
    uint32_t m = (a & 0x007fffffu) | 0x00800000u;
    uint32_t shift = 126u - e;  // value = m * 2**(e-150); units of 2**-24
    uint32_t r = m >> shift;
    uint32_t rem = m & ((1u << shift) - 1u);
    uint32_t halfway = 1u << (shift - 1u);
    if (rem > halfway || (rem == halfway && (r & 1u))) r++;
    return (uint16_t)(sign | r);
  }
  uint32_t r = (a - 0x38000000u) >> 13;  // rebias exponent 127 -> 15
  uint32_t rem = a & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) r++;
  return (uint16_t)(sign | r);
}

// double -> binary16 with a single rounding.
CPN_INLINE uint16_t double_to_half_bits_sw(double d) {
  uint64_t u = double_bits(d);
  uint16_t sign = (uint16_t)((u >> 48) & 0x8000u);
  uint64_t a = u & 0x7fffffffffffffffull;
  if (a >= 0x7ff0000000000000ull) {
    if (a == 0x7ff0000000000000ull) return (uint16_t)(sign | 0x7c00u);
    uint16_t r = (uint16_t)(0x7c00u + ((a & 0x000fffffffffffffull) >> 42));
    if (r == 0x7c00u) r++;
    return (uint16_t)(sign | r);
  }
  if (a >= 0x40effe0000000000ull) return (uint16_t)(sign | 0x7c00u);  // >= 65520
  if (a < 0x3f10000000000000ull) {                                    // below 2**-14
    if (a <= 0x3e60000000000000ull) return sign;                      // <= 2**-25
    uint64_t e = a >> 52;
    uint64_t m = (a & 0x000fffffffffffffull) | 0x0010000000000000ull;
    uint64_t shift = 1051u - e;  // value = m * 2**(e-1075); units of 2**-24
    uint64_t r = m >> shift;
    uint64_t rem = m & ((1ull << shift) - 1ull);
    uint64_t halfway = 1ull << (shift - 1u);
    if (rem > halfway || (rem == halfway && (r & 1u))) r++;
    return (uint16_t)(sign | r);
  }
  uint64_t r = (a - 0x3f00000000000000ull) >> 42;  // rebias 1023 -> 15
  uint64_t rem = a & 0x3ffffffffffull;
  if (rem > 0x20000000000ull || (rem == 0x20000000000ull && (r & 1u))) r++;
  return (uint16_t)(sign | (uint16_t)r);
}

// binary16 -> float (exact).
CPN_INLINE float half_bits_to_float_sw(uint16_t h) {
  uint32_t sign = ((uint32_t)h & 0x8000u) << 16;
  uint32_t e = ((uint32_t)h >> 10) & 0x1fu;
  uint32_t m = (uint32_t)h & 0x3ffu;
  if (e == 0x1fu) return bits_float(sign | 0x7f800000u | (m << 13));
  if (e == 0) {
    float v = (float)m * 5.9604644775390625e-08f;  // m * 2**-24, exact
    return sign ? -v : v;
  }
  return bits_float(sign | ((e + 112u) << 23) | (m << 13));
}
}  // namespace detail

CPN_INLINE float half_to_float(half h) {
#if defined(__CUDA_ARCH__)
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h.bits));
  return f;
#else
  return detail::half_bits_to_float_sw(h.bits);
#endif
}
CPN_INLINE double half_to_double(half h) { return (double)half_to_float(h); }
CPN_INLINE half float_to_half(float f) {
#if defined(__CUDA_ARCH__)
  unsigned short r;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(r) : "f"(f));
  return half_from_bits(r);
#else
  return half_from_bits(detail::float_to_half_bits_sw(f));
#endif
}
CPN_INLINE half double_to_half(double d) {
#if defined(__CUDA_ARCH__)
  unsigned short r;
  asm("cvt.rn.f16.f64 %0, %1;" : "=h"(r) : "d"(d));
  return half_from_bits(r);
#else
  return half_from_bits(detail::double_to_half_bits_sw(d));
#endif
}

CPN_INLINE bool half_isnan(half h) { return (h.bits & 0x7fffu) > 0x7c00u; }
CPN_INLINE bool half_iszero(half h) { return (h.bits & 0x7fffu) == 0; }

// ---------------------------------------------------------------------------------------
// float16-native functor bodies (NumPy's npy_half_spacing / npy_half_nextafter, bit for
// bit; note NumPy's float16 spacing returns a positive value for negative inputs).
// ---------------------------------------------------------------------------------------
namespace detail {
CPN_INLINE half half_spacing(half x) {
  uint16_t h = x.bits;
  uint16_t h_exp = h & 0x7c00u;
  uint16_t h_sig = h & 0x03ffu;
  uint16_t r;
  if (h_exp == 0x7c00u) {
    r = 0x7e00u;  // nan
  } else if (h == 0x7bffu) {
    r = 0x7c00u;  // +inf
  } else if ((h & 0x8000u) && h_sig == 0) {  // negative power of two
    if (h_exp > 0x2c00u) r = (uint16_t)(h_exp - 0x2c00u);
    else if (h_exp > 0x0400u) r = (uint16_t)(1u << ((h_exp >> 10) - 2u));
    else r = 0x0001u;
  } else if (h_exp > 0x2800u) {
    r = (uint16_t)(h_exp - 0x2800u);
  } else if (h_exp > 0x0400u) {
    r = (uint16_t)(1u << ((h_exp >> 10) - 1u));
  } else {
    r = 0x0001u;
  }
  return half_from_bits(r);
}

CPN_INLINE half half_nextafter(half x, half y) {
  uint16_t a = x.bits, b = y.bits;
  uint16_t r;
  if (half_isnan(x) || half_isnan(y)) {
    r = 0x7e00u;
  } else if (a == b || ((a | b) & 0x7fffu) == 0) {  // equal (incl. +0 == -0)
    r = a;
  } else if ((a & 0x7fffu) == 0) {  // x is zero: smallest subnormal towards y
    r = (uint16_t)((b & 0x8000u) + 1u);
  } else if (!(a & 0x8000u)) {  // x > 0
    r = ((int16_t)a > (int16_t)b) ? (uint16_t)(a - 1u) : (uint16_t)(a + 1u);
  } else {  // x < 0
    r = (!(b & 0x8000u) || (a & 0x7fffu) > (b & 0x7fffu)) ? (uint16_t)(a - 1u)
                                                          : (uint16_t)(a + 1u);
  }
  return half_from_bits(r);
}
}  // namespace detail

}  // namespace cpn
