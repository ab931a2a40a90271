"""Shared fixtures: the repository's examples, and torch when it can be imported."""
import os

import pytest

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
EXAMPLES = os.path.join(ROOT, "examples")


@pytest.fixture
def examples():
    return EXAMPLES


@pytest.fixture
def torch():
    try:
        import torch as t
    except Exception as e:  # not installed, or broken: say so, never pass
        pytest.skip("torch cannot be imported: %s" % e)
    return t
