//! What both pickle readers share about the format: the names of the opcodes they refuse (for
//! their messages) and the `LONG1`/`LONG4` integer payload. The arena's machine (`machine.rs`)
//! and the snapshot's streamed reader (`snapshot::stream::ops`) each run the opcodes themselves.

/// The name of an opcode that a message names (those refused, and the text forms).
pub(crate) fn opcode_name(op: u8) -> &'static str {
    match op {
        b'c' => "GLOBAL",
        0x93 => "STACK_GLOBAL",
        b'R' => "REDUCE",
        b'b' => "BUILD",
        0x81 => "NEWOBJ",
        0x92 => "NEWOBJ_EX",
        b'i' => "INST",
        b'o' => "OBJ",
        0x82 => "EXT1",
        0x83 => "EXT2",
        0x84 => "EXT4",
        b'P' => "PERSID",
        b'Q' => "BINPERSID",
        0x97 => "NEXT_BUFFER",
        0x98 => "READONLY_BUFFER",
        b'I' => "INT",
        b'L' => "LONG",
        b'F' => "FLOAT",
        b'S' => "STRING",
        b'V' => "UNICODE",
        _ => "?",
    }
}

/// A `LONG1`/`LONG4` payload by the width it needs.
#[derive(Debug, PartialEq)]
pub(crate) enum Long {
    Small(i64),
    Big(i128),
    Huge,
}

/// `LONG1`/`LONG4` payload: little-endian two's complement of any width.
pub(crate) fn decode_long(bytes: &[u8]) -> Long {
    let Some(&last) = bytes.last() else {
        return Long::Small(0);
    };
    if bytes.len() <= 16 {
        let neg = last & 0x80 != 0;
        let mut buf = if neg { [0xffu8; 16] } else { [0u8; 16] };
        buf[..bytes.len()].copy_from_slice(bytes);
        let v = i128::from_le_bytes(buf);
        return match i64::try_from(v) {
            Ok(i) => Long::Small(i),
            Err(_) => Long::Big(v),
        };
    }
    Long::Huge
}
