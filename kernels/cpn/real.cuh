// cupynum kernels: functors for every table ufunc over bool, integer and float loops.
//
// Convention (see kernels/README.md and cupynum/_ops.py):
//   * one struct per table row, named like the row's `functor`, in namespace cpn;
//   * nout == 1:  `out = cpn::f{}(in0[, in1])`, computed in the loop's types; the caller
//     converts the result to the output array's dtype with cpn::cast;
//   * nout == 2:  `cpn::f{}(in0[, in1], out0&, out1&)` (divmod, frexp, modf);
//   * float16 loops call the float overload (the caller converts half <-> float), except
//     rows flagged half_native, whose functors also take and return cpn::half;
//   * complex loops resolve to the `complex<T>` overloads declared here and defined in
//     cpn/complex.cuh, which complex kernels include instead of this header.
// Integer arithmetic wraps (computed in unsigned types, never signed overflow UB).
#pragma once
#include "common.cuh"
#include "half.cuh"
#include "cast.cuh"

namespace cpn {

namespace detail {
template <class T> using uw = tt::wide_unsigned_t<T>;
template <class T> CPN_INLINE T iadd(T a, T b) { return (T)(uw<T>(a) + uw<T>(b)); }
template <class T> CPN_INLINE T isub(T a, T b) { return (T)(uw<T>(a) - uw<T>(b)); }
template <class T> CPN_INLINE T imul(T a, T b) { return (T)(uw<T>(a) * uw<T>(b)); }
template <class T> CPN_INLINE T ineg(T a) { return (T)(uw<T>(0) - uw<T>(a)); }
// |a| as an unsigned value (|INT_MIN| = 2**(bits-1)).
template <class T> CPN_INLINE uw<T> iabs_u(T a) {
  if constexpr (tt::int_info<T>::is_signed) {
    return a < 0 ? (uw<T>)(uw<T>(0) - uw<T>(a)) : uw<T>(a);
  } else {
    return uw<T>(a);
  }
}

CPN_INLINE int popcount32(uint32_t x) {
#if defined(__CUDA_ARCH__)
  return __popc(x);
#else
  return __builtin_popcount(x);
#endif
}
CPN_INLINE int popcount64(uint64_t x) {
#if defined(__CUDA_ARCH__)
  return __popcll((unsigned long long)x);
#else
  return __builtin_popcountll(x);
#endif
}

// Comparisons that are exact when one operand is signed and the other unsigned
// (NumPy's 'qQ->?' loops); otherwise the built-in operators.
template <class A, class B>
constexpr bool mixed_sign_v = tt::is_int_v<A> && tt::is_int_v<B> &&
                              (tt::int_info<A>::is_signed != tt::int_info<B>::is_signed);
template <class A, class B> CPN_INLINE bool lt(A a, B b) {
  if constexpr (mixed_sign_v<A, B>) {
    if constexpr (tt::int_info<A>::is_signed) {
      return a < 0 || (unsigned long long)a < (unsigned long long)b;
    } else {
      return b >= 0 && (unsigned long long)a < (unsigned long long)b;
    }
  } else {
    return a < b;
  }
}
template <class A, class B> CPN_INLINE bool le(A a, B b) {
  if constexpr (mixed_sign_v<A, B>) {
    return !lt(b, a);
  } else {
    return a <= b;
  }
}
template <class A, class B> CPN_INLINE bool eq(A a, B b) {
  if constexpr (mixed_sign_v<A, B>) {
    if constexpr (tt::int_info<A>::is_signed) {
      return a >= 0 && (unsigned long long)a == (unsigned long long)b;
    } else {
      return b >= 0 && (unsigned long long)a == (unsigned long long)b;
    }
  } else {
    return a == b;
  }
}

// NumPy's npy_divmod (Python semantics for floats): returns the floored quotient.
template <class T> CPN_INLINE T fdivmod(T a, T b, T& modulus) {
  T mod = math::fmod(a, b);
  if (!b) {
    modulus = mod;
    return a / b;
  }
  T div = (a - mod) / b;
  if (mod) {
    if ((b < 0) != (mod < 0)) {
      mod += b;
      div -= T(1);
    }
  } else {
    mod = math::copysign(T(0), b);
  }
  T floordiv;
  if (div) {
    floordiv = math::floor(div);
    if (div - floordiv > T(0.5)) floordiv += T(1);
  } else {
    floordiv = math::copysign(T(0), a / b);
  }
  modulus = mod;
  return floordiv;
}

// Integer floor division / remainder with NumPy's rules: x // 0 == 0, x % 0 == 0,
// MIN // -1 == MIN (wraps), MIN % -1 == 0.
template <class T> CPN_INLINE T ifloordiv(T a, T b) {
  if (b == 0) return T(0);
  if constexpr (tt::int_info<T>::is_signed) {
    if (b == T(-1)) return ineg(a);
    T q = (T)(a / b);
    if ((T)(a % b) != 0 && ((a < 0) != (b < 0))) q = (T)(q - 1);
    return q;
  } else {
    return (T)(a / b);
  }
}
template <class T> CPN_INLINE T iremainder(T a, T b) {
  if (b == 0) return T(0);
  if constexpr (tt::int_info<T>::is_signed) {
    if (b == T(-1)) return T(0);
    T r = (T)(a % b);
    if (r != 0 && ((r < 0) != (b < 0))) r = (T)(r + b);
    return r;
  } else {
    return (T)(a % b);
  }
}

// float spacing as NumPy: nextafter(x, away from zero) - x; +0/-0 give the smallest
// subnormal; inf and nan give nan.
template <class T> CPN_INLINE T fspacing(T x) {
  if (is_inf(x) || is_nan(x)) return nan_v<T>();
  T away = sign_bit(x) && x != T(0) ? -inf_v<T>() : inf_v<T>();
  return math::nextafter(x, away) - x;
}

template <class T> CPN_INLINE T log2_1p(T x) { return consts<T>::log2e * math::log1p(x); }
}  // namespace detail

#define CPN_CX_UNARY template <class T> CPN_HD complex<T> operator()(complex<T> z) const;
#define CPN_CX_PRED template <class T> CPN_HD bool operator()(complex<T> z) const;
#define CPN_CX_BINARY \
  template <class T> CPN_HD complex<T> operator()(complex<T> a, complex<T> b) const;
#define CPN_CX_CMP template <class T> CPN_HD bool operator()(complex<T> a, complex<T> b) const;

// =======================================================================================
// Arithmetic
// =======================================================================================
struct add {
  template <class T> CPN_HD T operator()(T a, T b) const {
    if constexpr (tt::is_bool_v<T>) return a || b;
    else if constexpr (tt::is_int_v<T>) return detail::iadd(a, b);
    else return a + b;  // float; complex via cpn::operator+ in complex.cuh
  }
};
struct subtract {
  template <class T> CPN_HD T operator()(T a, T b) const {
    if constexpr (tt::is_int_v<T>) return detail::isub(a, b);
    else return a - b;
  }
};
struct multiply {
  template <class T> CPN_HD T operator()(T a, T b) const {
    if constexpr (tt::is_bool_v<T>) return a && b;
    else if constexpr (tt::is_int_v<T>) return detail::imul(a, b);
    else return a * b;
  }
  CPN_CX_BINARY
};
struct divide {  // true division: float and complex loops only
  template <class T> CPN_HD T operator()(T a, T b) const { return a / b; }
};
struct floor_divide {
  template <class T> CPN_HD T operator()(T a, T b) const {
    if constexpr (tt::is_int_v<T>) {
      return detail::ifloordiv(a, b);
    } else {
      if (!b) return a / b;
      T mod;
      return detail::fdivmod(a, b, mod);
    }
  }
};
struct remainder {
  template <class T> CPN_HD T operator()(T a, T b) const {
    if constexpr (tt::is_int_v<T>) {
      return detail::iremainder(a, b);
    } else {
      if (!b) return math::fmod(a, b);
      T mod;
      detail::fdivmod(a, b, mod);
      return mod;
    }
  }
};
struct divmod {  // nout == 2
  template <class T> CPN_HD void operator()(T a, T b, T& q, T& r) const {
    if constexpr (tt::is_int_v<T>) {
      q = detail::ifloordiv(a, b);
      r = detail::iremainder(a, b);
    } else {
      q = detail::fdivmod(a, b, r);
    }
  }
};
struct fmod {  // C semantics (sign of the dividend); integer x fmod 0 == 0
  template <class T> CPN_HD T operator()(T a, T b) const {
    if constexpr (tt::is_int_v<T>) {
      if (b == 0) return T(0);
      if constexpr (tt::int_info<T>::is_signed) {
        if (b == T(-1)) return T(0);
      }
      return (T)(a % b);
    } else {
      return math::fmod(a, b);
    }
  }
};
namespace detail {
// pow with the exponents whose correctly rounded result is one operation exact: NumPy's
// pow (the C library's, correctly rounded) gives a * a for 2, a for 1 and 1 / a for -1,
// where CUDA's pow may be an ulp off (e.g. pow(3.0, 1.0) = 2.9999999999999996).
template <class T> CPN_HD T real_pow(T a, T b) {
  if (b == T(2)) return a * a;
  if (b == T(1)) return a;
  if (b == T(-1)) return T(1) / a;
  return math::pow(a, b);
}
}  // namespace detail
struct power {
  template <class T> CPN_HD T operator()(T a, T b) const {
    if constexpr (tt::is_int_v<T>) {
      if constexpr (tt::int_info<T>::is_signed) {
        // NumPy raises for negative exponents (the frontend checks); Python's truncation.
        if (b < 0) return a == 1 ? T(1) : (a == T(-1) ? ((b & 1) ? T(-1) : T(1)) : T(0));
      }
      typedef detail::uw<T> U;
      U base = U(a), out = U(1);
      U e = U(b);
      while (e) {
        if (e & 1u) out = (U)(out * base);
        base = (U)(base * base);
        e >>= 1;
      }
      return (T)out;
    } else {
      return detail::real_pow(a, b);
    }
  }
  CPN_CX_BINARY
};
struct float_power {  // 'dd->d' and 'DD->D' only
  template <class T> CPN_HD T operator()(T a, T b) const { return detail::real_pow(a, b); }
  CPN_CX_BINARY
};
struct negative {
  template <class T> CPN_HD T operator()(T a) const {
    if constexpr (tt::is_int_v<T>) return detail::ineg(a);
    else return -a;
  }
};
struct positive {
  template <class T> CPN_HD T operator()(T a) const { return a; }
};
struct absolute {
  template <class T> CPN_HD T operator()(T a) const {
    if constexpr (tt::is_bool_v<T> || tt::is_unsigned_int_v<T>) return a;
    else if constexpr (tt::is_int_v<T>) return a < 0 ? detail::ineg(a) : a;
    else return math::fabs(a);
  }
  template <class T> CPN_HD T operator()(complex<T> z) const;  // 'F->f', 'D->d'
};
struct fabs {
  template <class T> CPN_HD T operator()(T a) const { return math::fabs(a); }
};
struct sign {
  template <class T> CPN_HD T operator()(T a) const {
    if constexpr (tt::is_unsigned_int_v<T>) return a > 0 ? T(1) : T(0);
    else if constexpr (tt::is_int_v<T>) return a > 0 ? T(1) : (a < 0 ? T(-1) : T(0));
    else return a > 0 ? T(1) : (a < 0 ? T(-1) : (a == 0 ? T(0) : a));
  }
  CPN_CX_UNARY
};
struct square {
  template <class T> CPN_HD T operator()(T a) const {
    if constexpr (tt::is_int_v<T>) return detail::imul(a, a);
    else return a * a;
  }
  CPN_CX_UNARY
};
struct reciprocal {
  template <class T> CPN_HD T operator()(T a) const {
    // integer loops compute (T)(1.0 / a) in double, as NumPy does (reciprocal(2) == 0,
    // reciprocal(0) is the cast of inf).
    if constexpr (tt::is_int_v<T>) return cast<T>(1.0 / (double)a);
    else return T(1) / a;
  }
  CPN_CX_UNARY
};
struct conjugate {
  template <class T> CPN_HD T operator()(T a) const { return a; }
  CPN_CX_UNARY
};

// =======================================================================================
// Rounding
// =======================================================================================
#define CPN_ROUNDING(NAME)                                                          \
  struct NAME {                                                                     \
    template <class T> CPN_HD T operator()(T a) const {                             \
      if constexpr (tt::is_bool_v<T> || tt::is_int_v<T>) return a;                  \
      else return math::NAME(a);                                                    \
    }                                                                               \
  };
CPN_ROUNDING(floor)
CPN_ROUNDING(ceil)
CPN_ROUNDING(trunc)
#undef CPN_ROUNDING
struct rint {  // round half to even
  template <class T> CPN_HD T operator()(T a) const { return math::rint(a); }
  CPN_CX_UNARY
};

// =======================================================================================
// Exponents, logarithms, powers, trigonometry (float / double; float16 via float)
// =======================================================================================
#define CPN_MATH_UFUNC(NAME, FN, CX)                                        \
  struct NAME {                                                             \
    template <class T> CPN_HD T operator()(T a) const { return math::FN(a); } \
    CX                                                                      \
  };
CPN_MATH_UFUNC(sqrt, sqrt, CPN_CX_UNARY)
CPN_MATH_UFUNC(cbrt, cbrt, )
CPN_MATH_UFUNC(exp, exp, CPN_CX_UNARY)
CPN_MATH_UFUNC(exp2, exp2, CPN_CX_UNARY)

// (float)exp((double)x) for a float x: what NumPy gives for `x * math.exp(-x)` on float32
// (math.exp computes in double; NEP 50 rounds its Python float to float32), at a fraction
// of a double exp's instructions: the argument's 24 bits need no special case past the
// clamp, and a table of 2^(j/256) leaves a degree-4 polynomial on |r| <= ln2/512 (relative
// error near 2^-53 before the one rounding to float).  It equals glibc's
// (float)exp((double)x) on every float (tests/test_functors_host.py; all 2^32 with
// CUPYNUM_TEST_EXHAUSTIVE=1).
namespace detail {
#define CPN_EXP2_256THS {                                                                 \
  0x1.0000000000000p+0, 0x1.00b1afa5abcbfp+0, 0x1.0163da9fb3335p+0, 0x1.02168143b0281p+0,   \
  0x1.02c9a3e778061p+0, 0x1.037d42e11bbccp+0, 0x1.04315e86e7f85p+0, 0x1.04e5f72f654b1p+0,   \
  0x1.059b0d3158574p+0, 0x1.0650a0e3c1f89p+0, 0x1.0706b29ddf6dep+0, 0x1.07bd42b72a836p+0,   \
  0x1.0874518759bc8p+0, 0x1.092bdf66607e0p+0, 0x1.09e3ecac6f383p+0, 0x1.0a9c79b1f3919p+0,   \
  0x1.0b5586cf9890fp+0, 0x1.0c0f145e46c85p+0, 0x1.0cc922b7247f7p+0, 0x1.0d83b23395decp+0,   \
  0x1.0e3ec32d3d1a2p+0, 0x1.0efa55fdfa9c5p+0, 0x1.0fb66affed31bp+0, 0x1.1073028d7233ep+0,   \
  0x1.11301d0125b51p+0, 0x1.11edbab5e2ab6p+0, 0x1.12abdc06c31ccp+0, 0x1.136a814f204abp+0,   \
  0x1.1429aaea92de0p+0, 0x1.14e95934f312ep+0, 0x1.15a98c8a58e51p+0, 0x1.166a45471c3c2p+0,   \
  0x1.172b83c7d517bp+0, 0x1.17ed48695bbc0p+0, 0x1.18af9388c8deap+0, 0x1.1972658375d2fp+0,   \
  0x1.1a35beb6fcb75p+0, 0x1.1af99f8138a1cp+0, 0x1.1bbe084045cd4p+0, 0x1.1c82f95281c6bp+0,   \
  0x1.1d4873168b9aap+0, 0x1.1e0e75eb44027p+0, 0x1.1ed5022fcd91dp+0, 0x1.1f9c18438ce4dp+0,   \
  0x1.2063b88628cd6p+0, 0x1.212be3578a819p+0, 0x1.21f49917ddc96p+0, 0x1.22bdda27912d1p+0,   \
  0x1.2387a6e756238p+0, 0x1.2451ffb82140ap+0, 0x1.251ce4fb2a63fp+0, 0x1.25e85711ece75p+0,   \
  0x1.26b4565e27cddp+0, 0x1.2780e341ddf29p+0, 0x1.284dfe1f56381p+0, 0x1.291ba7591bb70p+0,   \
  0x1.29e9df51fdee1p+0, 0x1.2ab8a66d10f13p+0, 0x1.2b87fd0dad990p+0, 0x1.2c57e39771b2fp+0,   \
  0x1.2d285a6e4030bp+0, 0x1.2df961f641589p+0, 0x1.2ecafa93e2f56p+0, 0x1.2f9d24abd886bp+0,   \
  0x1.306fe0a31b715p+0, 0x1.31432edeeb2fdp+0, 0x1.32170fc4cd831p+0, 0x1.32eb83ba8ea32p+0,   \
  0x1.33c08b26416ffp+0, 0x1.3496266e3fa2dp+0, 0x1.356c55f929ff1p+0, 0x1.36431a2de883bp+0,   \
  0x1.371a7373aa9cbp+0, 0x1.37f26231e754ap+0, 0x1.38cae6d05d866p+0, 0x1.39a401b7140efp+0,   \
  0x1.3a7db34e59ff7p+0, 0x1.3b57fbfec6cf4p+0, 0x1.3c32dc313a8e5p+0, 0x1.3d0e544ede173p+0,   \
  0x1.3dea64c123422p+0, 0x1.3ec70df1c5175p+0, 0x1.3fa4504ac801cp+0, 0x1.40822c367a024p+0,   \
  0x1.4160a21f72e2ap+0, 0x1.423fb2709468ap+0, 0x1.431f5d950a897p+0, 0x1.43ffa3f84b9d4p+0,   \
  0x1.44e086061892dp+0, 0x1.45c2042a7d232p+0, 0x1.46a41ed1d0057p+0, 0x1.4786d668b3237p+0,   \
  0x1.486a2b5c13cd0p+0, 0x1.494e1e192aed2p+0, 0x1.4a32af0d7d3dep+0, 0x1.4b17dea6db7d7p+0,   \
  0x1.4bfdad5362a27p+0, 0x1.4ce41b817c114p+0, 0x1.4dcb299fddd0dp+0, 0x1.4eb2d81d8abffp+0,   \
  0x1.4f9b2769d2ca7p+0, 0x1.508417f4531eep+0, 0x1.516daa2cf6642p+0, 0x1.5257de83f4eefp+0,   \
  0x1.5342b569d4f82p+0, 0x1.542e2f4f6ad27p+0, 0x1.551a4ca5d920fp+0, 0x1.56070dde910d2p+0,   \
  0x1.56f4736b527dap+0, 0x1.57e27dbe2c4cfp+0, 0x1.58d12d497c7fdp+0, 0x1.59c0827ff07ccp+0,   \
  0x1.5ab07dd485429p+0, 0x1.5ba11fba87a03p+0, 0x1.5c9268a5946b7p+0, 0x1.5d84590998b93p+0,   \
  0x1.5e76f15ad2148p+0, 0x1.5f6a320dceb71p+0, 0x1.605e1b976dc09p+0, 0x1.6152ae6cdf6f4p+0,   \
  0x1.6247eb03a5585p+0, 0x1.633dd1d1929fdp+0, 0x1.6434634ccc320p+0, 0x1.652b9febc8fb7p+0,   \
  0x1.6623882552225p+0, 0x1.671c1c70833f6p+0, 0x1.68155d44ca973p+0, 0x1.690f4b19e9538p+0,   \
  0x1.6a09e667f3bcdp+0, 0x1.6b052fa75173ep+0, 0x1.6c012750bdabfp+0, 0x1.6cfdcddd47645p+0,   \
  0x1.6dfb23c651a2fp+0, 0x1.6ef9298593ae5p+0, 0x1.6ff7df9519484p+0, 0x1.70f7466f42e87p+0,   \
  0x1.71f75e8ec5f74p+0, 0x1.72f8286ead08ap+0, 0x1.73f9a48a58174p+0, 0x1.74fbd35d7cbfdp+0,   \
  0x1.75feb564267c9p+0, 0x1.77024b1ab6e09p+0, 0x1.780694fde5d3fp+0, 0x1.790b938ac1cf6p+0,   \
  0x1.7a11473eb0187p+0, 0x1.7b17b0976cfdbp+0, 0x1.7c1ed0130c132p+0, 0x1.7d26a62ff86f0p+0,   \
  0x1.7e2f336cf4e62p+0, 0x1.7f3878491c491p+0, 0x1.80427543e1a12p+0, 0x1.814d2add106d9p+0,   \
  0x1.82589994cce13p+0, 0x1.8364c1eb941f7p+0, 0x1.8471a4623c7adp+0, 0x1.857f4179f5b21p+0,   \
  0x1.868d99b4492edp+0, 0x1.879cad931a436p+0, 0x1.88ac7d98a6699p+0, 0x1.89bd0a478580fp+0,   \
  0x1.8ace5422aa0dbp+0, 0x1.8be05bad61778p+0, 0x1.8cf3216b5448cp+0, 0x1.8e06a5e0866d9p+0,   \
  0x1.8f1ae99157736p+0, 0x1.902fed0282c8ap+0, 0x1.9145b0b91ffc6p+0, 0x1.925c353aa2fe2p+0,   \
  0x1.93737b0cdc5e5p+0, 0x1.948b82b5f98e5p+0, 0x1.95a44cbc8520fp+0, 0x1.96bdd9a7670b3p+0,   \
  0x1.97d829fde4e50p+0, 0x1.98f33e47a22a2p+0, 0x1.9a0f170ca07bap+0, 0x1.9b2bb4d53fe0dp+0,   \
  0x1.9c49182a3f090p+0, 0x1.9d674194bb8d5p+0, 0x1.9e86319e32323p+0, 0x1.9fa5e8d07f29ep+0,   \
  0x1.a0c667b5de565p+0, 0x1.a1e7aed8eb8bbp+0, 0x1.a309bec4a2d33p+0, 0x1.a42c980460ad8p+0,   \
  0x1.a5503b23e255dp+0, 0x1.a674a8af46052p+0, 0x1.a799e1330b358p+0, 0x1.a8bfe53c12e59p+0,   \
  0x1.a9e6b5579fdbfp+0, 0x1.ab0e521356ebap+0, 0x1.ac36bbfd3f37ap+0, 0x1.ad5ff3a3c2774p+0,   \
  0x1.ae89f995ad3adp+0, 0x1.afb4ce622f2ffp+0, 0x1.b0e07298db666p+0, 0x1.b20ce6c9a8952p+0,   \
  0x1.b33a2b84f15fbp+0, 0x1.b468415b749b1p+0, 0x1.b59728de5593ap+0, 0x1.b6c6e29f1c52ap+0,   \
  0x1.b7f76f2fb5e47p+0, 0x1.b928cf22749e4p+0, 0x1.ba5b030a1064ap+0, 0x1.bb8e0b79a6f1fp+0,   \
  0x1.bcc1e904bc1d2p+0, 0x1.bdf69c3f3a207p+0, 0x1.bf2c25bd71e09p+0, 0x1.c06286141b33dp+0,   \
  0x1.c199bdd85529cp+0, 0x1.c2d1cd9fa652cp+0, 0x1.c40ab5fffd07ap+0, 0x1.c544778fafb22p+0,   \
  0x1.c67f12e57d14bp+0, 0x1.c7ba88988c933p+0, 0x1.c8f6d9406e7b5p+0, 0x1.ca3405751c4dbp+0,   \
  0x1.cb720dcef9069p+0, 0x1.ccb0f2e6d1675p+0, 0x1.cdf0b555dc3fap+0, 0x1.cf3155b5bab74p+0,   \
  0x1.d072d4a07897cp+0, 0x1.d1b532b08c968p+0, 0x1.d2f87080d89f2p+0, 0x1.d43c8eacaa1d6p+0,   \
  0x1.d5818dcfba487p+0, 0x1.d6c76e862e6d3p+0, 0x1.d80e316c98398p+0, 0x1.d955d71ff6075p+0,   \
  0x1.da9e603db3285p+0, 0x1.dbe7cd63a8315p+0, 0x1.dd321f301b460p+0, 0x1.de7d5641c0658p+0,   \
  0x1.dfc97337b9b5fp+0, 0x1.e11676b197d17p+0, 0x1.e264614f5a129p+0, 0x1.e3b333b16ee12p+0,   \
  0x1.e502ee78b3ff6p+0, 0x1.e653924676d76p+0, 0x1.e7a51fbc74c83p+0, 0x1.e8f7977cdb740p+0,   \
  0x1.ea4afa2a490dap+0, 0x1.eb9f4867cca6ep+0, 0x1.ecf482d8e67f1p+0, 0x1.ee4aaa2188510p+0,   \
  0x1.efa1bee615a27p+0, 0x1.f0f9c1cb6412ap+0, 0x1.f252b376bba97p+0, 0x1.f3ac948dd7274p+0,   \
  0x1.f50765b6e4540p+0, 0x1.f6632798844f8p+0, 0x1.f7bfdad9cbe14p+0, 0x1.f91d802243c89p+0,   \
  0x1.fa7c1819e90d8p+0, 0x1.fbdba3692d514p+0, 0x1.fd3c22b8f71f1p+0, 0x1.fe9d96b2a23d9p+0   \
  }
#if defined(__CUDA_ARCH__) || defined(__CUDACC_RTC__)
__device__ const double exp2_256ths[256] = CPN_EXP2_256THS;
#else
static const double exp2_256ths[256] = CPN_EXP2_256THS;
#endif
#undef CPN_EXP2_256THS
}  // namespace detail
CPN_INLINE float exp_f32(float x) {
  // past the clamps the result is already inf (exp(88.73) > FLT_MAX) or 0 (exp(-103.98)
  // is under half the least denormal); a NaN passes both tests and stays NaN
  x = x > 100.0f ? 100.0f : x;
  x = x < -110.0f ? -110.0f : x;
  const double xd = x;
  const double shift = 0x1.8p52;  // k = round(x * 256 / ln2) in the low bits, no conversion
  const double t = fma(xd, 0x1.71547652b82fep+8, shift);
  const int k = (int)(uint32_t)double_bits(t);
  const double kd = t - shift;
  double r = fma(-kd, 0x1.62e42fee00000p-9, xd);  // (kd * hi is exact: hi has 32 bits)
  r = fma(-kd, 0x1.a39ef35793c76p-41, r);
  const double p = fma(r, fma(r, fma(r, fma(r, 1.0 / 24, 1.0 / 6), 0.5), 1.0), 1.0);
  // 2^(k / 256): the table's 2^((k mod 256) / 256) with k div 256 added to its exponent
  const double s = bits_double(double_bits(detail::exp2_256ths[k & 255])
                               + ((uint64_t)(int64_t)(k >> 8) << 52));
  return (float)(s * p);
}
CPN_MATH_UFUNC(expm1, expm1, CPN_CX_UNARY)
CPN_MATH_UFUNC(log, log, CPN_CX_UNARY)
CPN_MATH_UFUNC(log2, log2, CPN_CX_UNARY)
CPN_MATH_UFUNC(log10, log10, CPN_CX_UNARY)
CPN_MATH_UFUNC(log1p, log1p, CPN_CX_UNARY)
CPN_MATH_UFUNC(sin, sin, CPN_CX_UNARY)
CPN_MATH_UFUNC(cos, cos, CPN_CX_UNARY)
CPN_MATH_UFUNC(tan, tan, CPN_CX_UNARY)
CPN_MATH_UFUNC(arcsin, asin, CPN_CX_UNARY)
CPN_MATH_UFUNC(arccos, acos, CPN_CX_UNARY)
CPN_MATH_UFUNC(arctan, atan, CPN_CX_UNARY)
CPN_MATH_UFUNC(sinh, sinh, CPN_CX_UNARY)
CPN_MATH_UFUNC(cosh, cosh, CPN_CX_UNARY)
CPN_MATH_UFUNC(tanh, tanh, CPN_CX_UNARY)
CPN_MATH_UFUNC(arcsinh, asinh, CPN_CX_UNARY)
CPN_MATH_UFUNC(arccosh, acosh, CPN_CX_UNARY)
CPN_MATH_UFUNC(arctanh, atanh, CPN_CX_UNARY)
#undef CPN_MATH_UFUNC

