//! Files and directories the host keeps for itself (the component cache and
//! its key): owned by the user running the host, private to it, never reached
//! through a symlink, and never a FIFO or device that could block or flood a read.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// A host-private path that failed a check.
#[derive(Debug, thiserror::Error)]
pub enum OwnedPathError {
    /// It could not be created, opened or inspected.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// It exists but is unsafe to trust.
    #[error("{path}: {reason}")]
    Unsafe {
        /// The path.
        path: PathBuf,
        /// What is wrong, and what to do.
        reason: String,
    },
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> OwnedPathError + '_ {
    move |source| OwnedPathError::Io {
        path: path.into(),
        source,
    }
}

fn unsafe_path(path: &Path, reason: impl Into<String>) -> OwnedPathError {
    OwnedPathError::Unsafe {
        path: path.into(),
        reason: reason.into(),
    }
}

/// The effective user id of this process.
pub fn euid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// Create `path` (mode 0700) if missing and check it: a real directory, not
/// a symlink, owned by this user; group and other permissions are removed.
/// Returns its canonical path.
pub fn private_dir(path: &Path) -> Result<PathBuf, OwnedPathError> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(io_err(parent))?;
    }
    match std::fs::DirBuilder::new().mode(0o700).create(path) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(io_err(path)(e)),
    }
    let meta = std::fs::symlink_metadata(path).map_err(io_err(path))?;
    if meta.file_type().is_symlink() {
        return Err(unsafe_path(
            path,
            "is a symlink; point the setting at the real directory",
        ));
    }
    if !meta.is_dir() {
        return Err(unsafe_path(path, "is not a directory"));
    }
    if meta.uid() != euid() {
        return Err(unsafe_path(
            path,
            format!(
                "is owned by uid {}, not by this user (uid {}); use a directory of your own",
                meta.uid(),
                euid()
            ),
        ));
    }
    if meta.mode() & 0o077 != 0 {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700))
            .map_err(io_err(path))?;
        tracing::info!(path = %path.display(), "made the directory private (0700)");
    }
    path.canonicalize().map_err(io_err(path))
}

/// Open `path` for reading without following a final symlink and without
/// blocking on a FIFO; refuse anything but a regular file.
pub fn open_regular(path: &Path) -> io::Result<File> {
    open_regular_with_metadata(path).map(|(file, _)| file)
}

/// [`open_regular`], with the open file's metadata.
fn open_regular_with_metadata(path: &Path) -> io::Result<(File, std::fs::Metadata)> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(
            rustix::fs::OFlags::NOFOLLOW.bits() as i32 | rustix::fs::OFlags::NONBLOCK.bits() as i32,
        )
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(not_regular());
    }
    Ok((file, meta))
}

/// The error of a path that is not a regular file.
fn not_regular() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, "not a regular file")
}

/// [`open_regular`], and the file must be owned by this user and private to it.
pub fn open_private_file(path: &Path) -> Result<File, OwnedPathError> {
    let file = open_regular(path).map_err(|e| {
        if e.kind() == io::ErrorKind::NotFound {
            io_err(path)(e)
        } else {
            unsafe_path(path, format!("{e} (a symlink, FIFO or device is refused)"))
        }
    })?;
    let meta = file.metadata().map_err(io_err(path))?;
    if meta.uid() != euid() {
        return Err(unsafe_path(
            path,
            format!("is owned by uid {}, not by this user", meta.uid()),
        ));
    }
    if meta.mode() & 0o077 != 0 {
        return Err(unsafe_path(
            path,
            format!(
                "is readable or writable by others (mode {:o}); delete it to make a new one",
                meta.mode() & 0o777
            ),
        ));
    }
    Ok(file)
}

/// The error of a file over `max` bytes.
fn over_limit(max: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("over the limit of {max} bytes"),
    )
}

/// Read a regular file ([`open_regular`]) of at most `max` bytes: the bytes
/// it held when opened (as many as its size then, fewer if it shrank; no
/// read past them to find its end). A larger file is an error, never a
/// truncated read.
pub fn read_bounded(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    read_opened(path, max).map(|(_, _, bytes)| bytes)
}

