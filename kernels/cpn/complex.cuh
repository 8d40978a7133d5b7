// cupynum kernels: cpn::complex<T> and the complex overloads of the functors in real.cuh.
//
// Included (instead of, or after, cpn/real.cuh) by kernels with a complex64/complex128
// operand only; it needs no libcu++ header, so it stays cheap to compile under NVRTC.
//
// What NumPy computes on Linux, and what we reproduce:
//   * arithmetic, square, reciprocal, sign, comparisons, maximum/minimum/fmax/fmin,
//     exp2, log2, log10, expm1, log1p and the small-integer-exponent path of power are
//     NumPy's own C formulas (loops.c.src, funcs.inc.src, npy_math_complex.c.src); they are
//     evaluated here with the same formulas in the same precision (multiply and square
//     with the fused first product of NumPy's SIMD loops).
//   * exp, log, sqrt, sin, cos, tan, sinh, cosh, tanh, arcsin, arccos, arctan, arcsinh,
//     arccosh, arctanh and the general power are the C99 functions (glibc cexp, clog,
//     csqrt, ...).  They are implemented here with accuracy-preserving algorithms
//     (Hull-Fairgrieve-Tang for arcsin/arccos, compensated |z|^2 - 1 for log and
//     arctanh, scaled overflow paths) and glibc's choices of C99 Annex G special values
//     (signs taken from an input NaN are read from its bits).  complex64 runs
//     them in double and rounds once, so it is within ~1 ulp of the correctly rounded
//     result; complex128 within a few ulp.  Power is exp(b * log(a)) like glibc's cpow.
#pragma once
#include "real.cuh"