struct deg2rad {  // also numpy.radians
  template <class T> CPN_HD T operator()(T a) const { return a * consts<T>::deg2rad; }
};
struct rad2deg {  // also numpy.degrees
  template <class T> CPN_HD T operator()(T a) const { return a * consts<T>::rad2deg; }
};
struct arctan2 {
  template <class T> CPN_HD T operator()(T y, T x) const { return math::atan2(y, x); }
};
struct hypot {
  template <class T> CPN_HD T operator()(T a, T b) const { return math::hypot(a, b); }
};
struct logaddexp {  // npy_logaddexp
  template <class T> CPN_HD T operator()(T x, T y) const {
    if (x == y) return x + consts<T>::loge2;  // same-sign infinities without nan
    T tmp = x - y;
    if (tmp > 0) return x + math::log1p(math::exp(-tmp));
    if (tmp <= 0) return y + math::log1p(math::exp(tmp));
    return tmp;  // nan
  }
};
struct logaddexp2 {  // npy_logaddexp2
  template <class T> CPN_HD T operator()(T x, T y) const {
    if (x == y) return x + T(1);
    T tmp = x - y;
    if (tmp > 0) return x + detail::log2_1p(math::exp2(-tmp));
    if (tmp <= 0) return y + detail::log2_1p(math::exp2(tmp));
    return tmp;
  }
};

