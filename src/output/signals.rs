//! The temporary files being written, removed by a signal handler.
//!
//! The handler does only what is safe in one: `unlink` of paths prepared
//! beforehand, then `_exit`. The paths hang off a list whose nodes are
//! never freed (a node is reused once its file is done), so the handler
//! can walk it at any moment; whoever swaps a node's path out owns it.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::ptr::null_mut;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::Once;

const SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

struct Node {
    path: AtomicPtr<libc::c_char>,
    next: AtomicPtr<Node>,
}

static HEAD: AtomicPtr<Node> = AtomicPtr::new(null_mut());
static INSTALL: Once = Once::new();

extern "C" fn on_signal(sig: libc::c_int) {
    let mut node = HEAD.load(Ordering::SeqCst);
    // SAFETY: nodes are leaked `Box`es, never freed, so every pointer in
    // the list stays valid; a path swapped out here is a NUL-terminated
    // string leaked by `remove_on_signal` that no one else frees once
    // swapped out; unlink and _exit are async-signal-safe.
    unsafe {
        while !node.is_null() {
            let p = (*node).path.swap(null_mut(), Ordering::SeqCst);
            if !p.is_null() {
                libc::unlink(p);
            }
            node = (*node).next.load(Ordering::SeqCst);
        }
        libc::_exit(128 + sig);
    }
}

fn install() {
    INSTALL.call_once(|| {
        for sig in SIGNALS {
            // SAFETY: a zeroed sigaction with a plain handler, an empty
            // mask and no flags is a valid argument.
            unsafe {
                let mut sa: libc::sigaction = std::mem::zeroed();
                sa.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
                libc::sigemptyset(&mut sa.sa_mask);
                // A signal ignored by the parent (nohup) stays ignored.
                let mut old: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(sig, std::ptr::null(), &mut old) == 0
                    && old.sa_sigaction == libc::SIG_IGN
                {
                    continue;
                }
                libc::sigaction(sig, &sa, std::ptr::null_mut());
            }
        }
    });
}

/// Runs `f` with the handled signals blocked: none arrives between
/// creating a temporary file and registering it, nor in the middle of
/// renaming a run's outputs into place.
pub fn while_blocked<T>(f: impl FnOnce() -> T) -> T {
    install();
    // SAFETY: sigset operations on local sets; pthread_sigmask changes
    // this thread's mask and is restored below.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for sig in SIGNALS {
            libc::sigaddset(&mut set, sig);
        }
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old);
        let r = f();
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        r
    }
}

/// Until dropped, a handled signal removes its path before the process
/// ends.
pub struct Registered(&'static Node);

pub fn remove_on_signal(path: &Path) -> Option<Registered> {
    let c = CString::new(path.as_os_str().as_bytes()).ok()?.into_raw();
    let mut node = HEAD.load(Ordering::SeqCst);
    while !node.is_null() {
        // SAFETY: list nodes are never freed.
        let n: &'static Node = unsafe { &*node };
        if n.path
            .compare_exchange(null_mut(), c, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            return Some(Registered(n));
        }
        node = n.next.load(Ordering::SeqCst);
    }
    let n: &'static Node = Box::leak(Box::new(Node {
        path: AtomicPtr::new(c),
        next: AtomicPtr::new(null_mut()),
    }));
    let mut head = HEAD.load(Ordering::SeqCst);
    loop {
        n.next.store(head, Ordering::SeqCst);
        match HEAD.compare_exchange(
            head,
            n as *const Node as *mut Node,
            Ordering::SeqCst,
            Ordering::SeqCst,
        ) {
            Ok(_) => return Some(Registered(n)),
            Err(now) => head = now,
        }
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        let p = self.0.path.swap(null_mut(), Ordering::SeqCst);
        if !p.is_null() {
            // SAFETY: made by `CString::into_raw` in `remove_on_signal`,
            // and swapped out here, so no one else holds it.
            drop(unsafe { CString::from_raw(p) });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_held_until_dropped() {
        let a = remove_on_signal(Path::new("/tmp/a")).unwrap();
        let b = remove_on_signal(Path::new("/tmp/b")).unwrap();
        assert!(!std::ptr::eq(a.0, b.0));
        let held = a.0.path.load(Ordering::SeqCst);
        // SAFETY: `a` is alive, so its string is too.
        assert_eq!(
            unsafe { std::ffi::CStr::from_ptr(held) }.to_bytes(),
            b"/tmp/a"
        );
        drop(a);
        drop(b);
    }
}
