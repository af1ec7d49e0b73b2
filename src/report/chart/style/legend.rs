//! Legends: their rows (headings, coloured lines and bars, notes), layout and drawing.

use super::*;

/// One row of a legend.
#[derive(Debug, Clone)]
pub(crate) enum LegendItem {
    /// A bold heading such as `Model`.
    Heading(String),
    /// A line sample in a colour and dash pattern.
    Line {
        /// Line colour.
        colour: RGBColor,
        /// Dash pattern.
        dash: Dash,
        /// Label.
        text: String,
    },
    /// A filled square (bars, bands).
    Swatch {
        /// Fill colour.
        colour: RGBAColor,
        /// Label.
        text: String,
    },
    /// Plain text without a sample (e.g. which lines coincide), wrapped over the panel's width.
    Note(String),
}

impl LegendItem {
    /// The label of this row (used by tests).
    #[cfg(test)]
    pub(crate) fn text_for_test(&self) -> &str {
        self.text()
    }

    fn text(&self) -> &str {
        match self {
            LegendItem::Heading(t) | LegendItem::Note(t) => t,
            LegendItem::Line { text, .. } | LegendItem::Swatch { text, .. } => text,
        }
    }
}

/// Width of the sample (line or square) in a legend row: long enough to show a dash pattern when
/// the legend has lines, just a square otherwise.
fn sample_len(items: &[LegendItem], sc: &Scale) -> i32 {
    if items.iter().any(|i| matches!(i, LegendItem::Line { .. })) {
        sc.ipx(80.0)
    } else {
        sc.label().round() as i32
    }
}

/// Width a legend panel needs for `items`, capped at `max` pixels (longer labels get shortened).
pub(crate) fn legend_width<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    items: &[LegendItem],
    sc: &Scale,
    max: u32,
) -> u32 {
    let body = font(sc.label());
    let head = bold(sc.label());
    let widest = items
        .iter()
        .map(|i| match i {
            LegendItem::Heading(t) => text_width(area, t, &head),
            // Notes wrap to whatever width the samples and labels need.
            LegendItem::Note(_) => 0,
            _ => text_width(area, i.text(), &body) + (sample_len(items, sc) + sc.ipx(12.0)) as u32,
        })
        .max()
        .unwrap_or(0);
    (widest + 2 * sc.pad() as u32).min(max)
}

/// Draws `items` as a column starting at `top` on `area` (a panel beside the plot, so the legend never
/// covers data). A legend too long for the panel gets a smaller font, and rows that still do not fit
/// are summarised as `+N more`.
pub(crate) fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    items: &[LegendItem],
    sc: &Scale,
    top: i32,
) -> Result<(), String> {
    // A long legend first gets a smaller font (down to 75 %) and only then a "+N more" note.
    let (_, h) = area.dim_in_pixel();
    let mut shrink = 1.0;
    for k in [1.0, 0.92, 0.84, 0.75] {
        shrink = k;
        if legend_height(area, items, sc, k) <= h as i32 - top - sc.pad() {
            break;
        }
    }
    draw_legend_at(area, items, sc, top, shrink)
}

/// Row layout of a legend: (row height, continuation line step, font size, text x, wrapped labels).
fn legend_layout<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    items: &[LegendItem],
    sc: &Scale,
    shrink: f64,
) -> (i32, i32, f64, i32, Vec<Vec<String>>) {
    let (w, _) = area.dim_in_pixel();
    let pad = sc.pad();
    let size = sc.label() * shrink;
    let row = (size * 1.6).round() as i32;
    // Continuation lines of a wrapped label sit closer than separate entries.
    let line_step = (size * 1.2).round() as i32;
    let sample = sample_len(items, sc);
    let text_x = pad + sample + sc.ipx(12.0);
    let max_text = (w as i32 - text_x - pad / 2).max(10) as u32;
    // Long labels (strategy specs) wrap at their own separators rather than being cut, so that two
    // labels never shorten to the same text.
    let lines = items
        .iter()
        .map(|i| match i {
            LegendItem::Heading(t) => {
                vec![fit(
                    area,
                    t,
                    &bold(size),
                    (w as i32 - 2 * pad).max(10) as u32,
                )]
            }
            LegendItem::Note(t) => {
                wrap(area, t, &font(size), (w as i32 - 2 * pad).max(10) as u32, 4)
            }
            _ => wrap(area, i.text(), &font(size), max_text, 3),
        })
        .collect();
    (row, line_step, size, text_x, lines)
}

fn legend_height<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    items: &[LegendItem],
    sc: &Scale,
    shrink: f64,
) -> i32 {
    let (row, step, _, _, lines) = legend_layout(area, items, sc, shrink);
    lines
        .iter()
        .map(|l| row + (l.len() as i32 - 1) * step)
        .sum()
}

fn draw_legend_at<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    items: &[LegendItem],
    sc: &Scale,
    top: i32,
    shrink: f64,
) -> Result<(), String> {
    let (_, h) = area.dim_in_pixel();
    let pad = sc.pad();
    let (row, line_step, size, text_x, lines) = legend_layout(area, items, sc, shrink);
    let sample = sample_len(items, sc);
    let body = font(size);
    let height = |l: &Vec<String>| row + (l.len() as i32 - 1) * line_step;
    let bottom = h as i32 - pad;
    let stroke = sc.stroke();
    let mut y = top;
    for (k, (item, text)) in items.iter().zip(&lines).enumerate() {
        // Keep a row for the "+N more" note unless this is the last item.
        let reserve = if k + 1 < items.len() { row } else { 0 };
        if y + height(text) + reserve > bottom {
            area.draw(&Text::new(
                format!("+{} more not listed", items.len() - k),
                (pad, y + row / 2),
                anchored(font(size).color(&NEUTRAL), HPos::Left, VPos::Center),
            ))
            .map_err(err)?;
            break;
        }
        let cy = y + row / 2;
        match item {
            LegendItem::Heading(_) => {
                area.draw(&Text::new(
                    text[0].clone(),
                    (pad, cy),
                    anchored(bold(size), HPos::Left, VPos::Center),
                ))
                .map_err(err)?;
                y += height(text);
                continue;
            }
            LegendItem::Line { colour, dash, .. } => {
                let style = colour.stroke_width(stroke);
                let pts = [(pad, cy), (pad + sample, cy)];
                for piece in dash.pieces(&pts, sc) {
                    area.draw(&PathElement::new(piece, style)).map_err(err)?;
                }
            }
            LegendItem::Swatch { colour, .. } => {
                let half = (size * 0.5).round() as i32;
                area.draw(&Rectangle::new(
                    [(pad, cy - half), (pad + sample, cy + half)],
                    colour.filled(),
                ))
                .map_err(err)?;
            }
            LegendItem::Note(_) => {
                for (j, l) in text.iter().enumerate() {
                    area.draw(&Text::new(
                        l.clone(),
                        (pad, cy + j as i32 * line_step),
                        anchored(body.clone(), HPos::Left, VPos::Center),
                    ))
                    .map_err(err)?;
                }
                y += height(text);
                continue;
            }
        }
        for (j, l) in text.iter().enumerate() {
            area.draw(&Text::new(
                l.clone(),
                (text_x, cy + j as i32 * line_step),
                anchored(body.clone(), HPos::Left, VPos::Center),
            ))
            .map_err(err)?;
        }
        y += height(text);
    }
    Ok(())
}
