//! Reports other tools write as HTML (Oracle's AWR): their text, and their tables as cells.
//! Oracle writes plain, regular HTML (no scripts, every cell closed), so a tag walk reads it;
//! a report cut short or malformed gives fewer rows, never a panic.

/// An HTML report as text: a line per table row, its cells apart, a blank line where a table
/// ends, tags gone.
pub(super) fn as_text(html: &str) -> String {
    let mut text = String::with_capacity(html.len() / 2);
    let mut rest = html;
    // The source's own line ends are spaces, as a browser shows them (a report re-saved with
    // each cell on a line of its own is the same report), except in preformatted text.
    let mut preformatted = false;
    let push_text = |text: &mut String, run: &str, preformatted: bool| {
        if preformatted {
            text.push_str(run);
        } else {
            text.extend(
                run.chars()
                    .map(|c| if c == '\n' || c == '\r' { ' ' } else { c }),
            );
        }
    };
    while let Some(open) = rest.find('<') {
        push_text(&mut text, &rest[..open], preformatted);
        let Some(close) = rest[open..].find('>') else {
            rest = "";
            break;
        };
        let tag = rest[open + 1..open + close].to_ascii_lowercase();
        if tag == "pre" || tag.starts_with("pre ") {
            preformatted = true;
        } else if tag.starts_with("/pre") {
            preformatted = false;
            text.push('\n');
        }
        if tag.starts_with("/table") {
            text.push_str(TABLE_END);
        } else if tag.starts_with("/tr")
            || tag.starts_with("br")
            || tag.starts_with("/h")
            || tag.starts_with("/p")
        {
            text.push('\n');
        } else if tag.starts_with("/td") || tag.starts_with("/th") {
            text.push_str("   ");
        }
        rest = &rest[open + close + 1..];
    }
    push_text(&mut text, rest, preformatted);
    // The source's own line ends between rows are no blank lines of the report: a table's
    // end is, as in the text report.
    let text = text
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| if line == TABLE_END.trim() { "" } else { line })
        .collect::<Vec<&str>>()
        .join("\n");
    unescape(&text)
}

/// Where a table of an HTML report ended, while its text is made.
const TABLE_END: &str = "\n</table>\n";

/// The entities Oracle's reports write, as characters.
fn unescape(text: &str) -> String {
    text.replace("&nbsp;", " ")
        .replace("&#160;", " ")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// A table as cells: each column's header (its header rows' words joined, a cell spanning
/// several columns heading each of them) and each data row with the line it starts on.
#[derive(Debug, PartialEq)]
pub(super) struct CellTable {
    pub headers: Vec<String>,
    pub rows: Vec<(usize, Vec<String>)>,
}

/// The table after each place the text `title` is (a section's heading, or a link to it in
/// the report's contents), first to last; a place before the end of the last table read
/// gives no table again.
pub(super) fn tables_after<'a>(
    html: &'a str,
    title: &'a str,
) -> impl Iterator<Item = CellTable> + 'a {
    let mut places = html.match_indices(title);
    let mut read_to = 0;
    std::iter::from_fn(move || {
        loop {
            let (at, _) = places.next()?;
            if at < read_to {
                continue;
            }
            let (table, end) = table_from(html, at)?;
            read_to = end;
            return Some(table);
        }
    })
}

/// The first table after byte `at`, and where it ends; None when there is none.
fn table_from(html: &str, at: usize) -> Option<(CellTable, usize)> {
    let start = at + find_tag(&html[at..], "<table")?;
    let end = find_tag(&html[start..], "</table").map_or(html.len(), |end| start + end);
    // Lines counted as the rows go, each stretch once.
    let (mut line, mut counted_to) = (1 + html[..start].matches('\n').count(), start);
    let mut header_rows: Vec<Vec<Cell>> = Vec::new();
    let (mut data_rows, mut lines) = (Vec::new(), Vec::new());
    for (offset, row) in table_rows(&html[start..end]) {
        if row.iter().all(|cell| cell.header) {
            header_rows.push(row);
        } else {
            line += html[counted_to..start + offset].matches('\n').count();
            counted_to = start + offset;
            lines.push(line);
            data_rows.push(row);
        }
    }
    // Data rows laid out together: a cell spanning rows fills the rows below.
    let rows = lines.into_iter().zip(spread(&data_rows)).collect();
    let grid = spread(&header_rows);
    let width = grid.iter().map(Vec::len).max().unwrap_or(0);
    let headers = (0..width)
        .map(|column| {
            let mut words: Vec<&str> = Vec::new();
            for row in &grid {
                let word = row.get(column).map_or("", String::as_str);
                if !word.is_empty() && words.last() != Some(&word) {
                    words.push(word);
                }
            }
            words.join(" ")
        })
        .collect();
    Some((CellTable { headers, rows }, end))
}