/// Open the regular file at `path` and read the bytes it held when opened
/// (at most `max`, else an error), with its metadata then.
fn read_opened(path: &Path, max: u64) -> io::Result<(File, std::fs::Metadata, Vec<u8>)> {
    use io::Read;
    let (file, meta) = open_regular_with_metadata(path)?;
    let len = meta.len();
    if len > max {
        return Err(over_limit(max));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    (&file).take(len).read_to_end(&mut bytes)?;
    Ok((file, meta, bytes))
}

/// What identifies one version of a file's content: device, inode, size,
/// modification and status-change times. The status-change time moves on
/// every write and cannot be set back without privileges, so an unchanged
/// stamp means unchanged bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileStamp(String);

impl FileStamp {
    /// The stamp in `meta` (of a regular file).
    pub(crate) fn of(meta: &std::fs::Metadata) -> Self {
        let mut text = String::new();
        // Writing into a String cannot fail.
        let _ = Self::write(meta, &mut text);
        Self(text)
    }

    /// Write the stamp in `meta` as text.
    fn write(meta: &std::fs::Metadata, out: &mut impl std::fmt::Write) -> std::fmt::Result {
        use std::os::unix::fs::MetadataExt;
        write!(
            out,
            "{}:{}:{}:{}.{}:{}.{}",
            meta.dev(),
            meta.ino(),
            meta.size(),
            meta.mtime(),
            meta.mtime_nsec(),
            meta.ctime(),
            meta.ctime_nsec()
        )
    }

    /// The stamp as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The stamp of the regular file at `path` ([`open_regular`]; nothing is
/// read), which must hold at most `max` bytes.
pub fn stamp(path: &Path, max: u64) -> io::Result<FileStamp> {
    let (_, meta) = open_regular_with_metadata(path)?;
    bounded_stamp(&meta, max)
}

/// The stamp in `meta`, which must be a regular file's of at most `max`
/// bytes.
fn bounded_stamp(meta: &std::fs::Metadata, max: u64) -> io::Result<FileStamp> {
    if !meta.is_file() {
        return Err(not_regular());
    }
    if meta.len() > max {
        return Err(over_limit(max));
    }
    Ok(FileStamp::of(meta))
}

/// The stamp of an open file.
pub fn stamp_of(file: &File) -> io::Result<FileStamp> {
    Ok(FileStamp::of(&file.metadata()?))
}

/// [`read_bounded`], with the file's stamp when it did not change while it
/// was read (the same stamp on the open file before and after).
pub fn read_stamped(path: &Path, max: u64) -> io::Result<(Vec<u8>, Option<FileStamp>)> {
    use io::Read;
    // The length the file had when opened; the stamp after the read tells
    // whether that was all of it (no read past it to find the end).
    let (file, meta, mut bytes) = read_opened(path, max)?;
    let before = FileStamp::of(&meta);
    let after = FileStamp::of(&file.metadata()?);
    if before == after && bytes.len() as u64 == meta.len() {
        return Ok((bytes, Some(after)));
    }
    // It changed while read: the rest too, still bounded, and no stamp.
    (&file)
        .take((max + 1).saturating_sub(bytes.len() as u64))
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(over_limit(max));
    }
    Ok((bytes, None))
}

/// `base` (canonical) joined with `relative` when that is already canonical:
/// every part a plain name that exists and is not a symlink (one `lstat`
/// per part instead of resolving the whole path again). `None` when it may
/// resolve elsewhere; the caller then resolves it in full.
pub(crate) fn plain_path_under(base: &Path, relative: &Path) -> Option<PathBuf> {
    if relative.as_os_str().is_empty() {
        return Some(base.to_path_buf());
    }
    plain_path_with_metadata(base, relative).map(|(real, _)| real)
}

/// [`plain_path_under`] for a non-empty `relative`, with its last part's
/// `lstat` (which showed it is not a symlink).
fn plain_path_with_metadata(base: &Path, relative: &Path) -> Option<(PathBuf, std::fs::Metadata)> {
    let mut real = base.to_path_buf();
    let mut last = None;
    for part in relative.components() {
        let std::path::Component::Normal(name) = part else {
            return None;
        };
        real.push(name);
        let meta = real.symlink_metadata().ok()?;
        if meta.file_type().is_symlink() {
            return None;
        }
        last = Some(meta);
    }
    Some((real, last?))
}

/// The path and stamp of the regular file at `base` (canonical) joined with
/// `relative`, when that path is already canonical ([`plain_path_under`]),
/// from the `lstat`s that showed it: nothing is opened. `None` when it may
/// resolve elsewhere (the caller resolves it and takes [`stamp`]); an error
/// when it is not a regular file or holds more than `max` bytes.
pub(crate) fn plain_stamp_under(
    base: &Path,
    relative: &Path,
    max: u64,
) -> Option<io::Result<(PathBuf, FileStamp)>> {
    let (real, meta) = plain_path_with_metadata(base, relative)?;
    Some(bounded_stamp(&meta, max).map(|stamp| (real, stamp)))
}

/// `path` canonicalized, or as given when it does not exist (yet).
pub fn canonical(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_path_buf())
}

/// Whether `a` and `b` (canonical paths) are the same or one holds the other.
pub fn overlap(a: &Path, b: &Path) -> bool {
    a.starts_with(b) || b.starts_with(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stamped_read_is_whole_and_bounded_and_refuses_what_is_not_a_file() {
        let root = tempfile::tempdir().unwrap();
        let file = root.path().join("f");
        std::fs::write(&file, b"0123456789").unwrap();
        let (bytes, stamp) = read_stamped(&file, 10).unwrap();
        assert_eq!(bytes, b"0123456789");
        assert_eq!(stamp, Some(super::stamp(&file, 10).unwrap()));
        let err = read_stamped(&file, 9).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        assert_eq!(
            super::stamp(&file, 9).unwrap_err().kind(),
            io::ErrorKind::InvalidData
        );
        std::fs::write(&file, b"").unwrap();
        assert_eq!(read_stamped(&file, 9).unwrap().0, b"");
        std::os::unix::fs::symlink(&file, root.path().join("link")).unwrap();
        assert!(read_stamped(&root.path().join("link"), 10).is_err());
        assert!(read_stamped(root.path(), 10).is_err());
    }

    #[test]
    fn a_bounded_read_is_whole_and_refuses_a_larger_file_or_a_non_file() {
        let root = tempfile::tempdir().unwrap();
        let file = root.path().join("f");
        std::fs::write(&file, b"0123456789").unwrap();
        assert_eq!(read_bounded(&file, 10).unwrap(), b"0123456789");
        assert_eq!(
            read_bounded(&file, 9).unwrap_err().kind(),
            io::ErrorKind::InvalidData
        );
        std::fs::write(&file, b"").unwrap();
        assert_eq!(read_bounded(&file, 0).unwrap(), b"");
        std::os::unix::fs::symlink(&file, root.path().join("link")).unwrap();
        assert!(read_bounded(&root.path().join("link"), 10).is_err());
        assert!(read_bounded(root.path(), 10).is_err());
        let fifo = root.path().join("fifo");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
            0,
        )
        .unwrap();
        assert!(
            read_bounded(&fifo, 10).is_err(),
            "a FIFO is never waited on"
        );
    }
}
