//! Any bytes, as a server log `corescale capture` might be given, read as csvlog, jsonlog
//! and stderr: entries, or an error naming the file and a line, never a panic; every
//! statement's fingerprint and class are computed without a panic either. `.ci/run` runs it
//! for 30 s from the logs in `fuzz/inputs/capture`; by hand: `cargo +nightly fuzz run capture`.
#![no_main]

use corescale::workload::replay::capture::parse_parameters;
use corescale::workload::replay::class::classify;
use corescale::workload::replay::fingerprint::{Quoting, fingerprint};
use corescale::workload::replay::mysql_log::{self, MysqlLog};
use corescale::workload::replay::pg_log::{Format, PGREPLAY_PREFIX, Prefix, read_entries};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let formats = [
        Format::Csv,
        Format::Json,
        Format::Stderr(Prefix::parse(PGREPLAY_PREFIX).unwrap()),
    ];
    for format in &formats {
        let mut reader = bytes;
        let outcome = read_entries(&mut reader, format, "fuzz.log", &|_| {}, &mut |entry| {
            for quoting in [Quoting::Postgres, Quoting::Mysql] {
                let _ = fingerprint(&entry.message, quoting);
                let _ = classify(&entry.message, quoting);
            }
            if let Some(detail) = &entry.detail {
                let _ = parse_parameters(detail);
            }
            Ok(())
        });
        if let Err(error) = outcome {
            let message = format!("{error:#}");
            assert!(message.starts_with("fuzz.log: "), "{message}");
        }
    }
    for log in [MysqlLog::Slow, MysqlLog::General] {
        let mut reader = bytes;
        if let Err(error) = mysql_log::read_entries(&mut reader, log, "fuzz.log", &|_| {}, &mut |_| Ok(())) {
            let message = format!("{error:#}");
            assert!(message.starts_with("fuzz.log: "), "{message}");
        }
    }
    if let Ok(text) = std::str::from_utf8(bytes) {
        let _ = Prefix::parse(text);
    }
});
