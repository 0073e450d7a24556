"""Typed schema of the trainer configs (the YAML files next to this module).

Each section is a pydantic model that forbids unknown keys, so a misspelt key is an error (see
`loader.py`, which adds the nearest valid key to the message). The docstring under each field is
its documentation.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, PositiveInt, model_validator

LossAggMode = Literal["token-mean", "seq-mean-token-sum", "seq-mean-token-mean"]
KLType = Literal["kl", "k1", "abs", "mse", "k2", "low_var_kl", "k3"]


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, validate_default=True)


class DataConfig(Section):
    train_files: str | list[str] = ""
    """Parquet file(s) in the verl layout (data_source, prompt, ability, reward_model, extra_info)."""
    val_files: str | list[str] | None = None
    """Parquet file(s) for validation; null or empty means no validation."""
    prompt_key: str = "prompt"
    """Column holding the prompt as a list of chat messages."""
    reward_fn_key: str = "data_source"
    """Column passed to the reward function to pick the scorer."""
    max_prompt_length: PositiveInt = 512
    """Prompts longer than this (in tokens) are filtered out (with a count in the log) or truncated."""
    max_response_length: PositiveInt = 512
    """Maximum number of generated tokens per response."""
    train_batch_size: PositiveInt = 1024
    """Prompts per training step (each is sampled actor_rollout_ref.rollout.n times)."""
    val_batch_size: PositiveInt | None = None
    """Prompts per validation batch; null means the whole validation set at once."""
    shuffle: bool = True
    """Shuffle the training prompts every epoch (seeded by data.seed)."""
    seed: int = 1
    """Seed of the data-loader shuffle."""
    filter_overlong_prompts: bool = True
    """Drop prompts longer than max_prompt_length instead of failing."""
    truncation: Literal["error", "left", "right"] = "error"
    """What to do with an over-long prompt when filtering is off."""
    return_raw_chat: bool = False
    """Keep the raw chat messages in the batch (for model-based rewards)."""


class OptimConfig(Section):
    lr: float = Field(1e-6, gt=0)
    """Peak learning rate of AdamW."""
    weight_decay: float = Field(0.01, ge=0)
    """AdamW weight decay."""
    betas: tuple[float, float] = (0.9, 0.999)
    """AdamW betas."""
    lr_warmup_steps: int = Field(0, ge=0)
    """Linear warm-up steps (0 = constant learning rate from the start)."""


class FSDPConfig(Section):
    param_offload: bool = False
    """Move sharded parameters to CPU between phases (no-op on CPU)."""
    grad_offload: bool = False
    """FSDP2 CPUOffloadPolicy: keep sharded parameters and gradients on CPU during compute and run the
    optimizer step there (no-op on CPU)."""
    optimizer_offload: bool = False
    """Move optimizer states to CPU between updates (no-op on CPU)."""
    reshard_after_forward: bool = True
    """Free gathered parameters after each forward (less memory, one more all-gather in backward)."""
    param_dtype: Literal["float32", "bfloat16", "float16"] = "float32"
    """Compute dtype of FSDP2 mixed precision (use bfloat16 on GPUs; float32 on CPU)."""


class ModelConfig(Section):
    path: str = ""
    """Directory of a Hugging Face causal LM (config.json, weights, tokenizer)."""
    tokenizer_path: str | None = None
    """Tokenizer directory when it is not the model directory."""
    trust_remote_code: bool = False
    """Allow custom modelling code shipped with the checkpoint."""
    enable_gradient_checkpointing: bool = False
    """Recompute activations in backward to save memory."""
    override_config: dict = {}
    """Fields to override in the model's config.json (e.g. {attn_implementation: sdpa})."""


