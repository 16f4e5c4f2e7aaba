"""Debian packages the tests need (stunnel for TLS, chromium for the docs site), installed on
first use where the test runner is root with apt-get, as on a fresh CI machine."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable


def apt_install(
    package: str,
    find: Callable[[], str | None],
    error: Callable[[str], Exception],
    *,
    timeout: float = 300.0,
) -> str:
    """``find()``'s path, installing Debian's ``package`` first when it is missing.

    Installing needs root and apt-get (as on a fresh Debian CI machine); ``apt-get update``
    runs only when the first install fails. Anything else raises ``error(reason)``.
    """
    path = find()
    if path:
        return path
    if shutil.which("apt-get") is None:
        raise error(f"{package} is not installed and there is no apt-get")
    if os.geteuid() != 0:
        raise error(
            f"{package} is not installed and installing it needs root: apt-get install {package}"
        )
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    install = ["apt-get", "install", "-y", "--no-install-recommends", package]
    last = ""
    for argv in (install, ["apt-get", "update"], install):
        try:
            done = subprocess.run(argv, env=env, capture_output=True, timeout=timeout, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise error(f"{' '.join(argv)} failed: {exc}") from None
        last = done.stderr.decode(errors="replace")[-500:]
        if argv[1] == "install" and done.returncode == 0:
            break
    path = find()
    if path is None:
        raise error(f"apt-get install {package} did not work: {last}")
    return path
