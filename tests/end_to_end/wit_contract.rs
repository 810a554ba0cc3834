//! The WIT as a published contract: the world the built component declares
//! (decoded from `skill_host::EMBEDDED_PLUGIN`, as `wasm-tools component wit`
//! would print it) is the `skill-plugin` world of `wit/`, interface by
//! interface. A WIT edit the component was not rebuilt with, or a signature
//! the guest changed on its own, fails here.

use std::collections::BTreeMap;

use wit_component::{DecodedWasm, WitPrinter};
use wit_parser::{InterfaceId, Resolve, WorldId, WorldItem, WorldKey};

use crate::common::repo_root;

/// The contract's interfaces are named `dsh:skill/<name>@<version>`.
const PACKAGE: &str = "dsh:skill/";

/// `wit/` parsed, and its `skill-plugin` world.
fn published() -> (Resolve, WorldId) {
    let mut resolve = Resolve::new();
    let (package, _) = resolve.push_dir(repo_root().join("wit")).expect("wit/ parses");
    let world = resolve.select_world(&[package], Some("skill-plugin")).expect("wit/ has the skill-plugin world");
    (resolve, world)
}

/// The world the embedded component declares.
fn embedded() -> (Resolve, WorldId) {
    match wit_component::decode(skill_host::EMBEDDED_PLUGIN).expect("the embedded plugin is a component") {
        DecodedWasm::Component(resolve, world) => (resolve, world),
        DecodedWasm::WitPackage(..) => panic!("the embedded plugin is a WIT package, not a component"),
    }
}

/// The world's imports or exports that belong to this package, by their
/// qualified name (`dsh:skill/registry@0.2.0`), each interface printed
/// without doc comments. WASI imports (Rust's std) are not part of the contract.
fn interfaces<'a>(
    resolve: &Resolve,
    items: impl IntoIterator<Item = (&'a WorldKey, &'a WorldItem)>,
) -> BTreeMap<String, String> {
    items
        .into_iter()
        .filter_map(|(key, item)| match (key, item) {
            (WorldKey::Interface(id), WorldItem::Interface { .. }) => {
                let name = resolve.id_of(*id)?;
                name.starts_with(PACKAGE).then(|| (name, print(resolve, *id)))
            }
            _ => None,
        })
        .collect()
}

/// One interface's WIT, normalised to what the contract fixes: its items
/// (types, `use`s, functions) as a sorted set, since a decoded component
/// lists them in the order its functions first need them. Field, case and
/// parameter order inside an item is kept: that is part of the ABI.
fn print(resolve: &Resolve, id: InterfaceId) -> String {
    let mut printer = WitPrinter::default();
    printer.emit_docs(false);
    printer.print_interface(resolve, id).expect("the interface prints");
    let text = printer.output.to_string();
    let mut items: Vec<String> = text.trim().split("\n\n").map(sorted_use).collect();
    items.sort();
    items.join("\n\n")
}

/// `use iface.{b, a};` with its names sorted.
fn sorted_use(item: &str) -> String {
    match (item.strip_prefix("use "), item.find(".{"), item.strip_suffix("};")) {
        (Some(_), Some(open), Some(body)) => {
            let mut names: Vec<&str> = body[open + 2..].split(", ").collect();
            names.sort_unstable();
            format!("{}{}}};", &item[..open + 2], names.join(", "))
        }
        _ => item.to_owned(),
    }
}

/// The world's shape: (imports, exports), each a map from interface name to its printed WIT.
fn shape(resolve: &Resolve, world: WorldId) -> (BTreeMap<String, String>, BTreeMap<String, String>) {
    let world = &resolve.worlds[world];
    (interfaces(resolve, &world.imports), interfaces(resolve, &world.exports))
}

#[test]
fn the_embedded_component_declares_the_published_world() {
    let (published, published_world) = published();
    let (embedded, embedded_world) = embedded();
    let (published_imports, published_exports) = shape(&published, published_world);
    let (embedded_imports, embedded_exports) = shape(&embedded, embedded_world);

    // `import registry; import session; import step; export plugin;`
    // elaborated with the interface they all use.
    let names = |map: &BTreeMap<String, String>| map.keys().cloned().collect::<Vec<_>>();
    assert_eq!(
        names(&published_imports),
        ["dsh:skill/registry@0.4.0", "dsh:skill/session@0.4.0", "dsh:skill/step@0.4.0", "dsh:skill/types@0.4.0"]
    );
    assert_eq!(names(&published_exports), ["dsh:skill/plugin@0.4.0"]);

    assert_eq!(names(&embedded_imports), names(&published_imports), "the component's imports");
    assert_eq!(names(&embedded_exports), names(&published_exports), "the component's exports");
    for (name, wit) in published_imports.iter().chain(&published_exports) {
        let built = embedded_imports.get(name).or_else(|| embedded_exports.get(name)).unwrap();
        assert_eq!(built, wit, "{name}: the component was built from another WIT than wit/ holds");
    }
}

#[test]
fn a_changed_signature_is_caught() {
    // The comparison above must be able to fail: the same WIT with one
    // parameter renamed prints differently.
    let (resolve, world) = published();
    let (imports, _) = shape(&resolve, world);
    let registry = &imports["dsh:skill/registry@0.4.0"];
    assert!(registry.contains("snapshot: func(known: option<u64>)"), "{registry}");
    let mut changed = Resolve::new();
    let text = std::fs::read_to_string(repo_root().join("wit/world.wit"))
        .unwrap()
        .replace("known: option<u64>", "known: option<u32>");
    let package = changed.push_str("world.wit", &text).unwrap();
    let changed_world = changed.select_world(&[package], Some("skill-plugin")).unwrap();
    let (changed_imports, _) = shape(&changed, changed_world);
    assert_ne!(&changed_imports["dsh:skill/registry@0.4.0"], registry);
}
