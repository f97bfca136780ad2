//! A minimal ZIP writer: stored (uncompressed) entries, enough for log archives without a
//! compression dependency. Any unzip tool reads it.

fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

/// MS-DOS date and time of an epoch second (UTC).
fn dos_time(epoch: i64) -> (u16, u16) {
    let ts = platform_core::time::format_ts(epoch.max(315_532_800)); // DOS dates start in 1980
    let n = |r: std::ops::Range<usize>| ts[r].parse::<u16>().unwrap_or(0);
    let date = ((n(0..4).saturating_sub(1980)) << 9) | (n(5..7) << 5) | n(8..10);
    let time = (n(11..13) << 11) | (n(14..16) << 5) | (n(17..19) / 2);
    (time, date)
}

/// An archive of `(name, contents)` files, all dated `epoch`.
pub fn stored(files: &[(String, Vec<u8>)], epoch: i64) -> Vec<u8> {
    let (time, date) = dos_time(epoch);
    let mut out = Vec::new();
    let mut central = Vec::new();
    for (name, data) in files {
        let (crc, size, offset) = (crc32(data), data.len() as u32, out.len() as u32);
        let common = |v: &mut Vec<u8>| {
            v.extend_from_slice(&20u16.to_le_bytes()); // version needed
            v.extend_from_slice(&0x0800u16.to_le_bytes()); // flags: UTF-8 names
            v.extend_from_slice(&0u16.to_le_bytes()); // method: stored
            v.extend_from_slice(&time.to_le_bytes());
            v.extend_from_slice(&date.to_le_bytes());
            v.extend_from_slice(&crc.to_le_bytes());
            v.extend_from_slice(&size.to_le_bytes());
            v.extend_from_slice(&size.to_le_bytes());
            v.extend_from_slice(&(name.len() as u16).to_le_bytes());
            v.extend_from_slice(&0u16.to_le_bytes()); // extra length
        };
        out.extend_from_slice(&0x0403_4b50u32.to_le_bytes());
        common(&mut out);
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(data);
        central.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
        central.extend_from_slice(&20u16.to_le_bytes()); // version made by
        common(&mut central);
        central.extend_from_slice(&[0; 6]); // comment length, disk number start, internal attributes
        central.extend_from_slice(&0u32.to_le_bytes()); // external attributes
        central.extend_from_slice(&offset.to_le_bytes());
        central.extend_from_slice(name.as_bytes());
    }
    let (cd_offset, cd_size) = (out.len() as u32, central.len() as u32);
    out.extend_from_slice(&central);
    out.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
    out.extend_from_slice(&[0; 4]); // disk numbers
    out.extend_from_slice(&(files.len() as u16).to_le_bytes());
    out.extend_from_slice(&(files.len() as u16).to_le_bytes());
    out.extend_from_slice(&cd_size.to_le_bytes());
    out.extend_from_slice(&cd_offset.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    }

    /// The end record points at a central directory that ends right where the end record
    /// starts (the HTTP suite opens served archives with a real zip reader).
    #[test]
    fn central_directory_is_sized_exactly() {
        for n in 0..3 {
            let files: Vec<(String, Vec<u8>)> = (0..n).map(|i| (format!("{i}_job.txt"), vec![b'x'; i * 10])).collect();
            let z = stored(&files, 1_773_100_800);
            let eocd = z.len() - 22;
            let u32_at = |at: usize| u32::from_le_bytes(z[at..at + 4].try_into().unwrap()) as usize;
            assert_eq!(u32_at(eocd), 0x0605_4b50);
            assert_eq!(u32_at(eocd + 16) + u32_at(eocd + 12), eocd, "{n} files");
        }
    }
}
