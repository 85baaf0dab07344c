# outage_check drives psycopg 3 and psycopg2 (the real drivers, Debian's
# python3-psycopg and python3-psycopg2) through pgaccel for
# TestSessions_PsycopgThroughOutage: phases "open", "logins", "outage" and
# "back", each after the first started by a line on stdin. Each step prints
# "OK <step>" or "FAIL <step>: <SQLSTATE> <message>"; each phase ends with
# "PHASE <name> done". Steps are named "<driver>/<phase>/<what>", driver
# pg3 or pg2.
#
# psycopg 3 sends its statements in the extended protocol with server-side
# parameters (an unnamed statement, then, from the fifth run of a text, a
# named one it prepares itself), and BEGIN before the first statement of a
# transaction; psycopg2 interpolates parameters into the text and sends
# everything as simple queries, BEGIN included. Both run a server-side
# (named) cursor the way their users' ORMs do for large results: DECLARE
# in a transaction, FETCH, CLOSE.
#
# Run: /usr/bin/python3 outage_check.py HOST PORT DATABASE USER PASSWORD
import sys
import time

import psycopg
import psycopg2

HOST, PORT, DB, USER, PASSWORD = sys.argv[1:6]


def out(line):
    print(line, flush=True)


def sqlstate(e):
    return getattr(e, "sqlstate", None) or getattr(e, "pgcode", None) or "-"


def step(name, fn, tx=None):
    """Runs fn as step name; after a failure, rolls tx back (a transaction
    a step left failed would fail the next step with 25P02)."""
    try:
        fn()
        out("OK " + name)
    except Refused as e:
        out("FAIL %s: %s" % (name, e))
    except (psycopg.Error, psycopg2.Error) as e:
        out("FAIL %s: %s %s" % (name, sqlstate(e), str(e).split("\n")[0]))
    except Exception as e:  # noqa: BLE001 - every failure is reported
        out("FAIL %s: - %r" % (name, e))
    else:
        return
    if tx is not None:
        try:
            tx.rollback()
        except Exception as e:  # noqa: BLE001
            out("FAIL %s (rollback): - %r" % (name, e))


class Refused(Exception):
    pass


def refused(password):
    """A login with password must be refused as the origin refuses it: the
    drivers raise the FATAL's text without its SQLSTATE at connect, so the
    step prints the SQLSTATE the text is Postgres' own for."""
    try:
        D.connect(password, True).close()
    except D.errors as e:
        msg = str(e)
        if 'FATAL:  password authentication failed for user "%s"' % USER in msg:
            raise Refused("28P01 " + msg.split("\n")[0])
        raise
    raise Exception("logged in")


class Pg3:
    name = "pg3"
    errors = psycopg.Error

    @staticmethod
    def connect(password, autocommit):
        return psycopg.connect(host=HOST, port=PORT, dbname=DB, user=USER, password=password,
                               connect_timeout=10, autocommit=autocommit)

    @staticmethod
    def named_cursor(c):
        return c.cursor(name="pgaccel_check")


class Pg2:
    name = "pg2"
    errors = psycopg2.Error

    @staticmethod
    def connect(password, autocommit):
        c = psycopg2.connect(host=HOST, port=PORT, dbname=DB, user=USER, password=password,
                             connect_timeout=10)
        c.autocommit = autocommit
        return c

    @staticmethod
    def named_cursor(c):
        return c.cursor(name="pgaccel_check")


def reads(c):
    """Reads through a parameterized text run past psycopg 3's prepare
    threshold, an aggregate and a literal, and checks the answers."""
    with c.cursor() as cur:
        for i in range(1, 9):
            cur.execute("SELECT v, amount FROM sess_orders WHERE id = %s", (i,))
            row = cur.fetchone()
            if row is None or row[0] != "v%d" % i or str(row[1]) != "%.2f" % (i * 1.25):
                raise Exception("wrong row for id %d: %r" % (i, row))
        cur.execute("SELECT count(*), sum(id) FROM sess_orders")
        n, s = cur.fetchone()
        if n != 200 or s != 20100:
            raise Exception("wrong count %r %r" % (n, s))
        if D is Pg3:
            # Results in binary: numeric, text and bigint.
            cur.execute("SELECT v, amount, id::bigint FROM sess_orders WHERE id = %s", (7,), binary=True)
            row = cur.fetchone()
            if row is None or row[0] != "v7" or str(row[1]) != "8.75" or row[2] != 7:
                raise Exception("wrong binary row: %r" % (row,))
    if not c.autocommit:
        c.commit()


