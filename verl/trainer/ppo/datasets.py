"""Build the RL train/validation loaders from the `data` config section."""

from __future__ import annotations

from verl.data.rl_dataset import RLHFDataset, collate_fn
from verl.trainer.config.schema import DataConfig
from verl.utils.dataloader import ResumableLoader
from verl.utils.errors import UserError


def load_rl_dataset(key: str, files, tokenizer, data: DataConfig) -> RLHFDataset:
    """The data set, with the config key named in any error (a bad file, no rows, a missing column)."""
    try:
        return RLHFDataset(files, tokenizer, data)
    except UserError as exc:
        raise UserError(f"{key}: {exc}") from None


def build_rl_loaders(data: DataConfig, tokenizer, console=print) -> tuple[ResumableLoader, ResumableLoader | None]:
    train = load_rl_dataset("data.train_files", data.train_files, tokenizer, data)
    if data.train_batch_size > len(train):
        raise UserError(f"data.train_batch_size={data.train_batch_size} is larger than the {len(train)} training prompts "
                        f"in {data.train_files}; lower it")
    train_loader = ResumableLoader(train, data.train_batch_size, collate_fn, shuffle=data.shuffle, seed=data.seed)
    val_loader = None
    if data.val_files:
        val = load_rl_dataset("data.val_files", data.val_files, tokenizer, data)
        val_loader = ResumableLoader(val, data.val_batch_size or len(val), collate_fn, shuffle=False)
    console(f"data: {len(train)} training prompts ({len(train_loader)} steps per epoch)"
            + (f", {len(val_loader.dataset)} validation prompts" if val_loader else ", no validation set"))
    return train_loader, val_loader
