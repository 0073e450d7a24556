"""Shared fixtures for the RL unit tests: one tiny model directory per test session."""

import pytest


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory):
    from verl.models.tiny import make_tiny_model

    return make_tiny_model(tmp_path_factory.mktemp("tiny_model"), seed=0)


@pytest.fixture(scope="session")
def tokenizer(tiny_model_dir):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_model_dir)
