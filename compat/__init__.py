"""compat: probe this machine, compare it with the version matrix, say what to fix.

Entry points: `compat.cli:doctor` (the `verl doctor` command) and `compat.preflight.run_preflight`
(run by the trainer before it starts). Nothing here imports torch, vllm or sglang: the point of the
package is to explain a broken environment, so it must not depend on the parts that break.
"""
