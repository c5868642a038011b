"""lit configuration for dg's .mlir regression tests."""

import os
import sys

import lit.formats

config.name = "dg"  # noqa: F821
config.test_format = lit.formats.ShTest(execute_external=False)  # noqa: F821
config.suffixes = [".mlir"]  # noqa: F821
config.test_source_root = os.path.dirname(__file__)  # noqa: F821
config.excludes = ["inputs", "Output", "lit.cfg.py"]  # noqa: F821

# Run the tools of the venv that runs lit, so `make test` needs no activation.
venv_bin = os.path.dirname(os.path.abspath(sys.executable))
config.environment["PATH"] = venv_bin + os.pathsep + os.environ.get("PATH", "")  # noqa: F821
