"""`verl images list`, `show` and `bake`: what users read to pick an image, and what buildx consumes."""

from __future__ import annotations

import json

import yaml
from matrix_helpers import MATRIX, REPO

from compat.matrix import load_matrix

IMAGES = load_matrix(MATRIX).resolved


def test_list_json_has_every_image_with_tags_and_versions(verl):
    result = verl("images", "list", "--json")
    assert result.exit_code == 0
    listed = {row["name"]: row for row in json.loads(result.output)}
    assert set(listed) == set(IMAGES)
    assert listed["vllm011-cu128"]["tags"] == ["vllm011.latest"]
    assert listed["sgl055-cu129"]["engine_version"] == "0.5.5"
    assert listed["cpu"]["torch"] == "2.13.0+cpu"
    for name, row in listed.items():
        assert row["immutable_tag"] == IMAGES[name].immutable_tag
        assert (REPO / row["dockerfile"]).is_file()


def test_list_filters(verl):
    rows = json.loads(verl("images", "list", "--platform", "cuda", "--engine", "sglang", "--json").output)
    assert {row["name"] for row in rows} == {"sgl055-cu129", "sgl0521-cu130"}
    rows = json.loads(verl("images", "list", "--platform", "cu128", "--json").output)
    assert [row["name"] for row in rows] == ["vllm011-cu128"]
    result = verl("images", "list", "--platform", "tpu")
    assert result.exit_code == 2 and "no image matches" in result.output and "cuda" in result.output


def test_list_table_shows_tags(verl):
    result = verl("images", "list")
    assert result.exit_code == 0
    for tag in ("vllm011.latest", "sgl055.latest", "cpu.latest", IMAGES["cpu"].immutable_tag):
        assert tag in result.output


def test_show_resolves_alias_entry_and_immutable_tag_to_the_same_entry(verl):
    by_alias = yaml.safe_load(verl("images", "show", "sgl055.latest").output)
    by_entry = yaml.safe_load(verl("images", "show", "sgl055-cu129").output)
    by_tag = json.loads(verl("images", "show", IMAGES["sgl055-cu129"].immutable_tag, "--json").output)
    assert by_alias == by_entry == by_tag
    assert by_alias["versions"]["sglang"] == "0.5.5" and by_alias["versions"]["torch"] == "2.8.0"
    assert by_alias["platform"]["cuda"] == "12.9.1" and by_alias["min_driver"] == "575.51.03"
    assert by_alias["build_args"]["SGLANG_VERSION"] == "0.5.5"
    assert by_alias["manifest"]["entry"] == "sgl055-cu129"


def test_bake_file_has_a_target_per_image(verl, tmp_path):
    out = tmp_path / "docker-bake.json"
    result = verl("images", "bake", "--output", str(out), "--registry", "registry.example/verl")
    assert result.exit_code == 0, result.output
    bake = json.loads(out.read_text())
    assert set(bake["target"]) == set(IMAGES) == set(bake["group"]["default"]["targets"])
    assert bake["group"]["cpu"]["targets"] == ["cpu"]
    cpu = bake["target"]["cpu"]
    assert cpu["dockerfile"] == "dockerfiles/rendered/cpu.Dockerfile" and cpu["context"] == "."
    assert cpu["tags"] == [f"registry.example/verl:{tag}" for tag in IMAGES["cpu"].tags]
    assert cpu["args"]["TORCH_VERSION"] == "2.13.0+cpu"
