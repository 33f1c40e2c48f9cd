package metrics

import (
	"database/sql"

	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Pool adds the database pool's own figures, read at every scrape
// (database/sql's DBStats, as go_sql_*{db_name="shop"}): the connections
// open, in use and idle, and how often and how long a statement waited
// for one. They show what sql-for-update costs beyond its product: every
// buyer waiting for a row lock holds a connection, and the other
// products' orders wait for what is left. Shops that share one pool (the
// load generator's three) each report all of it. Call it once, before the
// first scrape.
func (m *Shop) Pool(db *sql.DB) { m.reg.MustRegister(collectors.NewDBStatsCollector(db, "shop")) }
