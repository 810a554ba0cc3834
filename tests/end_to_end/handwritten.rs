//! Plugins written by hand in WebAssembly text, for what a Rust guest cannot
//! do: define several memories, grow a table at will, or hand the host the
//! same bytes many times over. Each is built into a component against
//! `wit/released/0.2.0` (wit-component, as `cargo build` would), then run in the host.

use std::sync::Arc;

use skill_host::session::{SessionHeader, SessionLog, SharedSession};
use skill_host::{ContractVersion, Decision, HostError, Plugin, SandboxLimits, SkillRegistry, StepInput, run_step};
use wit_parser::Resolve;

use crate::common::repo_root;

const MIB: usize = 1024 * 1024;
/// A page of wasm memory.
const PAGE: usize = 64 * 1024;

/// What a hand-written plugin adds to the minimal one.
#[derive(Default)]
pub(crate) struct Guest {
    /// Imports, as core-module `import` fields.
    imports: &'static str,
    /// Definitions beside the exported memory (more memories, tables).
    definitions: String,
    /// The body of `pre-step`, before it returns `ok`; locals `$i` and `$p`.
    pre_step: String,
    /// The body of `invoke`, returning the address of its result; empty for
    /// `err("Error: x")`.
    invoke: String,
}

impl Guest {
    /// The component: a core module that answers every export of the
    /// `skill-plugin` world with fixed values (a 4 MiB memory, a bump
    /// allocator at its end), with the WIT embedded, encoded by wit-component.
    pub(crate) fn component(&self) -> Vec<u8> {
        self.component_at("0.2.0")
    }

    /// The same component, built against `wit/released/0.2.0` with its
    /// package version changed to `version` (a contract this host may not
    /// run; its plugin interface is 0.2.0's too).
    pub(crate) fn component_at(&self, version: &str) -> Vec<u8> {
        // The 0.2.0 world as released: its added messages carry source texts
        // (the `aliased` plugin's many blocks), which 0.3.0 cannot say.
        let released = repo_root().join("wit/released/0.2.0/world.wit");
        let wit = std::fs::read_to_string(&released).expect("wit/released/0.2.0/world.wit reads");
        let wit = wit.replace("package dsh:skill@0.2.0;", &format!("package dsh:skill@{version};"));
        assert!(
            wit.contains(&format!("package dsh:skill@{version};")),
            "{} is not dsh:skill@0.2.0",
            released.display()
        );
        self.encoded(&wit, version)
    }

    /// The same component built against `wit/released/0.3.0` as released:
    /// its imports may use the typed added messages, through the host's
    /// 0.3.0 conversions.
    pub(crate) fn component_0_3_0(&self) -> Vec<u8> {
        let released = repo_root().join("wit/released/0.3.0/world.wit");
        let wit = std::fs::read_to_string(released).expect("wit/released/0.3.0/world.wit reads");
        self.encoded(&wit, ContractVersion::V0_3_0.number())
    }

