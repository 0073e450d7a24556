"""Trainers: PPO-family RL (`main_ppo`), SFT warm start (`fsdp_sft_trainer`) and the quickstart."""
