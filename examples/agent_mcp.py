"""An agent's session with `ndb mcp`, through the MCP SDK's client: find an input that makes a buggy
function fail without running it, then confirm the failure with the real (sandboxed) run.

    .venv/bin/python examples/agent_mcp.py

The bug: `my_max` starts from 0, so it returns 0 for a list whose elements are all below 0, or for no
elements at all, where its contract says it returns an element of `xs` (the largest). The agent
reasons as an agent would, one tool call at a time, and prints the transcript (docs/agents.md):
1. `infer_inputs`: which lists make `my_max` return 0, its suspicious starting value? (the model
   proposes and checks them with its own forward runs; nothing runs)
2. for each: `start` + `step` on the neural engine to the return, and `evaluate` the contract there;
3. `compare` with the oracle, and an oracle session that checks the contract on the real run.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import anyio
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import TextContent

ROOT = Path(__file__).resolve().parents[1]
PROGRAM = """def my_max(xs):
    best = 0
    for x in xs:
        if x > best:
            best = x
    return best
"""
CONTRACT = "__return__ in xs"  # at the return: the result is one of the elements


async def ask(client: ClientSession, tool: str, **arguments: object) -> str:
    """One tool call, printed as the transcript shows it."""
    shown = ", ".join(f"{k}={v!r}" for k, v in arguments.items() if k != "source")
    print(f">>> {tool}({shown})")
    result = await client.call_tool(tool, arguments)
    answer = "\n".join(c.text for c in result.content if isinstance(c, TextContent))
    print(textwrap.indent(answer, "    ") + ("\n    (tool error)" if result.is_error else "") + "\n")
    if result.is_error:
        raise SystemExit(f"{tool} failed: {answer}")
    return answer


def confirmed_calls(answer: str, function: str) -> list[str]:
    """The argument lists under `N confirmed` in an infer_inputs answer."""
    calls = []
    for line in answer.splitlines()[1:]:
        if not line.startswith(f"  {function}("):
            break
        calls.append(line.strip()[len(function) + 1:-1])
    return calls


async def main() -> None:
    server = StdioServerParameters(command=sys.executable, args=["-m", "dap_server", "mcp", "--call-timeout", "600"], cwd=str(ROOT))
    async with stdio_client(server) as (read, write), ClientSession(read, write) as client:
        await client.initialize()
        print("# Which lists make my_max return 0, its starting value?\n")
        inferred = await ask(client, "infer_inputs", source=PROGRAM, function="my_max", returned="0", k=2,
                             seconds=500)
        candidates = confirmed_calls(inferred, "my_max")
        for candidate in candidates:
            print(f"# Step my_max({candidate}) on the model to its return and check the contract there.\n")
            started = await ask(client, "start", source=PROGRAM, entry=f"my_max({candidate})", engine="neural")
            session = started.split()[1]
            await ask(client, "step", session=session, action="step_return")
            broken = await ask(client, "evaluate", session=session, expression=CONTRACT) == "False"
            if broken:
                print("# The model says the contract fails. Check it against the real run (the oracle, sandboxed).\n")
                await ask(client, "compare", session=session)
            await ask(client, "end", session=session)
            if not broken:
                continue
            real = (await ask(client, "start", source=PROGRAM, entry=f"my_max({candidate})", engine="oracle")).split()[1]
            await ask(client, "step", session=real, action="step_return")
            confirmed = await ask(client, "evaluate", session=real, expression=CONTRACT) == "False"
            await ask(client, "end", session=real)
            if confirmed:
                print(f"# Found and confirmed: my_max({candidate}) returns 0, which is not an element of its list.")
                return
        print("# No confirmed candidate broke the contract." if candidates else "# The model confirmed no candidate.")


if __name__ == "__main__":
    anyio.run(main)
