"""Fixtures: a real mock model server (the ``tascer-mock`` binary, over
loopback HTTP) per scenario, and a workspace with its own Tascer home."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest

REPO = Path(__file__).resolve().parents[2]


def mock_binary() -> Path:
    """``tascer-mock``: ``$TASCER_MOCK_BIN``, else the workspace's build."""
    explicit = os.environ.get("TASCER_MOCK_BIN")
    if explicit:
        return Path(explicit)
    for profile in ("debug", "release"):
        candidate = REPO / "target" / profile / "tascer-mock"
        if candidate.exists():
            return candidate
    pytest.fail("no tascer-mock binary: run `cargo build -p tascer-mock` first")


class MockModel:
    """A scripted model server; ``url`` is its base URL."""

    def __init__(self, turns: List[Dict[str, Any]], tmp: Path) -> None:
        scenario = tmp / f"scenario-{id(self)}.json"
        scenario.write_text(json.dumps({"model": "mock-model", "turns": turns}))
        self.process = subprocess.Popen(
            [str(mock_binary()), "--scenario", str(scenario)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        line = self.process.stdout.readline() if self.process.stdout else ""
        if "listening on " not in line:
            self.process.kill()
            raise RuntimeError(f"tascer-mock did not start: {line!r}")
        self.url = line.split("listening on ", 1)[1].strip()

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


class Workspace:
    """A git repository to work in and a Tascer home beside it."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.cwd = tmp / "work"
        self.home = tmp / "home"
        self.cwd.mkdir()
        self.home.mkdir()
        subprocess.run(["git", "init", "-q", "-b", "main"], cwd=self.cwd, check=True)
        self.servers: List[MockModel] = []

    def model(self, *turns: Dict[str, Any]) -> MockModel:
        server = MockModel(list(turns), self.tmp)
        self.servers.append(server)
        return server

    def options(self, server: MockModel, **more: Any) -> Any:
        from tascer import TascerAgentOptions

        settings: Dict[str, Any] = dict(
            cwd=self.cwd,
            evidence_dir=self.home,
            model="mock-model",
            base_url=server.url,
            api_key="test-key",
            permission_mode="bypassPermissions",
            setting_sources=[],
        )
        settings.update(more)
        return TascerAgentOptions(**settings)


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[Workspace]:
    workspace = Workspace(tmp_path)
    yield workspace
    for server in workspace.servers:
        server.stop()


def tool(name: str, tool_input: Dict[str, Any]) -> Dict[str, Any]:
    """A model turn that calls one tool."""
    return {"tool_calls": [{"name": name, "input": tool_input}]}


def text(words: str) -> Dict[str, Any]:
    """A model turn that answers with text."""
    return {"text": words}


PYTHON = sys.executable
