"""Pick the rule-based reward by the row's data source, as upstream's `default_compute_score` does."""

from __future__ import annotations

from typing import Any

from verl.utils.errors import UserError
from verl.utils.reward.math_reward import compute_score as math_compute_score

# data_source -> reward family. Math sources accept "#### answer" and "\boxed{answer}" alike.
MATH_SOURCES = (
    "arithmetic",
    "openai/gsm8k",
    "gsm8k",
    "lighteval/MATH",
    "DigitalLearningGmbH/MATH-lighteval",
    "HuggingFaceH4/MATH-500",
    "math",
)
CODE_SOURCES = ("code", "codecontests", "apps", "taco")


class UnknownDataSourceError(UserError, ValueError):
    """No built-in reward for this data_source."""


def supported_data_sources() -> tuple[str, ...]:
    return MATH_SOURCES + CODE_SOURCES


def check_data_source(data_source: str) -> None:
    """Raise a clear error before training when a data set's data_source has no built-in reward."""
    if data_source not in supported_data_sources():
        raise UnknownDataSourceError(
            f"no built-in reward for data_source {data_source!r}; built-in: {', '.join(supported_data_sources())}. "
            "Give your own with custom_reward_function.path=FILE custom_reward_function.name=FUNCTION"
        )


def default_compute_score(data_source: str, solution_str: str, ground_truth: Any, extra_info: dict | None = None) -> float:
    check_data_source(data_source)
    if data_source in MATH_SOURCES:
        return math_compute_score(solution_str, str(ground_truth))
    from verl.utils.reward import sandbox  # only code rewards need it

    return sandbox.compute_code_score(solution_str, ground_truth)
