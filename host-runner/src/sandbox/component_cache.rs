//! Precompiled components on disk, so a short-lived `skill-host` does not
//! compile the plugin on every start (compiling takes ~90 ms in a release
//! build; loading a precompiled copy, well under 1 ms).
//!
//! Loading precompiled code is `unsafe` in wasmtime: the file is trusted to
//! be what `Component::serialize` wrote. So a file is only loaded when
//! - it lives in a directory owned by this user and writable by no one else;
//! - its name carries the SHA-256 of the component and a hash of the engine's
//!   compatibility (wasmtime version and configuration);
//! - its contents match the SHA-256 recorded beside it when it was written.
//!
//! Anything else (missing, corrupt, foreign, stale) is ignored: the
//! component is compiled and the cache entry rewritten.
//!
//! Why not wasmtime's own cache (its `cache` feature): it trusts whatever
//! file sits under the entry's name in its directory, checking neither who
//! owns the directory nor a checksum of the bytes it deserializes, so a file
//! planted there would run as native code; it also brings a configuration
//! file format and compression this host does not need.

use std::fs;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

/// The default cache directory: `$SKILL_HOST_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/skill-host`, else `~/.cache/skill-host`.
pub fn default_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("SKILL_HOST_CACHE_DIR").filter(|dir| !dir.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME").filter(|dir| !dir.is_empty()) {
        return Some(PathBuf::from(dir).join("skill-host"));
    }
    std::env::var_os("HOME").filter(|home| !home.is_empty()).map(|home| PathBuf::from(home).join(".cache/skill-host"))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// The entry's file name for this component and engine.
fn entry_name(engine: &Engine, component: &[u8]) -> String {
    let mut hasher = DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut hasher);
    format!("{}-{:016x}.cwasm", hex(&Sha256::digest(component)), hasher.finish())
}

/// Whether `dir` is ours alone: owned by the user who owns a file we just
/// created there, and writable by neither group nor others.
fn is_private(dir: &Path) -> bool {
    let Ok(metadata) = fs::metadata(dir) else { return false };
    if !metadata.is_dir() || metadata.permissions().mode() & 0o022 != 0 {
        return false;
    }
    let Ok(probe) = tempfile::NamedTempFile::new_in(dir) else { return false };
    probe.as_file().metadata().is_ok_and(|ours| ours.uid() == metadata.uid())
}

/// Loads the component from the cache in `dir`, or compiles it and writes
/// the cache entry. Cache problems never fail the load: they cost a compile.
pub(crate) fn load(engine: &Engine, component: &[u8], dir: &Path) -> wasmtime::Result<Component> {
    let path = dir.join(entry_name(engine, component));
    let checksum_path = path.with_extension("sha256");
    if is_private(dir)
        && let (Ok(bytes), Ok(recorded)) = (fs::read(&path), fs::read_to_string(&checksum_path))
        && hex(&Sha256::digest(&bytes)) == recorded.trim()
        // SAFETY: the bytes are what `Component::serialize` wrote into a
        // directory only this user can write, for this exact component and
        // engine configuration, and unchanged since (the checksum matches).
        && let Ok(loaded) = unsafe { Component::deserialize(engine, &bytes) }
    {
        return Ok(loaded);
    }
    let compiled = Component::new(engine, component)?;
    // Best effort: a read-only home or a full disk only means no cache.
    let _ = store(dir, &path, &checksum_path, &compiled);
    Ok(compiled)
}

fn store(dir: &Path, path: &Path, checksum_path: &Path, compiled: &Component) -> std::io::Result<()> {
    fs::create_dir_all(dir)?;
    fs::set_permissions(dir, fs::Permissions::from_mode(0o700))?;
    if !is_private(dir) {
        return Ok(());
    }
    let bytes = compiled.serialize().map_err(std::io::Error::other)?;
    // Write, then rename: a reader never sees half a file.
    for (target, contents) in [(path, bytes.as_slice()), (checksum_path, hex(&Sha256::digest(&bytes)).as_bytes())] {
        let mut temporary = tempfile::NamedTempFile::new_in(dir)?;
        temporary.write_all(contents)?;
        temporary.persist(target).map_err(|error| error.error)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn engine() -> Engine {
        let mut config = wasmtime::Config::new();
        config.epoch_interruption(true);
        Engine::new(&config).unwrap()
    }

    /// The smallest valid component.
    const EMPTY_COMPONENT: &[u8] = b"\0asm\x0d\0\x01\0";

    #[test]
    fn a_second_load_reads_the_entry_the_first_wrote() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("cache");
        let engine = engine();
        load(&engine, EMPTY_COMPONENT, &cache).unwrap();
        let entry = cache.join(entry_name(&engine, EMPTY_COMPONENT));
        assert!(entry.exists() && entry.with_extension("sha256").exists());
        assert_eq!(fs::metadata(&cache).unwrap().permissions().mode() & 0o777, 0o700);
        load(&engine, EMPTY_COMPONENT, &cache).unwrap();
    }

    #[test]
    fn a_corrupt_entry_is_ignored_and_rewritten() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("cache");
        let engine = engine();
        load(&engine, EMPTY_COMPONENT, &cache).unwrap();
        let entry = cache.join(entry_name(&engine, EMPTY_COMPONENT));
        let good = fs::read(&entry).unwrap();
        fs::write(&entry, b"garbage that is not a component").unwrap();
        load(&engine, EMPTY_COMPONENT, &cache).unwrap();
        assert_eq!(fs::read(&entry).unwrap(), good, "the entry was rewritten");
    }

    #[test]
    fn a_directory_others_can_write_is_not_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("cache");
        fs::create_dir(&cache).unwrap();
        fs::set_permissions(&cache, fs::Permissions::from_mode(0o777)).unwrap();
        assert!(!is_private(&cache));
        fs::set_permissions(&cache, fs::Permissions::from_mode(0o700)).unwrap();
        assert!(is_private(&cache));
    }
}