    /// The module, its plugin exports at `version`, encoded with `wit` embedded.
    fn encoded(&self, wit: &str, version: &str) -> Vec<u8> {
        let Guest { imports, definitions, pre_step, invoke } = self;
        let invoke = if invoke.is_empty() {
            r#"(i32.store8 (i32.const 72) (i32.const 1)) (i32.store (i32.const 76) (i32.const 140))
    (i32.store (i32.const 80) (i32.const 8)) (i32.const 72)"#
        } else {
            invoke
        };
        let wat = format!(
            r#"(module
  {imports}
  (memory $mem (export "memory") 64)
  {definitions}
  (global $heap (mut i32) (i32.const 0x3F8000))
  (data (memory $mem) (i32.const 100) "skill")
  (data (memory $mem) (i32.const 110) "by hand")
  (data (memory $mem) (i32.const 120) "{{}}")
  (data (memory $mem) (i32.const 140) "Error: x")
  (data (memory $mem) (i32.const 200) "{{\"kind\":\"plugin\",\"plugin\":\"dsh-tool-skill\"}}")
  (func (export "cabi_realloc") (param i32 i32 i32 i32) (result i32) (local $r i32)
    (local.set $r (i32.and (i32.add (global.get $heap) (i32.const 7)) (i32.const -8)))
    (global.set $heap (i32.add (local.get $r) (local.get 3)))
    (local.get $r))
  (func (export "dsh:skill/plugin@0.2.0#configure") (param i32 i32) (result i32)
    (i32.store8 (i32.const 16) (i32.const 0)) (i32.const 16))
  (func (export "dsh:skill/plugin@0.2.0#definition") (result i32)
    (i32.store (i32.const 32) (i32.const 100)) (i32.store (i32.const 36) (i32.const 5))
    (i32.store (i32.const 40) (i32.const 110)) (i32.store (i32.const 44) (i32.const 7))
    (i32.store (i32.const 48) (i32.const 120)) (i32.store (i32.const 52) (i32.const 2))
    (i32.const 32))
  (func (export "dsh:skill/plugin@0.2.0#pre-step") (param i64 i32 i64 i64 i32 i32 i32 i32) (result i32)
    (local $i i32) (local $p i32)
    {pre_step}
    (i32.store8 (i32.const 64) (i32.const 0)) (i32.const 64))
  (func (export "dsh:skill/plugin@0.2.0#invoke") (param i32 i32) (result i32)
    {invoke})
  (func (export "dsh:skill/plugin@0.2.0#system-prompt") (result i32)
    (i32.store8 (i32.const 88) (i32.const 0)) (i32.store (i32.const 92) (i32.const 0))
    (i32.store (i32.const 96) (i32.const 0)) (i32.const 88))
  (func (export "dsh:skill/plugin@0.2.0#expand") (param i32 i32) (result i32)
    (i32.store8 (i32.const 88) (i32.const 0)) (i32.store (i32.const 92) (i32.const 0))
    (i32.store (i32.const 96) (i32.const 0)) (i32.const 88))
)"#
        );
        let wat = wat.replace("dsh:skill/plugin@0.2.0#", &format!("dsh:skill/plugin@{version}#"));
        let mut module = wat::parse_str(&wat).expect("the hand-written module parses");
        let mut resolve = Resolve::new();
        let package = resolve.push_str("world.wit", wit).expect("wit/ parses");
        let world = resolve.select_world(&[package], Some("skill-plugin")).expect("wit/ has the skill-plugin world");
        wit_component::embed_component_metadata(&mut module, &resolve, world, wit_component::StringEncoding::UTF8)
            .expect("the WIT embeds");
        wit_component::ComponentEncoder::default()
            .module(&module)
            .expect("the module has the world's shape")
            .validate(true)
            .encode()
            .expect("the component encodes")
    }

    /// Loads the plugin under `limits` and runs one pre-step.
    fn step(&self, limits: SandboxLimits) -> Result<(), HostError> {
        Self::step_of(&self.component(), limits)
    }

    /// Runs one pre-step of `component` under `limits`.
    fn step_of(component: &[u8], limits: SandboxLimits) -> Result<(), HostError> {
        let plugin = Plugin::new(component, "{}", limits)?;
        let registry = Arc::new(SkillRegistry::new());
        let session = SharedSession::new(SessionLog::in_memory(SessionHeader::new(None)));
        run_step(&plugin, &registry, &session, &StepInput::default(), Decision::Enter(vec![])).map(drop)
    }
}

fn memory_cap(bytes: usize) -> SandboxLimits {
    SandboxLimits { memory_bytes: bytes, ..SandboxLimits::default() }
}

/// `count` more memories, each filled to `pages` pages by the pre-step.
fn memories(count: usize, pages: usize) -> Guest {
    let definitions = (0..count).map(|k| format!("(memory $m{k} 1)")).collect::<Vec<_>>().join("\n");
    let pre_step = (0..count)
        .map(|k| format!("(drop (memory.grow $m{k} (i32.const {}))) (memory.fill $m{k} (i32.const 0) (i32.const 1) (i32.const {}))", pages - 1, pages * PAGE))
        .collect::<Vec<_>>()
        .join("\n");
    Guest { definitions, pre_step, ..Guest::default() }
}

