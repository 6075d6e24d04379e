//! A tiny PNG encoder and base64, enough for the example extension's `image` tool.
//!
//! The image data is wrapped in zlib *stored* blocks (no compression), so the whole
//! encoder is the PNG chunk layout, CRC-32 and Adler-32.

/// The largest payload of one stored deflate block.
const STORED_BLOCK_MAX: usize = 65_535;

/// Encodes 8-bit RGB pixels (`width * height * 3` bytes, row by row) as a PNG file.
/// Returns `None` when `pixels` has the wrong length.
pub(crate) fn encode_rgb(width: u32, height: u32, pixels: &[u8]) -> Option<Vec<u8>> {
    let row_len = usize::try_from(width).ok()?.checked_mul(3)?;
    let rows = usize::try_from(height).ok()?;
    if row_len.checked_mul(rows)? != pixels.len() || width == 0 || height == 0 {
        return None;
    }

    // Each row starts with its filter type: 0, none.
    let mut scanlines = Vec::with_capacity(pixels.len() + rows);
    for row in pixels.chunks(row_len) {
        scanlines.push(0);
        scanlines.extend_from_slice(row);
    }

    let mut header = Vec::with_capacity(13);
    header.extend_from_slice(&width.to_be_bytes());
    header.extend_from_slice(&height.to_be_bytes());
    // Bit depth 8, colour type 2 (RGB), deflate, adaptive filtering, no interlace.
    header.extend_from_slice(&[8, 2, 0, 0, 0]);

    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    write_chunk(&mut png, b"IHDR", &header);
    write_chunk(&mut png, b"IDAT", &zlib_stored(&scanlines));
    write_chunk(&mut png, b"IEND", &[]);
    Some(png)
}

/// One PNG chunk: length, type, data, and the CRC-32 of type and data.
fn write_chunk(png: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    let len = u32::try_from(data.len()).unwrap_or(u32::MAX);
    png.extend_from_slice(&len.to_be_bytes());
    let start = png.len();
    png.extend_from_slice(kind);
    png.extend_from_slice(data);
    let crc = crc32(png.get(start..).unwrap_or_default());
    png.extend_from_slice(&crc.to_be_bytes());
}

/// A zlib stream of stored (uncompressed) deflate blocks.
fn zlib_stored(data: &[u8]) -> Vec<u8> {
    // CMF 0x78: deflate, 32 KiB window; FLG 0x01 makes CMF*256+FLG a multiple of 31.
    let mut out = vec![0x78, 0x01];
    let mut blocks = data.chunks(STORED_BLOCK_MAX).peekable();
    if blocks.peek().is_none() {
        out.extend_from_slice(&[1, 0, 0, 0xff, 0xff]);
    }
    while let Some(block) = blocks.next() {
        let last = blocks.peek().is_none();
        // BFINAL in bit 0, BTYPE 00 (stored), then LEN and its one's complement.
        out.push(u8::from(last));
        let len = u16::try_from(block.len()).unwrap_or(u16::MAX);
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&(!len).to_le_bytes());
        out.extend_from_slice(block);
    }
    out.extend_from_slice(&adler32(data).to_be_bytes());
    out
}

/// CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320), as PNG uses it.
pub(crate) fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in bytes {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            let mask = (crc & 1).wrapping_neg();
            crc = (crc >> 1) ^ (0xEDB8_8320 & mask);
        }
    }
    !crc
}

/// Adler-32, the zlib checksum.
pub(crate) fn adler32(bytes: &[u8]) -> u32 {
    const MOD: u32 = 65_521;
    let (mut a, mut b) = (1u32, 0u32);
    // 5552 bytes is the most that can be summed before `b` could overflow.
    for chunk in bytes.chunks(5552) {
        for &byte in chunk {
            a += u32::from(byte);
            b += a;
        }
        a %= MOD;
        b %= MOD;
    }
    (b << 16) | a
}

/// Standard base64 (RFC 4648, with padding).
pub(crate) fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let symbol = |v: u32| char::from(ALPHABET[(v & 63) as usize]);
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for group in bytes.chunks(3) {
        let b = |i: usize| group.get(i).map_or(0, |&x| u32::from(x));
        let v = (b(0) << 16) | (b(1) << 8) | b(2);
        out.push(symbol(v >> 18));
        out.push(symbol(v >> 12));
        out.push(if group.len() > 1 { symbol(v >> 6) } else { '=' });
        out.push(if group.len() > 2 { symbol(v) } else { '=' });
    }
    out
}

/// The number of bytes a padded base64 text decodes to (without decoding it).
pub(crate) fn base64_decoded_len(text: &str) -> usize {
    let text = text.trim_end();
    let padding = text.bytes().rev().take_while(|&b| b == b'=').count().min(2);
    (text.len() / 4 * 3).saturating_sub(padding)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_check_value() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b""), 0);
    }

    #[test]
    fn adler32_known_values() {
        assert_eq!(adler32(b"Wikipedia"), 0x11E6_0398);
        assert_eq!(adler32(b""), 1);
        // Long input exercises the deferred modulo.
        let long = vec![0xffu8; 100_000];
        let (mut a, mut b) = (1u64, 0u64);
        for &x in &long {
            a = (a + u64::from(x)) % 65_521;
            b = (b + a) % 65_521;
        }
        assert_eq!(u64::from(adler32(&long)), (b << 16) | a);
    }

    #[test]
    fn base64_rfc4648_vectors() {
        let cases = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ];
        for (plain, encoded) in cases {
            assert_eq!(base64(plain.as_bytes()), encoded);
            assert_eq!(base64_decoded_len(encoded), plain.len());
        }
    }

    #[test]
    fn png_layout_and_checksums() {
        let pixels: Vec<u8> = (0..4 * 3 * 3).map(|i| i as u8).collect();
        let png = encode_rgb(4, 3, &pixels).expect("valid dimensions");
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        assert_eq!(&png[12..16], b"IHDR");
        assert_eq!(&png[16..20], &4u32.to_be_bytes());
        assert_eq!(&png[20..24], &3u32.to_be_bytes());
        assert_eq!(&png[png.len() - 12..png.len() - 4], b"\0\0\0\0IEND");
        // Every chunk's CRC matches.
        let mut at = 8;
        while at < png.len() {
            let len = u32::from_be_bytes(png[at..at + 4].try_into().unwrap()) as usize;
            let body = &png[at + 4..at + 8 + len];
            let crc = u32::from_be_bytes(png[at + 8 + len..at + 12 + len].try_into().unwrap());
            assert_eq!(crc32(body), crc);
            at += 12 + len;
        }
        assert_eq!(at, png.len());
    }

    #[test]
    fn zlib_stored_splits_large_data() {
        let data = vec![7u8; STORED_BLOCK_MAX * 2 + 10];
        let z = zlib_stored(&data);
        // Header, three blocks of 5 header bytes each, data, Adler-32.
        assert_eq!(z.len(), 2 + 3 * 5 + data.len() + 4);
        assert_eq!(z[2], 0); // first block not final
        let second = 2 + 5 + STORED_BLOCK_MAX;
        assert_eq!(z[second], 0);
        let third = second + 5 + STORED_BLOCK_MAX;
        assert_eq!(z[third], 1); // final
        assert_eq!(&z[third + 1..third + 3], &10u16.to_le_bytes());
    }

    #[test]
    fn wrong_pixel_count_is_refused() {
        assert!(encode_rgb(2, 2, &[0; 11]).is_none());
        assert!(encode_rgb(0, 0, &[]).is_none());
    }
}
