"""The pytest plugin, found through the installed wheel's entry point.

``nox -s build`` runs this file without ``--inplace-audit`` (it passes: the
plugin is off) and with it (the audit fails it at line 14, the ``.data`` edit).
"""


def test_data_edit() -> None:
    import torch

    w = torch.ones(3, requires_grad=True)
    h = w.sigmoid()
    h.data.mul_(0.5)
    h.sum().backward()
