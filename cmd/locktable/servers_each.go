package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// redisServer: the version, and the persistence settings of every node
// (neither an append-only file nor snapshots: the locks live in memory).
// Redis keeps no fsync counter.
func redisServer(ctx context.Context, b *backends) *server {
	s := &server{name: fmt.Sprintf("Redis, %d nodes", len(b.redis))}
	if len(b.redis) == 1 {
		s.name = "Redis, 1 node"
	}
	ctx, cancel := context.WithTimeout(ctx, askWithin)
	defer cancel()
	var versions, settings []string
	for _, c := range b.redis {
		info, err := c.InfoMap(ctx, "server").Result()
		v := "unknown"
		if err == nil {
			v = info["Server"]["redis_version"]
		}
		versions = append(versions, v)
		cfg, err := c.ConfigGet(ctx, "*").Result()
		if err != nil {
			settings = append(settings, unknown(err))
			continue
		}
		settings = append(settings, fmt.Sprintf("appendonly %s, appendfsync %s, save %q", cfg["appendonly"], cfg["appendfsync"], cfg["save"]))
	}
	s.version, s.durability = distinct(versions, ", "), distinct(settings, "; ")
	s.where = "memory only"
	for _, x := range settings {
		if !strings.HasPrefix(x, "appendonly no,") || !strings.HasSuffix(x, `save ""`) {
			s.where = "memory, and disk as the next column says"
		}
	}
	return s
}

// etcdServer: the members' version, and their WAL fsyncs, from each
// member's /metrics (etcd fsyncs its write-ahead log before it answers a
// write; where the log lives is not visible to a client).
func etcdServer(ctx context.Context, b *backends, endpoints []string) *server {
	s := &server{name: fmt.Sprintf("etcd, %d members", len(endpoints)), where: "not visible to a client",
		durability: "the write-ahead log fsynced before every write is answered"}
	ctx, cancel := context.WithTimeout(ctx, askWithin)
	defer cancel()
	var versions []string
	for _, e := range endpoints {
		st, err := b.etcd.Status(ctx, e)
		if err != nil {
			versions = append(versions, unknown(err))
			continue
		}
		versions = append(versions, st.Version)
	}
	s.version = distinct(versions, ", ")
	s.fsyncs = func(ctx context.Context) (fsyncCount, error) {
		var sum fsyncCount
		for _, e := range endpoints {
			m, err := metrics(ctx, endpointURL(e)+"/metrics",
				"etcd_disk_wal_fsync_duration_seconds_count", "etcd_disk_wal_fsync_duration_seconds_sum")
			if err != nil {
				return fsyncCount{}, err
			}
			sum.n += m[0]
			sum.took += time.Duration(m[1] * float64(time.Second))
		}
		sum.known = true
		return sum, nil
	}
	return s
}

// metrics reads the values of names from a Prometheus text page.
func metrics(ctx context.Context, url string, names ...string) ([]float64, error) {
	ctx, cancel := context.WithTimeout(ctx, askWithin)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", url, resp.Status)
	}
	out, found := make([]float64, len(names)), 0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if i := slices.Index(names, name); ok && i >= 0 {
			if out[i], err = strconv.ParseFloat(value, 64); err == nil {
				found++
			}
		}
	}
	if found < len(names) {
		return nil, fmt.Errorf("%s: not all of %s", url, strings.Join(names, ", "))
	}
	return out, sc.Err()
}

// zkServer: the members' version and transaction log directory, and the
// fsyncs of that log, from ZooKeeper's four-letter words (srvr, conf,
// mntr; the members must allow them).
func zkServer(ctx context.Context, members []string) *server {
	s := &server{name: fmt.Sprintf("ZooKeeper, %d members", len(members)),
		durability: "the transaction log fsynced before every write is acknowledged (forceSync)"}
	var versions, dirs []string
	for _, m := range members {
		srvr, err := fourLetters(ctx, m, "srvr")
		if err != nil {
			versions = append(versions, unknown(err))
		} else {
			v, _, _ := strings.Cut(srvr["Zookeeper version"], "-")
			versions = append(versions, v)
		}
		conf, err := fourLetters(ctx, m, "conf")
		if err != nil {
			dirs = append(dirs, unknown(err))
		} else {
			dirs = append(dirs, where(conf["dataLogDir"]))
		}
	}
	s.version = distinct(versions, ", ")
	s.where = distinct(dirs, ", ")
	s.fsyncs = func(ctx context.Context) (fsyncCount, error) {
		var sum fsyncCount
		for _, m := range members {
			mntr, err := fourLetters(ctx, m, "mntr")
			if err != nil {
				return fsyncCount{}, err
			}
			n, err1 := strconv.ParseFloat(mntr["zk_cnt_fsynctime"], 64)
			ms, err2 := strconv.ParseFloat(mntr["zk_sum_fsynctime"], 64)
			if err1 != nil || err2 != nil {
				return fsyncCount{}, fmt.Errorf("%s: mntr has no zk_cnt_fsynctime and zk_sum_fsynctime", m)
			}
			sum.n += n
			sum.took += time.Duration(ms * float64(time.Millisecond))
		}
		sum.known = true
		return sum, nil
	}
	return s
}

// fourLetters sends ZooKeeper's four-letter word cmd to member and
// returns its answer's "key=value", "key: value" or "key<TAB>value" lines.
func fourLetters(ctx context.Context, member, cmd string) (map[string]string, error) {
	ctx, cancel := context.WithTimeout(ctx, askWithin)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", member)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	if _, err := conn.Write([]byte(cmd)); err != nil {
		return nil, err
	}
	out := map[string]string{}
	sc := bufio.NewScanner(conn)
	for sc.Scan() {
		line := sc.Text()
		for _, sep := range []string{"\t", "=", ": "} {
			if k, v, ok := strings.Cut(line, sep); ok {
				out[k] = strings.TrimSpace(v)
				break
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no answer to %q (not in 4lw.commands.whitelist?)", member, cmd)
	}
	return out, nil
}

// dbServer: the server's data directory and the settings that decide
// whether a COMMIT waits for a disk, and InnoDB's fsyncs (it counts them,
// the redo log's among them, but not how long they take).
func dbServer(ctx context.Context, r *rowLock) *server {
	s := &server{name: "row lock's database", version: r.server}
	ctx, cancel := context.WithTimeout(ctx, askWithin)
	defer cancel()
	var dir, flush, logBin, syncBinlog string
	err := r.db.QueryRowContext(ctx, "SELECT @@datadir, @@innodb_flush_log_at_trx_commit, @@log_bin, @@sync_binlog").
		Scan(&dir, &flush, &logBin, &syncBinlog)
	if err != nil {
		s.where, s.durability = unknown(err), unknown(err)
	} else {
		s.where = where(dir)
		s.durability = fmt.Sprintf("innodb_flush_log_at_trx_commit %s, log_bin %s, sync_binlog %s", flush, logBin, syncBinlog)
	}
	s.fsyncs = func(ctx context.Context) (fsyncCount, error) {
		ctx, cancel := context.WithTimeout(ctx, askWithin)
		defer cancel()
		var name string
		var n float64
		err := r.db.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE 'Innodb_data_fsyncs'").Scan(&name, &n)
		return fsyncCount{n: n}, err
	}
	return s
}

// distinct joins xs with sep, a run of equal ones said once (the members
// of one cluster mostly say the same). xs is not changed.
func distinct(xs []string, sep string) string {
	return strings.Join(slices.Compact(slices.Clone(xs)), sep)
}
