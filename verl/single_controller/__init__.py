"""Single-controller plumbing: workers mark their public methods with `register(dispatch_mode=...)`
so a worker group (Ray, or the in-process driver) knows how to split inputs and gather outputs."""

from verl.single_controller.base.decorator import Dispatch, register

__all__ = ["Dispatch", "register"]
