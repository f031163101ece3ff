//! A private network for the calling process: a new network namespace
//! holding only a loopback device, brought up. What the process and its
//! children bind, connect to or listen on is theirs alone: a neighbour on
//! the same fixed port of `127.0.0.1` is in another namespace.
//!
//! As root (with `CAP_SYS_ADMIN`), only the network is unshared: nothing
//! else about the process changes. Otherwise (or where root may not: a
//! container without the capability) a user namespace comes with it, in
//! which the caller's own uid and gid map to themselves (`setgroups`
//! denied, as an unprivileged map requires): file ownership and access
//! stay as they were, and the capabilities the new namespace grants end at
//! the next `execve` of a non-root uid. Files owned by other users show as
//! the overflow uid there (65534): unguard checks a suite's baseline both
//! ways before it relies on the namespace (`src/run/network.rs`).
//!
//! The two system calls with no safe form in rustix sit here, each with
//! its safety argument: `unshare` (unsafe only for `CLONE_FILES`, never
//! passed) and the interface-flags `ioctl` (its argument is the kernel's
//! `struct ifreq` layout). This file alone allows `unsafe` (Cargo.toml
//! denies it everywhere else).
#![allow(unsafe_code)]

use std::io;

use rustix::ioctl::{self, Opcode, Updater};
use rustix::net::{AddressFamily, SocketType};
use rustix::thread::UnshareFlags;

/// `SIOCGIFFLAGS` / `SIOCSIFFLAGS` (linux/sockios.h).
const SIOCGIFFLAGS: Opcode = 0x8913;
const SIOCSIFFLAGS: Opcode = 0x8914;
/// `IFF_UP` (linux/if.h).
const IFF_UP: i16 = 0x1;

/// `struct ifreq` with its union read as `ifr_flags`: a 16-byte name, then
/// the union, 24 bytes on 64-bit targets (its largest member, `struct
/// ifmap`), 16 on 32-bit. 40 bytes cover both; the kernel copies its own
/// size.
#[repr(C)]
struct IfFlags {
    name: [u8; 16],
    flags: i16,
    _rest: [u8; 22],
}

/// Move the calling process (which must be single-threaded: a user
/// namespace cannot be entered otherwise) into a new network namespace with
/// its loopback up. Its children inherit it.
pub fn enter_private_network() -> io::Result<()> {
    let root = rustix::process::geteuid().is_root();
    // SAFETY: `unshare` is unsafe only with `CLONE_FILES` (descriptors
    // another thread could still use); neither call passes it.
    let net_only = root && unsafe { rustix::thread::unshare_unsafe(UnshareFlags::NEWNET) }.is_ok();
    if !net_only {
        let (uid, gid) = (
            rustix::process::geteuid().as_raw(),
            rustix::process::getegid().as_raw(),
        );
        // SAFETY: as above, no `CLONE_FILES`.
        unsafe { rustix::thread::unshare_unsafe(UnshareFlags::NEWUSER | UnshareFlags::NEWNET) }
            .map_err(|e| with_context(e.into(), "unshare(CLONE_NEWUSER | CLONE_NEWNET)"))?;
        // Before gid_map, as an unprivileged map requires (absent before
        // Linux 3.19, where the map needs no such step).
        match std::fs::write("/proc/self/setgroups", "deny") {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(with_context(e, "/proc/self/setgroups")),
        }
        std::fs::write("/proc/self/uid_map", format!("{uid} {uid} 1"))
            .map_err(|e| with_context(e, "/proc/self/uid_map"))?;
        std::fs::write("/proc/self/gid_map", format!("{gid} {gid} 1"))
            .map_err(|e| with_context(e, "/proc/self/gid_map"))?;
    }
    loopback_up().map_err(|e| with_context(e, "bringing up `lo`"))
}

fn with_context(e: io::Error, what: &str) -> io::Error {
    io::Error::new(e.kind(), format!("{what}: {e}"))
}

/// Set `IFF_UP` on `lo` (a new namespace's loopback starts down).
fn loopback_up() -> io::Result<()> {
    let sock = rustix::net::socket(AddressFamily::INET, SocketType::DGRAM, None)?;
    let mut req = IfFlags {
        name: [0; 16],
        flags: 0,
        _rest: [0; 22],
    };
    req.name[..2].copy_from_slice(b"lo");
    // SAFETY: both opcodes take a `struct ifreq *`, read (and for the get,
    // written) as name + `short ifr_flags`; `IfFlags` has that layout and
    // is at least as large as the kernel's `struct ifreq`.
    unsafe { ioctl::ioctl(&sock, Updater::<SIOCGIFFLAGS, IfFlags>::new(&mut req)) }?;
    req.flags |= IFF_UP;
    // SAFETY: as above.
    unsafe { ioctl::ioctl(&sock, Updater::<SIOCSIFFLAGS, IfFlags>::new(&mut req)) }?;
    Ok(())
}
