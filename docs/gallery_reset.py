"""Reset torch's global state before each gallery script (``reset_modules``).

Pages must not depend on the order they are built in: each starts from the
same seeds, default dtype, grad mode and print options.
"""

from __future__ import annotations

import random
from typing import Any

import torch


def reset_torch(gallery_conf: dict[str, Any], fname: str) -> None:
    """Seed every generator and restore torch's defaults."""
    del gallery_conf, fname
    random.seed(0)
    torch.manual_seed(0)
    torch.set_default_dtype(torch.float32)
    torch.set_grad_enabled(True)
    torch.autograd.set_detect_anomaly(False)
    torch.use_deterministic_algorithms(False)
    torch.set_printoptions(profile="default")
    try:
        import numpy as np
    except ImportError:
        return
    np.random.seed(0)  # noqa: NPY002 - scripts may use the legacy global generator
