"""Drives `skill-host mcp` with the official MCP Python SDK (`mcp` on PyPI),
as a client this project did not write: the Rust test
(tests/end_to_end/mcp.rs) starts this script, and compares the transcript it
prints (one JSON document on stdout) with what `skill-host load` prints.

Usage: client.py PLAN.json, where the plan names the server: its command
line and environment (stdio: the client starts it), or the `url` of one
already listening (streamable HTTP); then the calls to make and the file to
change for the list_changed check. Every step is bounded in time.
"""

import json
import os
import sys
import time

import anyio
import mcp_types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

STEP_TIMEOUT = 60


def error_of(error: Exception) -> dict:
    data = getattr(error, "error", None)
    if data is not None:
        return {"code": data.code, "message": data.message}
    return {"code": None, "message": str(error)}


async def raw(session: ClientSession, method: str, params: dict | None) -> dict:
    """A request the SDK has no helper for, through the session's own channel."""
    try:
        with anyio.fail_after(STEP_TIMEOUT):
            return {"result": await session._dispatcher.send_raw_request(method, params, {})}
    except MCPError as error:
        return {"error": error_of(error)}


async def run(plan: dict) -> dict:
    transcript: dict = {}
    notifications: list[str] = []
    got_tools_changed = anyio.Event()

    async def on_message(message) -> None:
        if isinstance(message, Exception):
            notifications.append(f"exception: {message}")
            return
        method = getattr(getattr(message, "root", message), "method", None) or type(message).__name__
        notifications.append(method)
        if method == "notifications/tools/list_changed":
            got_tools_changed.set()

    if "url" in plan:
        transport = streamable_http_client(plan["url"])
    else:
        server = StdioServerParameters(command=plan["command"][0], args=plan["command"][1:], env=plan["env"])
        transport = stdio_client(server)
    async with transport as (read, write):
        async with ClientSession(read, write, message_handler=on_message) as session:
            started = time.perf_counter()
            with anyio.fail_after(STEP_TIMEOUT):
                init = await session.initialize()
                tools = await session.list_tools()
            transcript["initialize_to_tools_ms"] = (time.perf_counter() - started) * 1000
            transcript["protocol_version"] = init.protocol_version
            transcript["capabilities"] = init.capabilities.model_dump(mode="json", by_alias=True, exclude_none=True)
            transcript["tools"] = [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in tools.tools]

            # Files swapped for symbolic links once the server has listed.
            for swap in plan.get("swap", []):
                os.rename(swap["path"], swap["path"] + ".listed")
                os.symlink(swap["target"], swap["path"])

            calls = []
            for arguments in plan.get("calls", []):
                with anyio.fail_after(STEP_TIMEOUT):
                    result = await session.call_tool("skill", arguments)
                calls.append({
                    "arguments": arguments,
                    "isError": bool(result.is_error),
                    "text": [block.text for block in result.content if getattr(block, "type", "") == "text"],
                })
            transcript["calls"] = calls
            try:
                with anyio.fail_after(STEP_TIMEOUT):
                    await session.call_tool("no-such-tool", {})
                transcript["unknown_tool"] = {"error": None}
            except MCPError as error:
                transcript["unknown_tool"] = {"error": error_of(error)}

            with anyio.fail_after(STEP_TIMEOUT):
                prompts = await session.list_prompts()
            transcript["prompts"] = [p.model_dump(mode="json", by_alias=True, exclude_none=True) for p in prompts.prompts]
            got = []
            for name in plan.get("prompts", []):
                try:
                    with anyio.fail_after(STEP_TIMEOUT):
                        prompt = await session.get_prompt(name)
                    got.append({"name": name, "messages": [
                        {"role": m.role, "text": m.content.text} for m in prompt.messages
                    ]})
                except MCPError as error:
                    got.append({"name": name, "error": error_of(error)})
            transcript["get_prompts"] = got

            # The Skills extension: no helper in the SDK, so raw requests.
            pages = []
            cursor = None
            while True:
                page = await raw(session, "skills/list", {"cursor": cursor} if cursor else {})
                pages.append(page)
                cursor = page.get("result", {}).get("nextCursor")
                if not cursor or len(pages) > 50:
                    break
            transcript["skills_pages"] = pages
            transcript["skills_get"] = [await raw(session, "skills/get", {"uri": uri}) for uri in plan.get("skills_get", [])]

            reads = []
            for uri in plan.get("reads", []):
                try:
                    with anyio.fail_after(STEP_TIMEOUT):
                        result = await session.read_resource(uri)
                    reads.append({"uri": uri, "contents": [
                        c.model_dump(mode="json", by_alias=True, exclude_none=True) for c in result.contents
                    ]})
                except MCPError as error:
                    reads.append({"uri": uri, "error": error_of(error)})
            transcript["reads"] = reads

            # A file rewritten unchanged: nothing to notify.
            touch = plan.get("touch")
            if touch:
                with open(touch["path"], "w", encoding="utf-8") as file:
                    file.write(touch["text"])
                await anyio.sleep(1.5)
            # A change the catalog shows: the server notifies it.
            change = plan.get("change")
            if change:
                with open(change["path"], "w", encoding="utf-8") as file:
                    file.write(change["text"])
                with anyio.move_on_after(change.get("timeout", 20)):
                    await got_tools_changed.wait()
                # Whatever else arrives with it.
                await anyio.sleep(0.5)
                with anyio.fail_after(STEP_TIMEOUT):
                    tools = await session.list_tools()
                transcript["tools_after_change"] = [t.description for t in tools.tools]
            transcript["notifications"] = notifications
    return transcript


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as file:
        plan = json.load(file)
    transcript = anyio.run(run, plan)
    json.dump(transcript, sys.stdout)


if __name__ == "__main__":
    main()
