"""What the Python layer adds to a governed session, per tool call.

Runs sessions of 20 and of 60 tool calls (Read, Glob, Grep, Bash against a
mock model answering at once) three ways, each in a fresh session,
alternating, all in one event loop as an application runs them:

- ``core``: the Rust loop driven through ``tascer._tascer.Session`` with
  the least Python possible (the frames are not even parsed);
- ``package``: the same through ``TascerAgent.query`` (asyncio, a thread
  per blocking call, typed messages);
- ``python-gate``: ``package`` plus a Python pre-gate on every call.

Prints the median session of each length and the cost per tool call as
the slope between the two lengths (so what a session pays once, such as
opening it, is not counted per call), and the difference to ``core``. Needs the wheel installed and ``tascer-mock`` (``TASCER_MOCK_BIN``
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

LENGTHS = (20, 60)
"""Tool calls per session: the per-call cost is the slope between them."""
RUNS = int(os.environ.get("TASCER_BENCH_RUNS", "15"))
REPO = Path(__file__).resolve().parents[2]


def scenario(calls: int) -> dict:
    tools = [
        ("Read", {"file_path": "notes.md"}),
        ("Glob", {"pattern": "*.md"}),
        ("Grep", {"pattern": "second", "path": "."}),
        ("Bash", {"command": "echo hi"}),
    ]
    turns = [
        {"tool_calls": [{"name": tools[i % 4][0], "input": tools[i % 4][1]}]}
        for i in range(calls)
    ]
    return {"model": "mock-model", "turns": turns + [{"text": "done"}]}


def start_mock(tmp: Path, calls: int) -> tuple:
    binary = os.environ.get("TASCER_MOCK_BIN") or str(REPO / "target/debug/tascer-mock")
    path = tmp / f"scenario-{calls}.json"
    path.write_text(json.dumps(scenario(calls)))
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


async def run_package(opts: TascerAgentOptions) -> float:
    start = time.perf_counter()
    agent = TascerAgent(opts)
    async for _ in agent.query("go"):
        pass
    await asyncio.to_thread(agent.close)
    return time.perf_counter() - start


async def measure(tmp: Path, urls: dict) -> dict:
    """Every kind and length, alternating, in one event loop (as an
    application runs its sessions); the core path on a worker thread."""
    kinds = {
        "core": lambda url: asyncio.to_thread(run_core, options(tmp, url, gate=False)),
        "package": lambda url: run_package(options(tmp, url, gate=False)),
        "python-gate": lambda url: run_package(options(tmp, url, gate=True)),
    }
    for run in kinds.values():  # warm-up: the home's key, caches
        await run(urls[LENGTHS[0]])
    samples: dict = {(name, n): [] for name in kinds for n in LENGTHS}
    for _ in range(RUNS):
        for name, run in kinds.items():
            for n in LENGTHS:
                samples[(name, n)].append(await run(urls[n]))
    return samples


def main() -> int:
    @tascer.register_gate("bench_gate")
    def bench_gate(call, phase):
        return True

    with tempfile.TemporaryDirectory() as dir_:
        tmp = Path(dir_)
        (tmp / "home").mkdir()
        mocks = {n: start_mock(tmp, n) for n in LENGTHS}
        try:
            samples = asyncio.run(measure(tmp, {n: m[1] for n, m in mocks.items()}))
        finally:
            for process, _ in mocks.values():
                process.terminate()
    short, long_ = LENGTHS
    median = {key: statistics.median(values) for key, values in samples.items()}

    def per_call(name: str) -> float:
        return (median[(name, long_)] - median[(name, short)]) / (long_ - short)

    core = per_call("core")
    print(f"\n## The Python package: sessions of {short} and {long_} tool calls, "
          f"{RUNS} runs each, alternating, one event loop\n")
    print(f"| path | median session, {short} calls | median session, {long_} calls "
          "| per tool call (slope) | added per call vs core |")
    print("| --- | --- | --- | --- | --- |")
    for name in ("core", "package", "python-gate"):
        added = "—" if name == "core" else f"{(per_call(name) - core) * 1000:+.3f} ms"
        print(f"| {name} | {median[(name, short)] * 1000:.2f} ms | "
              f"{median[(name, long_)] * 1000:.2f} ms | {per_call(name) * 1000:.3f} ms | {added} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
