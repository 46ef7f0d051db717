//! Whether `store.path` can hold a table's database, asked before anything is opened:
//! by `check-config`, and by `croupier run`, which exits 1 with the reason rather than
//! serve a table out of service for ever from a path that can never work.
//!
//! A path problem is the configuration's or the machine's (a directory, a device, a
//! read-only place, the kernel's `/proc`), never the table's data: a file that is there
//! but is not a database (or a damaged one) passes, and the table starts out of service
//! with the reason, for a restore.

use super::StoreError;
use std::path::{Path, PathBuf};

/// The kernel's own file systems: views of the kernel, which hold no file anyone writes.
const KERNEL_FILE_SYSTEMS: &[(nix::sys::statfs::FsType, &str)] = {
    use nix::sys::statfs as fs;
    &[
        (fs::PROC_SUPER_MAGIC, "proc"),
        (fs::SYSFS_MAGIC, "sysfs"),
        (fs::DEVPTS_SUPER_MAGIC, "devpts"),
        (fs::DEBUGFS_MAGIC, "debugfs"),
        (fs::TRACEFS_MAGIC, "tracefs"),
        (fs::SECURITYFS_MAGIC, "securityfs"),
        (fs::CGROUP_SUPER_MAGIC, "cgroup"),
        (fs::CGROUP2_SUPER_MAGIC, "cgroup2"),
        (fs::BPF_FS_MAGIC, "bpf"),
        (fs::NSFS_MAGIC, "nsfs"),
    ]
};

/// Why the table cannot keep its database at `path` ([`StoreError::Unusable`], naming
/// it), checked in this order: the nearest existing directory on its way is a kernel
/// file system; the path is a directory, or not a regular file; an existing file cannot
/// be opened for writing, or its directory cannot be written (SQLite keeps its WAL
/// beside the database); for a new database, a file stands where a directory must be, or
/// that directory takes no new file (a probe, removed at once).
pub fn check_path(path: &Path) -> Result<(), StoreError> {
    let unusable = |why: String| StoreError::Unusable {
        path: path.to_path_buf(),
        why,
    };
    let dir = nearest_dir(path);
    if let Ok(stat) = nix::sys::statfs::statfs(dir.as_path()) {
        if let Some((_, name)) = KERNEL_FILE_SYSTEMS
            .iter()
            .find(|(kind, _)| *kind == stat.filesystem_type())
        {
            return Err(unusable(format!(
                "{} is the kernel's {name} file system, not a disk: no database can be kept there",
                dir.display()
            )));
        }
    }
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => Err(unusable("it is a directory, not a database file".into())),
        Ok(m) if !m.is_file() => Err(unusable(format!(
            "it is {}, not a database file",
            kind_of(&m)
        ))),
        Ok(_) => {
            std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open(path)
                .map_err(|e| unusable(format!("it cannot be opened for writing: {e}")))?;
            // Asked of the system rather than probed: a full disk must not stop a table
            // that has its database (it spills, and retries).
            nix::unistd::access(dir.as_path(), nix::unistd::AccessFlags::W_OK).map_err(|e| {
                unusable(format!(
                    "its directory {} cannot be written (SQLite keeps its WAL there): {e}",
                    dir.display()
                ))
            })
        }
        // Not there (or a file on its way, which is said below): a new database.
        Err(e)
            if !matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            Err(unusable(format!("it cannot be read: {e}")))
        }
        Err(_) => {
            if !dir.is_dir() {
                return Err(unusable(format!(
                    "{} is not a directory, so the database cannot be made under it",
                    dir.display()
                )));
            }
            let probe = dir.join(format!(".croupier-write-check-{}", std::process::id()));
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&probe)
                .map_err(|e| unusable(format!("no file can be made in {}: {e}", dir.display())))?;
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
    }
}

/// The nearest existing ancestor of `path` (`.` for a bare name): the directory the
/// database is in, or would be made under (it may be a file, which is then the
/// problem).
fn nearest_dir(path: &Path) -> PathBuf {
    let up = |p: &Path| {
        p.parent()
            .filter(|d| !d.as_os_str().is_empty())
            .map(Path::to_path_buf)
    };
    let mut dir = up(path).unwrap_or_else(|| PathBuf::from("."));
    while std::fs::symlink_metadata(&dir).is_err() {
        match up(&dir) {
            Some(d) => dir = d,
            None => return PathBuf::from("."),
        }
    }
    dir
}

/// What a file that is not a regular one is, for people.
fn kind_of(m: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = m.file_type();
    if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_fifo() {
        "a named pipe"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn why(path: &Path) -> String {
        check_path(path).expect_err("unusable").to_string()
    }

    #[test]
    fn every_unusable_path_is_named_with_its_reason() {
        let dir = tempfile::tempdir().expect("dir");
        let d = dir.path();
        assert!(
            check_path(&d.join("new/deeper/t.db")).is_ok(),
            "made on demand"
        );
        let e = why(d);
        assert!(
            e.starts_with(&d.display().to_string()) && e.contains("is a directory"),
            "{e}"
        );
        let e = why(Path::new("/dev/null"));
        assert!(
            e.starts_with("/dev/null: ") && e.contains("character device"),
            "{e}"
        );
        let e = why(Path::new("/proc/croupier.db"));
        assert!(
            e.starts_with("/proc/croupier.db: ") && e.contains("/proc is the kernel's proc"),
            "{e}"
        );
        let e = why(Path::new("/proc/self/data/t.db"));
        assert!(e.contains("/proc/self is the kernel's proc"), "{e}");
        std::fs::write(d.join("file"), "x").expect("write");
        let e = why(&d.join("file/t.db"));
        assert!(e.contains("is not a directory"), "{e}");
        // A file that is no database is the table's data, not a path problem.
        assert!(check_path(&d.join("file")).is_ok());
    }
}