/// Where a tag (given in lower case, as `<table`) first opens in `html`, in any case.
fn find_tag(html: &str, tag: &str) -> Option<usize> {
    html.as_bytes()
        .windows(tag.len())
        .position(|window| window.eq_ignore_ascii_case(tag.as_bytes()))
}

/// The most grid slots spans fill (a real report's tables have a few thousand cells).
const MOST_SLOTS: usize = 1_000_000;

/// A cell as written: header or data, its text, and the columns and rows it spans.
struct Cell {
    header: bool,
    text: String,
    columns: usize,
    rows: usize,
}

/// A table's rows (each with its byte offset in `table`) and their cells.
fn table_rows(table: &str) -> Vec<(usize, Vec<Cell>)> {
    let lower = table.to_ascii_lowercase();
    let mut rows = Vec::new();
    let mut from = 0;
    while let Some(found) = lower[from..].find("<tr") {
        let start = from + found;
        let end = lower[start + 3..]
            .find("<tr")
            .map_or(table.len(), |next| start + 3 + next);
        rows.push((start, cells(&table[start..end], &lower[start..end])));
        from = end;
    }
    rows
}

/// The `<th>` and `<td>` cells of one row's HTML (`lower` is it in lower case), in one pass
/// over its tags: a cell ends where it closes or where the next one opens.
fn cells(row: &str, lower: &str) -> Vec<Cell> {
    let mut cells = Vec::new();
    // The cell being read: header or not, its spans, and where its text begins.
    let mut open: Option<(bool, usize, usize, usize)> = None;
    let mut from = 0;
    while let Some(found) = lower[from..].find('<') {
        let start = from + found;
        let tag_end = lower[start..].find('>').map(|end| start + end);
        let tag = &lower[start..tag_end.unwrap_or(lower.len())];
        let bytes = tag.as_bytes();
        let opens = bytes.len() > 3
            && bytes[1] == b't'
            && matches!(bytes[2], b'd' | b'h')
            && matches!(bytes[3], b' ' | b'\t' | b'\n' | b'\r')
            || tag == "<td"
            || tag == "<th";
        let closes = tag.starts_with("</td") || tag.starts_with("</th");
        if (opens || closes)
            && let Some((header, columns, rows, text_from)) = open.take()
        {
            cells.push(Cell {
                header,
                text: as_text(&row[text_from..start]).trim().to_string(),
                columns,
                rows,
            });
        }
        let Some(tag_end) = tag_end else {
            break;
        };
        if opens {
            let spans = (span(tag, "colspan"), span(tag, "rowspan"));
            open = Some((bytes[2] == b'h', spans.0, spans.1, tag_end + 1));
        }
        from = tag_end + 1;
    }
    if let Some((header, columns, rows, text_from)) = open {
        cells.push(Cell {
            header,
            text: as_text(&row[text_from.min(row.len())..]).trim().to_string(),
            columns,
            rows,
        });
    }
    cells
}

/// A cell's `colspan` or `rowspan`: 1 when absent or unreadable, at most 100 (a hostile
/// report does not make a huge grid).
fn span(tag: &str, attribute: &str) -> usize {
    let Some(at) = tag.find(attribute) else {
        return 1;
    };
    let digits: String = tag[at + attribute.len()..]
        .chars()
        .skip_while(|c| matches!(c, '=' | '"' | '\'' | ' '))
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().unwrap_or(1).clamp(1, 100)
}

