//! SLOB's tables on PostgreSQL: their load (one transaction: table, rows, index, the
//! server-side loop function), kept apart from the driver's client parts.

use super::*;

const FILLER_BYTES: usize = 1000;
const INSERT_BATCH: usize = 2000;

impl SlobTables for Postgres {
    fn load_table(
        &self,
        record: SetupRecord,
        stamp: &SetupStamp,
        loaded: &(dyn Fn(u64) + Sync),
    ) -> Result<()> {
        let mut session = self.connect_own()?;
        let rows = record.rows;
        let name = table_name(record.schema);
        load_table(&mut session, &self.schema, record, stamp, loaded)
            .and_then(|()| settle_statistics(&mut session, &self.schema, &name, rows))
            .map_err(|error| explain(error, &self.target))
    }
}

/// One transaction: the table, its rows, index and server-side loop, and their catalogue
/// rows. A failed or interrupted load leaves nothing behind.
fn load_table(
    session: &mut WireSession,
    schema: &str,
    record: SetupRecord,
    stamp: &SetupStamp,
    loaded: &(dyn Fn(u64) + Sync),
) -> Result<()> {
    let name = table_name(record.schema);
    let table = qualified(schema, &name);
    let index = quote_double(&format!("{name}_key"));
    session.transaction(|session| {
        session.simple(&format!(
            "CREATE TABLE {table} (key pg_catalog.int8 NOT NULL, scratch pg_catalog.int8 NOT NULL, filler pg_catalog.text NOT NULL) WITH (fillfactor = 10)"
        ))?;
        let insert = format!(
            "INSERT INTO {table} (key, scratch, filler)
             SELECT k, k OPERATOR(pg_catalog.%) 1000, pg_catalog.repeat('x', {FILLER_BYTES}) FROM pg_catalog.unnest($1::pg_catalog.int8[]) WITH ORDINALITY AS u(k, position) ORDER BY position"
        );
        // Rows go in physically in a random key order, so a key range visits random blocks.
        let order = permutation(record.rows, record.schema + 1);
        for batch in order.chunks(INSERT_BATCH) {
            let keys: Vec<String> = batch.iter().map(u64::to_string).collect();
            session.query(&insert, &[&format!("{{{}}}", keys.join(","))])?;
            loaded(batch.len() as u64);
        }
        // Analysed once the load has committed (`settle_statistics`).
        session.simple(&format!("CREATE INDEX {index} ON {table} (key)"))?;
        session.simple(&loop_function_sql(schema, record.schema))?;
        let parameters = record.to_json();
        for (kind, object) in [
            (ObjectKind::Table, name.clone()),
            (ObjectKind::Function, loop_function(record.schema)),
        ] {
            record_created(session, schema, (kind, &object), stamp, READY, &parameters)?;
        }
        Ok(())
    })
}

/// Analyses a new table and leaves nothing for autovacuum to do on it. Its inserts reach the
/// statistics a moment after the load commits (an ANALYZE in the load's own transaction would
/// be undone by them), and would have autovacuum analyse and vacuum the whole table a minute
/// later, in the middle of a run, its block reads counted with the statements'. So: wait for
/// them (at most 10 s), then VACUUM (ANALYZE), which also sets the hint bits the first
/// statements would write.
fn settle_statistics(session: &mut WireSession, schema: &str, name: &str, rows: u64) -> Result<()> {
    let counted = "SELECT t.n_mod_since_analyze FROM pg_catalog.pg_stat_user_tables t WHERE t.schemaname = $2::pg_catalog.text AND t.relname = $1::pg_catalog.text";
    let started = std::time::Instant::now();
    while started.elapsed() < std::time::Duration::from_secs(10) {
        let modified = session
            .query_value::<u64>(counted, &[name, schema])
            .unwrap_or(0);
        if modified >= rows {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    session
        .simple(&format!("VACUUM (ANALYZE) {}", qualified(schema, name)))
        .with_context(|| format!("vacuuming the new table {name}"))
}

/// pgio's approach: the statements loop inside the server, with no client round trip. Static
/// SQL, so PL/pgSQL plans it once, as the client's prepared statement is. Its own search_path
/// is pinned and its table qualified: whoever calls it, it runs only built-ins and its table.
fn loop_function_sql(own_schema: &str, schema: u64) -> String {
    let function = qualified(own_schema, &loop_function(schema));
    let table = qualified(own_schema, &table_name(schema));
    format!(
        "CREATE FUNCTION {function}(row_count pg_catalog.int8, work_unit pg_catalog.int8, statements pg_catalog.int8)
         RETURNS pg_catalog.int8 LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
         DECLARE
             first_key bigint;
             visited bigint := 0;
             total bigint;
             found_rows bigint;
         BEGIN
             FOR i IN 1..statements LOOP
                 first_key := pg_catalog.floor(pg_catalog.random() * (row_count - work_unit))::pg_catalog.int8;
                 SELECT pg_catalog.sum(scratch), pg_catalog.count(*) INTO total, found_rows
                   FROM {table} WHERE key BETWEEN first_key AND first_key + work_unit;
                 visited := visited + found_rows;
             END LOOP;
             RETURN visited;
         END $$"
    )
}
