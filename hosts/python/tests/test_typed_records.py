"""0.3.0's typed added messages (spec §8.5), as skill-host's
host-runner/src/plugin/tests/records.rs has them: the writer against
rules/src/record.rs's own expectations, every source rules/records.json
accepts sent as its typed record and written in its canonical form, and a
typed record the grammar refuses refused with the text its source gets."""

from __future__ import annotations

import unittest
from typing import Any

from wasmtime.component import Variant

from dsh_skill import records
from dsh_skill.errors import HostError
from dsh_skill.imports import CallContext, StepState, record, written
from dsh_skill.jsonvalue import Ordered, parse, stringify
from dsh_skill.output import OutputCheck, OutputLimits
from dsh_skill.plugin import Enter, added_message, apply_decision, user_message
from dsh_skill.records import read_record
from test_records import PREFIX, TABLE, invalid, source_text

#: One record of each form and its source, from rules/src/record.rs's tests.
EXAMPLES: list[tuple[records.Record, str]] = [
    (records.Catalog(), '{"kind":"plugin","plugin":"dsh-tool-skill"}'),
    (
        records.SkillCatalog(
            True,
            (records.CatalogEntry("a", 'x < "y"\n'),),
            "Catalog coverage: 1 of 2 skills listed.",
        ),
        '{"kind":"skill-catalog","form":"catalog","update":true,"entries":[{"name":"a","description":"x < \\"y\\"\\n"}],'
        '"coverage":"Catalog coverage: 1 of 2 skills listed."}',
    ),
    (records.SkillCatalog(), '{"kind":"skill-catalog","form":"catalog","entries":[]}'),
    (
        records.CatalogUpdate(("c", "d")),
        '{"kind":"plugin","plugin":"dsh-tool-skill","form":"catalog-update","removed":["c","d"]}',
    ),
    (records.Invocation("pdf"), '{"kind":"skill-invocation","name":"pdf","form":"instructions"}'),
    (records.InvocationNote(), '{"kind":"skill-invocation","form":"not-loaded"}'),
    (
        records.ChangedNotice("a", "runtime", "sha256:2"),
        '{"bodyDigest":"sha256:2","form":"changed","kind":"skill-notice","name":"a","provider":"runtime"}',
    ),
    (records.ChangedNotice("a", "p"), '{"form":"changed","kind":"skill-notice","name":"a","provider":"p"}'),
    (records.GoneNotice("a"), '{"form":"gone","kind":"skill-notice","name":"a"}'),
    (records.ReloadNotice(("a", "b")), '{"form":"reload","kind":"skill-notice","names":["a","b"]}'),
]

#: Each form's keys in the order the plugin has always written them
#: (``Record::to_json``): the reference's for catalogs and invocations,
#: sorted for notices.
KEY_ORDER = {
    "catalog": ["kind", "plugin"],
    "skill-catalog": ["kind", "form", "update", "entries", "coverage"],
    "catalog-update": ["kind", "plugin", "form", "removed"],
    "invocation": ["kind", "name", "form"],
    "invocation-note": ["kind", "form"],
}


def canonical(source: dict[str, Any]) -> str:
    """A parsed source in its canonical form, written by the generic JSON
    writer (not the record writer): keys in :data:`KEY_ORDER`, else sorted."""
    order = KEY_ORDER.get(read_record(source).record or "")
    if order is None:
        return stringify(source)
    written_in_order = Ordered((key, source[key]) for key in order if key in source)
    if "entries" in source:
        written_in_order["entries"] = [Ordered(name=entry["name"], description=entry["description"]) for entry in source["entries"]]
    return stringify(written_in_order)


def typed(source: dict[str, Any]) -> Variant:
    """A parsed source as a 0.3.0 plugin sends it: an ``added-source``, in
    wasmtime-py's shape (the inverse of the host's writing)."""
    kind = read_record(source).record
    if kind == "catalog":
        return Variant("catalog")
    if kind == "skill-catalog":
        entries = [record(name=entry["name"], description=entry["description"]) for entry in source["entries"]]
        return Variant("skill-catalog", record(update="update" in source, entries=entries, coverage=source.get("coverage")))
    if kind == "catalog-update":
        return Variant("catalog-update", list(source["removed"]))
    if kind == "invocation":
        return Variant("invocation", source["name"])
    if kind == "invocation-note":
        return Variant("invocation-note")
    if kind == "changed-notice":
        return Variant("changed", record(name=source["name"], provider=source["provider"], body_digest=source.get("bodyDigest")))
    if kind == "gone-notice":
        return Variant("gone", source["name"])
    if kind == "reload-notice":
        return Variant("reload", list(source["names"]))
    raise AssertionError(f"not an accepted source: {stringify(source)}")


def changed(provider: str, digest: str | None) -> Variant:
    return Variant("changed", record(name="a", provider=provider, body_digest=digest))


FOREIGN = "; the plugin may only write {\"kind\":\"plugin\",\"plugin\":\"dsh-tool-skill\"} or a skill invocation"
NOT_A_NOTICE = ", which is not a changed, gone or reload notice"

