#!/usr/bin/env bash
# Writes docs/results/batch-late-commit.md (batch-late-commit-real.md on real
# servers): the batched rows under the late commit (one commit in ten held
# back 300 ms with its lock renewals, three times the 100 ms TTL): lua+batch,
# whose batch has no fence, beside fenced+batch, whose batch registers one.
# On SQLite a transaction that read before another's commit cannot write
# after it; on MariaDB's REPEATABLE READ it can. About 40 s.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
results_begin batch-late-commit "The batched rows under the late commit"
results_run --strategies lua+batch,fenced+batch --late-commit 300ms
results_end
