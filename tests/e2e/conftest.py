"""One tiny model, one task and one SFT warm start per session (the expensive part), reused by every
end-to-end test. Every run goes through the real CLI."""

from __future__ import annotations

import pytest

from e2e_support import RECIPE, assert_ok, run_module


@pytest.fixture(scope="session")
def warm_start(tmp_path_factory) -> dict:
    """The quickstart's first half: tiny model, arithmetic parquet files, SFT warm start."""
    from verl.data.arithmetic import write_arithmetic_dataset
    from verl.models.tiny import make_tiny_model

    root = tmp_path_factory.mktemp("warm_start")
    base = make_tiny_model(root / "model", seed=0)
    data = write_arithmetic_dataset(root / "data", RECIPE.n_train, RECIPE.n_test, RECIPE.max_operand, "+", seed=0,
                                    max_second_operand=RECIPE.max_second_operand)
    result = run_module("verl.trainer.fsdp_sft_trainer", RECIPE.sft_overrides(data, base, root / "sft", seed=0))
    assert_ok(result)
    return {"root": root, "base_model": base, "model": root / "sft" / "hf_model", "data": data}
