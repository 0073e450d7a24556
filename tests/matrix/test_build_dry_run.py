"""`verl images build --dry-run`: the exact engine command, parsed back into file, tags and build arguments."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from compat.matrix import load_matrix
from matrix_helpers import MATRIX, REPO

CPU = load_matrix(MATRIX).resolve("cpu")


def parse(output: str) -> tuple[list[str], list[dict]]:
    """Staging comments and, per command line, its env, argv, file, tags and build args."""
    staged = [line for line in output.splitlines() if line.startswith("# stage ")]
    commands = []
    for line in output.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        words = shlex.split(line)
        env = dict(w.split("=", 1) for w in words if "=" in w.split("=", 1)[0] + "=" and w[0].isupper() and "=" in w
                   and words.index(w) < words.index("docker"))
        argv = words[words.index("docker"):]
        flags = {"file": None, "tags": [], "args": {}}
        for flag, value in zip(argv, argv[1:]):
            if flag == "-f":
                flags["file"] = value
            elif flag == "-t":
                flags["tags"].append(value)
            elif flag == "--build-arg":
                key, _, val = value.partition("=")
                flags["args"][key] = val
        commands.append({"env": env, "argv": argv, **flags})
    return staged, commands


@pytest.mark.parametrize("name", ["cpu", "cpu.latest", CPU.immutable_tag, f"verlai/verl:{CPU.immutable_tag}"])
def test_dry_run_by_any_name_prints_the_docker_build(verl, name):
    result = verl("images", "build", name, "--dry-run")
    assert result.exit_code == 0, result.output
    staged, (command,) = parse(result.output)
    assert staged == []
    assert command["env"] == {"DOCKER_BUILDKIT": "1"}
    assert command["argv"][:2] == ["docker", "build"] and command["argv"][-1] == "."
    assert command["file"] == "dockerfiles/rendered/cpu.Dockerfile"
    assert (REPO / command["file"]).is_file()
    assert command["tags"] == ["verlai/verl:cpu.latest", f"verlai/verl:{CPU.immutable_tag}"]
    assert set(command["args"]) == {"VERL_GIT_REVISION", "VERL_CREATED"}
    assert len(command["args"]["VERL_GIT_REVISION"]) >= 7


def test_dry_run_custom_build(verl, tmp_path):
    wheelhouse = tmp_path / "wheels"
    wheelhouse.mkdir()
    (wheelhouse / "dry_run_probe-1.0-py3-none-any.whl").write_bytes(b"")
    cert = tmp_path / "corp-root.pem"
    cert.write_text("-----BEGIN CERTIFICATE-----\n")
    result = verl("images", "build", "cpu.latest", "--dry-run", "--tag", "mine:dev", "--tag", "dev2",
                  "--base-image", "debian:bookworm-local", "--wheelhouse", str(wheelhouse), "--ca-cert", str(cert),
                  "--pip-index", "https://mirror.example/simple", "--extra-pip", "rich", "--extra-pip", "tqdm==4.67.1",
                  "--build-arg", "TORCH_VERSION=2.13.0+cpu", "--build-arg", "TRANSFORMERS_VERSION=5.18.0")
    assert result.exit_code == 0, result.output
    staged, (command,) = parse(result.output)
    assert staged == [
        f"# stage {wheelhouse}/dry_run_probe-1.0-py3-none-any.whl -> dockerfiles/context/wheels/dry_run_probe-1.0-py3-none-any.whl",
        f"# stage {cert} -> dockerfiles/context/ca-certificates/corp-root.crt",
    ]
    assert command["tags"] == ["mine:dev", "verlai/verl:dev2"]
    args = command["args"]
    assert args["BASE_IMAGE"] == args["RUNTIME_IMAGE"] == "debian:bookworm-local"
    assert args["PIP_INDEX_URL"] == "https://mirror.example/simple"
    assert args["EXTRA_PIP_PACKAGES"] == "rich tqdm==4.67.1"
    assert args["TORCH_INDEX_URL"] == ""  # the wheelhouse replaces the unreachable torch index
    assert args["TRANSFORMERS_VERSION"] == "5.18.0"
    assert not (REPO / "dockerfiles/context/wheels/dry_run_probe-1.0-py3-none-any.whl").exists(), "dry run staged"


def test_dry_run_buildx_push_and_docker_push(verl):
    result = verl("images", "build", "sgl055.latest", "--dry-run", "--engine", "buildx", "--push")
    _, (command,) = parse(result.output)
    assert command["argv"][:3] == ["docker", "buildx", "build"] and "--push" in command["argv"]
    assert command["file"] == "dockerfiles/rendered/sgl055-cu129.Dockerfile"

    result = verl("images", "build", "sgl055.latest", "--dry-run", "--push")
    _, commands = parse(result.output)
    assert [c["argv"][:2] for c in commands] == [["docker", "build"], ["docker", "push"], ["docker", "push"]]
    assert [c["argv"][2] for c in commands[1:]] == commands[0]["tags"]


def test_cuda_base_image_override_keeps_the_runtime_image(verl):
    result = verl("images", "build", "vllm011.latest", "--dry-run", "--base-image", "registry.local/cuda:12.8.1-devel")
    _, (command,) = parse(result.output)
    assert command["args"]["BASE_IMAGE"] == "registry.local/cuda:12.8.1-devel"
    assert "RUNTIME_IMAGE" not in command["args"]


@pytest.mark.parametrize("args,expected", [
    (["--build-arg", "NOT_AN_ARG=1"], ["declares no build argument 'NOT_AN_ARG'", "allowed:", "TORCH_VERSION"]),
    (["--build-arg", "TORCH_VERSION"], ["'TORCH_VERSION' is not KEY=VALUE"]),
    (["--wheelhouse", "/nonexistent/wheels"], ["/nonexistent/wheels", "--wheelhouse", "not a directory"]),
    (["--ca-cert", "/nonexistent/ca.pem"], ["/nonexistent/ca.pem", "--ca-cert", "no such file"]),
])
def test_bad_build_options_exit_2(verl, args, expected):
    result = verl("images", "build", "cpu", "--dry-run", *args)
    assert result.exit_code == 2, result.output
    for word in expected:
        assert word in result.output


def test_build_refuses_a_stale_dockerfile(repo_copy):
    from matrix_helpers import Verl, edit

    edit(repo_copy / "matrix.yaml", 'ray: "2.60.0"\n      tensordict: "0.15.3"\n\n# Short',
         'ray: "2.60.1"\n      tensordict: "0.15.3"\n\n# Short')
    result = Verl(repo_copy / "matrix.yaml")("images", "build", "cpu", "--dry-run")
    assert result.exit_code == 2
    assert "dockerfiles/rendered/cpu.Dockerfile is out of date" in result.output
    assert "verl images render" in result.output


def test_real_build_reports_the_engine_failure_and_unstages_inputs(verl, tmp_path, monkeypatch):
    # The real docker CLI against an engine that is not there: the build must fail clearly, exit non-zero,
    # and leave nothing staged in the build context.
    import shutil

    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    wheelhouse = tmp_path / "wheels"
    wheelhouse.mkdir()
    (wheelhouse / "unstage_probe-1.0-py3-none-any.whl").write_bytes(b"")
    result = verl("images", "build", "cpu", "--wheelhouse", str(wheelhouse))
    assert not (REPO / "dockerfiles/context/wheels/unstage_probe-1.0-py3-none-any.whl").exists()
    if shutil.which("docker") is None:
        assert result.exit_code == 2 and "the docker command is not installed" in result.output
    else:
        assert result.exit_code != 0
        assert "error: the build of cpu failed" in result.output
        assert "DOCKER_BUILDKIT=1 docker build" in result.output  # the command is echoed before it runs