/// Rows of cells laid out on a grid: a cell spanning columns fills each of them, and one
/// spanning rows fills the same columns of the rows below. Spans stop filling past
/// [`MOST_SLOTS`] slots: a hostile report does not make a huge grid.
fn spread(rows: &[Vec<Cell>]) -> Vec<Vec<String>> {
    let mut grid: Vec<Vec<Option<String>>> = vec![Vec::new(); rows.len()];
    let mut filled = 0usize;
    for (index, row) in rows.iter().enumerate() {
        let mut column = 0;
        for cell in row {
            let (columns, rows_below) = if filled > MOST_SLOTS {
                (1, 1)
            } else {
                (cell.columns, cell.rows)
            };
            filled += columns * rows_below;
            while grid[index].get(column).is_some_and(Option::is_some) {
                column += 1;
            }
            let last = (index + rows_below).min(rows.len());
            for line in &mut grid[index..last] {
                if line.len() < column + columns {
                    line.resize(column + columns, None);
                }
                for slot in &mut line[column..column + columns] {
                    *slot = Some(cell.text.clone());
                }
            }
            column += columns;
        }
    }
    grid.into_iter()
        .map(|row| row.into_iter().map(Option::unwrap_or_default).collect())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A grouped header (colspan) over two columns, a row label spanning both header rows
    /// (rowspan), entities and inner tags: each column gets its full header, each row its
    /// cells and line.
    #[test]
    fn a_table_with_grouped_headers_is_read_as_cells() {
        let html = "<h3>Time Model</h3>\n<p>Time Model</p>\n<table summary=\"x\">\n\
            <tr><th rowspan=\"2\">I#</th><th colspan=\"2\">DB time</th><th>Note</th></tr>\n\
            <tr><th>(s)</th><th>%</th><th>&#160;</th></tr>\n\
            <tr><td scope=\"row\">1</td><td align='right'>1,204.5</td><td><b>41.5</b></td><td>a &amp; b</td></tr>\n\
            <tr><td>2</td><td>99</td><td>3</td></tr>\n</table>\n<table><tr><th>other</th></tr></table>";
        let table = tables_after(html, "Time Model")
            .next()
            .expect("a table after the title");
        assert_eq!(table.headers, ["I#", "DB time (s)", "DB time %", "Note"]);
        assert_eq!(
            table.rows,
            vec![
                (
                    6,
                    vec!["1".into(), "1,204.5".into(), "41.5".into(), "a & b".into()]
                ),
                (7, vec!["2".into(), "99".into(), "3".into()]),
            ]
        );
        // The title twice (a heading, then a paragraph) gives its table once.
        assert_eq!(tables_after(html, "Time Model").count(), 1);
        assert_eq!(tables_after(html, "Wait Events").next(), None);
    }

    /// A hostile span neither panics nor makes a huge grid; a cut table gives its rows so far.
    #[test]
    fn hostile_spans_and_cut_tables_are_bounded() {
        let html = "T<table><tr><th colspan=99999999999>a</th></tr><tr><td>1<td rowspan='7'>2";
        let table = tables_after(html, "T").next().unwrap();
        assert_eq!(table.headers.len(), 100);
        assert_eq!(table.rows, vec![(1, vec!["1".into(), "2".into()])]);
        // A row label spanning two data rows fills the row below; a thousand spans of a
        // thousand stop filling at the cap.
        let html = "T<table><tr><th>I#</th><th>a</th></tr>\n<tr><td rowspan=2>1</td><td>x</td></tr>\n<tr><td>y</td></tr></table>";
        let table = tables_after(html, "T").next().unwrap();
        assert_eq!(
            table.rows,
            vec![
                (2, vec!["1".into(), "x".into()]),
                (3, vec!["1".into(), "y".into()])
            ]
        );
        let wide = format!(
            "T<table>{}</table>",
            "<tr><td colspan=100 rowspan=100>z</td></tr>".repeat(1000)
        );
        let table = tables_after(&wide, "T").next().unwrap();
        let slots: usize = table.rows.iter().map(|(_, cells)| cells.len()).sum();
        // At most the cap and the rows' gaps behind it, where 10^7 would be filled.
        assert!(slots <= 2_000_000, "{slots}");
    }

    /// The RAC fixture's tables read by this walk and by a full HTML parser (html5ever, as
    /// browsers parse) give the same cells, row by row.
    #[test]
    fn tables_match_a_full_html_parser() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/import/awr_rac-11.2.html"
        );
        let html = std::fs::read_to_string(path).unwrap();
        let document = scraper::Html::parse_document(&html);
        let table = scraper::Selector::parse("table").unwrap();
        let row = scraper::Selector::parse("tr").unwrap();
        let cell = scraper::Selector::parse("td").unwrap();
        let parsed: Vec<Vec<Vec<String>>> = document
            .select(&table)
            .map(|table| {
                table
                    .select(&row)
                    .map(|row| {
                        let text = |cell: scraper::ElementRef| {
                            cell.text()
                                .collect::<String>()
                                .replace('\u{a0}', " ")
                                .trim()
                                .to_string()
                        };
                        row.select(&cell).map(text).collect::<Vec<String>>()
                    })
                    .filter(|cells| !cells.is_empty())
                    .collect()
            })
            .collect();
        let ours: Vec<Vec<Vec<String>>> = [
            "Database Instances Included In Report</h2>",
            "System Statistics - Per Second</h2>",
        ]
        .iter()
        .map(|title| {
            let table = tables_after(&html, title).next().unwrap();
            table.rows.into_iter().map(|(_, cells)| cells).collect()
        })
        .collect();
        assert_eq!(parsed.len(), 2);
        assert_eq!(ours, parsed);
    }
}
