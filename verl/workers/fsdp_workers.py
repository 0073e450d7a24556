"""Workers the driver talks to. Public methods take and return `DataProto` and carry a dispatch mode,
so a Ray worker group can wrap these classes unchanged; here the driver calls them in-process.

`ActorRolloutRefWorker` is the hybrid engine: the FSDP2 actor, the HF rollout sharing the actor's
weights, and (when a KL term needs it) a frozen reference copy. `CriticWorker` holds the value model.
"""

from __future__ import annotations

from pathlib import Path

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict, get_state_dict, set_state_dict
from transformers import AutoTokenizer

from verl.protocol import DataProto
from verl.single_controller import Dispatch, register
from verl.trainer.config.schema import FSDPConfig, PPOConfig
from verl.workers import fsdp_utils
from verl.workers.actor import DataParallelPPOActor
from verl.workers.critic import DataParallelPPOCritic
from verl.workers.rollout import HFRollout


def load_tokenizer(path: str, trust_remote_code: bool = False):
    tokenizer = AutoTokenizer.from_pretrained(path, trust_remote_code=trust_remote_code)
    tokenizer.padding_side = "left"  # prompts are left-padded so responses start at the same column
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


class _OffloadingTrainable:
    """Shared by actor and critic: FSDP2 module + optimizer that move off the device between phases."""

    module: torch.nn.Module
    optimizer: torch.optim.Optimizer
    lr_scheduler: torch.optim.lr_scheduler.LRScheduler
    fsdp_config: FSDPConfig

    def __init__(self, config: PPOConfig):
        self.config = config
        self.world_size = dist.get_world_size()

    def _build_trainable(self, path, fsdp_config, optim, value_head=False, **model_kwargs):
        self.fsdp_config = fsdp_config
        self.module = fsdp_utils.apply_fsdp2(fsdp_utils.load_model(path, value_head=value_head, **model_kwargs), fsdp_config)
        self.optimizer, self.lr_scheduler = fsdp_utils.build_optimizer(self.module, optim)
        self._offload()

    def _onload(self):
        if self.fsdp_config.param_offload:
            fsdp_utils.load_model_to_device(self.module)
        if self.fsdp_config.optimizer_offload:
            fsdp_utils.load_optimizer_to_device(self.optimizer)

    def _offload(self):
        if self.fsdp_config.param_offload:
            fsdp_utils.offload_model(self.module)
        if self.fsdp_config.optimizer_offload:
            fsdp_utils.offload_optimizer(self.optimizer)

    def _state(self) -> dict:
        model_sd, optim_sd = get_state_dict(self.module, self.optimizer)
        return {"model": model_sd, "optim": optim_sd, "lr_scheduler": self.lr_scheduler.state_dict()}

    @register(dispatch_mode=Dispatch.ONE_TO_ALL)
    def save_checkpoint(self, path: str) -> None:
        """Sharded model + optimizer (torch.distributed.checkpoint) into `path` (the caller makes it atomic)."""
        self._onload()
        state = self._state()
        dcp.save({"model": state["model"], "optim": state["optim"]}, checkpoint_id=path)
        if dist.get_rank() == 0:
            torch.save(state["lr_scheduler"], Path(path) / "lr_scheduler.pt")
        self._offload()

    @register(dispatch_mode=Dispatch.ONE_TO_ALL)
    def load_checkpoint(self, path: str) -> None:
        self._onload()
        state = self._state()
        to_load = {"model": state["model"], "optim": state["optim"]}
        dcp.load(to_load, checkpoint_id=path)
        set_state_dict(self.module, self.optimizer, model_state_dict=to_load["model"], optim_state_dict=to_load["optim"])
        self.lr_scheduler.load_state_dict(torch.load(Path(path) / "lr_scheduler.pt", weights_only=False))
        self._offload()

    @register(dispatch_mode=Dispatch.ONE_TO_ALL)
    def save_hf_model(self, path: str, tokenizer=None) -> None:
        """A plain Hugging Face directory (full weights gathered on rank 0) other tools can load."""
        self._onload()
        full = get_model_state_dict(self.module, options=StateDictOptions(full_state_dict=True, cpu_offload=True))
        if dist.get_rank() == 0:
            self.module.save_pretrained(path, state_dict=full)
            if tokenizer is not None:
                tokenizer.save_pretrained(path)
        self._offload()