#[test]
fn memories_share_one_cap() {
    // 4 MiB + 2 × 12 MiB fits in 32 MiB; a third 12 MiB does not.
    let twelve_mib = 12 * MIB / PAGE;
    memories(2, twelve_mib).step(memory_cap(32 * MIB)).expect("two memories within the cap");
    let error = memories(3, twelve_mib).step(memory_cap(32 * MIB)).unwrap_err();
    assert!(matches!(error, HostError::MemoryLimit { call: "pre-step", .. }), "{error:?}");
    assert_eq!(error.to_string(), "plugin call `pre-step` exceeded its memory cap of 32 MiB");
    // Memories the module starts with count too: 4 + 2 × 6.25 MiB is over 16.
    let at_start =
        |pages: usize| Guest { definitions: format!("(memory $a {pages}) (memory $b {pages})"), ..Guest::default() };
    at_start(50).step(memory_cap(16 * MIB)).expect("4 + 2 × 3.1 MiB at start");
    let error = at_start(100).step(memory_cap(16 * MIB)).unwrap_err();
    assert_eq!(error.to_string(), "plugin call `configure` exceeded its memory cap of 16 MiB");
}

#[test]
fn a_table_counts_against_the_memory_cap() {
    // A table element costs the host a pointer: 8 bytes.
    let table = |elements: usize| Guest {
        definitions: "(table $t 0 funcref)".to_owned(),
        pre_step: format!("(drop (table.grow $t (ref.null func) (i32.const {elements})))"),
        ..Guest::default()
    };
    // Beside the 4 MiB memory: 10 MiB of table fits in 16 MiB, 14 MiB does
    // not (though it would alone), nor 512 MiB.
    table(10 * MIB / 8).step(memory_cap(16 * MIB)).expect("4 + 10 MiB within the cap");
    for elements in [14 * MIB / 8, 64 * MIB] {
        let error = table(elements).step(memory_cap(16 * MIB)).unwrap_err();
        assert_eq!(error.to_string(), "plugin call `pre-step` exceeded its memory cap of 16 MiB");
    }
}

/// A pre-step that decides one catalog of `blocks` content blocks, each the
/// same 1 MiB of text: `blocks` MiB for the host to copy out of 1 MiB of guest.
pub(crate) fn aliased(blocks: usize) -> Guest {
    Guest {
        imports: r#"(import "dsh:skill/step@0.2.0" "decide" (func $decide (param i32 i32)))"#,
        pre_step: format!(
            r#"(memory.fill (i32.const 0x100000) (i32.const 120) (i32.const 0x100000))
    (local.set $i (i32.const 0))
    (block $done (loop $next
      (br_if $done (i32.ge_u (local.get $i) (i32.const {blocks})))
      (local.set $p (i32.add (i32.const 0x200000) (i32.mul (local.get $i) (i32.const 12))))
      (i32.store8 (local.get $p) (i32.const 0))
      (i32.store offset=4 (local.get $p) (i32.const 0x100000))
      (i32.store offset=8 (local.get $p) (i32.const 0x100000))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $next)))
    (i32.store8 (i32.const 0x3F0000) (i32.const 1))
    (i32.store offset=4 (i32.const 0x3F0000) (i32.const 200))
    (i32.store offset=8 (i32.const 0x3F0000) (i32.const 43))
    (i32.store offset=12 (i32.const 0x3F0000) (i32.const 0x200000))
    (i32.store offset=16 (i32.const 0x3F0000) (i32.const {blocks}))
    (call $decide (i32.const 0x3F0000) (i32.const 1))"#
        ),
        ..Guest::default()
    }
}

