//! Run-log archives, written by the `zip` crate (deflated entries, as the hosted platform's are).

use std::io::{Cursor, Write};

use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, DateTime, ZipWriter};

/// The archive's timestamp of an epoch second (UTC); zip dates start in 1980.
fn zip_time(epoch: i64) -> DateTime {
    let ts = platform_core::time::format_ts(epoch.max(315_532_800));
    let n = |r: std::ops::Range<usize>| ts[r].parse::<u16>().unwrap_or(0);
    DateTime::from_date_and_time(n(0..4), n(5..7) as u8, n(8..10) as u8, n(11..13) as u8, n(14..16) as u8, n(17..19) as u8)
        .unwrap_or_default()
}

/// An archive of `(name, contents)` files, all dated `epoch`.
pub fn archive(files: &[(String, Vec<u8>)], epoch: i64) -> Vec<u8> {
    let options = SimpleFileOptions::default().compression_method(CompressionMethod::Deflated).last_modified_time(zip_time(epoch));
    let mut z = ZipWriter::new(Cursor::new(Vec::new()));
    for (name, data) in files {
        // Writing to memory fails only on a duplicate name, which the caller never makes.
        if z.start_file(name.as_str(), options).and_then(|_| Ok(z.write_all(data)?)).is_err() {
            tracing::error!(name, "run-log archive: entry skipped");
        }
    }
    z.finish().map(Cursor::into_inner).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Any zip reader opens it, with every entry, its name, contents and date.
    #[test]
    fn archives_read_back() {
        for n in 0..3 {
            let files: Vec<(String, Vec<u8>)> = (0..n).map(|i| (format!("job {i}/{i}_step.txt"), vec![b'x'; i * 1000])).collect();
            let bytes = archive(&files, 1_773_100_800);
            let mut z = zip::ZipArchive::new(Cursor::new(bytes)).unwrap();
            assert_eq!(z.len(), n);
            for (name, data) in &files {
                let mut f = z.by_name(name).unwrap();
                let mut back = Vec::new();
                std::io::Read::read_to_end(&mut f, &mut back).unwrap();
                assert_eq!(&back, data);
                let t = f.last_modified().unwrap();
                assert_eq!((t.year(), t.month(), t.day()), (2026, 3, 10));
            }
        }
    }
}
