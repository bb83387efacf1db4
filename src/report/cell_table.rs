//! A table of text cells, as every format renders it; its times in one unit for the whole
//! table, named in each header, and the columns known by their names whatever unit they took.

/// A titled table of text cells.
pub(crate) struct Table {
    pub title: String,
    pub headers: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// Columns a narrow terminal drops first, in order (by header).
    pub drop_first: Vec<&'static str>,
}

pub(crate) fn cells<const N: usize>(values: [&str; N]) -> Vec<String> {
    values.iter().map(|value| value.to_string()).collect()
}

pub(crate) fn percent(value: f64) -> String {
    format!("{:.0}%", 100.0 * value)
}

/// The table with its columns of times in milliseconds (a header ending " ms", its cells
/// written in full) shown in one unit for the whole table, the one that gives its largest
/// time 1 to 4 digits (us, ms or s), named in each header: a table never mixes units.
pub(crate) fn in_time_units(mut table: Table) -> Table {
    let columns: Vec<(usize, String)> = table
        .headers
        .iter()
        .enumerate()
        .filter_map(|(column, header)| Some((column, header.strip_suffix(" ms")?.to_string())))
        .collect();
    let largest = columns
        .iter()
        .flat_map(|(column, _)| {
            table
                .rows
                .iter()
                .filter_map(|row| row.get(*column)?.parse::<f64>().ok())
        })
        .fold(0.0_f64, |a, b| a.max(b.abs()));
    let (unit, factor) = crate::format::time_unit(largest);
    for (column, name) in columns {
        for row in &mut table.rows {
            if let Some(cell) = row.get_mut(column)
                && let Ok(value) = cell.parse::<f64>()
            {
                *cell = crate::format::time_in_unit(value * factor);
            }
        }
        table.headers[column] = format!("{name} {unit}");
    }
    table
}

/// Whether a header names the column `name` of `drop_first`, whatever time unit it took.
pub(crate) fn same_column(header: &str, name: &str) -> bool {
    let bare = |text: &str| {
        [" ms", " us", " s"]
            .iter()
            .find_map(|unit| text.strip_suffix(unit))
            .unwrap_or(text)
            .to_string()
    };
    header == name || bare(header) == bare(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A p50 of 0.2 ms beside a p99 of 35 ms: both in ms, never us beside ms.
    #[test]
    fn a_table_names_one_time_unit() {
        let table = in_time_units(Table {
            title: String::new(),
            headers: vec!["workers".into(), "p50 ms".into(), "p99 ms".into()],
            rows: vec![vec!["1".into(), "0.2".into(), "35".into()]],
            drop_first: Vec::new(),
        });
        assert_eq!(table.headers, ["workers", "p50 ms", "p99 ms"]);
        let small = in_time_units(Table {
            title: String::new(),
            headers: vec!["p50 ms".into(), "p99 ms".into()],
            rows: vec![vec!["0.02".into(), "0.35".into()]],
            drop_first: Vec::new(),
        });
        assert_eq!(small.headers, ["p50 us", "p99 us"]);
        assert!(same_column("read p99 us", "read p99 ms"));
    }
}