// =======================================================================================
// Floating-point functions
// =======================================================================================
struct copysign {
  template <class T> CPN_HD T operator()(T a, T b) const { return math::copysign(a, b); }
};
struct nextafter {
  template <class T> CPN_HD T operator()(T a, T b) const { return math::nextafter(a, b); }
  CPN_HD half operator()(half a, half b) const { return detail::half_nextafter(a, b); }
};
struct spacing {
  template <class T> CPN_HD T operator()(T a) const { return detail::fspacing(a); }
  CPN_HD half operator()(half a) const { return detail::half_spacing(a); }
};
struct heaviside {
  template <class T> CPN_HD T operator()(T x, T h0) const {
    if (is_nan(x)) return nan_v<T>();
    if (x == 0) return h0;
    return x < 0 ? T(0) : T(1);
  }
};
struct signbit {
  template <class T> CPN_HD bool operator()(T a) const { return sign_bit(a); }
};
struct ldexp {  // 'fi->f' and 'fl->f': a 64-bit exponent is clamped to int's range
  template <class T, class I> CPN_HD T operator()(T x, I e) const {
    if constexpr (tt::int_info<I>::bits > 32) {
      if ((I)(int)e != e) return math::ldexp(x, e > 0 ? tt::int_max<int>() : tt::int_min<int>());
    }
    return math::ldexp(x, (int)e);
  }
};
struct frexp {  // nout == 2: mantissa (loop float type), exponent (int32)
  template <class T> CPN_HD void operator()(T x, T& m, int32_t& e) const {
    int ee = 0;
    m = math::frexp(x, &ee);
    if (!is_finite(x)) ee = 0;
    e = (int32_t)ee;
  }
};
struct modf {  // nout == 2: (fractional part, integral part)
  template <class T> CPN_HD void operator()(T x, T& frac, T& integral) const {
    frac = math::modf(x, &integral);
  }
};