class ActorConfig(Section):
    strategy: Literal["fsdp2", "fsdp"] = "fsdp2"
    """Training backend; "fsdp" is accepted as an alias of fsdp2 (torch fully_shard)."""
    ppo_mini_batch_size: PositiveInt = 256
    """Prompts per optimizer step (multiplied by rollout.n into responses)."""
    ppo_micro_batch_size_per_gpu: PositiveInt = 8
    """Responses per forward/backward; gradients accumulate over a mini-batch."""
    ppo_epochs: PositiveInt = 1
    """Passes over each batch of rollouts."""
    shuffle: bool = False
    """Shuffle responses before splitting into mini-batches."""
    recompute_old_log_prob: bool | None = None
    """Recompute old log-probs with a forward pass (true) or reuse the rollout's (false). null: reuse them when
    the update is exactly on-policy (one PPO epoch, one mini-batch per step, HF rollout sampling at the actor's
    temperature: the rollout's log-probs are then the actor's own, to float rounding), recompute otherwise."""
    grad_clip: float = Field(1.0, gt=0)
    """Clip the global gradient norm to this value."""
    clip_ratio: float = Field(0.2, gt=0)
    """PPO clip range epsilon (used when clip_ratio_low/high are not set)."""
    clip_ratio_low: float | None = None
    """Lower clip range (defaults to clip_ratio)."""
    clip_ratio_high: float | None = None
    """Upper clip range (defaults to clip_ratio; DAPO's clip-higher sets it larger)."""
    clip_ratio_c: float = Field(3.0, gt=1)
    """Dual-clip constant for negative advantages."""
    policy_loss: str = "vanilla"
    """Policy loss from the registry (core_algos.get_policy_loss_fn)."""
    loss_agg_mode: LossAggMode = "token-mean"
    """How token losses are reduced to one number."""
    entropy_coeff: float = 0.0
    """Entropy bonus coefficient (subtracted from the loss)."""
    use_kl_loss: bool = False
    """Add KL(actor || ref) to the loss (GRPO style) instead of to the reward."""
    kl_loss_coef: float = Field(0.001, ge=0)
    """Weight of the KL loss."""
    kl_loss_type: KLType = "low_var_kl"
    """KL estimator of the KL loss: kl/k1, abs, mse/k2, low_var_kl/k3."""
    optim: OptimConfig = OptimConfig()
    fsdp_config: FSDPConfig = FSDPConfig()

    @model_validator(mode="after")
    def _default_clip_bounds(self) -> ActorConfig:
        self.clip_ratio_low = self.clip_ratio if self.clip_ratio_low is None else self.clip_ratio_low
        self.clip_ratio_high = self.clip_ratio if self.clip_ratio_high is None else self.clip_ratio_high
        return self


class RefConfig(Section):
    log_prob_micro_batch_size_per_gpu: PositiveInt = 16
    """Responses per forward when computing reference log-probs."""
    fsdp_config: FSDPConfig = FSDPConfig()


class ValKwargs(Section):
    do_sample: bool = False
    """Greedy decoding for validation by default."""
    temperature: float = Field(0.0, ge=0)
    top_p: float = Field(1.0, gt=0, le=1)
    top_k: int = -1
    n: PositiveInt = 1


class RolloutConfig(Section):
    name: Literal["hf", "vllm", "sglang"] = "hf"
    """Generation engine; hf (transformers generate) is the one implemented for CPU."""
    n: PositiveInt = 1
    """Responses sampled per prompt (GRPO needs n > 1)."""
    temperature: float = Field(1.0, ge=0)
    """Sampling temperature (0 means greedy)."""
    top_p: float = Field(1.0, gt=0, le=1)
    """Nucleus sampling threshold."""
    top_k: int = -1
    """Top-k sampling (-1 or 0 disables it)."""
    do_sample: bool = True
    """Sample (true) or decode greedily (false)."""
    response_length: PositiveInt | None = None
    """Max generated tokens; defaults to data.max_response_length."""
    micro_batch_size: PositiveInt = 64
    """Prompts per generate call."""
    log_prob_micro_batch_size_per_gpu: PositiveInt = 16
    """Responses per forward when recomputing old log-probs."""
    val_kwargs: ValKwargs = ValKwargs()


