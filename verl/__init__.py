"""verl: RL post-training for LLMs.

Importing `verl` must stay light: the matrix, render and doctor paths import this package
and must never pull in torch, vllm or sglang. Heavy imports live in the submodules that need them.
"""

__version__ = "0.7.0.dev0"
