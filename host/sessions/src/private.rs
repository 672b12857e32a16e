//! Conversation is private to the host's user: session files are created
//! 0600 in 0700 directories whatever the umask, and a file or directory
//! found open to others (made by an older version, or by hand) is tightened
//! when the store opens it.

use std::fs::{File, OpenOptions, Permissions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// Mode of a directory that holds conversation.
const DIR_MODE: u32 = 0o700;
/// Mode of a file that holds conversation.
const FILE_MODE: u32 = 0o600;

/// Create `dir` (and missing parents) 0700, or tighten it if it exists
/// open to others.
pub(crate) fn dir(dir: &Path) -> io::Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(DIR_MODE)
        .create(dir)?;
    tighten_path(dir, DIR_MODE)
}

/// Open options that create a file 0600 (the umask can only remove bits).
pub(crate) fn file_options() -> OpenOptions {
    let mut options = OpenOptions::new();
    options.mode(FILE_MODE);
    options
}

/// Take group and other bits off an open file.
pub(crate) fn tighten(file: &File) -> io::Result<()> {
    let mode = file.metadata()?.permissions().mode();
    if mode & 0o077 != 0 {
        file.set_permissions(Permissions::from_mode(mode & 0o700))?;
    }
    Ok(())
}

fn tighten_path(path: &Path, mode: u32) -> io::Result<()> {
    let now = std::fs::metadata(path)?.permissions().mode();
    if now & 0o077 != 0 {
        std::fs::set_permissions(path, Permissions::from_mode(now & mode & 0o700))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn what_is_created_is_private_and_what_exists_is_tightened() {
        let root = tempfile::tempdir().unwrap();
        let made = root.path().join("a/b");
        dir(&made).unwrap();
        assert_eq!(mode(&made), 0o700);
        let open = root.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, Permissions::from_mode(0o755)).unwrap();
        dir(&open).unwrap();
        assert_eq!(mode(&open), 0o700);

        let path = open.join("t.jsonl");
        file_options()
            .create_new(true)
            .append(true)
            .open(&path)
            .unwrap();
        assert_eq!(mode(&path), 0o600);
        std::fs::set_permissions(&path, Permissions::from_mode(0o644)).unwrap();
        tighten(&File::open(&path).unwrap()).unwrap();
        assert_eq!(mode(&path), 0o600);
    }
}
