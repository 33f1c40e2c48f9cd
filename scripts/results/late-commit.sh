#!/usr/bin/env bash
# Writes docs/results/late-commit.md: every row under the late commit (one
# commit in ten held back 300 ms with its lock renewals, three times the
# 100 ms TTL), then lua, fenced and etcd with a hold of 1.5 s, longer than
# etcd's one-second shortest lease, on 20 units so that the stock sells out
# behind the held commits. About two minutes on a 2-core machine.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
results_begin late-commit "The late commit: a lease is not a mutex"
results_run --late-commit 300ms
results_run --strategies lua,fenced,etcd --late-commit 1500ms --stock 20
results_end
