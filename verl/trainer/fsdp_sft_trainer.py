"""Supervised fine-tuning (warm start before RL) with FSDP2:
`python -m verl.trainer.fsdp_sft_trainer data.train_files=sft.parquet model.path=DIR [a.b.c=value ...]`.

Loss: token-mean cross-entropy over the response tokens of each batch. The result is a plain Hugging
Face directory at `trainer.default_local_dir/hf_model`, ready for `actor_rollout_ref.model.path`.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import torch
import torch.nn.functional as F
from tqdm import tqdm

from verl.protocol import DataProto
from verl.trainer.config import load_sft_config
from verl.trainer.config.schema import SFTConfig
from verl.trainer.runtime import configure_process, user_errors_exit
from verl.utils.errors import UserError

MODEL_INPUTS = ["input_ids", "attention_mask", "position_ids"]


def _stack(samples: list[dict]) -> dict:
    return {key: torch.stack([s[key] for s in samples]) for key in samples[0]}


class FSDPSFTTrainer:
    def __init__(self, config: SFTConfig, console=print):
        from verl.data.sft_dataset import SFTDataset
        from verl.utils.dataloader import ResumableLoader
        from verl.workers import fsdp_utils
        from verl.workers.fsdp_workers import load_tokenizer

        self.config = config
        self.console = console
        model, data = config.model, config.data
        self.tokenizer = load_tokenizer(model.tokenizer_path or model.path, model.trust_remote_code)

        def dataset(key: str, files) -> SFTDataset:
            try:
                return SFTDataset(files, self.tokenizer, data.prompt_key, data.response_key, data.max_length, data.truncation)
            except UserError as exc:
                raise UserError(f"{key}: {exc}") from None

        train = dataset("data.train_files", data.train_files)
        self.train_loader = ResumableLoader(train, data.train_batch_size, _stack, shuffle=True, seed=config.trainer.seed)
        self.val_loader = ResumableLoader(dataset("data.val_files", data.val_files), data.train_batch_size, _stack,
                                          shuffle=False) if data.val_files else None
        self.module = fsdp_utils.apply_fsdp2(
            fsdp_utils.load_model(model.path, trust_remote_code=model.trust_remote_code, override_config=model.override_config,
                                  gradient_checkpointing=model.enable_gradient_checkpointing),
            model.fsdp_config,
        )
        self.optimizer, self.lr_scheduler = fsdp_utils.build_optimizer(self.module, config.optim)
        self.clip_grad_norm = fsdp_utils.clip_grad_norm
        self.total_steps = config.trainer.total_training_steps or len(self.train_loader) * config.trainer.total_epochs
        console(f"sft: {len(train)} samples, {self.total_steps} steps of {self.train_loader.batch_size}")

    def _loss_sum(self, batch: DataProto) -> tuple[torch.Tensor, torch.Tensor]:
        """Summed response-token cross-entropy of one micro-batch and its token count."""
        b = batch.batch
        logits = self.module(input_ids=b["input_ids"], attention_mask=b["attention_mask"],
                             position_ids=b["position_ids"], use_cache=False).logits[:, :-1].float()
        mask = b["loss_mask"][:, 1:].float()
        losses = F.cross_entropy(logits.reshape(-1, logits.size(-1)), b["input_ids"][:, 1:].reshape(-1), reduction="none")
        return (losses * mask.reshape(-1)).sum(), mask.sum()

    @staticmethod
    def _trim(batch: dict) -> DataProto:
        """Drop the right padding columns no sample of this batch uses (SFT rows are padded to max_length)."""
        width = int(batch["attention_mask"].sum(-1).max())
        return DataProto.from_dict({k: v[:, :width] for k, v in batch.items()})

    def train_step(self, batch: DataProto) -> dict[str, float]:
        self.module.train()
        self.optimizer.zero_grad()
        total_tokens = batch.batch["loss_mask"][:, 1:].sum().clamp(min=1)
        loss_total = 0.0
        for micro in batch.split(self.config.data.micro_batch_size_per_gpu):
            loss_sum, _ = self._loss_sum(micro)
            (loss_sum / total_tokens).backward()  # token-mean over the whole batch, whatever the micro split
            loss_total += loss_sum.item()
        grad_norm = self.clip_grad_norm(self.module, self.config.grad_clip)
        if torch.isfinite(torch.tensor(grad_norm)):
            self.optimizer.step()
        self.lr_scheduler.step()
        return {"train/loss": loss_total / total_tokens.item(), "train/grad_norm": grad_norm,
                "train/lr": self.lr_scheduler.get_last_lr()[0]}

    @torch.no_grad()
    def validate(self) -> dict[str, float]:
        self.module.eval()
        loss, tokens = 0.0, 0.0
        for batch in self.val_loader:
            for micro in self._trim(batch).split(self.config.data.micro_batch_size_per_gpu):
                loss_sum, count = self._loss_sum(micro)
                loss, tokens = loss + loss_sum.item(), tokens + count.item()
        return {"val/loss": loss / max(tokens, 1.0)}

    def fit(self) -> dict[str, float]:
        from verl.utils.tracking import Tracking

        cfg = self.config.trainer
        tracking = Tracking(cfg.logger, cfg.default_local_dir, cfg.project_name, cfg.experiment_name,
                            self.config.model_dump(), console=tqdm.write)
        metrics: dict[str, float] = {}
        try:
            for step in tqdm(range(1, self.total_steps + 1), desc="sft", unit="step", disable=not cfg.progress_bar,
                             dynamic_ncols=True):
                metrics = self.train_step(self._trim(self.train_loader.next_batch()))
                if self.val_loader and step == self.total_steps:
                    metrics.update(self.validate())
                if step % 10 == 0 or step == self.total_steps:
                    tracking.log(metrics, step)
        finally:
            tracking.close()
        self.save_hf_model(Path(cfg.default_local_dir) / "hf_model")
        return metrics

    def save_hf_model(self, path: Path) -> None:
        """Write next to `path`, then rename over it, so a reader never sees half a model."""
        from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict

        full = get_model_state_dict(self.module, options=StateDictOptions(full_state_dict=True, cpu_offload=True))
        tmp = path.with_name(f".tmp-{path.name}")
        shutil.rmtree(tmp, ignore_errors=True)
        self.module.save_pretrained(tmp, state_dict=full)
        self.tokenizer.save_pretrained(tmp)
        if path.exists():
            shutil.rmtree(path)
        os.replace(tmp, path)
        self.console(f"sft: model saved to {path}")


def run_sft(config: SFTConfig, console=print) -> dict[str, float]:
    from verl.trainer.preflight import check_environment
    from verl.utils.distributed import destroy_process_group, initialize_global_process_group

    configure_process(config.trainer.device, config.trainer.num_threads, config.trainer.seed)
    check_environment(skip=config.trainer.skip_preflight)
    initialize_global_process_group()
    try:
        return FSDPSFTTrainer(config, console).fit()
    finally:
        destroy_process_group()


def main(argv: list[str] | None = None) -> None:
    from verl.trainer.main_ppo import split_config_args

    with user_errors_exit():
        config_file, overrides = split_config_args(sys.argv[1:] if argv is None else argv)
        run_sft(load_sft_config(overrides, config_file))


if __name__ == "__main__":
    main()
