//! Oracle: its connect descriptors and settings (`connect`, always built, so a target is read
//! and checked without the client library), and the driver on Oracle Instant Client
//! (`driver`, with the `oracle` feature).

pub(crate) mod connect;
#[cfg(feature = "oracle")]
mod driver;

#[cfg(feature = "oracle")]
pub use driver::Oracle;
