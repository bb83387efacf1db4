//! A workload's per-level figures, declared once as a typed struct with [`level_figures!`]:
//! the struct, the list of its figures by field name (what the result document's
//! `workload_figures`, the CSV's `workload_figures.*` columns and `report`'s table of them are
//! made of) and the typed names other modules read a figure by. A new figure is one field.

use std::borrow::Cow;

/// One figure of a level, under its name: a field's name borrowed, a name made for the run
/// ("statement 2 p99_ms") owned, so nothing outlives the workload that made it.
pub type Figure = (Cow<'static, str>, f64);

/// A workload's figures of one level, as the list the result records.
pub trait FigureSet {
    /// Every figure the level has, in declaration order (absent ones left out).
    fn figures(&self) -> Vec<Figure>;
}

/// What a figure field may hold: a number, or a number the level may lack.
pub trait FigureValue {
    fn value(&self) -> Option<f64>;
}

impl FigureValue for f64 {
    fn value(&self) -> Option<f64> {
        Some(*self)
    }
}

impl FigureValue for Option<f64> {
    fn value(&self) -> Option<f64> {
        *self
    }
}

/// Adds `count` failures of `sqlstate` to a session's or a level's tally, kept by SQLSTATE
/// in the order first seen (script, replay).
pub(crate) fn count_failure(failures: &mut Vec<(String, u64)>, sqlstate: &str, count: u64) {
    match failures.iter_mut().find(|(known, _)| known == sqlstate) {
        Some((_, total)) => *total += count,
        None => failures.push((sqlstate.to_string(), count)),
    }
}

/// Declares a workload's figures: `level_figures! { pub struct Figures / FigureNames { ... } }`
/// makes the struct (fields `f64`, or `Option<f64>` for a figure a level may lack), its
/// [`FigureSet`], and `Figures::NAMES`, a `FigureNames` holding each field's recorded name,
/// so a reader names a figure by its field and a renamed field fails to compile.
macro_rules! level_figures {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident / $names:ident {
            $($(#[doc = $doc:literal])* $field:ident: $type:ty,)*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Default, PartialEq)]
        $vis struct $name {
            $($(#[doc = $doc])* pub $field: $type,)*
        }

        /// Each figure's name in the result document, by its field.
        #[derive(Debug, Clone, Copy)]
        $vis struct $names {
            $(pub $field: &'static str,)*
        }

        impl $name {
            pub const NAMES: $names = $names { $($field: stringify!($field),)* };
        }

        impl $crate::workload::figures::FigureSet for $name {
            fn figures(&self) -> Vec<$crate::workload::figures::Figure> {
                let mut figures = Vec::new();
                $(
                    if let Some(value) =
                        $crate::workload::figures::FigureValue::value(&self.$field)
                    {
                        figures.push((std::borrow::Cow::Borrowed(stringify!($field)), value));
                    }
                )*
                figures
            }
        }
    };
}

pub(crate) use level_figures;

/// A figure named by its subject and what it is ("failures SQLSTATE 40001", "new_order
/// p90_ms"), made when a level's figures are: owned by them, freed with them.
pub(crate) fn named_figure(subject: &str, figure: &str) -> Cow<'static, str> {
    Cow::Owned(format!("{subject} {figure}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    level_figures! {
        /// Two figures, one a level may lack.
        struct Example / ExampleNames {
            /// Always there.
            rate: f64,
            read_p99: Option<f64>,
        }
    }

    #[test]
    fn the_list_follows_the_fields_and_leaves_out_absent_figures() {
        let full = Example {
            rate: 2.5,
            read_p99: Some(7.0),
        };
        assert_eq!(
            full.figures(),
            vec![(Cow::from("rate"), 2.5), (Cow::from("read_p99"), 7.0)]
        );
        // A field's name is borrowed, never made anew per level.
        assert!(matches!(full.figures()[0].0, Cow::Borrowed("rate")));
        let lacking = Example {
            read_p99: None,
            ..full
        };
        assert_eq!(lacking.figures(), vec![(Cow::from("rate"), 2.5)]);
        assert_eq!(Example::NAMES.read_p99, "read_p99");
        assert_eq!(Example::NAMES.rate, "rate");
    }
}
