//! Opening a skill file so that what is read is what the listing records:
//! a bundle's folder is opened first (links followed) and its `SKILL.md`
//! beneath that handle, so the folder's identity and the text belong to
//! each other even while the folder's path is swapped for a link.

use std::fs;
use std::io;
use std::path::Path;

use crate::registry::FileIdentity;

/// A skill file opened without blocking, and the identity of the folder it
/// was opened beneath (a bundle's).
pub(super) struct OpenedSkillFile {
    pub file: fs::File,
    pub folder: Option<FileIdentity>,
}

/// Opens `path`: a flat skill file by its path, a bundle's `SKILL.md`
/// (`bundle`) beneath its folder, opened first. Links are followed in both,
/// as the listing always has.
pub(super) fn open_skill_file(path: &Path, bundle: bool) -> io::Result<OpenedSkillFile> {
    let folder = match path.parent() {
        // Elsewhere than Unix there is no `openat` in std, nor an identity.
        Some(folder) if bundle && cfg!(unix) => folder,
        _ => return Ok(OpenedSkillFile { file: open_nonblocking(path)?, folder: None }),
    };
    let folder = open_folder(folder)?;
    let identity = FileIdentity::of(&folder.metadata()?);
    let name = path.file_name().ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?;
    Ok(OpenedSkillFile { file: open_beneath(&folder, Path::new(name))?, folder: identity })
}

/// Opens the folder `path` (links followed) without blocking: a FIFO put
/// in a bundle folder's place fails at once (`ENOTDIR`) instead of hanging
/// the reader, and with it every call that lists the skills.
pub(crate) fn open_folder(path: &Path) -> io::Result<fs::File> {
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_DIRECTORY | libc::O_NONBLOCK);
    options.open(path)
}

/// Opens `path` for reading without blocking: a FIFO put in a skill file's
/// place would otherwise hang the reader until someone writes to it.
pub(crate) fn open_nonblocking(path: &Path) -> io::Result<fs::File> {
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    options.open(path)
}

/// `openat(folder, name)`, following links (a bundle's `SKILL.md` may be
/// one), without blocking.
#[cfg(unix)]
pub(crate) fn open_beneath(folder: &fs::File, name: &Path) -> io::Result<fs::File> {
    use rustix::fs::{Mode, OFlags, openat};
    let fd = openat(folder, name, OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC, Mode::empty())?;
    Ok(fs::File::from(fd))
}

#[cfg(not(unix))]
pub(crate) fn open_beneath(_folder: &fs::File, _name: &Path) -> io::Result<fs::File> {
    // Only Unix opens a bundle's folder (there is no identity elsewhere).
    Err(io::Error::from(io::ErrorKind::Unsupported))
}