class ActorRolloutRefConfig(Section):
    hybrid_engine: bool = True
    """Actor, rollout and reference share one worker (only true is supported)."""
    model: ModelConfig = ModelConfig()
    actor: ActorConfig = ActorConfig()
    ref: RefConfig = RefConfig()
    rollout: RolloutConfig = RolloutConfig()


class CriticModelConfig(Section):
    path: str | None = None
    """Critic initial weights; defaults to actor_rollout_ref.model.path (a value head is added)."""
    enable_gradient_checkpointing: bool = False


class CriticConfig(Section):
    enable: bool | None = None
    """Train a critic; null means "when algorithm.adv_estimator needs one" (gae)."""
    strategy: Literal["fsdp2", "fsdp"] = "fsdp2"
    model: CriticModelConfig = CriticModelConfig()
    optim: OptimConfig = OptimConfig(lr=1e-5)
    ppo_mini_batch_size: PositiveInt = 256
    """Prompts per critic optimizer step."""
    ppo_micro_batch_size_per_gpu: PositiveInt = 8
    """Responses per critic forward/backward."""
    ppo_epochs: PositiveInt = 1
    grad_clip: float = Field(1.0, gt=0)
    cliprange_value: float = Field(0.5, gt=0)
    """Value clipping range of the clipped value loss."""
    loss_agg_mode: LossAggMode = "token-mean"
    fsdp_config: FSDPConfig = FSDPConfig()


class RewardModelConfig(Section):
    enable: bool = False
    """Model-based reward (not implemented on this branch; rule-based and custom rewards are)."""
    reward_manager: Literal["naive"] = "naive"
    """How a batch is scored: naive = one call of the score function per response."""


class CustomRewardConfig(Section):
    path: str | None = None
    """Python file holding a reward function; null uses the built-in rule-based scorers."""
    name: str = "compute_score"
    """Function in that file: fn(data_source, solution_str, ground_truth, extra_info) -> float."""


class KLControlConfig(Section):
    type: Literal["fixed", "adaptive"] = "fixed"
    kl_coef: float = Field(0.001, ge=0)
    horizon: PositiveInt = 10000
    target_kl: float = Field(0.1, gt=0)


class AlgorithmConfig(Section):
    adv_estimator: str = "gae"
    """Advantage estimator from the registry (core_algos.get_adv_estimator_fn): gae, grpo, ..."""
    gamma: float = Field(1.0, ge=0, le=1)
    lam: float = Field(1.0, ge=0, le=1)
    norm_adv_by_std_in_grpo: bool = True
    """GRPO: divide group-relative advantages by the group's std."""
    use_kl_in_reward: bool = False
    """Subtract a KL penalty from the token rewards (PPO style)."""
    kl_penalty: KLType = "kl"
    """KL estimator of the in-reward penalty."""
    kl_ctrl: KLControlConfig = KLControlConfig()


class RunConfig(Section):
    """What every trainer (RL and SFT) shares: naming, length, logging, device, seeds."""

    project_name: str = "verl"
    experiment_name: str = "run"
    logger: list[Literal["console", "file", "tensorboard", "wandb"]] = ["console", "file"]
    """Metric sinks; file writes metrics.jsonl in default_local_dir."""
    total_epochs: PositiveInt = 1
    total_training_steps: PositiveInt | None = None
    """Stop after this many steps (null: total_epochs over the data)."""
    default_local_dir: str = "checkpoints/${trainer.project_name}/${trainer.experiment_name}"
    """Checkpoints, the final model and metrics.jsonl go here."""
    seed: int = 1
    """Seed of torch and python RNGs."""
    device: Literal["auto", "cuda", "npu", "cpu"] = "auto"
    """auto picks cuda, then npu, then cpu (verl.utils.device)."""
    num_threads: int = 0
    """torch intra-op threads on CPU (0: leave torch's default)."""
    skip_preflight: bool = False
    """Start even when the environment preflight (verl doctor) reports FAIL."""
    progress_bar: bool = True