class ActorRolloutRefWorker(_OffloadingTrainable):
    @register(dispatch_mode=Dispatch.ONE_TO_ALL)
    def init_model(self) -> None:
        arr = self.config.actor_rollout_ref
        model = arr.model
        self.tokenizer = load_tokenizer(model.tokenizer_path or model.path, model.trust_remote_code)
        model_kwargs = dict(trust_remote_code=model.trust_remote_code, override_config=model.override_config,
                            gradient_checkpointing=model.enable_gradient_checkpointing)
        self._build_trainable(model.path, arr.actor.fsdp_config, arr.actor.optim, **model_kwargs)
        self.actor = DataParallelPPOActor(arr.actor, self.module, self.optimizer, self.lr_scheduler)
        self.rollout = HFRollout(self.module, arr.rollout, self.tokenizer.eos_token_id, self.tokenizer.pad_token_id,
                                 reshard_after_forward=arr.actor.fsdp_config.reshard_after_forward)
        self.ref = None
        if arr.actor.use_kl_loss or self.config.algorithm.use_kl_in_reward:
            ref_module = fsdp_utils.apply_fsdp2(fsdp_utils.load_model(model.path, **model_kwargs), arr.ref.fsdp_config)
            ref_module.requires_grad_(False)
            self.ref = DataParallelPPOActor(arr.actor, ref_module)

    @register(dispatch_mode=Dispatch.DP_COMPUTE_PROTO)
    def generate_sequences(self, prompts: DataProto) -> DataProto:
        self._onload()
        output = self.rollout.generate_sequences(prompts)
        self._offload()
        return output

    @register(dispatch_mode=Dispatch.DP_COMPUTE_PROTO)
    def compute_log_prob(self, data: DataProto) -> DataProto:
        """`old_log_probs` and `entropys` of the responses under the current actor."""
        self._onload()
        micro = self.config.actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu
        log_probs, entropy = self.actor.compute_log_prob(data, micro, calculate_entropy=True)
        self._offload()
        return DataProto.from_dict(tensors={"old_log_probs": log_probs, "entropys": entropy})

    @register(dispatch_mode=Dispatch.DP_COMPUTE_PROTO)
    def compute_ref_log_prob(self, data: DataProto) -> DataProto:
        micro = self.config.actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu
        log_probs, _ = self.ref.compute_log_prob(data, micro)
        return DataProto.from_dict(tensors={"ref_log_prob": log_probs})

    @register(dispatch_mode=Dispatch.DP_COMPUTE_PROTO)
    def update_actor(self, data: DataProto) -> DataProto:
        arr = self.config.actor_rollout_ref
        # ppo_mini_batch_size counts prompts over all ranks; each prompt has rollout.n responses.
        mini = arr.actor.ppo_mini_batch_size * arr.rollout.n // self.world_size
        self._onload()
        metrics = self.actor.update_policy(data, min(mini, len(data)), arr.actor.ppo_micro_batch_size_per_gpu)
        self._offload()
        return DataProto(meta_info={"metrics": metrics})


class CriticWorker(_OffloadingTrainable):
    @register(dispatch_mode=Dispatch.ONE_TO_ALL)
    def init_model(self) -> None:
        critic = self.config.critic
        model = self.config.actor_rollout_ref.model
        self._build_trainable(critic.model.path, critic.fsdp_config, critic.optim, value_head=True,
                              trust_remote_code=model.trust_remote_code,
                              gradient_checkpointing=critic.model.enable_gradient_checkpointing)
        self.critic = DataParallelPPOCritic(critic, self.module, self.optimizer, self.lr_scheduler)

    @register(dispatch_mode=Dispatch.DP_COMPUTE_PROTO)
    def compute_values(self, data: DataProto) -> DataProto:
        self._onload()
        values = self.critic.compute_values(data, self.config.critic.ppo_micro_batch_size_per_gpu)
        self._offload()
        return DataProto.from_dict(tensors={"values": values})

    @register(dispatch_mode=Dispatch.DP_COMPUTE_PROTO)
    def update_critic(self, data: DataProto) -> DataProto:
        critic = self.config.critic
        mini = critic.ppo_mini_batch_size * self.config.actor_rollout_ref.rollout.n // self.world_size
        self._onload()
        metrics = self.critic.update_critic(data, min(mini, len(data)), critic.ppo_micro_batch_size_per_gpu)
        self._offload()
        return DataProto(meta_info={"metrics": metrics})
