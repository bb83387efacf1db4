//! A plain aligned text table: first column left-aligned, the others right-aligned.

pub(crate) fn render(headers: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = headers.iter().map(|header| header.len()).collect();
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |cells: &mut dyn Iterator<Item = &str>| {
        let text: Vec<String> = cells
            .zip(&widths)
            .enumerate()
            .map(|(column, (cell, width))| {
                if column == 0 {
                    format!("{cell:<width$}")
                } else {
                    format!("{cell:>width$}")
                }
            })
            .collect();
        format!("{}\n", text.join("  ").trim_end())
    };
    let mut out = line(&mut headers.iter().copied());
    out.push_str(&line(
        &mut widths
            .iter()
            .map(|width| "-".repeat(*width))
            .collect::<Vec<_>>()
            .iter()
            .map(String::as_str),
    ));
    for row in rows {
        out.push_str(&line(&mut row.iter().map(String::as_str)));
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn columns_align() {
        let text = super::render(&["n", "time"], &[vec!["1".into(), "10.5".into()]]);
        assert_eq!(text, "n  time\n-  ----\n1  10.5\n");
    }
}
