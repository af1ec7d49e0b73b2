//! Model layer: what is being priced. Sourced numbers (`sourced`), the catalog of models (`catalog`)
//! and its loading (`load`, which checks every model's default strategy), caching strategies and
//! their resolution against a model (`strategy`), tool definitions (`tools`) and their rendering into
//! tokens per model family (`tokens`). Depends only on [`crate::base`] and [`crate::error`].

pub mod catalog;
mod load;
pub mod prices;
pub mod pricing;
pub mod render;
pub(crate) mod sourced;
pub mod strategy;
#[doc(hidden)]
pub mod tokenizer;
pub mod tokens;
pub mod tools;
#[cfg(feature = "tokenizers")]
mod vocab_table;
