//! File names and safe file access. The file-access part lives in [`crate::error::files`] (the
//! lowest layer, since [`crate::error::read_text`] opens inputs through it) and is re-exported here.

pub(crate) use crate::error::files::*;

/// A short, stable form of a file name: names up to `max` bytes unchanged; longer ones cut at a
/// character boundary and ended with a hash of the whole name, so different long ids stay different
/// and the same id always gives the same name.
pub(crate) fn shorten_name(name: &str, max: usize) -> String {
    if name.len() <= max {
        return name.to_string();
    }
    let hash = format!("-{:016x}", crate::base::hash::fnv1a(name.as_bytes()));
    let mut cut = max.saturating_sub(hash.len());
    while !name.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}{hash}", &name[..cut])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_names_are_shortened_stably_and_distinctly() {
        let a = "é".repeat(3000);
        let b = format!("{}x", "é".repeat(3000));
        let sa = shorten_name(&a, 120);
        assert!(sa.len() <= 120, "{}", sa.len());
        assert_eq!(sa, shorten_name(&a, 120));
        assert_ne!(sa, shorten_name(&b, 120));
        assert_eq!(shorten_name("short", 120), "short");
    }
}
