"""Load a user's reward function from a Python file (`custom_reward_function.path` / `.name`).

The function is called as `fn(data_source, solution_str, ground_truth, extra_info) -> float`
(or a dict with a "score" key plus extra metrics).
"""

from __future__ import annotations

import importlib.util
import inspect
import traceback
from pathlib import Path
from typing import Callable

from verl.utils.errors import UserError

REQUIRED_PARAMETERS = ("data_source", "solution_str", "ground_truth", "extra_info")


class CustomRewardError(UserError):
    """The custom reward file or function cannot be used."""


def load_custom_reward_fn(path: str | Path, name: str = "compute_score") -> Callable:
    """Import `name` from the file at `path`, checking it exists and can take the reward arguments."""
    file = Path(path).expanduser()
    where = f"custom_reward_function.path={path}"
    if not file.is_file():
        raise CustomRewardError(f"{where}: no such file")
    # Not put in sys.modules: cloudpickle (Ray) then ships the function by value to workers that cannot import the file.
    module_name = f"custom_reward_{file.stem}"
    spec = importlib.util.spec_from_file_location(module_name, file)
    if spec is None or spec.loader is None:
        raise CustomRewardError(f"{where}: not a Python file that can be imported")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        last = traceback.extract_tb(exc.__traceback__)[-1]
        raise CustomRewardError(f"{where}: importing it failed at line {last.lineno}: {type(exc).__name__}: {exc}") from None
    if not hasattr(module, name):
        functions = sorted(n for n, v in vars(module).items() if inspect.isfunction(v) and v.__module__ == module_name)
        raise CustomRewardError(
            f"{where} has no {name!r} (custom_reward_function.name); functions defined there: {', '.join(functions) or 'none'}"
        )
    fn = getattr(module, name)
    if not callable(fn):
        raise CustomRewardError(f"{where}: {name!r} is a {type(fn).__name__}, not a function")
    _check_signature(fn, where, name)
    return fn


def _check_signature(fn: Callable, where: str, name: str) -> None:
    """The reward manager passes the four arguments by keyword; refuse a function that cannot take them."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return  # builtins and C functions: nothing to check
    if any(p.kind is p.VAR_KEYWORD for p in signature.parameters.values()):
        return
    missing = [p for p in REQUIRED_PARAMETERS if p not in signature.parameters]
    if missing:
        raise CustomRewardError(
            f"{where}: {name}{signature} must accept {', '.join(REQUIRED_PARAMETERS)} (missing {', '.join(missing)}; "
            "add **kwargs to ignore the ones you do not use)"
        )
