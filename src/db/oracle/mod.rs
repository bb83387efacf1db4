//! Oracle: its connect descriptors and settings (`connect`, always built, so a target is read
//! and checked without the client library), the client library's presence (`client`), and
//! the driver on Oracle Instant Client (`driver`, in every build but `--no-default-features`).

pub mod client;
pub(crate) mod connect;
#[cfg(feature = "oracle")]
mod driver;

#[cfg(feature = "oracle")]
pub use driver::Oracle;
