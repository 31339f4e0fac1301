"""Every test session runs with its own KOPT_HOME, so no test reads, writes or locks the user's index.
The Ascend toolchain (set up once by `make test` under the real KOPT_HOME) is shared through a link."""

import os

import pytest

from kopt.config import kopt_home


@pytest.fixture(autouse=True, scope="session")
def private_kopt_home(tmp_path_factory):
    real = kopt_home()
    home = tmp_path_factory.mktemp("kopt-home")
    if (real / "toolchains").is_dir():
        (home / "toolchains").symlink_to(real / "toolchains")
    saved = os.environ.get("KOPT_HOME")
    os.environ["KOPT_HOME"] = str(home)
    yield home
    if saved is None:
        os.environ.pop("KOPT_HOME", None)
    else:
        os.environ["KOPT_HOME"] = saved
