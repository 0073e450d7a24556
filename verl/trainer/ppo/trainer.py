"""The PPO-family training loop (PPO with a critic, GRPO, ...), driven in-process.

`train_step` reads top to bottom as the algorithm: generate -> reward -> old/ref log-probs -> values
-> advantages (from the registry) -> critic update -> actor update -> metrics.
"""

from __future__ import annotations

import random
import uuid
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm

from verl.protocol import DataProto
from verl.trainer.config.schema import PPOConfig
from verl.trainer.ppo import core_algos
from verl.trainer.ppo.metric_utils import compute_data_metrics, compute_timing_metrics, reduce_metrics, timer
from verl.trainer.ppo.datasets import build_rl_loaders
from verl.trainer.ppo.rewards import accuracy_of, build_reward_fn
from verl.utils import device
from verl.utils.checkpoint import CheckpointManager
from verl.utils.torch_functional import masked_mean
from verl.utils.tracking import Tracking
from verl.workers.fsdp_workers import ActorRolloutRefWorker, CriticWorker, load_tokenizer

GEN_INPUTS = ["input_ids", "attention_mask", "position_ids"]


class PPOTrainer:
    def __init__(self, config: PPOConfig, console=print):
        self.config = config
        self.console = console
        model = config.actor_rollout_ref.model
        # Data and reward first: a bad file or reward function fails in seconds, before any model loads.
        self.tokenizer = load_tokenizer(model.tokenizer_path or model.path, model.trust_remote_code)
        self.train_loader, self.val_loader = build_rl_loaders(config.data, self.tokenizer, console)
        sources = {row.get(config.data.reward_fn_key) for row in self.train_loader.dataset.rows}
        self.reward_fn = build_reward_fn(config, self.tokenizer, sources)
        self.actor_rollout = ActorRolloutRefWorker(config)
        self.actor_rollout.init_model()
        self.critic = CriticWorker(config) if config.critic.enable else None
        if self.critic:
            self.critic.init_model()
        self.kl_ctrl = core_algos.get_kl_controller(config.algorithm.kl_ctrl.model_dump())
        self.checkpoints = CheckpointManager(config.trainer.default_local_dir, config.trainer.max_ckpt_to_keep)
        self.global_step = 0
        self.initial_validation: dict[str, float] = {}
        epochs_steps = len(self.train_loader) * config.trainer.total_epochs
        self.total_steps = config.trainer.total_training_steps or epochs_steps

    # ------------------------------------------------------------------ the loop
    def fit(self) -> dict[str, float]:
        """Train until total_steps, validating and checkpointing on schedule. Returns the last metrics."""
        cfg = self.config.trainer
        self.resume()
        tracking = Tracking(cfg.logger, cfg.default_local_dir, cfg.project_name, cfg.experiment_name,
                            self.config.model_dump(), console=tqdm.write)
        metrics: dict[str, float] = {}
        try:
            if self.val_loader and cfg.val_before_train and self.global_step == 0:
                metrics = self.initial_validation = self.validate()
                tracking.log(metrics, step=0)
            bar = tqdm(total=self.total_steps, initial=self.global_step, desc="training", unit="step",
                       disable=not cfg.progress_bar, dynamic_ncols=True)
            while self.global_step < self.total_steps:
                metrics = self.train_step(DataProto.from_single_dict(self.train_loader.next_batch()))
                self.global_step += 1
                last = self.global_step == self.total_steps
                if self.val_loader and ((cfg.test_freq > 0 and self.global_step % cfg.test_freq == 0) or last):
                    metrics.update(self.validate())
                tracking.log(metrics, step=self.global_step)
                if (cfg.save_freq > 0 and self.global_step % cfg.save_freq == 0) or last:
                    self.save_checkpoint()
                bar.update(1)
            bar.close()
        finally:
            tracking.close()
        return metrics

    def train_step(self, batch: DataProto) -> dict[str, float]:
        algo, arr = self.config.algorithm, self.config.actor_rollout_ref
        timing: dict[str, float] = {}
        metrics: dict[str, float] = {}
        # One uid per prompt, shared by its n responses: GRPO's groups.
        batch.non_tensor_batch["uid"] = np.array([str(uuid.uuid4()) for _ in range(len(batch))], dtype=object)
        with timer("step", timing):
            batch = batch.repeat(repeat_times=arr.rollout.n, interleave=True)
            with timer("gen", timing):
                gen_batch = batch.pop(batch_keys=GEN_INPUTS)
                batch = batch.union(self.actor_rollout.generate_sequences(gen_batch))
            batch.meta_info["temperature"] = arr.rollout.temperature

            with timer("reward", timing):
                reward = self.reward_fn(batch, return_dict=True)
                batch.batch["token_level_scores"] = reward["reward_tensor"]

            if arr.actor.recompute_old_log_prob:
                with timer("old_log_prob", timing):
                    batch = batch.union(self.actor_rollout.compute_log_prob(batch))
            else:  # exactly on-policy: the rollout already holds the actor's log-probs (see the config option)
                batch.batch["old_log_probs"] = batch.batch["rollout_log_probs"]
            if self.actor_rollout.ref is not None:
                with timer("ref", timing):
                    batch = batch.union(self.actor_rollout.compute_ref_log_prob(batch))
                    kl = masked_mean(batch.batch["old_log_probs"] - batch.batch["ref_log_prob"], batch.batch["response_mask"])
                    metrics["actor/kl_to_ref"] = kl.item()
            if self.critic:
                with timer("values", timing):
                    batch = batch.union(self.critic.compute_values(batch))

            with timer("adv", timing):
                if algo.use_kl_in_reward:
                    batch, kl_metrics = core_algos.apply_kl_penalty(batch, self.kl_ctrl, algo.kl_penalty)
                    metrics.update(kl_metrics)
                else:
                    batch.batch["token_level_rewards"] = batch.batch["token_level_scores"]
                advantages, returns = core_algos.get_adv_estimator_fn(algo.adv_estimator)(
                    token_level_rewards=batch.batch["token_level_rewards"], response_mask=batch.batch["response_mask"],
                    values=batch.batch["values"] if self.critic else None, index=batch.non_tensor_batch["uid"],
                    gamma=algo.gamma, lam=algo.lam, norm_adv_by_std_in_grpo=algo.norm_adv_by_std_in_grpo,
                )
                batch.batch["advantages"], batch.batch["returns"] = advantages, returns

            if self.critic:
                with timer("update_critic", timing):
                    metrics.update(reduce_metrics(self.critic.update_critic(batch).meta_info["metrics"]))
            with timer("update_actor", timing):
                metrics.update(reduce_metrics(self.actor_rollout.update_actor(batch).meta_info["metrics"]))

        metrics["training/global_step"] = self.global_step + 1
        metrics["training/epoch"] = self.train_loader.epoch
        metrics["critic/accuracy"] = accuracy_of(reward).mean().item()
        metrics.update(compute_data_metrics(batch, use_critic=self.critic is not None))
        metrics.update(compute_timing_metrics(timing, batch))
        return metrics

    # ------------------------------------------------------------------ validation
    def validate(self, loader=None) -> dict[str, float]:
        """Decode the validation set (or `loader`'s) with rollout.val_kwargs (greedy by default) and score it."""
        val = self.config.actor_rollout_ref.rollout.val_kwargs
        scores, accuracies, lengths = [], [], []
        for batch_dict in loader or self.val_loader:
            batch = DataProto.from_single_dict(batch_dict).repeat(repeat_times=val.n, interleave=True)
            gen_batch = batch.pop(batch_keys=GEN_INPUTS)
            gen_batch.meta_info.update(do_sample=val.do_sample, temperature=val.temperature, top_p=val.top_p, top_k=val.top_k)
            batch = batch.union(self.actor_rollout.generate_sequences(gen_batch))
            reward = self.reward_fn(batch, return_dict=True)
            scores.append(reward["reward_tensor"].sum(-1))
            accuracies.append(accuracy_of(reward))
            lengths.append(batch.batch["response_mask"].sum(-1).float())
        return {
            "val/accuracy": torch.cat(accuracies).mean().item(),
            "val/reward_mean": torch.cat(scores).mean().item(),
            "val/response_length": torch.cat(lengths).mean().item(),
        }

    # ------------------------------------------------------------------ checkpoints
    def save_checkpoint(self) -> Path:
        def write(tmp: Path) -> None:
            self.actor_rollout.save_checkpoint(str(tmp / "actor"))
            self.actor_rollout.save_hf_model(str(tmp / "actor" / "huggingface"), self.tokenizer)
            if self.critic:
                self.critic.save_checkpoint(str(tmp / "critic"))
            torch.save({
                "global_step": self.global_step,
                "dataloader": self.train_loader.state_dict(),
                "kl_coef": self.kl_ctrl.value,
                "rng": {"python": random.getstate(), "numpy": np.random.get_state(), "torch": device.rng_state()},
            }, tmp / "trainer_state.pt")

        return self.checkpoints.save(self.global_step, write)

    def resume(self) -> None:
        """Continue from the newest complete checkpoint in default_local_dir (resume_mode=auto)."""
        if self.config.trainer.resume_mode == "disable":
            return
        found = self.checkpoints.latest()
        if found is None:
            return
        step, path = found
        self.actor_rollout.load_checkpoint(str(path / "actor"))
        if self.critic:
            self.critic.load_checkpoint(str(path / "critic"))
        state = torch.load(path / "trainer_state.pt", weights_only=False)
        self.global_step = state["global_step"]
        self.train_loader.load_state_dict(state["dataloader"])
        self.kl_ctrl.value = state["kl_coef"]
        random.setstate(state["rng"]["python"])
        np.random.set_state(state["rng"]["numpy"])
        device.set_rng_state(state["rng"]["torch"])
        self.console(f"resumed from {path} (global step {step})")