class TrainerConfig(RunConfig):
    test_freq: int = -1
    """Validate every N steps (-1: never during training)."""
    val_before_train: bool = True
    """Validate once before the first step."""
    save_freq: int = -1
    """Checkpoint every N steps (-1: only at the end)."""
    resume_mode: Literal["auto", "disable"] = "auto"
    """auto: resume from the newest complete checkpoint in default_local_dir."""
    max_ckpt_to_keep: PositiveInt | None = 2
    """Older checkpoints are deleted; null keeps all."""
    n_gpus_per_node: PositiveInt = 1
    nnodes: PositiveInt = 1


class PPOConfig(Section):
    data: DataConfig = DataConfig()
    actor_rollout_ref: ActorRolloutRefConfig = ActorRolloutRefConfig()
    critic: CriticConfig = CriticConfig()
    reward_model: RewardModelConfig = RewardModelConfig()
    custom_reward_function: CustomRewardConfig = CustomRewardConfig()
    algorithm: AlgorithmConfig = AlgorithmConfig()
    trainer: TrainerConfig = TrainerConfig()

    @model_validator(mode="after")
    def _derive_defaults(self) -> PPOConfig:
        batch = self.data.train_batch_size
        for key, mini in (("actor_rollout_ref.actor", self.actor_rollout_ref.actor.ppo_mini_batch_size),
                          ("critic", self.critic.ppo_mini_batch_size)):
            if batch % min(mini, batch):
                raise ValueError(f"{key}.ppo_mini_batch_size={mini} must divide data.train_batch_size={batch} "
                                 "(each step's prompts are split into equal mini-batches)")
        rollout = self.actor_rollout_ref.rollout
        rollout.response_length = rollout.response_length or self.data.max_response_length
        if self.critic.enable is None:
            self.critic.enable = self.algorithm.adv_estimator == "gae"
        self.critic.model.path = self.critic.model.path or self.actor_rollout_ref.model.path
        self._resolve_old_log_prob_source()
        return self

    def _resolve_old_log_prob_source(self) -> None:
        actor, rollout = self.actor_rollout_ref.actor, self.actor_rollout_ref.rollout
        # The HF rollout reports log-probs of the actor's own weights at the sampling temperature.
        same_policy = rollout.name == "hf" and rollout.do_sample and rollout.temperature > 0
        if actor.recompute_old_log_prob is None:
            single_update = actor.ppo_epochs == 1 and actor.ppo_mini_batch_size >= self.data.train_batch_size
            actor.recompute_old_log_prob = not (same_policy and single_update)
        elif actor.recompute_old_log_prob is False and not same_policy:
            raise ValueError("actor_rollout_ref.actor.recompute_old_log_prob=false needs rollout log-probs of the "
                             "actor's policy: rollout.name=hf with do_sample=true and temperature > 0 "
                             f"(got name={rollout.name}, do_sample={rollout.do_sample}, temperature={rollout.temperature})")


class SFTDataConfig(Section):
    train_files: str | list[str] = ""
    """Parquet file(s) with prompt and response columns."""
    val_files: str | list[str] | None = None
    """Parquet file(s) for a validation loss at the end; null means none."""
    prompt_key: str = "prompt"
    response_key: str = "response"
    max_length: PositiveInt = 1024
    """Prompt plus response tokens per sample."""
    truncation: Literal["error", "left", "right"] = "error"
    """What to do with a sample longer than max_length."""
    train_batch_size: PositiveInt = 32
    micro_batch_size_per_gpu: PositiveInt = 8


class SFTTrainerConfig(RunConfig):
    project_name: str = "verl-sft"
    """The final model is saved in Hugging Face format to default_local_dir/hf_model."""


class SFTModelConfig(ModelConfig):
    fsdp_config: FSDPConfig = FSDPConfig()


class SFTConfig(Section):
    data: SFTDataConfig = SFTDataConfig()
    model: SFTModelConfig = SFTModelConfig()
    optim: OptimConfig = OptimConfig(lr=1e-5)
    grad_clip: float = Field(1.0, gt=0)
    trainer: SFTTrainerConfig = SFTTrainerConfig()
