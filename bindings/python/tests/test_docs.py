"""The examples in the package's docstrings run."""

from __future__ import annotations

import doctest

import stepkit
import stepkit.clock


def test_doctests():
    for module in (stepkit, stepkit.clock):
        failures, tried = doctest.testmod(module, raise_on_error=False, verbose=False)
        assert tried > 0, module.__name__
        assert failures == 0, module.__name__
