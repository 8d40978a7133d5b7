// cupynum kernels: portability layer shared by every functor header.
//
// Compiles three ways:
//   * NVRTC (__CUDACC_RTC__): no system headers at all; fixed-width integer types are
//     defined here, math functions are NVRTC's built-in device functions (sinf, sin, ...).
//   * nvcc (__CUDACC__): same code, <stdint.h>/<math.h> from the toolkit.
//   * a plain C++17 host compiler (tests/test_functors_host.py): CPN_HD expands to
//     nothing and the math functions come from <math.h>.
// Nothing here needs <cuda/std/...>, so a kernel that includes only cpn/real.cuh
// compiles in tens of milliseconds under NVRTC.
#pragma once

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define CPN_HD __host__ __device__
#else
#define CPN_HD
#endif
#define CPN_INLINE CPN_HD inline

#if defined(__CUDACC_RTC__)
namespace cpn {
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
}  // namespace cpn
#else
#include <math.h>
#include <stdint.h>
#include <string.h>
namespace cpn {
using ::int16_t;
using ::int32_t;
using ::int64_t;
using ::int8_t;
using ::uint16_t;
using ::uint32_t;
using ::uint64_t;
using ::uint8_t;
}  // namespace cpn
#endif

namespace cpn {

// ---------------------------------------------------------------------------------------
// Type traits (no <type_traits>: NVRTC has no standard library without CCCL).
// ---------------------------------------------------------------------------------------
template <class T> struct complex;  // defined in cpn/complex.cuh
struct half;                        // defined in cpn/half.cuh

namespace tt {
template <class A, class B> struct is_same { static constexpr bool value = false; };
template <class A> struct is_same<A, A> { static constexpr bool value = true; };
template <class A, class B> constexpr bool is_same_v = is_same<A, B>::value;

template <bool C, class T = void> struct enable_if {};
template <class T> struct enable_if<true, T> { typedef T type; };

template <class T> struct int_info {  // not an integer (bool is not an integer here)
  static constexpr bool is_int = false;
  static constexpr bool is_signed = false;
  static constexpr int bits = 0;
};
#define CPN_INT_INFO(T, S, BITS, UT, ST)                 \
  template <> struct int_info<T> {                       \
    static constexpr bool is_int = true;                 \
    static constexpr bool is_signed = S;                 \
    static constexpr int bits = BITS;                    \
    typedef UT unsigned_type;                            \
    typedef ST signed_type;                              \
  };
CPN_INT_INFO(signed char, true, 8, unsigned char, signed char)
CPN_INT_INFO(unsigned char, false, 8, unsigned char, signed char)
CPN_INT_INFO(char, ((char)-1) < 0, 8, unsigned char, signed char)
CPN_INT_INFO(short, true, 16, unsigned short, short)
CPN_INT_INFO(unsigned short, false, 16, unsigned short, short)
CPN_INT_INFO(int, true, 32, unsigned int, int)
CPN_INT_INFO(unsigned int, false, 32, unsigned int, int)
CPN_INT_INFO(long, true, 8 * (int)sizeof(long), unsigned long, long)
CPN_INT_INFO(unsigned long, false, 8 * (int)sizeof(long), unsigned long, long)
CPN_INT_INFO(long long, true, 64, unsigned long long, long long)
CPN_INT_INFO(unsigned long long, false, 64, unsigned long long, long long)
#undef CPN_INT_INFO

// integers (not bool)
template <class T> constexpr bool is_int_v = int_info<T>::is_int;
template <class T> constexpr bool is_bool_v = is_same_v<T, bool>;
template <class T> constexpr bool is_float_v = is_same_v<T, float> || is_same_v<T, double>;
template <class T> struct is_complex { static constexpr bool value = false; };
template <class T> struct is_complex<complex<T>> { static constexpr bool value = true; };
template <class T> constexpr bool is_complex_v = is_complex<T>::value;
template <class T> constexpr bool is_signed_int_v = int_info<T>::is_int && int_info<T>::is_signed;
template <class T> constexpr bool is_unsigned_int_v = int_info<T>::is_int && !int_info<T>::is_signed;

// Unsigned type of at least 32 bits holding T's bits: arithmetic in it wraps without UB
// (uint16 * uint16 would promote to *signed* int and overflow).
template <class T> struct wide_unsigned {
  typedef typename tt::enable_if<(int_info<T>::bits <= 32), unsigned int>::type type;
};
template <> struct wide_unsigned<long> {
  typedef unsigned long long type;
};
template <> struct wide_unsigned<unsigned long> {
  typedef unsigned long long type;
};
template <> struct wide_unsigned<long long> {
  typedef unsigned long long type;
};
template <> struct wide_unsigned<unsigned long long> {
  typedef unsigned long long type;
};
template <class T> using wide_unsigned_t = typename wide_unsigned<T>::type;

template <class T> CPN_INLINE constexpr T int_min() {
  if constexpr (int_info<T>::is_signed) {
    return (T)((typename int_info<T>::unsigned_type)1 << (int_info<T>::bits - 1));
  } else {
    return (T)0;
  }
}
template <class T> CPN_INLINE constexpr T int_max() {
  if constexpr (int_info<T>::is_signed) {
    return (T)(((typename int_info<T>::unsigned_type)1 << (int_info<T>::bits - 1)) - 1);
  } else {
    return (T)~(T)0;
  }
}
}  // namespace tt

// ---------------------------------------------------------------------------------------
// Bit casts and IEEE classification (never rely on isnan macros or fast-math folding).
// ---------------------------------------------------------------------------------------
CPN_INLINE uint32_t float_bits(float x) {
#if defined(__CUDA_ARCH__)
  return (uint32_t)__float_as_uint(x);
#else
  uint32_t u;
  memcpy(&u, &x, 4);
  return u;
#endif
}
CPN_INLINE float bits_float(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float x;
  memcpy(&x, &u, 4);
  return x;
#endif
}
CPN_INLINE uint64_t double_bits(double x) {
#if defined(__CUDA_ARCH__)
  return (uint64_t)__double_as_longlong(x);
#else
  uint64_t u;
  memcpy(&u, &x, 8);
  return u;
#endif
}
CPN_INLINE double bits_double(uint64_t u) {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double((long long)u);
#else
  double x;
  memcpy(&x, &u, 8);
  return x;
#endif
}

template <class T> CPN_INLINE T inf_v();
template <> CPN_INLINE float inf_v<float>() { return bits_float(0x7f800000u); }
template <> CPN_INLINE double inf_v<double>() { return bits_double(0x7ff0000000000000ull); }
template <class T> CPN_INLINE T nan_v();
template <> CPN_INLINE float nan_v<float>() { return bits_float(0x7fc00000u); }
template <> CPN_INLINE double nan_v<double>() { return bits_double(0x7ff8000000000000ull); }

template <class T> CPN_INLINE bool is_nan(T x) { return !(x == x); }
template <class T> CPN_INLINE bool is_inf(T x) { return x == inf_v<T>() || x == -inf_v<T>(); }
template <class T> CPN_INLINE bool is_finite(T x) { return x - x == x - x; }  // false for inf, nan
CPN_INLINE bool sign_bit(float x) { return (float_bits(x) >> 31) != 0; }
CPN_INLINE bool sign_bit(double x) { return (double_bits(x) >> 63) != 0; }

// ---------------------------------------------------------------------------------------
// Math: one overload set per function for float and double.  On the device these are the
// CUDA math library (libdevice), on the host the C library.  Functors never call the
// global names directly, because inside namespace cpn `sin` names the functor struct.
// ---------------------------------------------------------------------------------------
namespace math {
#define CPN_MATH1(name)                                         \
  CPN_INLINE float name(float x) { return ::name##f(x); }       \
  CPN_INLINE double name(double x) { return ::name(x); }
#define CPN_MATH2(name)                                                  \
  CPN_INLINE float name(float x, float y) { return ::name##f(x, y); }    \
  CPN_INLINE double name(double x, double y) { return ::name(x, y); }
CPN_MATH1(sqrt) CPN_MATH1(cbrt) CPN_MATH1(exp) CPN_MATH1(exp2) CPN_MATH1(expm1)
CPN_MATH1(log) CPN_MATH1(log2) CPN_MATH1(log10) CPN_MATH1(log1p)
CPN_MATH1(sin) CPN_MATH1(cos) CPN_MATH1(tan) CPN_MATH1(asin) CPN_MATH1(acos) CPN_MATH1(atan)
CPN_MATH1(sinh) CPN_MATH1(cosh) CPN_MATH1(tanh) CPN_MATH1(asinh) CPN_MATH1(acosh)
CPN_MATH1(atanh) CPN_MATH1(floor) CPN_MATH1(ceil) CPN_MATH1(trunc) CPN_MATH1(rint)
CPN_MATH1(fabs)
CPN_MATH2(atan2) CPN_MATH2(pow) CPN_MATH2(fmod) CPN_MATH2(copysign) CPN_MATH2(nextafter)
#undef CPN_MATH1
#undef CPN_MATH2
// hypot.  Host: the C library's (NumPy calls the same one).  Device: libdevice's double
// hypot is off by an ulp now and then (and overflows to inf for hypot(1, DBL_MAX)), so
// the device computes sqrt(a*a + b*b) with a fused correction step (Borges 2019, "An
// improved algorithm for hypot"), which is correctly rounded in all but ~0.1% of cases,
// after an exact power-of-two scaling; float goes through double.
CPN_INLINE double hypot(double x, double y) {
#if defined(__CUDA_ARCH__)
  double a = ::fabs(x), b = ::fabs(y);
  if (a < b) {
    double t = a;
    a = b;
    b = t;
  }
  if (a == __longlong_as_double(0x7ff0000000000000ll) ||
      b == __longlong_as_double(0x7ff0000000000000ll))
    return __longlong_as_double(0x7ff0000000000000ll);  // inf, even with a nan
  if (!(a == a) || !(b == b)) return a + b;             // nan
  if (b == 0) return a;
  double s = 1.0;
  if (a > 0x1p+500) {
    a *= 0x1p-600;
    b *= 0x1p-600;
    s = 0x1p+600;
  } else if (a < 0x1p-500) {
    a *= 0x1p+600;
    b *= 0x1p+600;
    s = 0x1p-600;
  }
  double h = ::sqrt(::fma(a, a, b * b));
  double h_sq = h * h, a_sq = a * a;
  double e = (::fma(-b, b, h_sq - a_sq) + ::fma(h, h, -h_sq)) - ::fma(a, a, -a_sq);
  return (h - e / (2.0 * h)) * s;
#else
  return ::hypot(x, y);
#endif
}
CPN_INLINE float hypot(float x, float y) {
#if defined(__CUDA_ARCH__)
  if (::fabsf(x) == __int_as_float(0x7f800000) || ::fabsf(y) == __int_as_float(0x7f800000))
    return __int_as_float(0x7f800000);
  double a = (double)x, b = (double)y;
  return (float)::sqrt(::fma(a, a, b * b));  // exact squares; nan propagates
#else
  return ::hypotf(x, y);
#endif
}
CPN_INLINE float fma(float x, float y, float z) { return ::fmaf(x, y, z); }
CPN_INLINE double fma(double x, double y, double z) { return ::fma(x, y, z); }
CPN_INLINE float ldexp(float x, int e) { return ::ldexpf(x, e); }
CPN_INLINE double ldexp(double x, int e) { return ::ldexp(x, e); }
CPN_INLINE float frexp(float x, int* e) { return ::frexpf(x, e); }
CPN_INLINE double frexp(double x, int* e) { return ::frexp(x, e); }
CPN_INLINE float modf(float x, float* i) { return ::modff(x, i); }
CPN_INLINE double modf(double x, double* i) { return ::modf(x, i); }
}  // namespace math

// copysign that reads the sign bit of s from its bits: on the GPU, arithmetic on a NaN
// (negation included) may return the canonical NaN, so special-value code never derives
// a sign from a NaN it computed, only from input bits.
template <class T> CPN_INLINE T copysign_bit(T m, T s) {
  T a = math::fabs(m);
  return sign_bit(s) ? -a : a;
}

// NumPy's constants, rounded to each precision the way NumPy's C sources round them
// (float versions are float literals, folded in float).
template <class T> struct consts;
template <> struct consts<float> {
  static constexpr float pi = 3.141592653589793238462643383279502884f;
  static constexpr float pi_2 = 1.570796326794896619231321691639751442f;
  static constexpr float pi_4 = 0.785398163397448309615660845819875721f;
  static constexpr float loge2 = 0.693147180559945309417232121458176568f;
  static constexpr float log2e = 1.442695040888963407359924681001892137f;
  static constexpr float log10e = 0.434294481903251827651128918916605082f;
  static constexpr float rad2deg = 180.0f / 3.141592653589793238462643383279502884f;
  static constexpr float deg2rad = 3.141592653589793238462643383279502884f / 180.0f;
};
template <> struct consts<double> {
  static constexpr double pi = 3.141592653589793238462643383279502884;
  static constexpr double pi_2 = 1.570796326794896619231321691639751442;
  static constexpr double pi_4 = 0.785398163397448309615660845819875721;
  static constexpr double loge2 = 0.693147180559945309417232121458176568;
  static constexpr double log2e = 1.442695040888963407359924681001892137;
  static constexpr double log10e = 0.434294481903251827651128918916605082;
  static constexpr double rad2deg = 180.0 / 3.141592653589793238462643383279502884;
  static constexpr double deg2rad = 3.141592653589793238462643383279502884 / 180.0;
};

}  // namespace cpn
