"""NumPy references for the special functions NumPy lacks (erf, erfc, erfinv, lgamma,
digamma, the normal CDF), in float64 from the standard library's ``math`` — so the suite
needs neither SciPy nor a plugin as its reference."""
import math

import numpy as np

__all__ = ["erf", "erfc", "erfinv", "lgamma", "digamma", "ndtr", "npdf"]

erf = np.vectorize(math.erf, otypes=[np.float64])
erfc = np.vectorize(math.erfc, otypes=[np.float64])


def _lgamma(x):
    if x <= 0 and x == math.floor(x):
        return math.inf
    return math.lgamma(x)


lgamma = np.vectorize(_lgamma, otypes=[np.float64])


def _erfinv(y):
    if math.isnan(y) or abs(y) > 1:
        return math.nan
    if abs(y) == 1:
        return math.copysign(math.inf, y)
    # Giles' single-precision approximation, then Newton steps on math.erf
    w = -math.log((1.0 - y) * (1.0 + y))
    if w < 5.0:
        w -= 2.5
        p = 2.81022636e-08
        for c in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                  -0.00125372503, -0.00417768164, 0.246640727, 1.50140941):
            p = c + p * w
    else:
        w = math.sqrt(w) - 3.0
        p = -0.000200214257
        for c in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
                  -0.0076224613, 0.00943887047, 1.00167406, 2.83297682):
            p = c + p * w
    x = p * y
    for _ in range(3):
        x -= (math.erf(x) - y) / (2.0 / math.sqrt(math.pi) * math.exp(-x * x))
    return x


erfinv = np.vectorize(_erfinv, otypes=[np.float64])


def _digamma(x):
    if math.isnan(x):
        return math.nan
    if x == 0:
        return -math.inf if math.copysign(1.0, x) > 0 else math.inf
    if x < 0:
        if x == math.floor(x):
            return math.nan
        # reflection: psi(1 - x) - psi(x) = pi cot(pi x)
        return _digamma(1.0 - x) - math.pi / math.tan(math.pi * x)
    acc = 0.0
    while x < 6.0:
        acc -= 1.0 / x
        x += 1.0
    f = 1.0 / (x * x)
    series = f * (-1 / 12 + f * (1 / 120 + f * (-1 / 252 + f * (1 / 240 + f * (-1 / 132)))))
    return acc + math.log(x) - 0.5 / x + series


digamma = np.vectorize(_digamma, otypes=[np.float64])


def ndtr(x):
    """The standard normal CDF."""
    return 0.5 * erfc(-np.asarray(x, np.float64) / math.sqrt(2.0))


def npdf(x):
    x = np.asarray(x, np.float64)
    return np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)
