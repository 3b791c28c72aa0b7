"""Writes the SQL of the sqlite3 capture (a TPC-B-like transaction workload) to stdout.

Deterministic (seed 6): 5,000 accounts, 1,500 small transactions (debit one account, credit
another, append a history row), an index build, and reporting queries.
"""

import random

rng = random.Random(6)
N_ACCOUNTS = 5_000
N_TXN = 1_500
out = []
out.append("PRAGMA journal_mode=DELETE;")
out.append("PRAGMA synchronous=OFF;")
out.append("CREATE TABLE accounts(id INTEGER PRIMARY KEY, branch INTEGER, owner TEXT, balance INTEGER);")
out.append("CREATE TABLE history(id INTEGER PRIMARY KEY, src INTEGER, dst INTEGER, amount INTEGER, note TEXT);")
out.append(
    f"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {N_ACCOUNTS}) "
    "INSERT INTO accounts SELECT i, i % 50, 'owner-' || hex(randomblob(8)), 1000 FROM n;"
)
for t in range(N_TXN):
    a, b = rng.randrange(1, N_ACCOUNTS + 1), rng.randrange(1, N_ACCOUNTS + 1)
    amt = rng.randrange(1, 500)
    out.append(
        f"BEGIN; UPDATE accounts SET balance = balance - {amt} WHERE id = {a}; "
        f"UPDATE accounts SET balance = balance + {amt} WHERE id = {b}; "
        f"INSERT INTO history(src, dst, amount, note) VALUES ({a}, {b}, {amt}, 'txn {t}'); COMMIT;"
    )
    if t == N_TXN // 2:
        out.append("CREATE INDEX history_src ON history(src);")
out.append("SELECT branch, count(*), sum(balance) FROM accounts GROUP BY branch ORDER BY 3 DESC LIMIT 5;")
out.append(
    "SELECT a.owner, sum(h.amount) FROM history h JOIN accounts a ON a.id = h.src GROUP BY h.src "
    "ORDER BY 2 DESC LIMIT 10;"
)
out.append("SELECT count(*) FROM history WHERE src IN (SELECT id FROM accounts WHERE balance < 900);")
print("\n".join(out))
