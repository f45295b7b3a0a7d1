//! Data tables (tables with no nested table) as GitHub markdown tables and JSON rows.
//!
//! A table that contains another table is page layout, not data; the composer renders it
//! as blocks instead. That rule is mechanical: no guessing from class names or sizes.

use super::content_json::MAX_ITEMS;

/// Most columns a colspan may add, so `colspan=100000` cannot blow up the output.
const MAX_COLSPAN: usize = 100;

/// Widest table whose short body rows are padded with empty cells. Padding every row of a
/// table made wide by one row of colspans multiplied rows by columns (a 4 KB page gave
/// megabytes of markdown); past this width body rows keep their own cells, which GitHub
/// markdown allows (the header and delimiter rows still span the full width).
const MAX_PADDED_WIDTH: usize = 64;

/// One row: markdown cells and plain-text cells, in parallel.
#[derive(Default)]
pub(crate) struct Row {
    md: Vec<String>,
    plain: Vec<String>,
    all_th: bool,
    in_thead: bool,
}

/// A finished table: markdown lines, JSON `headers` and JSON `rows`.
pub(crate) struct Finished {
    pub(crate) md_lines: Vec<String>,
    pub(crate) headers: Vec<String>,
    pub(crate) rows: Vec<Vec<String>>,
}

/// A data table being collected.
#[derive(Default)]
pub(crate) struct TableState {
    rows: Vec<Row>,
    current: Option<Row>,
    pub(crate) caption: Option<String>,
    pub(crate) rows_truncated: bool,
}

impl TableState {
    pub(crate) fn start_row(&mut self, in_thead: bool) {
        self.end_row();
        self.current = Some(Row {
            all_th: true,
            in_thead,
            ..Row::default()
        });
    }

    /// A cell; a cell outside any `<tr>` starts an implicit row.
    pub(crate) fn cell(&mut self, md: String, plain: String, header: bool, colspan: usize) {
        let row = self.current.get_or_insert_with(|| Row {
            all_th: true,
            ..Row::default()
        });
        row.all_th &= header;
        row.md.push(md.replace('|', "\\|"));
        row.plain.push(plain);
        for _ in 1..colspan.clamp(1, MAX_COLSPAN) {
            row.md.push(String::new());
            row.plain.push(String::new());
        }
    }

    pub(crate) fn end_row(&mut self) {
        if let Some(row) = self.current.take() {
            if row.md.is_empty() {
                return;
            }
            if self.rows.len() < MAX_ITEMS {
                self.rows.push(row);
            } else {
                self.rows_truncated = true;
            }
        }
    }

    /// Markdown lines and the JSON `(headers, rows)`. Markdown needs a header row, so
    /// without `<th>`/`<thead>` the first row serves; JSON `headers` is then empty.
    pub(crate) fn finish(mut self) -> Option<Finished> {
        self.end_row();
        if self
            .rows
            .iter()
            .all(|r| r.plain.iter().all(String::is_empty))
        {
            return None;
        }
        let width = self.rows.iter().map(|r| r.md.len()).max().unwrap_or(0);
        let has_header = self.rows.first().is_some_and(|r| r.all_th || r.in_thead);
        let md_row = |cells: &[String], pad: bool| {
            let mut line = String::from("|");
            let columns = if pad { width } else { cells.len().min(width) };
            for i in 0..columns {
                let c = cells.get(i).map(String::as_str).unwrap_or("");
                line.push(' ');
                line.push_str(c);
                line.push_str(" |");
            }
            line
        };
        let mut lines = Vec::with_capacity(self.rows.len() + 1);
        let mut headers = Vec::new();
        let mut json_rows = Vec::new();
        for (i, row) in self.rows.iter().enumerate() {
            lines.push(md_row(&row.md, i == 0 || width <= MAX_PADDED_WIDTH));
            if i == 0 {
                lines.push(md_row(&vec!["---".to_string(); width], true));
                if has_header {
                    headers = row.plain.clone();
                    continue;
                }
            }
            json_rows.push(row.plain.clone());
        }
        Some(Finished {
            md_lines: lines,
            headers,
            rows: json_rows,
        })
    }
}
