"""What a runtime image must not carry: compilers, pip's cache, apt package lists."""

from __future__ import annotations

from image_engine import sh

# Prints one line per leftover found; nothing when the image is clean.
_SCRIPT = r"""
for tool in gcc cc g++ c++ make; do
  command -v "$tool" >/dev/null && echo "compiler: $(command -v "$tool")"
done
# An empty /root/.cache/pip is only the mount point BuildKit leaves behind for the cache mount.
[ -n "$(ls -A /root/.cache/pip 2>/dev/null)" ] && echo "pip cache: /root/.cache/pip ($(du -sh /root/.cache/pip | cut -f1))"
lists="$(find /var/lib/apt/lists -mindepth 1 -maxdepth 1 ! -name lock ! -name partial 2>/dev/null | head -3)"
[ -n "$lists" ] && echo "apt lists: $(echo $lists)"
true
"""


def leftovers(client, image: str) -> list[str]:
    """Build leftovers found in `image` (empty list: clean)."""
    code, out, err = sh(client, image, _SCRIPT)
    if code != 0:
        raise RuntimeError(f"inspecting {image} failed ({code}): {err}")
    return [line for line in out.splitlines() if line.strip()]
