"""Small tensor helpers shared by the losses, the data sets and the workers (upstream verl names)."""

from __future__ import annotations

import torch
import torch.nn.functional as F


def masked_sum(values: torch.Tensor, mask: torch.Tensor, axis: int | None = None) -> torch.Tensor:
    return (values * mask).sum(dim=axis) if axis is not None else (values * mask).sum()


def masked_mean(values: torch.Tensor, mask: torch.Tensor, axis: int | None = None) -> torch.Tensor:
    """Mean of `values` where `mask` is 1 (0 when the mask is empty, never NaN)."""
    count = mask.sum(dim=axis) if axis is not None else mask.sum()
    return masked_sum(values, mask, axis) / (count + 1e-8)


def masked_var(values: torch.Tensor, mask: torch.Tensor, unbiased: bool = True) -> torch.Tensor:
    """Variance over the masked entries; Bessel's correction when there are at least two of them."""
    mean = masked_mean(values, mask)
    variance = masked_mean((values - mean) ** 2, mask)
    count = mask.sum()
    if unbiased and count > 1:
        variance = variance * count / (count - 1)
    return variance


def masked_whiten(values: torch.Tensor, mask: torch.Tensor, shift_mean: bool = True) -> torch.Tensor:
    """(values - mean) / std over the masked entries; with shift_mean=False the mean is added back."""
    mean, var = masked_mean(values, mask), masked_var(values, mask)
    whitened = (values - mean) * torch.rsqrt(var + 1e-8)
    return whitened if shift_mean else whitened + mean


def clip_by_value(x: torch.Tensor, tensor_min: torch.Tensor, tensor_max: torch.Tensor) -> torch.Tensor:
    return torch.max(torch.min(x, tensor_max), tensor_min)


def entropy_from_logits(logits: torch.Tensor) -> torch.Tensor:
    """Entropy of the softmax over the last dimension: logsumexp(z) - sum(softmax(z) * z)."""
    probs = F.softmax(logits, dim=-1)
    return torch.logsumexp(logits, dim=-1) - (probs * logits).sum(dim=-1)


def logprobs_from_logits(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """log softmax(logits)[label] for each position, without materialising the full log-softmax twice."""
    logits = logits.float()
    picked = torch.gather(logits, dim=-1, index=labels.unsqueeze(-1)).squeeze(-1)
    return picked - torch.logsumexp(logits, dim=-1)


def get_response_mask(response_id: torch.Tensor, eos_token: int | list[int] = 2, dtype: torch.dtype = torch.int64) -> torch.Tensor:
    """1 up to and including the first EOS of each response, 0 after it."""
    eos_tokens = [eos_token] if isinstance(eos_token, int) else list(eos_token)
    is_eos = torch.isin(response_id, torch.tensor(eos_tokens, device=response_id.device))
    # Count EOS tokens strictly before each position: a position is valid while that count is 0.
    seen_before = torch.cumsum(is_eos.long(), dim=-1) - is_eos.long()
    return (seen_before == 0).to(dtype)


def compute_position_id_with_mask(mask: torch.Tensor) -> torch.Tensor:
    """Position ids that start at 0 on the first real token of a left-padded row."""
    return torch.clip(torch.cumsum(mask, dim=-1) - 1, min=0)


def pad_sequence_to_length(tensor: torch.Tensor, max_seq_len: int, pad_token_id: int, left_pad: bool = False) -> torch.Tensor:
    """Pad the last dimension of a (batch, seq) tensor to `max_seq_len`."""
    missing = max_seq_len - tensor.shape[-1]
    if missing <= 0:
        return tensor
    padding = (missing, 0) if left_pad else (0, missing)
    return F.pad(tensor, padding, value=pad_token_id)
