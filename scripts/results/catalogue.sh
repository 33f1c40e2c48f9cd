#!/usr/bin/env bash
# Writes docs/results/catalogue.md: the default sale with --products 20,
# every buyer wanting one of twenty products drawn from a Zipf law (--skew
# 1.1, the default), --stock split evenly over them, with --fail-on-unsafe:
# each product audited alone from its own orders and answers, every safe row
# exact on every product, and report.md's table per product. With
# LOADGEN_REDIS_CLUSTER set it writes docs/results/catalogue-cluster.md
# instead: the same catalogue with the single-node roles on that cluster,
# then lua, redis-decr and redis-queue selling one product and then twenty,
# each row with each master's share of the commands (INFO commandstats): one
# product's keys share its hash tag, so its load lands on one master. The
# database and the other nodes stay embedded. About two minutes on a 2-core
# machine.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
unset LOADGEN_MYSQL_DSN LOADGEN_REDIS LOADGEN_ETCD
results_begin catalogue "A catalogue: twenty products under a Zipf skew, audited per product"
results_run --products 20 --fail-on-unsafe
if [ -n "${LOADGEN_REDIS_CLUSTER:-}" ]; then
	results_out=docs/results/catalogue-cluster.md
	results_run --strategies lua,redis-decr,redis-queue --products 1
	results_run --strategies lua,redis-decr,redis-queue --products 20
fi
results_end
