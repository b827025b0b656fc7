//! Getting the listener from the child, which installs the filter, to the
//! parent, which serves it: a socket pair made before the fork, one
//! descriptor sent with `SCM_RIGHTS`. A child that sends none (the kernel
//! has no user notification, so it installed the plain filter; or it
//! failed) closes its end, and the parent reads end-of-file.

use std::io;
use std::mem::{MaybeUninit, size_of};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use super::filter::NoNewPrivs;
use super::notify::{Listener, Supervisor};
use crate::durability::mount::Scope;
use crate::supervise::Duty;

/// What the child did about the filter.
pub enum Installed {
    Supervised(NoNewPrivs),
    /// The kernel has no user notification: the plain filter instead.
    Plain(NoNewPrivs),
    /// The same with syncs kept by mount, which the plain filter would
    /// eat: no filter.
    Nothing,
}

/// Both ends, before the fork; each side then keeps its own.
pub struct Handoff {
    parent: OwnedFd,
    child: Option<OwnedFd>,
    keep_direct: bool,
    fast_fsync: bool,
    scope: Scope,
    supervisor: Option<Supervisor>,
}

impl Handoff {
    /// With `fast_fsync`, the filter answers fsync and fdatasync itself;
    /// a `scope` that is scoped keeps syncs by mount, and `sync`.
    pub fn new(keep_direct: bool, fast_fsync: bool, scope: Scope) -> io::Result<Handoff> {
        let mut fds = [0; 2];
        // SAFETY: socketpair fills two descriptors.
        let rc = unsafe {
            libc::socketpair(
                libc::AF_UNIX,
                libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
                0,
                fds.as_mut_ptr(),
            )
        };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: two new descriptors of ours.
        let (parent, child) =
            unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        Ok(Handoff {
            parent,
            child: Some(child),
            keep_direct,
            fast_fsync,
            scope,
            supervisor: None,
        })
    }

    /// What the child needs, copied out before the fork.
    pub fn child_side(&self) -> ChildSide {
        ChildSide {
            socket: self.child.as_ref().map_or(-1, AsRawFd::as_raw_fd),
            fast_fsync: self.fast_fsync,
            by_mount: self.scope.scoped(),
        }
    }
}

/// The child's end of the socket pair (closed on exec), and the filter.
#[derive(Clone, Copy)]
pub struct ChildSide {
    socket: RawFd,
    fast_fsync: bool,
    by_mount: bool,
}

impl ChildSide {
    /// In the child: installs the filter and sends its listener over.
    pub fn install(self) -> io::Result<Installed> {
        match Listener::install(self.fast_fsync, !self.by_mount)? {
            Some((listener, set)) => {
                send_fd(self.socket, listener.fd())?;
                drop(listener);
                Ok(Installed::Supervised(set))
            }
            None if self.by_mount => Ok(Installed::Nothing),
            None => super::filter::install(super::filter::program()).map(Installed::Plain),
        }
    }
}

impl Duty for Handoff {
    fn start(&mut self) -> Option<RawFd> {
        self.child = None;
        let listener = receive_fd(self.parent.as_raw_fd()).ok()??;
        let supervisor = Supervisor::new(Listener::from_fd(listener), self.keep_direct, self.scope);
        let fd = supervisor.fd();
        self.supervisor = Some(supervisor);
        Some(fd)
    }

    fn timeout(&self) -> std::ffi::c_int {
        self.supervisor.as_ref().map_or(-1, Supervisor::timeout)
    }

    fn idle(&mut self) {
        if let Some(supervisor) = &mut self.supervisor {
            supervisor.idle();
        }
    }

    fn ready(&mut self) {
        if let Some(supervisor) = &mut self.supervisor
            && let Err(error) = supervisor.serve_one()
        {
            eprintln!("eatmydata: supervisor: {}", crate::error::plain(&error));
        }
    }
}

/// Room for one descriptor's control message.
#[repr(C)]
union Control {
    header: libc::cmsghdr,
    bytes: [u8; 32],
}

/// A message of one byte, with room for one descriptor.
struct Message {
    byte: [u8; 1],
    iov: libc::iovec,
    control: Control,
    header: libc::msghdr,
}

impl Message {
    /// Boxed: the header points into the rest.
    fn new() -> Box<Message> {
        // SAFETY: all plain C data, valid zeroed.
        let mut message: Box<Message> = Box::new(unsafe { MaybeUninit::zeroed().assume_init() });
        message.iov.iov_base = message.byte.as_mut_ptr().cast();
        message.iov.iov_len = 1;
        message.header.msg_iov = &mut message.iov;
        message.header.msg_iovlen = 1;
        message.header.msg_control = (&mut message.control as *mut Control).cast();
        // `as _`: socklen_t on musl, size_t on glibc.
        message.header.msg_controllen = size_of::<Control>() as _;
        message
    }
}

fn send_fd(socket: RawFd, fd: RawFd) -> io::Result<()> {
    let mut message = Message::new();
    // SAFETY: CMSG_SPACE only computes a size.
    message.header.msg_controllen = unsafe { libc::CMSG_SPACE(size_of::<RawFd>() as u32) } as _;
    // SAFETY: the control buffer is large enough for one descriptor, and
    // the header pointers come from the macros over it.
    unsafe {
        let header = libc::CMSG_FIRSTHDR(&message.header);
        (*header).cmsg_level = libc::SOL_SOCKET;
        (*header).cmsg_type = libc::SCM_RIGHTS;
        (*header).cmsg_len = libc::CMSG_LEN(size_of::<RawFd>() as u32) as _;
        libc::CMSG_DATA(header).cast::<RawFd>().write_unaligned(fd);
    }
    // SAFETY: the header points at live buffers.
    if unsafe { libc::sendmsg(socket, &message.header, libc::MSG_NOSIGNAL) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// One descriptor, or `None` at end-of-file.
fn receive_fd(socket: RawFd) -> io::Result<Option<OwnedFd>> {
    let mut message = Message::new();
    let n = loop {
        // SAFETY: the header points at live buffers.
        let n = unsafe { libc::recvmsg(socket, &mut message.header, libc::MSG_CMSG_CLOEXEC) };
        if n >= 0 || io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            break n;
        }
    };
    if n <= 0 {
        return if n == 0 {
            Ok(None)
        } else {
            Err(io::Error::last_os_error())
        };
    }
    // SAFETY: the kernel filled the control buffer it was given.
    unsafe {
        let header = libc::CMSG_FIRSTHDR(&message.header);
        if header.is_null() || (*header).cmsg_type != libc::SCM_RIGHTS {
            return Ok(None);
        }
        let fd = libc::CMSG_DATA(header).cast::<RawFd>().read_unaligned();
        Ok(Some(OwnedFd::from_raw_fd(fd)))
    }
}
