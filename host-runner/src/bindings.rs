//! The one `bindgen!` over `../wit`: host-side types and traits for the
//! `skill-plugin` world.

wasmtime::component::bindgen!({
    path: "../wit",
    world: "skill-plugin",
    // Import functions return `wasmtime::Result`, so the host can end a call
    // (an abort) without the guest seeing a value.
    imports: { default: trappable },
});

pub use dsh::skill::{registry, session, step, types};
pub use exports::dsh::skill::plugin;
