"""The HF rollout on a real (untrained, near-uniform) tiny model: sampling, log-probs, masks, n samples."""

import pytest
import torch
from transformers import AutoModelForCausalLM

from verl.protocol import DataProto
from verl.trainer.config.schema import ActorConfig, RolloutConfig
from verl.utils.torch_functional import compute_position_id_with_mask, logprobs_from_logits
from verl.workers.actor import DataParallelPPOActor
from verl.workers.rollout import HFRollout

MAX_PROMPT = 40  # the data set pads every prompt to max_prompt_length


@pytest.fixture(scope="module")
def model(tiny_model_dir):
    torch.manual_seed(0)
    return AutoModelForCausalLM.from_pretrained(tiny_model_dir, dtype=torch.float32)


def prompts(tokenizer, texts, repeat=1):
    """Left-padded prompts as the RL data set makes them, each repeated `repeat` times (interleaved)."""
    rows = [tokenizer.apply_chat_template([{"role": "user", "content": t}], add_generation_prompt=True, tokenize=False)
            for t in texts]
    ids = [tokenizer(row, add_special_tokens=False)["input_ids"] for row in rows]
    input_ids = torch.full((len(ids), MAX_PROMPT), tokenizer.pad_token_id)
    mask = torch.zeros(len(ids), MAX_PROMPT, dtype=torch.long)
    for i, row in enumerate(ids):
        input_ids[i, MAX_PROMPT - len(row):] = torch.tensor(row)
        mask[i, MAX_PROMPT - len(row):] = 1
    batch = DataProto.from_dict({"input_ids": input_ids, "attention_mask": mask,
                                 "position_ids": compute_position_id_with_mask(mask)})
    return batch.repeat(repeat_times=repeat, interleave=True)


def rollout(model, tokenizer, eos=None, **config):
    return HFRollout(model, RolloutConfig(**config), eos if eos is not None else tokenizer.eos_token_id,
                     tokenizer.pad_token_id)


def test_top_k_disabled_samples_from_the_full_vocabulary(model, tokenizer):
    # transformers' default top_k=50 would cap the first token of 400 samples of one prompt at 50 distinct ids;
    # the untrained model is near-uniform over its ~100 tokens, so the full distribution shows far more.
    out = rollout(model, tokenizer, temperature=1.0, top_k=-1, response_length=1, micro_batch_size=400) \
        .generate_sequences(prompts(tokenizer, ["1+1="], repeat=400))
    first = out.batch["responses"][:, 0]
    assert first.unique().numel() > 60
    # And the reported log-probs are those of the full distribution, not of a renormalised top-k.
    full = torch.log_softmax(model(**{k: out.batch[k][:1, :-1] for k in ("input_ids", "attention_mask")}).logits[0, -1], -1)
    torch.testing.assert_close(out.batch["rollout_log_probs"][:, 0], full[first], atol=1e-5, rtol=0)


def test_rollout_log_probs_match_the_actors_recomputed_ones(model, tokenizer):
    torch.manual_seed(1)
    batch = prompts(tokenizer, ["12+7=", "3+4=", "19+19= and more words"], repeat=4)
    out = rollout(model, tokenizer, temperature=0.7, response_length=12, micro_batch_size=5).generate_sequences(batch)
    out.meta_info["temperature"] = 0.7
    actor = DataParallelPPOActor(ActorConfig(), model)
    recomputed, entropy = actor.compute_log_prob(out, micro_batch_size=5, calculate_entropy=True)
    mask = out.batch["response_mask"].bool()
    torch.testing.assert_close(recomputed[mask], out.batch["rollout_log_probs"][mask], atol=1e-5, rtol=0)
    assert entropy.shape == recomputed.shape == mask.shape
    # The actor trims shared padding before its forward pass; the full-width forward gives the same numbers.
    with torch.no_grad():
        logits = model(input_ids=out.batch["input_ids"], attention_mask=out.batch["attention_mask"],
                       position_ids=out.batch["position_ids"]).logits[:, -13:-1] / 0.7
    full_width = logprobs_from_logits(logits, out.batch["responses"])
    torch.testing.assert_close(recomputed[mask], full_width[mask], atol=1e-5, rtol=0)


def test_n_samples_per_prompt_and_masks_after_eos(model, tokenizer):
    torch.manual_seed(2)
    n, length = 4, 16
    texts = ["5+5=", "17+2= please"]
    # Ten common characters count as EOS so that most samples stop early and the masks are exercised.
    eos = tokenizer.convert_tokens_to_ids(list("0123456789"))
    out = rollout(model, tokenizer, eos=eos, temperature=1.0, response_length=length).generate_sequences(
        prompts(tokenizer, texts, repeat=n))
    responses, mask = out.batch["responses"], out.batch["response_mask"]
    assert responses.shape == (len(texts) * n, length)
    # Prompts come back trimmed to the longest prompt of the batch, each repeated n times in a row.
    longest = max(prompts(tokenizer, texts).batch["attention_mask"].sum(-1)).item()
    assert out.batch["prompts"].size(1) == longest
    for i in range(len(texts)):
        group = out.batch["prompts"][i * n:(i + 1) * n]
        assert (group == group[0]).all()
    assert len({tuple(r.tolist()) for r in responses}) > 1  # n samples, not one copied n times
    stopped = 0
    for row, row_mask in zip(responses, mask):
        hits = [t for t, token in enumerate(row.tolist()) if token in eos]
        end = hits[0] + 1 if hits else length  # mask covers up to and including the first EOS
        assert row_mask.tolist() == [1] * end + [0] * (length - end)
        assert (row[end:] == tokenizer.pad_token_id).all()
        stopped += bool(hits)
    assert stopped >= len(responses) // 2
    assert (out.batch["rollout_log_probs"][mask == 0] == 0).all()
    assert out.batch["attention_mask"].shape == out.batch["input_ids"].shape == out.batch["position_ids"].shape
