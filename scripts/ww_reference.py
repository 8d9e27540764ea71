#!/usr/bin/env python3
"""Prints WeightWatcher's power-law fit of three fixed eigenvalue lists, as the C++
lines that tests/studies/test_power_law.cpp compares studies/instruments/power_law.cpp with.

The lists are defined by closed formulas (golden-ratio and plastic-number sequences),
which the test computes the same way, in IEEE double, so both sides fit the very same
numbers:
  pareto3    200 values (1 - u_i)^(-1/2), u_i = frac((i + 1) phi), phi = (sqrt(5) - 1) / 2,
             plus 0 and 1e-6 (below WeightWatcher's 1e-5 threshold: dropped)
  bulk_tail  150 values 1 + 2 frac((i + 1) phi), then 30 values 3 (1 - v_j)^(-1/1.5),
             v_j = frac((j + 1) 0.7548776662466927)
  uniform    100 values 1 + i: no power law

For the developers only (the tests need no Python):
    python3 -m venv /tmp/wwenv && /tmp/wwenv/bin/pip install weightwatcher==0.7.7
    /tmp/wwenv/bin/python scripts/ww_reference.py
WeightWatcher 0.7.7 is the version the Verma study used. Its fit_powerlaw is called with
its defaults (the 'ww' fitter, no fix_fingers, xmax None), as analyze() calls it per layer.
"""
import math

import numpy as np
import weightwatcher

PHI = 0.6180339887498949
PLASTIC = 0.7548776662466927


def frac(x):
    return x - math.floor(x)


def spectra():
    pareto3 = [math.pow(1.0 - frac((i + 1) * PHI), -1.0 / 2.0) for i in range(200)] + [0.0, 1e-6]
    bulk_tail = [1.0 + 2.0 * frac((i + 1) * PHI) for i in range(150)]
    bulk_tail += [3.0 * math.pow(1.0 - frac((j + 1) * PLASTIC), -1.0 / 1.5) for j in range(30)]
    uniform = [1.0 + i for i in range(100)]
    return [("pareto3", pareto3), ("bulk_tail", bulk_tail), ("uniform", uniform)]


def main():
    assert weightwatcher.__version__ == "0.7.7", weightwatcher.__version__
    ww = weightwatcher.WeightWatcher()
    for name, evals in spectra():
        alpha, _, xmin, _, D, sigma, tail, *_ = ww.fit_powerlaw(np.array(evals), plot=False)
        print(f"{{\"{name}\", {float(alpha)!r}, {float(xmin)!r}, {float(D)!r}, {float(sigma)!r}, {int(tail)}}},")


if __name__ == "__main__":
    main()
