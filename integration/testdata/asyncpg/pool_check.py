# pool_check drives asyncpg (the real driver, Debian's python3-asyncpg)
# through pgaccel for TestSessions_AsyncpgPoolThroughOutage: phases "open"
# and "outage", the second started by a line on stdin. Each step prints
# "OK <step>" or "FAIL <step>: <SQLSTATE> <message>"; each phase ends
# with "PHASE <name> done". asyncpg prepares every statement it runs with
# arguments (named, in its statement cache), and its pool resets a
# connection it takes back (SELECT pg_advisory_unlock_all(); CLOSE ALL;
# UNLISTEN *; RESET ALL;).
#
# Run: /usr/bin/python3 pool_check.py HOST PORT DATABASE USER PASSWORD
import asyncio
import sys

import asyncpg

HOST, PORT, DB, USER, PASSWORD = sys.argv[1:6]


def out(line):
    print(line, flush=True)


async def step(name, coro):
    try:
        await coro
        out("OK " + name)
    except asyncpg.PostgresError as e:
        out("FAIL %s: %s %s" % (name, e.sqlstate, str(e).split("\n")[0]))
    except Exception as e:  # noqa: BLE001 - every failure is reported
        out("FAIL %s: - %r" % (name, e))


async def reads(pool):
    """Each of several tasks takes a connection, reads and gives it back
    (reset), twice."""
    async def one(k):
        for _ in range(2):
            async with pool.acquire() as c:
                for i in range(1, 6):
                    row = await c.fetchrow("SELECT v, amount FROM sess_orders WHERE id = $1", i + k)
                    if row["v"] != "v%d" % (i + k) or str(row["amount"]) != "%.2f" % ((i + k) * 1.25):
                        raise Exception("wrong row %r" % (row,))
                async with c.transaction():
                    n = await c.fetchval("SELECT count(*) FROM sess_orders")
                    if n != 200:
                        raise Exception("count %r" % n)
    await asyncio.gather(*(one(k) for k in range(4)))


async def write(pool, note):
    async with pool.acquire() as c:
        await c.execute("INSERT INTO sess_writes (note) VALUES ($1)", note)


async def main():
    pool = await asyncpg.create_pool(host=HOST, port=int(PORT), database=DB, user=USER, password=PASSWORD,
                                     min_size=4, max_size=4)
    await step("open/reads", reads(pool))
    out("PHASE open done")
    sys.stdin.readline()
    await step("logins/reads", reads(pool))
    out("PHASE logins done")
    sys.stdin.readline()
    await step("outage/reads", reads(pool))
    await step("outage/write", write(pool, "during asyncpg"))
    await step("outage/reads after write", reads(pool))
    # A new pool: new logins during the outage.
    fresh = await asyncpg.create_pool(host=HOST, port=int(PORT), database=DB, user=USER, password=PASSWORD,
                                      min_size=2, max_size=2)
    await step("outage/new pool reads", reads(fresh))
    out("PHASE outage done")
    sys.stdin.readline()
    await fresh.close()
    await pool.close()


asyncio.run(main())