namespace cpn {

template <class T> struct alignas(2 * sizeof(T)) complex {
  T re, im;
  complex() = default;
  CPN_HD constexpr complex(T r, T i = T(0)) : re(r), im(i) {}
  template <class U>
  CPN_HD explicit constexpr complex(complex<U> z) : re((T)z.re), im((T)z.im) {}
  CPN_HD T real() const { return re; }
  CPN_HD T imag() const { return im; }
};
typedef complex<float> complex64;
typedef complex<double> complex128;

// ---------------------------------------------------------------------------------------
// Arithmetic: NumPy's formulas (no FMA: compile with --fmad=false / -ffp-contract=off).
// ---------------------------------------------------------------------------------------
template <class T> CPN_INLINE complex<T> operator+(complex<T> a, complex<T> b) {
  return complex<T>(a.re + b.re, a.im + b.im);
}
template <class T> CPN_INLINE complex<T> operator-(complex<T> a, complex<T> b) {
  return complex<T>(a.re - b.re, a.im - b.im);
}
template <class T> CPN_INLINE complex<T> operator-(complex<T> a) { return complex<T>(-a.re, -a.im); }
template <class T> CPN_INLINE complex<T> operator*(complex<T> a, complex<T> b) {
  return complex<T>(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
}
template <class T> CPN_INLINE complex<T> operator/(complex<T> a, complex<T> b) {
  // NumPy's CDOUBLE_divide (Smith's method; 0/0 gives inf/nan componentwise).
  T abs_br = math::fabs(b.re), abs_bi = math::fabs(b.im);
  if (abs_br >= abs_bi) {
    if (abs_br == 0 && abs_bi == 0) return complex<T>(a.re / abs_br, a.im / abs_bi);
    T rat = b.im / b.re;
    T scl = T(1) / (b.re + b.im * rat);
    return complex<T>((a.re + a.im * rat) * scl, (a.im - a.re * rat) * scl);
  }
  T rat = b.re / b.im;
  T scl = T(1) / (b.im + b.re * rat);
  return complex<T>((a.re * rat + a.im) * scl, (a.im * rat - a.re) * scl);
}

// ---------------------------------------------------------------------------------------
// Casts (cpn::cast): complex -> real takes the real part, complex -> bool tests both parts.
// ---------------------------------------------------------------------------------------
template <class T, class From> struct cast_impl<complex<T>, From> {
  CPN_HD static complex<T> run(From x) { return complex<T>(cast_impl<T, From>::run(x), T(0)); }
};
template <class To, class T> struct cast_impl<To, complex<T>> {
  CPN_HD static To run(complex<T> z) {
    if constexpr (tt::is_bool_v<To>) return z.re != T(0) || z.im != T(0);
    else return cast_impl<To, T>::run(z.re);
  }
};
template <class T, class U> struct cast_impl<complex<T>, complex<U>> {
  CPN_HD static complex<T> run(complex<U> z) { return complex<T>((T)z.re, (T)z.im); }
};
template <class T> struct cast_impl<half, complex<T>> {
  CPN_HD static half run(complex<T> z) { return cast_impl<half, T>::run(z.re); }
};
template <class T> struct cast_impl<complex<T>, half> {
  CPN_HD static complex<T> run(half x) { return complex<T>(cast_impl<T, half>::run(x), T(0)); }
};

// ---------------------------------------------------------------------------------------
// C99 complex functions (namespace cpn::cx).  Double versions are the algorithms; float
// versions evaluate the double version and round.
// ---------------------------------------------------------------------------------------
namespace cx {
typedef complex<double> zd;
typedef complex<float> zf;

CPN_INLINE zf to_f(zd z) { return zf((float)z.re, (float)z.im); }
CPN_INLINE zd to_d(zf z) { return zd((double)z.re, (double)z.im); }

constexpr double LN2_HI = 6.93147180369123816490e-01;  // ln2 with 21 trailing zero bits
constexpr double LN2_LO = 1.90821492927058770002e-10;
constexpr double LN2 = 0.693147180559945309417232121458176568;
constexpr double PI = 3.141592653589793238462643383279502884;
constexpr double PI_2 = 1.570796326794896619231321691639751442;
constexpr double PI_4 = 0.785398163397448309615660845819875721;
constexpr double PI3_4 = 2.356194490192344928846982537459627163;

CPN_INLINE void two_sum(double a, double b, double& s, double& e) {
  s = a + b;
  double bb = s - a;
  e = (a - (s - bb)) + (b - bb);
}
// x*x + y*y - 1 with about double-double accuracy (for |z| close to 1).
CPN_INLINE double x2y2m1(double x, double y) {
  double xh = x * x, xl = math::fma(x, x, -xh);
  double yh = y * y, yl = math::fma(y, y, -yh);
  double s1, e1, s2, e2;
  two_sum(xh, -1.0, s1, e1);
  two_sum(s1, yh, s2, e2);
  return s2 + (((e1 + e2) + xl) + yl);
}
// log(|z|) for finite z, accurate near |z| = 1 and without overflow/underflow.
CPN_INLINE double log_abs(double x, double y) {
  double ax = math::fabs(x), ay = math::fabs(y);
  if (ax < ay) {
    double t = ax;
    ax = ay;
    ay = t;
  }
  if (ax == 0) return -inf_v<double>();
  if (ax > 0x1p+510) {
    double h = math::hypot(ax * 0x1p-600, ay * 0x1p-600);
    return math::log(h) + (600.0 * LN2_HI + 600.0 * LN2_LO);
  }
  if (ax < 0x1p-510) {
    double h = math::hypot(ax * 0x1p+600, ay * 0x1p+600);
    return math::log(h) - (600.0 * LN2_HI + 600.0 * LN2_LO);
  }
  double h = math::hypot(ax, ay);
  if (h > 0.70710678118654752 && h < 1.41421356237309505) return 0.5 * math::log1p(x2y2m1(ax, ay));
  return math::log(h);
}

// ---- exp -------------------------------------------------------------------------------
CPN_INLINE zd exp(zd z) {
  double x = z.re, y = z.im;
  if (is_finite(x) && is_finite(y)) {
    if (y == 0) return zd(math::exp(x), y);
    double c = math::cos(y), s = math::sin(y);
    if (x > 708.0) {  // exp(x) overflows before exp(x) * cos(y) may
      double h = math::exp(0.5 * x);
      return zd((c * h) * h, (s * h) * h);
    }
    double e = math::exp(x);
    return zd(e * c, e * s);
  }
  if (is_nan(x)) return y == 0 ? zd(x, y) : zd(nan_v<double>(), nan_v<double>());
  if (is_inf(x)) {
    if (x > 0) {
      if (y == 0) return zd(x, y);
      if (!is_finite(y)) return zd(x, nan_v<double>());
      return zd(x * math::cos(y), x * math::sin(y));
    }
    if (!is_finite(y)) return zd(0.0, copysign_bit(0.0, y));
    return zd(0.0 * math::cos(y), 0.0 * math::sin(y));
  }
  return zd(nan_v<double>(), nan_v<double>());  // finite x, y inf or nan
}

// ---- log -------------------------------------------------------------------------------
CPN_INLINE zd log(zd z) {
  double x = z.re, y = z.im;
  double im = math::atan2(y, x);
  if (!is_finite(x) || !is_finite(y)) {
    double re = (is_inf(x) || is_inf(y)) ? inf_v<double>() : nan_v<double>();
    return zd(re, im);
  }
  return zd(log_abs(x, y), im);
}

// ---- sqrt ------------------------------------------------------------------------------
CPN_INLINE zd sqrt(zd z) {
  double x = z.re, y = z.im;
  if (is_inf(y)) return zd(inf_v<double>(), y);
  if (is_nan(x)) return zd(x, nan_v<double>());
  if (is_inf(x)) {
    if (x > 0) return zd(x, is_nan(y) ? y : copysign_bit(0.0, y));
    return zd(is_nan(y) ? nan_v<double>() : 0.0, copysign_bit(inf_v<double>(), y));
  }
  if (is_nan(y)) return zd(nan_v<double>(), nan_v<double>());
  if (x == 0 && y == 0) return zd(0.0, y);
  double ax = math::fabs(x), ay = math::fabs(y);
  double scale = 1.0, unscale = 1.0;
  if (ax > 0x1p+1020 || ay > 0x1p+1020) {
    scale = 0x1p-2;
    unscale = 0x1p+1;
  } else if (ax < 0x1p-1000 && ay < 0x1p-1000) {
    scale = 0x1p+100;
    unscale = 0x1p-50;
  }
  ax *= scale;
  ay *= scale;
  double t = math::sqrt(0.5 * (ax + math::hypot(ax, ay)));
  double u = ay / (2.0 * t);
  if (x >= 0) return zd(t * unscale, copysign_bit(u * unscale, y));
  return zd(u * unscale, copysign_bit(t * unscale, y));
}

// ---- sinh / cosh / tanh and the circular functions through them --------------------------
CPN_INLINE zd sinh(zd z) {
  double x = z.re, y = z.im;
  if (is_finite(x) && is_finite(y)) {
    if (y == 0) return zd(math::sinh(x), y);
    double c = math::cos(y), s = math::sin(y);
    double ax = math::fabs(x);
    if (ax > 709.0) {
      double h = math::exp(0.5 * ax);
      double re = ((0.5 * c) * h) * h;
      return zd(sign_bit(x) ? -re : re, ((0.5 * s) * h) * h);
    }
    return zd(math::sinh(x) * c, math::cosh(x) * s);
  }
  if (is_nan(x)) return y == 0 ? zd(x, y) : zd(nan_v<double>(), nan_v<double>());
  if (is_inf(x)) {
    if (y == 0) return zd(x, y);
    if (!is_finite(y)) return zd(inf_v<double>(), nan_v<double>());
    return zd(x * math::cos(y), inf_v<double>() * math::sin(y));
  }
  // finite x, y inf or nan
  if (x == 0) return zd(x, nan_v<double>());
  return zd(nan_v<double>(), nan_v<double>());
}

CPN_INLINE zd cosh(zd z) {
  double x = z.re, y = z.im;
  if (is_finite(x) && is_finite(y)) {
    if (y == 0) return zd(math::cosh(x), sign_bit(x) ? -y : y);
    double c = math::cos(y), s = math::sin(y);
    double ax = math::fabs(x);
    if (ax > 709.0) {
      double h = math::exp(0.5 * ax);
      double im = ((0.5 * s) * h) * h;
      return zd(((0.5 * c) * h) * h, sign_bit(x) ? -im : im);
    }
    return zd(math::cosh(x) * c, math::sinh(x) * s);
  }
  if (is_nan(x)) return y == 0 ? zd(x, y) : zd(nan_v<double>(), nan_v<double>());
  if (is_inf(x)) {
    if (y == 0) return zd(inf_v<double>(), sign_bit(x) ? -y : y);
    if (!is_finite(y)) return zd(inf_v<double>(), nan_v<double>());
    return zd(inf_v<double>() * math::cos(y), x * math::sin(y));
  }
  // finite x, y inf or nan
  if (x == 0) return zd(nan_v<double>(), 0.0);
  return zd(nan_v<double>(), nan_v<double>());
}

CPN_INLINE zd tanh(zd z) {
  double x = z.re, y = z.im;
  if (!is_finite(x) || !is_finite(y)) {
    if (is_inf(x)) {
      double im = copysign_bit(0.0, y);
      if (is_finite(y) && math::fabs(y) > 1.0) im = copysign_bit(0.0, math::sin(y) * math::cos(y));
      return zd(copysign_bit(1.0, x), im);
    }
    if (y == 0) return zd(x, y);
    return zd(x == 0 ? x : nan_v<double>(), nan_v<double>());
  }
  double s = math::sin(y), c = math::cos(y);
  double ax = math::fabs(x);
  const double t = 354.0;  // e**(2t) still fits a double
  if (ax > t) {
    // real part rounds to +-1; imaginary part 4 sin cos e**(-2|x|), divided in two steps
    double e2t = math::exp(2.0 * t);
    double im = (4.0 * s * c) / e2t;
    double rest = ax - t;
    im = rest > t ? im / e2t : im / math::exp(2.0 * rest);
    return zd(copysign_bit(1.0, x), im);
  }
  double sh = math::sinh(x), ch = math::cosh(x);
  double den = sh * sh + c * c;
  return zd(sh * ch / den, s * c / den);
}

CPN_INLINE zd sin(zd z) {  // sin z = -i sinh(iz)
  if (is_inf(z.im) && !is_finite(z.re)) return zd(nan_v<double>(), inf_v<double>());
  zd w = sinh(zd(-z.im, z.re));
  return zd(w.im, -w.re);
}
CPN_INLINE zd cos(zd z) { return cosh(zd(-z.im, z.re)); }  // cos z = cosh(iz)
CPN_INLINE zd tan(zd z) {  // tan z = -i tanh(iz)
  zd w = tanh(zd(-z.im, z.re));
  return zd(w.im, -w.re);
}

// ---- inverse functions -----------------------------------------------------------------
// For finite x, y >= 0: Re asin(z), Re acos(z) and |Im asin(z)| (= |Im acos(z)|), after
// Hull, Fairgrieve and Tang, ACM TOMS 23 (1997).
CPN_INLINE void asin_acos_core(double x, double y, double& asin_re, double& acos_re,
                               double& im) {
  if (x > 0x1p+28 || y > 0x1p+28) {  // asin z ~ -i log(2iz)
    im = math::log(math::hypot(0.5 * x, 0.5 * y)) + 2.0 * LN2;
    asin_re = math::atan2(x, y);
    acos_re = math::atan2(y, x);
    return;
  }
  if (x < 0x1p-28 && y < 0x1p-28) {  // asin z ~ z
    asin_re = x;
    acos_re = PI_2 - x;
    im = y;
    return;
  }
  const double Across = 1.5, Bcross = 0.6417;
  double xp1 = x + 1.0, xm1 = x - 1.0;
  double R = math::hypot(xp1, y), S = math::hypot(xm1, y);
  double A = 0.5 * (R + S);
  double B = x / A;
  double y2 = y * y;
  if (B <= Bcross) {
    asin_re = math::asin(B);
    acos_re = math::acos(B);
  } else {
    double d;
    if (x <= 1.0) d = math::sqrt(0.5 * (A + x) * (y2 / (R + xp1) + (S + (1.0 - x))));
    else d = y * math::sqrt(0.5 * ((A + x) / (R + xp1) + (A + x) / (S + xm1)));
    asin_re = math::atan(x / d);
    acos_re = math::atan(d / x);
  }
  if (A <= Across) {
    double Am1;
    if (x < 1.0) {
      if (y < 0x1p-500) {  // y*y underflows: Im asin = y / sqrt(1 - x*x)
        im = y / math::sqrt((1.0 - x) * xp1);
        return;
      }
      Am1 = 0.5 * (y2 / (R + xp1) + y2 / (S + (1.0 - x)));
    } else {
      if (x == 1.0 && y < 0x1p-500) {  // y/2 underflows: Im asin(1 + iy) = sqrt(y)
        im = math::sqrt(y);
        return;
      }
      Am1 = 0.5 * (y2 / (R + xp1) + (S + xm1));
    }
    im = math::log1p(Am1 + math::sqrt(Am1 * (A + 1.0)));
  } else {
    im = math::log(A + math::sqrt(A * A - 1.0));
  }
}

CPN_INLINE zd asinh(zd z) {
  double x = z.re, y = z.im;
  if (!is_finite(x) || !is_finite(y)) {
    if (is_nan(x)) {
      if (y == 0) return zd(x, y);
      if (is_inf(y)) return zd(copysign_bit(inf_v<double>(), x), nan_v<double>());
      return zd(nan_v<double>(), nan_v<double>());
    }
    if (is_inf(x)) {
      if (is_nan(y)) return zd(x, y);
      if (is_inf(y)) return zd(x, copysign_bit(PI_4, y));
      return zd(x, copysign_bit(0.0, y));
    }
    if (is_inf(y)) return zd(copysign_bit(inf_v<double>(), x), copysign_bit(PI_2, y));
    return zd(nan_v<double>(), nan_v<double>());
  }
  // asinh z = -i asin(iz): Re = |Im asin(|y| + i|x|)|, Im = Re asin(|y| + i|x|)
  double ar, cr, im;
  asin_acos_core(math::fabs(y), math::fabs(x), ar, cr, im);
  return zd(copysign_bit(im, x), copysign_bit(ar, y));
}

CPN_INLINE zd asin(zd z) {  // asin z = -i asinh(iz)
  // (the one special value whose sign comes from a NaN: taken from the input's bits)
  if (is_inf(z.re) && is_nan(z.im)) return zd(z.im, copysign_bit(inf_v<double>(), z.im));
  zd w = asinh(zd(-z.im, z.re));
  return zd(w.im, -w.re);
}

CPN_INLINE zd acos(zd z) {
  double x = z.re, y = z.im;
  if (!is_finite(x) || !is_finite(y)) {
    if (is_nan(x)) {
      if (is_inf(y)) return zd(x, -y);
      return zd(nan_v<double>(), nan_v<double>());
    }
    if (is_inf(x)) {
      if (is_nan(y)) return zd(y, sign_bit(y) ? inf_v<double>() : -inf_v<double>());
      if (is_inf(y)) return zd(x > 0 ? PI_4 : PI3_4, -y);
      return zd(x > 0 ? 0.0 : PI, copysign_bit(inf_v<double>(), -y));
    }
    if (is_inf(y)) return zd(PI_2, -y);
    return zd(x == 0 ? PI_2 : nan_v<double>(), nan_v<double>());
  }
  double ar, cr, im;
  asin_acos_core(math::fabs(x), math::fabs(y), ar, cr, im);
  return zd(sign_bit(x) ? PI - cr : cr, sign_bit(y) ? im : -im);
}

CPN_INLINE zd acosh(zd z) {  // Re >= 0, Im with the sign of Im z
  double x = z.re, y = z.im;
  if (!is_finite(x) || !is_finite(y)) {
    if (is_inf(y)) {
      if (is_nan(x)) return zd(inf_v<double>(), x);
      return zd(inf_v<double>(),
                copysign_bit(is_inf(x) ? (x < 0 ? PI3_4 : PI_4) : PI_2, y));
    }
    if (is_inf(x)) {
      if (is_nan(y)) return zd(inf_v<double>(), y);
      return zd(inf_v<double>(), copysign_bit(sign_bit(x) ? PI : 0.0, y));
    }
    return zd(nan_v<double>(), x == 0 ? PI_2 : nan_v<double>());
  }
  zd w = acos(z);
  return zd(math::fabs(w.im), copysign_bit(w.re, y));
}

CPN_INLINE zd atanh(zd z) {
  double x = z.re, y = z.im;
  if (!is_finite(x) || !is_finite(y)) {
    if (is_nan(x)) {
      if (is_inf(y)) return zd(copysign_bit(0.0, x), copysign_bit(PI_2, y));
      return zd(nan_v<double>(), nan_v<double>());
    }
    if (is_inf(x)) {
      if (is_nan(y)) return zd(copysign_bit(0.0, x), y);
      return zd(copysign_bit(0.0, x), copysign_bit(PI_2, y));
    }
    if (is_inf(y)) return zd(copysign_bit(0.0, x), copysign_bit(PI_2, y));
    return zd(x == 0 ? x : nan_v<double>(), nan_v<double>());
  }
  double ax = math::fabs(x), ay = math::fabs(y);
  if (ax > 0x1p+30 || ay > 0x1p+30) {  // atanh z = 1/z +- i pi/2 + O(z**-3)
    double rre, rim;
    if (ax >= ay) {
      double r = y / x, d = x + y * r;
      rre = 1.0 / d;
      rim = -r / d;
    } else {
      double r = x / y, d = x * r + y;
      rre = r / d;
      rim = -1.0 / d;
    }
    return zd(rre, copysign_bit(PI_2, y) + rim);
  }
  if (ax < 0x1p-28 && ay < 0x1p-28) return zd(x, y);
  if (ax == 1.0 && ay == 0) return zd(copysign_bit(inf_v<double>(), x), y);
  double omx = 1.0 - ax;
  double den = omx * omx + ay * ay;
  double re;
  if (den > 0x1p-1000) re = 0.25 * math::log1p(4.0 * ax / den);
  else re = 0.5 * (math::log(math::hypot(1.0 + ax, ay)) - math::log(math::hypot(omx, ay)));
  double im = 0.5 * math::atan2(2.0 * y, -x2y2m1(ax, ay));
  return zd(copysign_bit(re, x), im);
}

CPN_INLINE zd atan(zd z) {  // atan z = -i atanh(iz)
  if (is_inf(z.re) && is_nan(z.im)) return zd(copysign_bit(PI_2, z.re), copysign_bit(0.0, z.im));
  zd w = atanh(zd(-z.im, z.re));
  return zd(w.im, -w.re);
}

#define CPN_CX_VIA_DOUBLE(FN) \
  CPN_INLINE zf FN(zf z) { return to_f(FN(to_d(z))); }
CPN_CX_VIA_DOUBLE(exp) CPN_CX_VIA_DOUBLE(log) CPN_CX_VIA_DOUBLE(sqrt)
CPN_CX_VIA_DOUBLE(sinh) CPN_CX_VIA_DOUBLE(cosh) CPN_CX_VIA_DOUBLE(tanh)
CPN_CX_VIA_DOUBLE(sin) CPN_CX_VIA_DOUBLE(cos) CPN_CX_VIA_DOUBLE(tan)
CPN_CX_VIA_DOUBLE(asinh) CPN_CX_VIA_DOUBLE(asin) CPN_CX_VIA_DOUBLE(acos)
CPN_CX_VIA_DOUBLE(acosh) CPN_CX_VIA_DOUBLE(atanh) CPN_CX_VIA_DOUBLE(atan)
#undef CPN_CX_VIA_DOUBLE

// C99 Annex G complex multiplication (what `z * w` is in C, libgcc's __muldc3): the
// plain formula, with infinities recovered from NaN + iNaN.  glibc's cpow uses it.
template <class T> CPN_INLINE complex<T> mul_c99(complex<T> z, complex<T> w) {
  T a = z.re, b = z.im, c = w.re, d = w.im;
  T ac = a * c, bd = b * d, ad = a * d, bc = b * c;
  T x = ac - bd, y = ad + bc;
  if (is_nan(x) && is_nan(y)) {
    bool recalc = false;
    if (is_inf(a) || is_inf(b)) {  // z infinite: box it, zero the NaNs of w
      a = copysign_bit(is_inf(a) ? T(1) : T(0), a);
      b = copysign_bit(is_inf(b) ? T(1) : T(0), b);
      if (is_nan(c)) c = copysign_bit(T(0), c);
      if (is_nan(d)) d = copysign_bit(T(0), d);
      recalc = true;
    }
    if (is_inf(c) || is_inf(d)) {  // w infinite
      c = copysign_bit(is_inf(c) ? T(1) : T(0), c);
      d = copysign_bit(is_inf(d) ? T(1) : T(0), d);
      if (is_nan(a)) a = copysign_bit(T(0), a);
      if (is_nan(b)) b = copysign_bit(T(0), b);
      recalc = true;
    }
    if (!recalc && (is_inf(ac) || is_inf(bd) || is_inf(ad) || is_inf(bc))) {  // overflow
      if (is_nan(a)) a = copysign_bit(T(0), a);
      if (is_nan(b)) b = copysign_bit(T(0), b);
      if (is_nan(c)) c = copysign_bit(T(0), c);
      if (is_nan(d)) d = copysign_bit(T(0), d);
      recalc = true;
    }
    if (recalc) {
      x = inf_v<T>() * (a * c - b * d);
      y = inf_v<T>() * (a * d + b * c);
    }
  }
  return complex<T>(x, y);
}

// NumPy's npy_cpow: b == 0 -> 1; a == 0 -> 0 or nan; small integer real exponents by
// repeated multiplication; otherwise C99 cpow, which glibc computes as exp(b * log(a))
// in the operands' precision.
template <class T> CPN_INLINE complex<T> pow(complex<T> a, complex<T> b) {
  if (b.re == 0 && b.im == 0) return complex<T>(T(1), T(0));
  if (a.re == 0 && a.im == 0) {
    if (b.re > 0) return complex<T>(T(0), T(0));
    return complex<T>(nan_v<T>(), nan_v<T>());
  }
  if (b.im == 0 && b.re > T(-100) && b.re < T(100)) {
    long long n = (long long)b.re;
    if ((T)n == b.re) {
      if (n == 1) return a;
      if (n == 2) return a * a;
      if (n == 3) return a * (a * a);
      complex<T> aa(T(1), T(0)), p = a;
      long long m = n < 0 ? -n : n;
      long long mask = 1;
      while (true) {
        if (m & mask) aa = aa * p;
        mask <<= 1;
        if (m < mask || mask <= 0) break;
        p = p * p;
      }
      if (b.re < 0) aa = complex<T>(T(1), T(0)) / aa;
      return aa;
    }
  }
  return exp(mul_c99(b, log(a)));
}
}  // namespace cx

// ---------------------------------------------------------------------------------------
// Functor overloads declared in real.cuh.
// ---------------------------------------------------------------------------------------
namespace detail {
// NumPy's lexicographic complex order; a nan imaginary part makes "<" false.
template <class T> CPN_INLINE bool cge(complex<T> a, complex<T> b) {
  return (a.re > b.re && !is_nan(a.im) && !is_nan(b.im)) || (a.re == b.re && a.im >= b.im);
}
template <class T> CPN_INLINE bool cle(complex<T> a, complex<T> b) {
  return (a.re < b.re && !is_nan(a.im) && !is_nan(b.im)) || (a.re == b.re && a.im <= b.im);
}
template <class T> CPN_INLINE bool cgt(complex<T> a, complex<T> b) {
  return (a.re > b.re && !is_nan(a.im) && !is_nan(b.im)) || (a.re == b.re && a.im > b.im);
}
template <class T> CPN_INLINE bool clt(complex<T> a, complex<T> b) {
  return (a.re < b.re && !is_nan(a.im) && !is_nan(b.im)) || (a.re == b.re && a.im < b.im);
}
template <class T> CPN_INLINE bool cnonzero(complex<T> a) { return a.re != T(0) || a.im != T(0); }
template <class T> CPN_INLINE bool cisnan(complex<T> a) { return is_nan(a.re) || is_nan(a.im); }
}  // namespace detail

#define CPN_CX_DEF_UNARY(NAME) \
  template <class T> CPN_HD complex<T> NAME::operator()(complex<T> z) const
#define CPN_CX_DEF_BINARY(NAME) \
  template <class T> CPN_HD complex<T> NAME::operator()(complex<T> a, complex<T> b) const
#define CPN_CX_DEF_PRED(NAME) template <class T> CPN_HD bool NAME::operator()(complex<T> z) const
#define CPN_CX_DEF_CMP(NAME) \
  template <class T> CPN_HD bool NAME::operator()(complex<T> a, complex<T> b) const

template <class T> CPN_HD T absolute::operator()(complex<T> z) const {
  return math::hypot(z.re, z.im);
}
CPN_CX_DEF_UNARY(conjugate) { return complex<T>(z.re, -z.im); }
// multiply and square: NumPy's SIMD loops (loops_arithm_fp, every x86-64 with AVX2/AVX512F
// and every aarch64 build) fuse the first product: re = fma(ar, br, -(ai*bi)),
// im = fma(ar, bi, ai*br).  (Its scalar loop and cpow's internal products do not.)
CPN_CX_DEF_BINARY(multiply) {
  return complex<T>(math::fma(a.re, b.re, -(a.im * b.im)), math::fma(a.re, b.im, a.im * b.re));
}
CPN_CX_DEF_UNARY(square) {
  return complex<T>(math::fma(z.re, z.re, -(z.im * z.im)), math::fma(z.re, z.im, z.im * z.re));
}
CPN_CX_DEF_UNARY(reciprocal) {
  if (math::fabs(z.im) <= math::fabs(z.re)) {
    T r = z.im / z.re;
    T d = z.re + z.im * r;
    return complex<T>(T(1) / d, -r / d);
  }
  T r = z.re / z.im;
  T d = z.re * r + z.im;
  return complex<T>(r / d, T(-1) / d);
}
CPN_CX_DEF_UNARY(sign) {  // z / |z| (NumPy 2)
  T a = math::hypot(z.re, z.im);
  if (is_nan(a)) return complex<T>(nan_v<T>(), nan_v<T>());
  if (is_inf(a)) {
    if (is_inf(z.re)) {
      if (is_inf(z.im)) return complex<T>(nan_v<T>(), nan_v<T>());
      return complex<T>(z.re > 0 ? T(1) : T(-1), T(0));
    }
    return complex<T>(T(0), z.im > 0 ? T(1) : T(-1));
  }
  if (a == 0) return complex<T>(T(0), T(0));
  return complex<T>(z.re / a, z.im / a);
}
CPN_CX_DEF_UNARY(rint) { return complex<T>(math::rint(z.re), math::rint(z.im)); }

CPN_CX_DEF_UNARY(sqrt) { return cx::sqrt(z); }
CPN_CX_DEF_UNARY(exp) { return cx::exp(z); }
CPN_CX_DEF_UNARY(log) { return cx::log(z); }
CPN_CX_DEF_UNARY(sin) { return cx::sin(z); }
CPN_CX_DEF_UNARY(cos) { return cx::cos(z); }
CPN_CX_DEF_UNARY(tan) { return cx::tan(z); }
CPN_CX_DEF_UNARY(sinh) { return cx::sinh(z); }
CPN_CX_DEF_UNARY(cosh) { return cx::cosh(z); }
CPN_CX_DEF_UNARY(tanh) { return cx::tanh(z); }
CPN_CX_DEF_UNARY(arcsin) { return cx::asin(z); }
CPN_CX_DEF_UNARY(arccos) { return cx::acos(z); }
CPN_CX_DEF_UNARY(arctan) { return cx::atan(z); }
CPN_CX_DEF_UNARY(arcsinh) { return cx::asinh(z); }
CPN_CX_DEF_UNARY(arccosh) { return cx::acosh(z); }
CPN_CX_DEF_UNARY(arctanh) { return cx::atanh(z); }
// NumPy's own formulas (funcs.inc.src), in the loop precision:
CPN_CX_DEF_UNARY(exp2) {
  return cx::exp(complex<T>(z.re * consts<T>::loge2, z.im * consts<T>::loge2));
}
CPN_CX_DEF_UNARY(log2) {
  complex<T> l = cx::log(z);
  return complex<T>(l.re * consts<T>::log2e, l.im * consts<T>::log2e);
}
CPN_CX_DEF_UNARY(log10) {
  complex<T> l = cx::log(z);
  return complex<T>(l.re * consts<T>::log10e, l.im * consts<T>::log10e);
}
CPN_CX_DEF_UNARY(expm1) {
  T a = math::sin(z.im / T(2));
  return complex<T>(math::expm1(z.re) * math::cos(z.im) - T(2) * a * a,
                    math::exp(z.re) * math::sin(z.im));
}
CPN_CX_DEF_UNARY(log1p) {
  T l = math::hypot(z.re + T(1), z.im);
  return complex<T>(math::log(l), math::atan2(z.im, z.re + T(1)));
}
CPN_CX_DEF_BINARY(power) { return cx::pow(a, b); }
CPN_CX_DEF_BINARY(float_power) { return cx::pow(a, b); }

CPN_CX_DEF_BINARY(maximum) {
  return (detail::cisnan(a) || detail::cge(a, b)) ? a : b;
}
CPN_CX_DEF_BINARY(minimum) {
  return (detail::cisnan(a) || detail::cle(a, b)) ? a : b;
}
CPN_CX_DEF_BINARY(fmax) { return (detail::cisnan(b) || detail::cge(a, b)) ? a : b; }
CPN_CX_DEF_BINARY(fmin) { return (detail::cisnan(b) || detail::cle(a, b)) ? a : b; }

CPN_CX_DEF_CMP(equal) { return a.re == b.re && a.im == b.im; }
CPN_CX_DEF_CMP(not_equal) { return a.re != b.re || a.im != b.im; }
CPN_CX_DEF_CMP(less) { return detail::clt(a, b); }
CPN_CX_DEF_CMP(less_equal) { return detail::cle(a, b); }
CPN_CX_DEF_CMP(greater) { return detail::cgt(a, b); }
CPN_CX_DEF_CMP(greater_equal) { return detail::cge(a, b); }
CPN_CX_DEF_CMP(logical_and) { return detail::cnonzero(a) && detail::cnonzero(b); }
CPN_CX_DEF_CMP(logical_or) { return detail::cnonzero(a) || detail::cnonzero(b); }
CPN_CX_DEF_CMP(logical_xor) { return detail::cnonzero(a) != detail::cnonzero(b); }
CPN_CX_DEF_PRED(logical_not) { return !detail::cnonzero(z); }
CPN_CX_DEF_PRED(isnan) { return detail::cisnan(z); }
CPN_CX_DEF_PRED(isinf) { return is_inf(z.re) || is_inf(z.im); }
CPN_CX_DEF_PRED(isfinite) { return is_finite(z.re) && is_finite(z.im); }

#undef CPN_CX_DEF_UNARY
#undef CPN_CX_DEF_BINARY
#undef CPN_CX_DEF_PRED
#undef CPN_CX_DEF_CMP

}  // namespace cpn