// =======================================================================================
// Comparisons and min/max
// =======================================================================================
struct equal {
  template <class A, class B> CPN_HD bool operator()(A a, B b) const { return detail::eq(a, b); }
  CPN_CX_CMP
};
struct not_equal {
  template <class A, class B> CPN_HD bool operator()(A a, B b) const { return !detail::eq(a, b); }
  CPN_CX_CMP
};
struct less {
  template <class A, class B> CPN_HD bool operator()(A a, B b) const { return detail::lt(a, b); }
  CPN_CX_CMP
};
struct less_equal {
  template <class A, class B> CPN_HD bool operator()(A a, B b) const { return detail::le(a, b); }
  CPN_CX_CMP
};
struct greater {
  template <class A, class B> CPN_HD bool operator()(A a, B b) const { return detail::lt(b, a); }
  CPN_CX_CMP
};
struct greater_equal {
  template <class A, class B> CPN_HD bool operator()(A a, B b) const { return detail::le(b, a); }
  CPN_CX_CMP
};
// maximum/minimum propagate NaN; fmax/fmin ignore it.  On ties (+0 vs -0) the second
// operand is returned, as NumPy's SIMD loops do (NumPy's scalar loops differ there).
// float16 max/min run on the bits (half_native rows): NumPy's float16 loops are scalar C
// loops (npy_half_ge/le) that keep the FIRST operand on a tie (so max(-0, +0) is -0), while
// its float32/64 SIMD loops keep the second.
struct maximum {
  template <class T> CPN_HD T operator()(T a, T b) const {
    if constexpr (tt::is_float_v<T>) return (is_nan(a) || a > b) ? a : b;
    else return a > b ? a : b;
  }
  CPN_HD half operator()(half a, half b) const {
    return (half_isnan(a) || half_to_float(a) >= half_to_float(b)) ? a : b;
  }
  CPN_CX_BINARY
};
struct minimum {
  template <class T> CPN_HD T operator()(T a, T b) const {
    if constexpr (tt::is_float_v<T>) return (is_nan(a) || a < b) ? a : b;
    else return a < b ? a : b;
  }
  CPN_HD half operator()(half a, half b) const {
    return (half_isnan(a) || half_to_float(a) <= half_to_float(b)) ? a : b;
  }
  CPN_CX_BINARY
};
struct fmax {
  template <class T> CPN_HD T operator()(T a, T b) const {
    if constexpr (tt::is_float_v<T>) return (is_nan(b) || a > b) ? a : b;
    else return a > b ? a : b;
  }
  CPN_HD half operator()(half a, half b) const {
    return (half_isnan(b) || half_to_float(a) >= half_to_float(b)) ? a : b;
  }
  CPN_CX_BINARY
};
struct fmin {
  template <class T> CPN_HD T operator()(T a, T b) const {
    if constexpr (tt::is_float_v<T>) return (is_nan(b) || a < b) ? a : b;
    else return a < b ? a : b;
  }
  CPN_HD half operator()(half a, half b) const {
    return (half_isnan(b) || half_to_float(a) <= half_to_float(b)) ? a : b;
  }
  CPN_CX_BINARY
};

