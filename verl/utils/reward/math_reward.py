"""Rule-based math rewards: find the final answer, normalise it, compare it with the ground truth.

The final answer is the text after the last `####` (GSM8K style) or, failing that, the content of the
last `\\boxed{...}` (MATH style, nested braces allowed). Numbers compare by value, so "1,000", "1000.0"
and " 1000 " all match "1000".
"""

from __future__ import annotations

import re
from fractions import Fraction

_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)$")
_FRACTION = re.compile(r"^([+-]?\d+)/(\d+)$")


def last_boxed(text: str) -> str | None:
    """Content of the last \\boxed{...} (or \\fbox{...}), matching nested braces; None if there is none."""
    start = max(text.rfind("\\boxed{"), text.rfind("\\fbox{"))
    if start < 0:
        return None
    i = text.index("{", start) + 1
    depth = 1
    for j in range(i, len(text)):
        depth += {"{": 1, "}": -1}.get(text[j], 0)
        if depth == 0:
            return text[i:j]
    return None  # unbalanced: the answer was cut off


def extract_answer(solution_str: str) -> str | None:
    """The final answer of a response, or None when it gives none."""
    if "####" in solution_str:
        tail = solution_str.rsplit("####", 1)[1].strip()
        answer = tail.splitlines()[0].strip() if tail else ""
        return answer.rstrip(".").strip() or None
    return last_boxed(solution_str)


def normalize_answer(answer: str) -> str:
    """A canonical string: numbers by value (commas, spaces, '$' and trailing zeros dropped), else trimmed text."""
    text = answer.strip().strip("$").replace("\\!", "").replace("\\,", "").replace(" ", "")
    text = re.sub(r"^\\text\{(.*)\}$", r"\1", text)
    plain = re.sub(r"(?<=\d),(?=\d{3})", "", text)  # thousands separators only
    if _NUMBER.match(plain):
        value = Fraction(plain)
    elif _FRACTION.match(plain):
        numerator, denominator = _FRACTION.match(plain).groups()
        if int(denominator) == 0:
            return text
        value = Fraction(int(numerator), int(denominator))
    else:
        return text
    return str(value.numerator) if value.denominator == 1 else str(value)


def is_equiv(answer: str, ground_truth: str) -> bool:
    return normalize_answer(answer) == normalize_answer(str(ground_truth))


def compute_score(solution_str: str, ground_truth: str, format_score: float = 0.0, score: float = 1.0) -> float:
    """`score` for a correct final answer, `format_score` for a wrong one, 0 when none is given."""
    answer = extract_answer(solution_str)
    if answer is None:
        return 0.0
    return score if is_equiv(answer, ground_truth) else format_score


def format_reward(solution_str: str) -> float:
    """1.0 when the response states a final answer (after '####' or in \\boxed{}), else 0.0."""
    return 1.0 if extract_answer(solution_str) is not None else 0.0
