//! What a bare-metal program needs besides the protocol crate: a panic handler and a
//! global allocator. The allocator is a bump allocator over a static arena (64 KiB,
//! in `.bss`, so not part of the code size) that never frees: enough for programs
//! that are linked only to be measured.
#![no_std]

use core::alloc::{GlobalAlloc, Layout};
use core::panic::PanicInfo;
use core::ptr;
use core::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

/// The arena's size in bytes.
const ARENA_BYTES: usize = 64 * 1024;

/// The arena. Atomic bytes: memory handed out is written through shared references'
/// pointers, which is allowed for interior-mutable types.
static ARENA: [AtomicU8; ARENA_BYTES] = [const { AtomicU8::new(0) }; ARENA_BYTES];
/// How many bytes of the arena are handed out.
static USED: AtomicUsize = AtomicUsize::new(0);

/// Hands out the arena from its start, never reusing memory.
struct Bump;

// SAFETY: `alloc` returns either null or a block of `layout.size()` bytes inside the
// arena, aligned to `layout.align()`, that no other call has returned (the
// compare-exchange on `USED` reserves it). `dealloc` does nothing.
unsafe impl GlobalAlloc for Bump {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let base = ARENA.as_ptr() as usize;
        let mut used = USED.load(Ordering::Relaxed);
        loop {
            let Some(start) = (base + used)
                .checked_next_multiple_of(layout.align())
                .map(|address| address - base)
            else {
                return ptr::null_mut();
            };
            let end = match start.checked_add(layout.size()) {
                Some(end) if end <= ARENA_BYTES => end,
                _ => return ptr::null_mut(),
            };
            match USED.compare_exchange_weak(used, end, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return ARENA.as_ptr().wrapping_add(start).cast::<u8>().cast_mut(),
                Err(now_used) => used = now_used,
            }
        }
    }

    unsafe fn dealloc(&self, _block: *mut u8, _layout: Layout) {}
}

#[global_allocator]
static ALLOCATOR: Bump = Bump;

#[panic_handler]
fn panic(_: &PanicInfo) -> ! {
    loop {
        core::hint::spin_loop();
    }
}
