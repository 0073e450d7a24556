"""A toy task with a verifiable answer: small arithmetic ("What is 3+5?" -> "#### 8").

    python -m verl.data.arithmetic --out ~/data/arithmetic --max-operand 20

Writes, in verl's parquet layout:
  train.parquet, test.parquet          RL prompts (data_source "arithmetic", chat prompt, ground truth)
  sft_train.parquet, sft_test.parquet  SFT pairs (prompt, response ending in "#### <answer>")

The test problems are held out: no (a, op, b) in test appears in train, so accuracy measures skill,
not recall. `max_operand` is the difficulty knob: 9 is one-digit sums (100 problems a tiny model can
memorise, but it cannot infer an unseen one from them), 99 is two-digit sums (10,000 problems, which it
must learn to add). `max_second_operand` bounds the second operand on its own: 99 and 9 ("What is 47+8?",
1,000 problems, the quickstart's task) need the carry rule, and every held-out problem uses the same
one-digit facts as the training ones, so a model that learns the rule solves problems it never saw.
"""

from __future__ import annotations

import argparse
import itertools
import random
from pathlib import Path

DATA_SOURCE = "arithmetic"
OPERATIONS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b}


def question(a: int, op: str, b: int) -> str:
    return f"What is {a}{op}{b}?"


def answer_text(answer: int) -> str:
    """The response the SFT data teaches: the answer after '####', as in GSM8K."""
    return f"#### {answer}"


def _rl_row(a: int, op: str, b: int, split: str, index: int) -> dict:
    answer = OPERATIONS[op](a, b)
    return {
        "data_source": DATA_SOURCE,
        "prompt": [{"role": "user", "content": question(a, op, b)}],
        "ability": "math",
        "reward_model": {"style": "rule", "ground_truth": str(answer)},
        "extra_info": {"split": split, "index": index, "a": a, "b": b, "op": op},
    }


def make_problems(n_train: int, n_test: int, max_operand: int, ops: str, seed: int,
                  max_second_operand: int | None = None) -> tuple[list, list]:
    """Held-out split of all (a, op, b) problems; train draws with replacement when it wants more than exist."""
    unknown = [op for op in ops if op not in OPERATIONS]
    if unknown or not ops:
        raise ValueError(f"unknown operation(s) {unknown or ops!r}; allowed: {', '.join(OPERATIONS)}")
    max_b = max_operand if max_second_operand is None else max_second_operand
    if max_operand < 1 or max_b < 1:
        raise ValueError(f"max_operand and max_second_operand must be at least 1, got {max_operand} and {max_b}")
    problems = [(a, op, b) for op in dict.fromkeys(ops) for a, b in itertools.product(range(max_operand + 1), range(max_b + 1))]
    rng = random.Random(seed)
    rng.shuffle(problems)
    if n_test >= len(problems):
        raise ValueError(f"n_test={n_test} leaves no training problems: there are only {len(problems)} with max_operand={max_operand}, max_second_operand={max_b}, ops={ops!r}")
    test, pool = problems[:n_test], problems[n_test:]
    train = pool[:n_train] if n_train <= len(pool) else pool + rng.choices(pool, k=n_train - len(pool))
    return train, test


def write_arithmetic_dataset(out: str | Path, n_train: int = 2000, n_test: int = 200, max_operand: int = 20, ops: str = "+", seed: int = 0,
                             max_second_operand: int | None = None) -> dict[str, Path]:
    """Write the four parquet files into `out` and return their paths by name."""
    import pandas as pd

    out = Path(out).expanduser()
    out.mkdir(parents=True, exist_ok=True)
    train, test = make_problems(n_train, n_test, max_operand, ops, seed, max_second_operand)
    paths = {}
    for split, problems in (("train", train), ("test", test)):
        rl = pd.DataFrame([_rl_row(a, op, b, split, i) for i, (a, op, b) in enumerate(problems)])
        sft = pd.DataFrame({"prompt": [question(a, op, b) for a, op, b in problems], "response": [answer_text(OPERATIONS[op](a, b)) for a, op, b in problems]})
        paths[split] = out / f"{split}.parquet"
        paths[f"sft_{split}"] = out / f"sft_{split}.parquet"
        rl.to_parquet(paths[split], index=False)
        sft.to_parquet(paths[f"sft_{split}"], index=False)
    return paths


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m verl.data.arithmetic", description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="directory for the parquet files")
    parser.add_argument("--n-train", type=int, default=2000)
    parser.add_argument("--n-test", type=int, default=200)
    parser.add_argument("--max-operand", type=int, default=20, help="largest operand (difficulty): 9 = one digit, 99 = two digits")
    parser.add_argument("--max-second-operand", type=int, default=None, help="largest second operand (default: --max-operand)")
    parser.add_argument("--ops", default="+", help="operations to mix, e.g. '+' or '+-'")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    try:
        paths = write_arithmetic_dataset(args.out, args.n_train, args.n_test, args.max_operand, args.ops, args.seed,
                                         args.max_second_operand)
    except ValueError as error:
        parser.error(str(error))
    for name, path in paths.items():
        print(f"{name:>9}: {path}")


if __name__ == "__main__":
    main()