#[test]
fn what_one_import_call_copies_out_is_bounded_by_the_memory_cap() {
    // 100 MiB from 4 MiB of guest memory: stopped while the host copies it.
    let error = aliased(100).step(memory_cap(64 * MIB)).unwrap_err();
    assert_eq!(
        error.to_string(),
        "plugin call `pre-step` trapped: too much data is being copied between the host and the guest: \
         fuel allocated for hostcalls has been exhausted"
    );
    // Under a larger cap the copy is made, and the output caps refuse it.
    let error = aliased(100).step(memory_cap(256 * MIB)).unwrap_err();
    assert_eq!(
        error.to_string(),
        "plugin call `pre-step` returned invalid output: its texts add up to more than the cap of 33554432 bytes per call \
         (at added message 1's content block 32)"
    );
}

/// A 0.3.0 pre-step that decides one typed added message: the bytes of
/// `decided-message::added` at 0x3F0000 (44 bytes: the case at 0, the
/// `added-source` case at 4 and its payload at 8, the text at 36), written
/// by `source` (WAT stores at that address), the text "t" at 330.
fn typed(source: &str) -> Guest {
    Guest {
        imports: r#"(import "dsh:skill/step@0.3.0" "decide" (func $decide (param i32 i32)))"#,
        definitions: r#"(data (memory $mem) (i32.const 300) "Bad Name") (data (memory $mem) (i32.const 330) "t")"#
            .to_owned(),
        pre_step: format!(
            r#"(i32.store8 (i32.const 0x3F0000) (i32.const 1))
    {source}
    (i32.store offset=36 (i32.const 0x3F0000) (i32.const 330))
    (i32.store offset=40 (i32.const 0x3F0000) (i32.const 1))
    (call $decide (i32.const 0x3F0000) (i32.const 1))"#
        ),
        ..Guest::default()
    }
}

/// What the types of 0.3.0 cannot say is checked on the source the host
/// writes, through the real lift of `step.decide`: a name outside the
/// grammar is refused as a 0.2.0 plugin's source text is, and a record
/// whose written source would pass the cap is refused by its length.
#[test]
fn a_0_3_0_plugins_typed_records_are_checked_as_their_written_sources() {
    let invocation = typed(
        r#"(i32.store8 offset=4 (i32.const 0x3F0000) (i32.const 3))
    (i32.store offset=8 (i32.const 0x3F0000) (i32.const 300))
    (i32.store offset=12 (i32.const 0x3F0000) (i32.const 8))"#,
    );
    let component = invocation.component_0_3_0();
    let version = Plugin::new(&component, "{}", SandboxLimits::default()).unwrap().contract_version();
    assert_eq!(version, ContractVersion::V0_3_0);
    assert_eq!(
        Guest::step_of(&component, SandboxLimits::default()).unwrap_err().to_string(),
        "plugin call `pre-step` returned invalid output: an added message has source \
         {\"form\":\"instructions\",\"kind\":\"skill-invocation\",\"name\":\"Bad Name\"}; the plugin may only write \
         {\"kind\":\"plugin\",\"plugin\":\"dsh-tool-skill\"} or a skill invocation"
    );
    // A skill-catalog whose coverage is 2.8 MiB of U+0001: 16.8 MiB written.
    let coverage = 2_936_012;
    let catalog = typed(&format!(
        r#"(memory.fill (i32.const 0x100000) (i32.const 1) (i32.const {coverage}))
    (i32.store8 offset=4 (i32.const 0x3F0000) (i32.const 1))
    (i32.store8 offset=20 (i32.const 0x3F0000) (i32.const 1))
    (i32.store offset=24 (i32.const 0x3F0000) (i32.const 0x100000))
    (i32.store offset=28 (i32.const 0x3F0000) (i32.const {coverage}))"#
    ));
    let written = r#"{"kind":"skill-catalog","form":"catalog","entries":[],"coverage":""}"#.len() + 6 * coverage;
    assert_eq!(
        Guest::step_of(&catalog.component_0_3_0(), SandboxLimits::default()).unwrap_err().to_string(),
        format!(
            "plugin call `pre-step` returned invalid output: added message 1's source is {written} bytes, \
             over the cap of 16777216 bytes per text"
        )
    );
}

