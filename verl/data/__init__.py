"""Data sets: RL prompts and SFT pairs from parquet, and the toy arithmetic task."""
