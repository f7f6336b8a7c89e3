"""What the Python layer adds to a governed session, per tool call.

Runs the same 20-tool-call session (Read, Glob, Grep, Bash against a mock
model answering at once) three ways, each in a fresh session, alternating:

- ``core``: the Rust loop driven through ``tascer._tascer.Session`` with
  the least Python possible (the frames are not even parsed);
- ``package``: the same through ``TascerAgent.query`` (asyncio, a thread
  per blocking call, typed messages);
- ``python-gate``: ``package`` plus a Python pre-gate on every call.

Prints medians per session and per tool call, and the differences to
``core``. Needs the wheel installed and ``tascer-mock`` (``TASCER_MOCK_BIN``
or target/debug); ``scripts/bench-python`` builds a release wheel and runs it.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import tascer
from tascer import _tascer
from tascer.sdk_wrapper import TascerAgent, TascerAgentOptions, ToolValidationConfig

CALLS = 20
RUNS = int(os.environ.get("TASCER_BENCH_RUNS", "15"))
REPO = Path(__file__).resolve().parents[2]


def scenario() -> dict:
    tools = [
        ("Read", {"file_path": "notes.md"}),
        ("Glob", {"pattern": "*.md"}),
        ("Grep", {"pattern": "second", "path": "."}),
        ("Bash", {"command": "echo hi"}),
    ]
    turns = [
        {"tool_calls": [{"name": tools[i % 4][0], "input": tools[i % 4][1]}]}
        for i in range(CALLS)
    ]
    return {"model": "mock-model", "turns": turns + [{"text": "done"}]}


def start_mock(tmp: Path) -> tuple:
    binary = os.environ.get("TASCER_MOCK_BIN") or str(REPO / "target/debug/tascer-mock")
    path = tmp / "scenario.json"
    path.write_text(json.dumps(scenario()))
    process = subprocess.Popen(
        [binary, "--scenario", str(path)], stdout=subprocess.PIPE, text=True
    )
    line = process.stdout.readline() if process.stdout else ""
    return process, line.split("listening on ", 1)[1].strip()


def options(tmp: Path, url: str, gate: bool) -> TascerAgentOptions:
    work = Path(tempfile.mkdtemp(dir=tmp))
    (work / "notes.md").write_text("# Notes\n\n- first\n- second\n")
    configs = {}
    if gate:
        configs = {t: ToolValidationConfig(pre_gates=["bench_gate"], require_proof=False)
                   for t in ("Read", "Glob", "Grep", "Bash")}
    return TascerAgentOptions(
        cwd=work,
        evidence_dir=tmp / "home",
        base_url=url,
        api_key="bench",
        model="mock-model",
        permission_mode="bypassPermissions",
        setting_sources=[],
        tool_configs=configs,
    )


def run_core(opts: TascerAgentOptions) -> float:
    start = time.perf_counter()
    session = _tascer.Session(opts.to_json(), tascer.registered_gates())
    session.query("go")
    while session.next_message() is not None:
        pass
    session.close()
    return time.perf_counter() - start


def run_package(opts: TascerAgentOptions) -> float:
    async def session() -> None:
        agent = TascerAgent(opts)
        async for _ in agent.query("go"):
            pass
        await asyncio.to_thread(agent.close)

    start = time.perf_counter()
    asyncio.run(session())
    return time.perf_counter() - start


def main() -> int:
    @tascer.register_gate("bench_gate")
    def bench_gate(call, phase):
        return True

    with tempfile.TemporaryDirectory() as dir_:
        tmp = Path(dir_)
        (tmp / "home").mkdir()
        mock, url = start_mock(tmp)
        try:
            kinds = {
                "core": lambda: run_core(options(tmp, url, gate=False)),
                "package": lambda: run_package(options(tmp, url, gate=False)),
                "python-gate": lambda: run_package(options(tmp, url, gate=True)),
            }
            for run in kinds.values():  # warm-up: the home's key, caches
                run()
            samples = {name: [] for name in kinds}
            for _ in range(RUNS):
                for name, run in kinds.items():
                    samples[name].append(run())
        finally:
            mock.terminate()
    core = statistics.median(samples["core"])
    print(f"\n## The Python package: a {CALLS}-tool-call session, {RUNS} runs each, alternating\n")
    print("| path | median per session | per tool call | added per call vs core |")
    print("| --- | --- | --- | --- |")
    for name, values in samples.items():
        median = statistics.median(values)
        added = (median - core) / CALLS * 1000
        print(f"| {name} | {median * 1000:.2f} ms | {median / CALLS * 1000:.3f} ms | "
              f"{'—' if name == 'core' else f'{added:+.3f} ms'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