/// A 0.4.0 `invoke` that reads the file `a.md` of skill `skill` through
/// `registry.read-skill-file` (when `reads`), then returns the file `path`
/// as its value: `result<tool-success>` at 0x3F0000 (the `ok` case at 0,
/// `tool-value::file` at 4, the file's name, provider, path and content at
/// 8 to 40, the text at 48, no load recorded at 56).
fn files(reads: bool, path: &str) -> Guest {
    let read = if reads {
        "(call $read (i32.const 100) (i32.const 5) (i32.const 160) (i32.const 4) (i32.const 0x3F1000))"
    } else {
        ""
    };
    Guest {
        imports: r#"(import "dsh:skill/registry@0.4.0" "read-skill-file" (func $read (param i32 i32 i32 i32 i32)))"#,
        definitions: format!(
            r#"(data (memory $mem) (i32.const 160) "a.md") (data (memory $mem) (i32.const 170) "{path}")"#
        ),
        invoke: format!(
            r#"{read}
    (i32.store8 (i32.const 0x3F0000) (i32.const 0))
    (i32.store8 offset=4 (i32.const 0x3F0000) (i32.const 2))
    (i32.store offset=8 (i32.const 0x3F0000) (i32.const 100)) (i32.store offset=12 (i32.const 0x3F0000) (i32.const 5))
    (i32.store offset=16 (i32.const 0x3F0000) (i32.const 110)) (i32.store offset=20 (i32.const 0x3F0000) (i32.const 7))
    (i32.store offset=24 (i32.const 0x3F0000) (i32.const 170)) (i32.store offset=28 (i32.const 0x3F0000) (i32.const {len}))
    (i32.store offset=32 (i32.const 0x3F0000) (i32.const 110)) (i32.store offset=36 (i32.const 0x3F0000) (i32.const 7))
    (i32.store offset=48 (i32.const 0x3F0000) (i32.const 110)) (i32.store offset=52 (i32.const 0x3F0000) (i32.const 7))
    (i32.store8 offset=56 (i32.const 0x3F0000) (i32.const 0))
    (i32.const 0x3F0000)"#,
            len = path.len()
        ),
        ..Guest::default()
    }
}

/// A plugin's file value names a file the registry read as text for the
/// same call, or the host refuses it (docs/spec.md §8.5): one that read
/// nothing, or read `a.md` and claims another path, is refused; one that
/// claims what it read is accepted.
#[test]
fn a_file_value_the_registry_did_not_read_for_the_call_is_refused() {
    use skill_host::providers::memory::{LoadOutcome, MemoryProvider, MemorySkill};
    let fields = serde_json::json!({"name": "skill", "description": "S.", "content": "Body.", "files": {"a.md": "A"}});
    let skill = MemorySkill { fields: fields.as_object().unwrap().clone(), loaded: LoadOutcome::AsListed };
    let provider = MemoryProvider::new("by hand".to_owned(), true, None, vec![skill]).unwrap();
    let registry = Arc::new(SkillRegistry::new());
    registry.register_provider(Arc::new(provider));
    let invoke = |guest: Guest, path: &str| {
        let component = guest.encoded(&std::fs::read_to_string(repo_root().join("wit/world.wit")).unwrap(), "0.4.0");
        let plugin = Plugin::new(&component, "{}", SandboxLimits::default()).unwrap();
        assert_eq!(plugin.contract_version(), ContractVersion::V0_4_0);
        let arguments = serde_json::json!({"name": "skill", "path": path}).to_string();
        plugin.invoke(&registry, None, &arguments).map(|outcome| outcome.text().to_owned())
    };
    let refused = |path: &str| {
        format!(
            "plugin call `invoke` returned invalid output: the value is file \"{path}\" of skill \"skill\", which the registry did not read for this call"
        )
    };
    assert_eq!(invoke(files(false, "a.md"), "a.md").unwrap_err().to_string(), refused("a.md"));
    assert_eq!(invoke(files(true, "../../etc/passwd"), "a.md").unwrap_err().to_string(), refused("../../etc/passwd"));
    assert_eq!(invoke(files(true, "b.md"), "b.md").unwrap_err().to_string(), refused("b.md"));
    assert_eq!(invoke(files(true, "a.md"), "a.md").unwrap(), "by hand");
}
