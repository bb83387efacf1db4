"""A synthetic server log of a pgbench-like workload, for the capture benches: SESSIONS
sessions at once, the extended protocol with its parameters (PostgreSQL), each session
replaced every 100,000 entries. FORMAT is csv (csvlog), stderr (log_line_prefix
'%m|%u|%d|%c|', pgreplay's), json (jsonlog) or slow (MySQL 8's slow log, the values in the
text). Usage: pg_csvlog.py PATH SIZE_MB SESSIONS [FORMAT]."""
import datetime
import json
import sys

path, size_mb, sessions = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
form = sys.argv[4] if len(sys.argv) > 4 else "csv"
limit = size_mb << 20
start = datetime.datetime(2026, 11, 29, 8, 0, 0)
statements = [
    ('UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2;', 2),
    ('SELECT abalance FROM pgbench_accounts WHERE aid = $1', 1),
    ('UPDATE pgbench_tellers SET tbalance = tbalance + $1 WHERE tid = $2;', 2),
    ('INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES ($1, $2, $3, $4, CURRENT_TIMESTAMP);', 4),
]


def entry(tick, session):
    moment = start + datetime.timedelta(microseconds=tick * 50)
    at = moment.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + " UTC"
    pid = 1000 + session
    sid = "6b0be61f.%x" % (session + (tick // 100000) * sessions)
    sql, count = statements[tick % len(statements)]
    values = ["%d" % ((tick * 7919 + n) % 100000) for n in range(count)]
    params = ", ".join("$%d = '%s'" % (n + 1, value) for n, value in enumerate(values))
    message = "execute P_%d: %s" % (tick % 4, sql)
    if form == "csv":
        return '%s,"app","shop",%d,"[local]",%s,%d,"UPDATE",2026-11-29 08:00:00 UTC,3/1,0,LOG,00000,"%s","parameters: %s",,,,,,,,"pgbench","client backend",,0\n' % (
            at, pid, sid, tick, message, params)
    if form == "stderr":
        return "%s|app|shop|%s|LOG:  %s\n%s|app|shop|%s|DETAIL:  parameters: %s\n" % (
            at, sid, message, at, sid, params)
    if form == "json":
        return json.dumps({
            "timestamp": at, "user": "app", "dbname": "shop", "pid": pid,
            "remote_host": "[local]", "session_id": sid, "line_num": tick, "ps": "UPDATE",
            "session_start": "2026-11-29 08:00:00 UTC", "vxid": "3/1", "txid": 0,
            "error_severity": "LOG", "message": message, "detail": "parameters: " + params,
            "application_name": "pgbench", "backend_type": "client backend", "query_id": 0,
        }) + "\n"
    text = sql.rstrip(";")
    for n in reversed(range(count)):
        text = text.replace("$%d" % (n + 1), values[n])
    thread = session + (tick // 100000) * sessions
    return ("# Time: %sZ\n# User@Host: app[app] @ localhost []  Id: %7d\n"
            "# Query_time: 0.000050  Lock_time: 0.000000 Rows_sent: 1  Rows_examined: 1\n"
            "use shop;\nSET timestamp=%d;\n%s;\n") % (
        moment.strftime("%Y-%m-%dT%H:%M:%S.%f"), thread,
        int(moment.replace(tzinfo=datetime.timezone.utc).timestamp()), text)


written = 0
with open(path, "w") as out:
    if form == "slow":
        header = ("/usr/sbin/mysqld, Version: 8.0.40 (MySQL Community Server - GPL). started with:\n"
                  "Tcp port: 3306  Unix socket: /var/run/mysqld/mysqld.sock\n"
                  "Time                 Id Command    Argument\n")
        out.write(header)
        written += len(header)
    tick = 0
    while written < limit:
        for session in range(sessions):
            tick += 1
            row = entry(tick, session)
            out.write(row)
            written += len(row)
print("made %.0f MB" % (written / 2**20))
