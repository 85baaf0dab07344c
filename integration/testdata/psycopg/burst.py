# A burst of psycopg2 sessions that only read an accelerated dataset:
# argv host port database user password n. Each thread connects (psycopg2
# opens a transaction with BEGIN before its first statement), reads, and
# keeps its connection open until every thread has read; prints OK or the
# first error.
import sys
import threading

import psycopg2

host, port, db, user, password, n = sys.argv[1:7]
n = int(n)
start = threading.Barrier(n)
done = threading.Barrier(n)
errors = []


def session():
    try:
        start.wait()
        c = psycopg2.connect(host=host, port=port, dbname=db, user=user, password=password, sslmode="disable")
        cur = c.cursor()
        cur.execute("SELECT count(*), sum(id) FROM sess_orders")
        got = cur.fetchone()
        if got != (200, 20100):
            errors.append("read %r" % (got,))
        done.wait()
        c.close()
    except Exception as e:  # noqa: BLE001 - reported to the test
        errors.append(repr(e))
        done.abort()


threads = [threading.Thread(target=session) for _ in range(n)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("OK" if not errors else errors[0], flush=True)
