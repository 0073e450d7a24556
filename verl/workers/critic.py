"""The PPO critic: a value head on the LM trunk, trained with the clipped value loss."""

from __future__ import annotations

import torch
from torch import nn

from verl.protocol import DataProto
from verl.trainer.config.schema import CriticConfig
from verl.trainer.ppo import core_algos
from verl.utils.torch_functional import masked_mean
from verl.workers.actor import MODEL_INPUTS, forward_response_logits, pad_to_responses
from verl.workers.fsdp_utils import clip_grad_norm


class DataParallelPPOCritic:
    def __init__(self, config: CriticConfig, module: nn.Module, optimizer: torch.optim.Optimizer, lr_scheduler):
        self.config = config
        self.module = module
        self.optimizer = optimizer
        self.lr_scheduler = lr_scheduler

    def _values(self, micro: DataProto) -> torch.Tensor:
        # The value of response token t is read at the position that predicts it, like its log-prob.
        values = pad_to_responses(forward_response_logits(self.module, micro).squeeze(-1).float(), micro)
        return values * micro.batch["response_mask"]

    @torch.no_grad()
    def compute_values(self, data: DataProto, micro_batch_size: int) -> torch.Tensor:
        self.module.eval()
        micros = data.select(batch_keys=MODEL_INPUTS + ["response_mask"]).split(micro_batch_size)
        return torch.cat([self._values(micro) for micro in micros])

    def update_critic(self, data: DataProto, mini_batch_size: int, micro_batch_size: int) -> dict[str, list[float]]:
        cfg = self.config
        self.module.train()
        data = data.select(batch_keys=MODEL_INPUTS + ["response_mask", "values", "returns"])
        metrics: dict[str, list[float]] = {}
        for _ in range(cfg.ppo_epochs):
            for mini in data.make_iterator(mini_batch_size, epochs=1, shuffle=False):
                micros = mini.split(micro_batch_size)
                self.optimizer.zero_grad()
                for micro in micros:
                    batch = micro.batch
                    vpreds = self._values(micro)
                    vf_loss, vf_clipfrac = core_algos.compute_value_loss(
                        vpreds=vpreds, returns=batch["returns"], values=batch["values"],
                        response_mask=batch["response_mask"], cliprange_value=cfg.cliprange_value,
                        loss_agg_mode=cfg.loss_agg_mode,
                    )
                    (vf_loss / len(micros)).backward()
                    for key, value in {"vf_loss": vf_loss.detach(), "vf_clipfrac": vf_clipfrac,
                                       "vpred_mean": masked_mean(vpreds.detach(), batch["response_mask"])}.items():
                        metrics.setdefault(f"critic/{key}", []).append(float(value))
                grad_norm = clip_grad_norm(self.module, cfg.grad_clip)
                if torch.isfinite(torch.tensor(grad_norm)):
                    self.optimizer.step()
                self.lr_scheduler.step()
                metrics.setdefault("critic/grad_norm", []).append(grad_norm)
        self.optimizer.zero_grad(set_to_none=True)
        return metrics
