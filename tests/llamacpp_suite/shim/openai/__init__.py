"""Placeholder for the `openai` Python package, which Debian does not ship.

Put on PYTHONPATH only when the real package is missing, so that test files
importing `from openai import OpenAI` still load; each test that builds an
OpenAI client is then skipped with this reason.
"""

import pytest


class OpenAI:
    def __init__(self, *args, **kwargs):
        pytest.skip("python package openai is not installed (not in Debian; "
                    "PyPI unreachable)")
