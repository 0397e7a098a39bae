"""The replication ledger: the five papers' headline claims (``data/papers/claims.csv``), each decided by a test on
an estimate the kit computes from its own registered figures.

- :mod:`.estimates` — an estimate with its 95% interval, or a curve of them, and how each kind is made;
- :mod:`.verdicts` — the decision rules and their seven verdicts, from *holds* to *contradicted*;
- :mod:`.claims` — the claims as data, checked as they are read;
- :mod:`.ledger` — computing the ledger from the figures (shared with `coordkit reproduce`), and what it keeps;
- :mod:`.report` — the ledger as the terminal, a Markdown report and the notebooks show it.

`coordkit claims` computes and prints it; :func:`.report.show` ends each paper's notebook with its claims.
"""

PAPERS = ("rep", "pressure_fields", "delay", "ahoy", "agora")  # data/citations.csv's keys, in the notebooks' order
