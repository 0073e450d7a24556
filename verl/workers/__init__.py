"""Workers: actor/rollout/ref (one hybrid engine) and critic, trained with torch FSDP2."""
