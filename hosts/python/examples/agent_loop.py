"""A twenty-line agent loop on the Python host (shown in README.md; run by tests/test_example.py).
`model` stands in for a chat model: it asks for the skill the catalog lists, then answers."""
import sys
from dsh_skill import Enter, MemoryProvider, Plugin, SessionLog, SkillRegistry, record_tool_result, run_step, user_message

def model(session: SessionLog) -> dict:
    seen = [event["data"] for event in session.events]
    if not any("tool-result" in str(data) for data in seen):
        return {"tool": "skill", "arguments": {"name": "release-notes"}}
    return {"text": "Done: followed the release-notes skill."}

plugin = Plugin.create()  # the packaged component, configured with {}
registry = SkillRegistry()
registry.register_provider(MemoryProvider.of("memory", [
    {"name": "release-notes", "description": "Write release notes.", "content": "List every change since the last tag."}]))
session = SessionLog.open(sys.argv[1], cwd="/workspace") if len(sys.argv) > 1 else SessionLog.in_memory("/workspace")
proposal = Enter([user_message({"kind": "user"}, "Write the release notes.")])
for turn in range(4):
    run_step(plugin, registry, session, proposal, cwd="/workspace")  # the catalog, when it changed
    reply = model(session)
    if "tool" not in reply:
        print(reply["text"]); break
    outcome = plugin.invoke(registry, reply["arguments"], cwd="/workspace")
    record_tool_result(session, outcome)  # the model sees outcome.model_text
    proposal = Enter([])