// =======================================================================================
// Classification
// =======================================================================================
struct isnan {
  template <class T> CPN_HD bool operator()(T a) const {
    if constexpr (tt::is_float_v<T>) return is_nan(a);
    else return false;
  }
  CPN_CX_PRED
};
struct isinf {
  template <class T> CPN_HD bool operator()(T a) const {
    if constexpr (tt::is_float_v<T>) return is_inf(a);
    else return false;
  }
  CPN_CX_PRED
};
struct isfinite {
  template <class T> CPN_HD bool operator()(T a) const {
    if constexpr (tt::is_float_v<T>) return is_finite(a);
    else return true;
  }
  CPN_CX_PRED
};
struct isnat {  // datetime only: never instantiated for cupynum dtypes
  template <class T> CPN_HD bool operator()(T) const { return false; }
};

// =======================================================================================
// Logical and bitwise
// =======================================================================================
struct logical_and {
  template <class T> CPN_HD bool operator()(T a, T b) const { return a != T(0) && b != T(0); }
  CPN_CX_CMP
};
struct logical_or {
  template <class T> CPN_HD bool operator()(T a, T b) const { return a != T(0) || b != T(0); }
  CPN_CX_CMP
};
struct logical_xor {
  template <class T> CPN_HD bool operator()(T a, T b) const { return (a != T(0)) != (b != T(0)); }
  CPN_CX_CMP
};
struct logical_not {
  template <class T> CPN_HD bool operator()(T a) const { return a == T(0); }
  CPN_CX_PRED
};
struct bitwise_and {
  template <class T> CPN_HD T operator()(T a, T b) const { return (T)(a & b); }
};
struct bitwise_or {
  template <class T> CPN_HD T operator()(T a, T b) const { return (T)(a | b); }
};
struct bitwise_xor {
  template <class T> CPN_HD T operator()(T a, T b) const { return (T)(a ^ b); }
};
struct invert {
  template <class T> CPN_HD T operator()(T a) const {
    if constexpr (tt::is_bool_v<T>) return !a;
    else return (T)~a;
  }
};
struct left_shift {  // counts outside [0, bits) give 0
  template <class T> CPN_HD T operator()(T a, T b) const {
    typedef detail::uw<T> U;
    if ((unsigned long long)b < (unsigned long long)tt::int_info<T>::bits)
      return (T)(U(a) << (int)b);
    return T(0);
  }
};
struct right_shift {  // counts outside [0, bits) give 0, or -1 for negative a
  template <class T> CPN_HD T operator()(T a, T b) const {
    if ((unsigned long long)b < (unsigned long long)tt::int_info<T>::bits) return (T)(a >> (int)b);
    if constexpr (tt::int_info<T>::is_signed) {
      if (a < 0) return T(-1);
    }
    return T(0);
  }
};
struct bitwise_count {  // popcount(|a|), result uint8
  template <class T> CPN_HD uint8_t operator()(T a) const {
    detail::uw<T> u = detail::iabs_u(a);
    if constexpr (tt::int_info<T>::bits == 64) return (uint8_t)detail::popcount64(u);
    else return (uint8_t)detail::popcount32((uint32_t)u);
  }
};
struct gcd {  // gcd(|a|, |b|)
  template <class T> CPN_HD T operator()(T a, T b) const {
    typedef detail::uw<T> U;
    U x = detail::iabs_u(a), y = detail::iabs_u(b);
    while (x != 0) {
      U c = x;
      x = (U)(y % x);
      y = c;
    }
    return (T)y;
  }
};
struct lcm {  // |a| / gcd * |b|, wrapping
  template <class T> CPN_HD T operator()(T a, T b) const {
    typedef detail::uw<T> U;
    U x = detail::iabs_u(a), y = detail::iabs_u(b);
    U g = (U)gcd{}(x, y);
    return g == 0 ? T(0) : (T)(U)(x / g * y);
  }
};

#undef CPN_CX_UNARY
#undef CPN_CX_PRED
#undef CPN_CX_BINARY
#undef CPN_CX_CMP

// The select behind numpy.where(c, x, y) and the where= mask of ufuncs (not a ufunc, so not
// a table row): cond is bool, a and b are already in the output's compute type.
struct where_ {
  template <class C, class T>
  CPN_HD T operator()(C cond, T a, T b) const { return cond ? a : b; }
};

}  // namespace cpn
