//! Fuzz bytes read as a sequence of decisions (shared by the targets that need it).
//!
//! The fuzzer mutates bytes; the session targets read them as "which input next,
//! how long, which id". Once the bytes run out every read gives zero, so any input,
//! even an empty one, is a complete run.
#![allow(dead_code)]

/// A cursor over the fuzz bytes.
pub struct Source<'a> {
    data: &'a [u8],
}

impl<'a> Source<'a> {
    pub fn new(data: &'a [u8]) -> Source<'a> {
        Source { data }
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// The next byte (0 once the bytes run out).
    pub fn byte(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }

    pub fn bool(&mut self) -> bool {
        self.byte() & 1 == 1
    }

    pub fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.byte(), self.byte()])
    }

    pub fn u32(&mut self) -> u32 {
        u32::from_le_bytes([self.byte(), self.byte(), self.byte(), self.byte()])
    }

    pub fn u64(&mut self) -> u64 {
        u64::from(self.u32()) | (u64::from(self.u32()) << 32)
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        if n <= 256 {
            usize::from(self.byte()) % n
        } else {
            self.u32() as usize % n
        }
    }

    /// One of `items` (which must not be empty).
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }

    /// The next `n` bytes, or as many as are left.
    pub fn take(&mut self, n: usize) -> &'a [u8] {
        let (taken, rest) = self.data.split_at(n.min(self.data.len()));
        self.data = rest;
        taken
    }

    /// A run of bytes whose length is the next byte.
    pub fn bytes(&mut self) -> &'a [u8] {
        let n = usize::from(self.byte());
        self.take(n)
    }

    /// Everything left.
    pub fn rest(&mut self) -> &'a [u8] {
        self.take(self.data.len())
    }
}

/// A small generator for chunk sizes, so that choosing the chunking does not use
/// up the bytes the stream is made of.
pub struct Chunks {
    state: u64,
}

impl Chunks {
    pub fn new(seed: u64) -> Chunks {
        Chunks { state: seed | 1 }
    }

    /// The next value, xorshift64*.
    pub fn next(&mut self) -> u64 {
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        self.state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Splits `bytes` into chunks of 1 to `max` bytes.
    pub fn split<'b>(&mut self, bytes: &'b [u8], max: usize) -> Vec<&'b [u8]> {
        let mut chunks = Vec::new();
        let mut rest = bytes;
        while !rest.is_empty() {
            let n = 1 + (self.next() % max.max(1) as u64) as usize;
            let (chunk, after) = rest.split_at(n.min(rest.len()));
            chunks.push(chunk);
            rest = after;
        }
        chunks
    }
}
