"""Fixtures shared by the tests of every package.

- `tiny_checkpoint` / `untrained_checkpoint`: a tiny model built from scratch (tests/support/worker_model.py),
  trained for a few dozen steps or not at all; built once per run, read-only for the tests.
- `shipped_model`: the shipped checkpoint, loaded once per module.
- `one_torch_thread`: torch on one thread for a module (`pytestmark = pytest.mark.usefixtures(...)`).
- `program`: the module's `PROGRAM` source written to a file.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.support.worker_model import build_tiny_checkpoint

if TYPE_CHECKING:
    from model_backend.engine.neural import LoadedModel


@pytest.fixture(scope="session")
def tiny_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_checkpoint(tmp_path_factory.mktemp("tiny-trained"))


@pytest.fixture(scope="session")
def untrained_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_checkpoint(tmp_path_factory.mktemp("tiny-untrained"), train_steps=0)


@pytest.fixture(scope="module")
def shipped_model() -> LoadedModel:
    from model_backend.engine.neural import LoadedModel

    return LoadedModel.load(None)


@pytest.fixture(scope="module")
def one_torch_thread() -> Iterator[None]:
    """Tiny models on a shared 2-core machine: one thread is faster than two fighting for cores."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture
def program(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    """The requesting module's PROGRAM, as tmp_path/prog.py."""
    path = tmp_path / "prog.py"
    path.write_text(request.module.PROGRAM)
    return path
