\set aid random(1, 100000 * :scale)
\set delta random(-5000, 5000)
\startpipeline
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
\set aid :aid + 1
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
END;
\endpipeline
