//! Reading and writing the fields of packets: length-encoded integers, status flags, a
//! column definition's type and the first column of a row (binary or text protocol), decoded
//! in place.

use mysql::mysql_common::constants::ColumnType;

use super::Value;

/// Status flags at the start of `p` (OK packet after its two lenenc integers; EOF packet
/// after its warning count).
pub(super) fn status(p: &[u8]) -> u16 {
    match p {
        [a, b, ..] => u16::from_le_bytes([*a, *b]),
        _ => 0,
    }
}

/// Appends `n` as a length-encoded integer.
pub(super) fn put_lenenc(out: &mut Vec<u8>, n: u64) {
    match n {
        0..=250 => out.push(n as u8),
        251..=0xFFFF => {
            out.push(0xFC);
            out.extend_from_slice(&(n as u16).to_le_bytes());
        }
        0x1_0000..=0xFF_FFFF => {
            out.push(0xFD);
            out.extend_from_slice(&(n as u32).to_le_bytes()[..3]);
        }
        _ => {
            out.push(0xFE);
            out.extend_from_slice(&n.to_le_bytes());
        }
    }
}

/// Takes a length-encoded integer off the front of `p`.
pub(super) fn take_lenenc(p: &mut &[u8]) -> Option<u64> {
    let (n, used) = match *p.first()? {
        b @ 0..=250 => (u64::from(b), 1),
        0xFC => (
            u64::from(u16::from_le_bytes(p.get(1..3)?.try_into().ok()?)),
            3,
        ),
        0xFD => {
            let b = p.get(1..4)?;
            (u64::from(u32::from_le_bytes([b[0], b[1], b[2], 0])), 4)
        }
        0xFE => (u64::from_le_bytes(p.get(1..9)?.try_into().ok()?), 9),
        _ => return None,
    };
    *p = &p[used..];
    Some(n)
}

/// The type of the column a column-definition packet describes: after six length-encoded
/// strings (catalog, schema, table, original table, name, original name), the length of the
/// fixed fields, the character set (2 bytes) and the column length (4 bytes).
pub(super) fn column_type(p: &[u8]) -> Option<ColumnType> {
    let mut v = p;
    for _ in 0..6 {
        let n = take_lenenc(&mut v)? as usize;
        v = v.get(n..)?;
    }
    take_lenenc(&mut v)?;
    ColumnType::try_from(*v.get(6)?).ok()
}

/// The first column of a binary-protocol row.
pub(super) fn first_binary(p: &[u8], columns: usize, ty: ColumnType) -> Option<Value<'_>> {
    let bitmap = (columns + 7 + 2) / 8;
    // Bit 2 of the bitmap is the first column (the first two bits are reserved).
    if p.get(1)? & 0b100 != 0 {
        return Some(Value::Null);
    }
    let mut v = p.get(1 + bitmap..)?;
    take_binary(&mut v, ty, false)
}

/// Takes one binary-protocol value of type `ty` off the front of `v`; doubles as
/// [`Value::Double`] when `doubles`, else as their bytes.
fn take_binary<'a>(v: &mut &'a [u8], ty: ColumnType, doubles: bool) -> Option<Value<'a>> {
    use ColumnType::*;
    let fixed = |v: &mut &'a [u8], n: usize| -> Option<&'a [u8]> {
        let b = v.get(..n)?;
        *v = &v[n..];
        Some(b)
    };
    Some(match ty {
        MYSQL_TYPE_TINY => Value::Int(i64::from(fixed(v, 1)?[0] as i8)),
        MYSQL_TYPE_SHORT | MYSQL_TYPE_YEAR => {
            Value::Int(i64::from(i16::from_le_bytes(fixed(v, 2)?.try_into().ok()?)))
        }
        MYSQL_TYPE_LONG | MYSQL_TYPE_INT24 => {
            Value::Int(i64::from(i32::from_le_bytes(fixed(v, 4)?.try_into().ok()?)))
        }
        MYSQL_TYPE_LONGLONG => Value::Int(i64::from_le_bytes(fixed(v, 8)?.try_into().ok()?)),
        MYSQL_TYPE_FLOAT if doubles => Value::Double(f64::from(f32::from_le_bytes(
            fixed(v, 4)?.try_into().ok()?,
        ))),
        MYSQL_TYPE_DOUBLE if doubles => {
            Value::Double(f64::from_le_bytes(fixed(v, 8)?.try_into().ok()?))
        }
        MYSQL_TYPE_FLOAT => Value::Bytes(fixed(v, 4)?),
        MYSQL_TYPE_DOUBLE => Value::Bytes(fixed(v, 8)?),
        MYSQL_TYPE_DATE | MYSQL_TYPE_DATETIME | MYSQL_TYPE_TIMESTAMP | MYSQL_TYPE_TIME => {
            let n = usize::from(fixed(v, 1)?[0]);
            Value::Bytes(fixed(v, n)?)
        }
        _ => {
            let n = take_lenenc(v)? as usize;
            Value::Bytes(fixed(v, n)?)
        }
    })
}

