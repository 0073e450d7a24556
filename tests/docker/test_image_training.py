"""A tiny GRPO run inside the CPU image, as a user starts one: a local tiny model, a toy task, `verl train`."""

from __future__ import annotations

import json

import pytest

from image_engine import sh

pytestmark = pytest.mark.image

# Everything a user types in the container; the last step prints what the run left behind as JSON.
TINY_RUN = r"""
set -euo pipefail
python -m verl.models.tiny --out /tmp/model >/dev/null 2>&1
python -m verl.data.arithmetic --out /tmp/data --n-train 16 --n-test 8 >/dev/null
verl train data.train_files=/tmp/data/train.parquet data.val_files=/tmp/data/test.parquet \
  actor_rollout_ref.model.path=/tmp/model algorithm.adv_estimator=grpo actor_rollout_ref.rollout.n=2 \
  data.train_batch_size=4 data.max_prompt_length=64 data.max_response_length=16 \
  actor_rollout_ref.actor.ppo_mini_batch_size=4 actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4 \
  trainer.total_training_steps=2 'trainer.logger=[console,file]' trainer.default_local_dir=/tmp/run >&2
python - <<'PY'
import json, pathlib
run = pathlib.Path("/tmp/run")
print(json.dumps({
    "metrics": [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()],
    "files": sorted(str(p.relative_to(run)) for p in run.rglob("*") if p.is_file()),
}))
PY
"""


def test_tiny_grpo_run_trains_and_saves_inside_the_image(docker_client, cpu_image):
    code, out, err = sh(docker_client, cpu_image, TINY_RUN, timeout_s=900)
    assert code == 0, f"the tiny run failed inside the image:\n{err[-4000:]}"
    assert "ready to train" in err, "the preflight did not run (or did not pass) before training"
    left = json.loads(out.strip().splitlines()[-1])
    steps = {record["step"] for record in left["metrics"]}
    assert {1, 2} <= steps, f"metrics logged for steps {sorted(steps)}, expected 1 and 2"
    trained = [r for r in left["metrics"] if r["step"] >= 1]
    assert all(len(r) > 3 for r in trained), f"training steps logged almost nothing: {trained}"
    checkpoint = [f for f in left["files"] if f != "metrics.jsonl"]
    assert checkpoint, f"no checkpoint written under trainer.default_local_dir; files: {left['files']}"


def test_quickstart_runs_inside_the_image(docker_client, cpu_image):
    """`docker run IMAGE verl quickstart`: the README's first command, shortened to two GRPO steps."""
    code, out, err = sh(docker_client, cpu_image,
                        "verl quickstart --steps 2 --output-dir /tmp/qs && ls /tmp/qs/grpo/global_step_2/actor/huggingface",
                        timeout_s=900)
    assert code == 0, f"verl quickstart failed inside the image:\n{(out + err)[-4000:]}"
    assert "after GRPO (2 steps)" in out + err, f"no before/after accuracy table:\n{(out + err)[-2000:]}"
    assert "config.json" in out, "the final model was not saved in Hugging Face format"
