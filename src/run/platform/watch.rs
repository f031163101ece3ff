//! Change notification for a scratch copy (inotify on Linux): which of its
//! entries something touched since the last look, so that putting a copy
//! back after a run need not stat every file of it. Elsewhere
//! [`Watcher::new`] fails, and the caller walks the whole copy instead.

use std::ffi::OsString;

/// One thing the kernel saw happen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// Something happened to watch `wd`'s inode itself (`name: None`) or to
    /// the entry `name` of the directory it watches: created, deleted,
    /// moved, written, or its metadata changed. `gone`: the watch itself
    /// ended (its inode was deleted).
    Touched {
        /// The watch descriptor [`Watcher::add`] returned.
        wd: i32,
        /// The entry of the watched directory; `None` for the watched
        /// inode itself.
        name: Option<OsString>,
        /// The watch itself ended (its inode was deleted).
        gone: bool,
    },
    /// The kernel's queue overflowed: events were lost.
    Overflow,
}

#[cfg(target_os = "linux")]
pub use linux::Watcher;
#[cfg(not(target_os = "linux"))]
pub use portable::Watcher;

#[cfg(target_os = "linux")]
mod linux {
    use std::ffi::OsStr;
    use std::io;
    use std::mem::MaybeUninit;
    use std::os::fd::OwnedFd;
    use std::os::unix::ffi::OsStrExt;
    use std::path::Path;

    use rustix::fs::inotify::{self, CreateFlags, ReadFlags, WatchFlags};
    use rustix::io::Errno;

    use super::Event;

    /// Everything that changes an entry (not reads, opens or closes without writing).
    fn changes() -> WatchFlags {
        WatchFlags::MODIFY
            | WatchFlags::ATTRIB
            | WatchFlags::CLOSE_WRITE
            | WatchFlags::CREATE
            | WatchFlags::DELETE
            | WatchFlags::DELETE_SELF
            | WatchFlags::MOVED_FROM
            | WatchFlags::MOVED_TO
            | WatchFlags::MOVE_SELF
            | WatchFlags::DONT_FOLLOW
    }

    /// An inotify instance (closed, with all its watches, when dropped).
    #[derive(Debug)]
    pub struct Watcher {
        fd: OwnedFd,
    }

    impl Watcher {
        /// A new inotify instance with no watches yet.
        pub fn new() -> io::Result<Watcher> {
            let fd = inotify::init(CreateFlags::CLOEXEC | CreateFlags::NONBLOCK)?;
            Ok(Watcher { fd })
        }

        /// Watch the entry at `path` (a symlink itself, never its target):
        /// a directory for its entries too. Returns the watch descriptor
        /// (the same for a path to an inode already watched).
        pub fn add(&self, path: &Path) -> io::Result<i32> {
            Ok(inotify::add_watch(&self.fd, path, changes())?)
        }

        /// Every event queued now, in order; reading stops at an overflow
        /// (the queue is drained all the same).
        pub fn drain(&self) -> io::Result<Vec<Event>> {
            let mut out = Vec::new();
            let mut buf = vec![MaybeUninit::<u8>::uninit(); 64 * 1024];
            let mut reader = inotify::Reader::new(&self.fd, &mut buf);
            let mut overflow = false;
            loop {
                let e = match reader.next() {
                    Ok(e) => e,
                    Err(Errno::AGAIN) => break,
                    Err(Errno::INTR) => continue,
                    Err(e) => return Err(e.into()),
                };
                let flags = e.events();
                if flags.contains(ReadFlags::QUEUE_OVERFLOW) {
                    overflow = true;
                }
                if overflow {
                    continue;
                }
                out.push(Event::Touched {
                    wd: e.wd(),
                    name: e
                        .file_name()
                        .map(|n| OsStr::from_bytes(n.to_bytes()).to_os_string()),
                    gone: flags.contains(ReadFlags::IGNORED),
                });
            }
            if overflow {
                out.push(Event::Overflow);
            }
            Ok(out)
        }
    }
}

/// No change notification here: every reset walks the whole copy.
#[cfg(not(target_os = "linux"))]
mod portable {
    use std::io;
    use std::path::Path;

    use super::Event;

    /// No change notification here: every call fails or sees nothing.
    #[derive(Debug)]
    pub struct Watcher;

    impl Watcher {
        /// Always `Unsupported`: the caller walks the copy instead.
        pub fn new() -> io::Result<Watcher> {
            Err(io::Error::from(io::ErrorKind::Unsupported))
        }

        /// Always `Unsupported`.
        pub fn add(&self, _path: &Path) -> io::Result<i32> {
            Err(io::Error::from(io::ErrorKind::Unsupported))
        }

        /// No events, ever.
        pub fn drain(&self) -> io::Result<Vec<Event>> {
            Ok(Vec::new())
        }
    }
}
