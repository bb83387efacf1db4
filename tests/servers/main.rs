//! Tests that start private servers: password methods, TLS, a primary with replicas.
//! One test binary of several files (a binary per file took twice the build time).

#[path = "../common/mod.rs"]
mod common;

mod autovacuum;
mod cluster;
mod mysql_tls;
mod pg_auth;
mod pg_tls;
mod replay;
mod replay_attacks;
mod replay_attacks_mariadb;
mod replay_limit;
mod replay_order;
mod replay_rows_mariadb;
mod replay_search;
mod replay_statements;
mod tables_own;
