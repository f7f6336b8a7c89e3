"""A CI step: run the agent on a task, write .ci/proof-report.json, and
exit 1 when the session's proofs do not verify.

    python examples/python/ci_proof_report.py "fix the failing test"
    python examples/python/ci_proof_report.py --verify-only SESSION_ID

The model comes from ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL (or
--base-url); the ledger lives in --home (default $TASCER_HOME, ~/.tascer).
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from tascer.sdk_wrapper import TascerAgent, TascerAgentOptions, ToolValidationConfig


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("prompt", nargs="?", help="the task")
    parser.add_argument("--verify-only", metavar="SESSION", help="check a stored session")
    parser.add_argument("--home", help="the Tascer home (ledger and evidence)")
    parser.add_argument("--base-url", help="the model's address")
    parser.add_argument("--model", default="mock-model")
    args = parser.parse_args()
    if not args.prompt and not args.verify_only:
        parser.error("give a prompt, or --verify-only SESSION")

    options = TascerAgentOptions(
        evidence_dir=args.home,
        base_url=args.base_url,
        api_key="ci" if args.base_url else None,
        model=args.model,
        permission_mode="acceptEdits",
        allowed_tools=["Bash(echo:*)"],
        setting_sources=[],
        resume=args.verify_only,
        tool_configs={"Bash": ToolValidationConfig(evidence_types=["stdout", "stderr"])},
    )
    agent = TascerAgent(options)
    if args.prompt:

        async def work() -> None:
            async for message in agent.query(args.prompt):
                print(message)

        asyncio.run(work())
    success = agent.write_ci_report(".ci/proof-report.json")
    agent.close()
    print("proofs verified" if success else "PROOFS FAILED: see .ci/proof-report.json")
    return 0 if success else 1


if __name__ == "__main__":
    sys.exit(main())