/// Every column of a binary-protocol row of `types`, in order, to `f`; `None` for a malformed
/// row.
pub(super) fn binary_values<'a>(
    p: &'a [u8],
    types: &[ColumnType],
    mut f: impl FnMut(Value<'a>),
) -> Option<()> {
    let bitmap = (types.len() + 7 + 2) / 8;
    let nulls = p.get(1..1 + bitmap)?;
    let mut v = p.get(1 + bitmap..)?;
    for (i, &ty) in types.iter().enumerate() {
        let bit = i + 2;
        if nulls[bit / 8] & (1 << (bit % 8)) != 0 {
            f(Value::Null);
        } else {
            f(take_binary(&mut v, ty, true)?);
        }
    }
    Some(())
}

/// Every column of a text-protocol row of `columns` columns, in order, to `f`.
pub(super) fn text_values<'a>(
    p: &'a [u8],
    columns: usize,
    mut f: impl FnMut(Value<'a>),
) -> Option<()> {
    let mut v = p;
    for _ in 0..columns {
        if v.first() == Some(&0xFB) {
            v = &v[1..];
            f(Value::Null);
            continue;
        }
        let n = take_lenenc(&mut v)? as usize;
        f(Value::Bytes(v.get(..n)?));
        v = &v[n..];
    }
    Some(())
}

/// The first column of a text-protocol row.
pub(super) fn first_text(p: &[u8]) -> Option<Value<'_>> {
    if p.first() == Some(&0xFB) {
        return Some(Value::Null);
    }
    let mut v = p;
    let n = take_lenenc(&mut v)? as usize;
    Some(Value::Bytes(v.get(..n)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn length_encoded_integers_round_trip() {
        for n in [
            0u64,
            250,
            251,
            65535,
            65536,
            0xFF_FFFF,
            0x100_0000,
            u64::MAX,
        ] {
            let mut out = Vec::new();
            put_lenenc(&mut out, n);
            let mut p = &out[..];
            assert_eq!(take_lenenc(&mut p), Some(n), "{n}");
            assert!(p.is_empty());
        }
    }

    #[test]
    fn every_column_of_binary_and_text_rows() {
        use ColumnType::*;
        // Header, bitmap (4 columns: bits 2..5; the third is NULL), then LONG 7, DOUBLE 2.5,
        // and a DECIMAL as text.
        let mut row = vec![0u8, 0b1_0000];
        row.extend_from_slice(&7i32.to_le_bytes());
        row.extend_from_slice(&2.5f64.to_le_bytes());
        row.extend_from_slice(&[4, b'1', b'.', b'2', b'5']);
        let types = [
            MYSQL_TYPE_LONG,
            MYSQL_TYPE_DOUBLE,
            MYSQL_TYPE_LONG,
            MYSQL_TYPE_NEWDECIMAL,
        ];
        let mut got = Vec::new();
        assert_eq!(binary_values(&row, &types, |v| got.push(v)), Some(()));
        assert_eq!(
            got,
            [
                Value::Int(7),
                Value::Double(2.5),
                Value::Null,
                Value::Bytes(b"1.25")
            ]
        );
        assert_eq!(binary_values(&row[..5], &types, |_| {}), None);
        let text = [1u8, b'9', 0xFB, 2, b'a', b'b'];
        let mut got = Vec::new();
        assert_eq!(text_values(&text, 3, |v| got.push(v)), Some(()));
        assert_eq!(got, [Value::Bytes(b"9"), Value::Null, Value::Bytes(b"ab")]);
    }

    #[test]
    fn first_columns_of_binary_rows() {
        // Header, a 1-byte NULL bitmap (3 columns), then the first column.
        let row = [0u8, 0, 42, 0, 0, 0, 0, 0, 0, 0];
        assert_eq!(
            first_binary(&row, 3, ColumnType::MYSQL_TYPE_LONGLONG),
            Some(Value::Int(42))
        );
        let null = [0u8, 0b100];
        assert_eq!(
            first_binary(&null, 1, ColumnType::MYSQL_TYPE_LONGLONG),
            Some(Value::Null)
        );
        let s = [0u8, 0, 3, b'a', b'b', b'c'];
        assert_eq!(
            first_binary(&s, 1, ColumnType::MYSQL_TYPE_STRING),
            Some(Value::Bytes(b"abc"))
        );
        assert_eq!(first_text(&[2, b'1', b'7']).unwrap().as_i64(), Some(17));
        // A column definition: catalog "def", schema, table, original table, name, original
        // name, then the fixed fields (0x0c), character set, length, type, flags, decimals.
        let mut def = Vec::new();
        for s in ["def", "ibench", "sbtest1", "sbtest1", "c", "c"] {
            put_lenenc(&mut def, s.len() as u64);
            def.extend_from_slice(s.as_bytes());
        }
        def.extend_from_slice(&[
            0x0c,
            33,
            0,
            120,
            0,
            0,
            0,
            ColumnType::MYSQL_TYPE_STRING as u8,
        ]);
        def.extend_from_slice(&[0, 0, 0, 0, 0]);
        assert_eq!(column_type(&def), Some(ColumnType::MYSQL_TYPE_STRING));
        assert_eq!(first_text(&[0xFB]), Some(Value::Null));
    }
}