#: Typed records the grammar refuses, and skill-host's text for each.
REFUSED: list[tuple[Variant, str]] = [
    (
        Variant("invocation", "Not A Name"),
        'an added message has source {"form":"instructions","kind":"skill-invocation","name":"Not A Name"}' + FOREIGN,
    ),
    (
        Variant("catalog-update", ["a", "a"]),
        'an added message has source {"form":"catalog-update","kind":"plugin","plugin":"dsh-tool-skill","removed":["a","a"]}' + FOREIGN,
    ),
    (
        Variant("skill-catalog", record(update=False, entries=[record(name="../x", description="d")], coverage=None)),
        'an added message has source {"entries":[{"description":"d","name":"../x"}],"form":"catalog","kind":"skill-catalog"}' + FOREIGN,
    ),
    (Variant("gone", "-bad"), 'an added skill notice has source {"form":"gone","kind":"skill-notice","name":"-bad"}' + NOT_A_NOTICE),
    (Variant("reload", []), 'an added skill notice has source {"form":"reload","kind":"skill-notice","names":[]}' + NOT_A_NOTICE),
    (
        Variant("reload", ["b", "a", "a"]),
        'an added skill notice has source {"form":"reload","kind":"skill-notice","names":["b","a","a"]}' + NOT_A_NOTICE,
    ),
    (
        changed("", None),
        'an added skill notice has source {"form":"changed","kind":"skill-notice","name":"a","provider":""}' + NOT_A_NOTICE,
    ),
    (
        changed("p", "x" * 129),
        'an added skill notice has source {"bodyDigest":"' + "x" * 129 + '","form":"changed","kind":"skill-notice","name":"a","provider":"p"}'
        + NOT_A_NOTICE,
    ),
]


def serde_escaped(text: str) -> str:
    """``text`` as serde_json writes a string, from its rules: `"`, `\\`,
    \\b \\f \\n \\r \\t, other C0 controls as \\u00XX in lower-case hex, the rest raw."""
    short = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
    return '"' + "".join(short.get(c, f"\\u{ord(c):04x}" if ord(c) < 0x20 else c) for c in text) + '"'


def step_of(*entries: Any) -> StepState:
    """A pre-step whose plugin decided ``entries`` through 0.3.0's ``step.decide``."""
    step = StepState([])
    CallContext(step=step).decide(list(entries))
    return step


def apply(step: StepState, text: str = "hello /pdf") -> Any:
    return apply_decision(Enter([user_message({"kind": "user"}, text)]), step, OutputCheck("pre-step", OutputLimits()))


class TypedRecords(unittest.TestCase):
    def test_each_record_is_written_as_the_plugin_has_always_written_it(self) -> None:
        for value, text in EXAMPLES:
            with self.subTest(text=text):
                self.assertEqual(records.to_json(value), text)
                self.assertEqual(canonical(parse(text)), text)

    def test_strings_are_escaped_as_serde_json_escapes_them(self) -> None:
        every = "".join(map(chr, range(0x100))) + "\u2028\ufffd\U0001f600"
        escaped = records.to_json(records.Invocation(every))
        self.assertEqual(escaped, '{"kind":"skill-invocation","name":' + serde_escaped(every) + ',"form":"instructions"}')
        self.assertIn('\\u001f !\\"', escaped)
        self.assertIn("~\x7f\x80", escaped, "U+007F and the C1 controls are written raw")
        self.assertIn("\\u0000\\u0001", escaped)
        self.assertIn("\\b\\t\\n\\u000b\\f\\r\\u000e", escaped)

    def test_every_accepted_source_sent_as_a_typed_record_is_written_in_its_canonical_form(self) -> None:
        accepted = [row for row in TABLE["sources"] if "accepted" in row]
        self.assertGreater(len(accepted), 20)
        for row in accepted:
            source = parse(source_text(row))
            with self.subTest(source=source_text(row)):
                message = written(record(source=typed(source), text="text"))
                self.assertEqual(message.source, canonical(source))
                self.assertEqual(stringify(parse(message.source)), stringify(source), "the same JSON value")
                self.assertEqual(read_record(parse(message.source)), read_record(source))
                kind, _name, data = added_message(message, invalid)
                self.assertEqual(kind, row["accepted"])
                self.assertEqual(data["content"], [{"type": "text", "text": "text"}])

    def test_a_typed_record_the_grammar_refuses_gets_the_text_of_its_source(self) -> None:
        for source, expected in REFUSED:
            with self.subTest(expected=expected):
                with self.assertRaises(HostError) as raised:
                    apply(step_of(record(source=source, text="text")))
                self.assertEqual(str(raised.exception), PREFIX + expected)

    def test_a_typed_decision_enters_as_its_written_sources(self) -> None:
        step = step_of(0, record(source=Variant("catalog"), text="the catalog"), record(source=Variant("invocation", "pdf"), text="PDF."))
        messages = apply(step).messages
        self.assertEqual([stringify(data["source"]) for data in messages[1:]], [
            '{"kind":"plugin","plugin":"dsh-tool-skill"}',
            '{"form":"instructions","kind":"skill-invocation","name":"pdf"}',
        ])
        self.assertEqual([data["content"] for data in messages[1:]], [
            [{"type": "text", "text": "the catalog"}],
            [{"type": "text", "text": "PDF."}],
        ])
        with self.assertRaises(HostError) as raised:
            apply(step_of(record(source=Variant("invocation", "pdf"), text="PDF.")), "no gesture")
        self.assertEqual(str(raised.exception), PREFIX + 'skill "pdf" was injected without a user\'s /pdf')

    def test_only_the_first_decision_is_kept_and_every_one_counted(self) -> None:
        step = StepState([])
        context = CallContext(step=step)
        context.decide([record(source=Variant("catalog"), text="first")])
        context.decide([record(source=Variant("gone", "-bad"), text="second")])
        self.assertEqual(step.decisions, 2)
        self.assertEqual([entry.source for entry in step.decided or []], ['{"kind":"plugin","plugin":"dsh-tool-skill"}'])


if __name__ == "__main__":
    unittest.main()
