"""How the audit names a file: relative to the working directory, else absolute.

A user's file reads as an editor or a tool opens it from where the command
ran; a library file that made a write (``inside``) reads as its import path.

>>> import os
>>> user_path(os.path.join(os.getcwd(), "train.py"))
'train.py'
>>> user_path("/elsewhere/train.py") == os.path.abspath("/elsewhere/train.py")
True
>>> import torch
>>> library_path(torch.nn.functional.__file__)
'torch/nn/functional.py'
"""

from __future__ import annotations

import os
import sys

__all__ = ["library_path", "user_path"]


def user_path(file: str, cwd: str = "") -> str:
    """``file`` relative to the working directory ``cwd`` (default: now) inside it, else absolute.

    An audit passes the directory it started in, which a script's ``os.chdir`` does not change.
    """
    if file.startswith("<"):  # <stdin>, <string>, <unknown>
        return file
    cwd = (cwd or os.getcwd()).rstrip(os.sep) + os.sep
    absolute = os.path.normpath(os.path.join(cwd, file))
    return absolute.removeprefix(cwd)


def library_path(file: str, cwd: str = "") -> str:
    """A library file from its ``sys.path`` entry (``torch/optim/adamw.py``), else :func:`user_path`."""
    absolute = os.path.abspath(file)
    roots = [os.path.abspath(p) + os.sep for p in sys.path if p]
    best = max((r for r in roots if absolute.startswith(r)), key=len, default=None)
    installed = {"site-packages", "dist-packages"}
    if best is not None and installed & set(best.split(os.sep)):
        return absolute[len(best) :]
    torch_root = _torch_root()
    if absolute.startswith(torch_root):
        return absolute[len(torch_root) :]
    return user_path(file, cwd)


def _torch_root() -> str:
    import torch

    return os.path.dirname(os.path.dirname(torch.__file__)) + os.sep
