"""Fixtures for every test: the user's cache directory is a temporary one (compiled catalogs land there)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session", autouse=True)
def _private_cache_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Point ``$XDG_CACHE_HOME`` (hence ``catalog.cache_dir``'s default) into the session's temporary directory."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))
        yield
