"""What the wheel says of itself: it is the installed copy, of the version it names.

Run by ``nox -s build`` with ``python -I`` (no ``PYTHONPATH``, no user site, no
current folder), from a folder outside the source tree.
"""

import importlib.metadata
import sys

import inplace_recipes as ir

print(ir.__file__, ir.__version__)
assert "site-packages" in ir.__file__, ir.__file__
assert ir.__version__ == importlib.metadata.version("inplace-recipes") == sys.argv[1]
