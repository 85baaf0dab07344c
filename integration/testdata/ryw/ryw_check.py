"""Write-then-read through pgaccel with psycopg 3 or psycopg2.

Usage: ryw_check.py DRIVER HOST PORT DBNAME USER PASSWORD TABLE BASE CLIENTS PAIRS

CLIENTS threads (numbered from BASE) each open a connection in autocommit and, PAIRS times,
insert a row numbered 1, 2, 3 ... of their own, then read the highest
number of their rows. A read below the number just committed is stale.
psycopg 3 sends parameters in the extended protocol (and prepares a text
from its fifth run); psycopg2 sends simple queries with the parameters in
the text. Prints one line: RESULT pairs=N stale=M first=...
"""
import sys
import threading

driver, host, port, dbname, user, password, table = sys.argv[1:8]
base, clients, pairs = int(sys.argv[8]), int(sys.argv[9]), int(sys.argv[10])

if driver == "pg3":
    import psycopg

    def connect():
        return psycopg.connect(host=host, port=port, dbname=dbname, user=user, password=password,
                               sslmode="disable", autocommit=True)
else:
    import psycopg2

    def connect():
        c = psycopg2.connect(host=host, port=port, dbname=dbname, user=user, password=password, sslmode="disable")
        c.autocommit = True
        return c

lock = threading.Lock()
result = {"pairs": 0, "stale": 0, "first": "", "error": ""}


def client(n):
    try:
        conn = connect()
        cur = conn.cursor()
        for i in range(1, pairs + 1):
            cur.execute("INSERT INTO " + table + " (id, client, seq) VALUES (%s, %s, %s)",
                        (1_000_000 * (n + 1) + i, n, i))
            cur.execute("SELECT coalesce(max(seq), 0) FROM " + table + " WHERE client = %s", (n,))
            got = cur.fetchone()[0]
            with lock:
                result["pairs"] += 1
                if got < i:
                    result["stale"] += 1
                    if not result["first"]:
                        result["first"] = "client %d wrote %d and read %d" % (n, i, got)
        conn.close()
    except Exception as e:  # reported, and the test fails on it
        with lock:
            result["error"] = result["error"] or repr(e)


threads = [threading.Thread(target=client, args=(base + n,)) for n in range(clients)]
for t in threads:
    t.start()
for t in threads:
    t.join()
if result["error"]:
    print("ERROR " + result["error"].replace("\n", " "))
    sys.exit(1)
print("RESULT pairs=%d stale=%d first=%s" % (result["pairs"], result["stale"], result["first"]))