def pipeline_reads(c):
    """psycopg 3's pipeline mode: the reads' statements sent together,
    with one Sync at the end."""
    if D is not Pg3:
        return
    with c.pipeline():
        curs = []
        for i in range(1, 11):
            cur = c.cursor()
            cur.execute("SELECT v FROM sess_orders WHERE id = %s", (i,))
            curs.append(cur)
        agg = c.cursor()
        agg.execute("SELECT count(*) FROM sess_orders WHERE id > %s", (100,))
    got = [cur.fetchone()[0] for cur in curs]
    if got != ["v%d" % i for i in range(1, 11)] or agg.fetchone()[0] != 100:
        raise Exception("pipeline rows %r" % got)
    if not c.autocommit:
        c.commit()


def cursor_reads(c):
    """A server-side cursor in a transaction, fetched in batches."""
    with D.named_cursor(c) as cur:
        cur.itersize = 64
        cur.execute("SELECT id FROM sess_orders WHERE id <= %s ORDER BY id", (150,))
        got = [r[0] for r in cur]
    c.commit()
    if got != list(range(1, 151)):
        raise Exception("cursor rows: %d" % len(got))


def write(c, note):
    with c.cursor() as cur:
        cur.execute("INSERT INTO sess_writes (note) VALUES (%s)", (note,))
    if not c.autocommit:
        c.commit()


def retry(fn, c):
    deadline = time.time() + 30
    while True:
        try:
            fn()
            return
        except D.errors:
            if time.time() > deadline:
                raise
            if not c.autocommit:
                c.rollback()
            time.sleep(0.2)


def await_next(phase):
    out("PHASE %s done" % phase)
    if not sys.stdin.readline():
        sys.exit(0)


def run(d):
    global D
    D = d
    p = d.name + "/"
    state = {}

    def open_phase():
        state["auto"] = d.connect(PASSWORD, True)
        state["tx"] = d.connect(PASSWORD, False)

    step(p + "open/connect", open_phase)
    auto, tx = state.get("auto"), state.get("tx")
    if auto is None or tx is None:
        return False
    step(p + "open/reads", lambda: reads(auto))
    step(p + "open/tx reads", lambda: reads(tx), tx)
    step(p + "open/cursor", lambda: cursor_reads(tx), tx)
    step(p + "open/pipeline", lambda: pipeline_reads(auto))
    step(p + "open/tx pipeline", lambda: pipeline_reads(tx), tx)
    await_next(p + "open")

    def logins():
        for i in range(3):
            c = d.connect(PASSWORD, i % 2 == 0)
            try:
                reads(c)
            finally:
                c.close()

    step(p + "logins/reads", logins)
    await_next(p + "logins")

    step(p + "outage/reads", lambda: reads(auto))
    step(p + "outage/tx reads", lambda: reads(tx), tx)
    # A cursor runs at the origin: 08006, and the transaction goes on.
    step(p + "outage/cursor", lambda: cursor_reads(tx), tx)
    step(p + "outage/pipeline", lambda: pipeline_reads(auto))
    step(p + "outage/tx pipeline", lambda: pipeline_reads(tx), tx)

    def login_reads(autocommit):
        c = d.connect(PASSWORD, autocommit)
        try:
            reads(c)
        finally:
            c.close()

    step(p + "outage/login reads", lambda: login_reads(True))
    step(p + "outage/login tx reads", lambda: login_reads(False))
    step(p + "outage/wrong password", lambda: refused("wrong"))
    step(p + "outage/write", lambda: write(auto, "during " + d.name))
    step(p + "outage/reads after write", lambda: reads(auto))

    def tx_write():
        with tx.cursor() as cur:
            cur.execute("SELECT count(*) FROM sess_orders")
        write(tx, "during tx " + d.name)

    step(p + "outage/tx write", tx_write)
    step(p + "outage/tx rollback", tx.rollback)
    step(p + "outage/tx reads after write", lambda: reads(tx), tx)
    await_next(p + "outage")

    # pgaccel tries the origin again at most once a second.
    step(p + "back/write", lambda: retry(lambda: write(auto, "after " + d.name), auto))
    step(p + "back/tx write", lambda: retry(lambda: (reads(tx), write(tx, "after tx " + d.name)), tx))
    step(p + "back/reads", lambda: reads(auto))
    step(p + "back/cursor", lambda: cursor_reads(tx), tx)
    out("PHASE %sback done" % p)
    auto.close()
    tx.close()
    return True


D = None
for driver in (Pg3, Pg2):
    run(driver)
