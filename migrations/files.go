package migrations

import (
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strings"
)

// migration is one embedded .sql file.
type migration struct {
	version    string   // file name without .sql, e.g. 0001_products
	statements []string // in file order, without the final semicolons
	only       string   // "mysql" for a *.mysql.sql file; "" runs everywhere
}

var fileName = regexp.MustCompile(`^[0-9]{4}_[a-z0-9_]+(\.mysql)?\.sql$`)

// load reads and splits the embedded files, sorted by name.
func load() ([]migration, error) {
	names, err := fs.Glob(files, "*.sql")
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	sort.Strings(names)
	var all []migration
	for _, name := range names {
		if !fileName.MatchString(name) {
			return nil, fmt.Errorf("migrations: file %s: name must look like 0001_what.sql or 0001_what.mysql.sql", name)
		}
		b, err := fs.ReadFile(files, name)
		if err != nil {
			return nil, fmt.Errorf("migrations: %w", err)
		}
		stmts := split(string(b))
		if len(stmts) == 0 {
			return nil, fmt.Errorf("migrations: file %s has no statement", name)
		}
		m := migration{version: strings.TrimSuffix(name, ".sql"), statements: stmts}
		if strings.HasSuffix(name, ".mysql.sql") {
			m.only = mysql.name
		}
		all = append(all, m)
	}
	return all, nil
}

// split cuts a file into statements: a statement ends with a semicolon at
// the end of a line. Comment lines (--) and blank lines are dropped. This
// is not a SQL parser; keep semicolons out of string literals at line ends.
//
// A stored procedure's body is full of semicolons that end its own
// statements, not the file's. As in the mysql client, a line
// "DELIMITER //" makes "//" at the end of a line end a statement instead,
// until "DELIMITER ;": the file reads as it would be pasted into mysql.
func split(text string) []string {
	var stmts []string
	var cur []string
	end := ";"
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "--") {
			continue
		}
		if d, ok := delimiter(trimmed); ok {
			end = d
			continue
		}
		line = strings.TrimRight(line, " \t\r")
		if strings.HasSuffix(trimmed, end) {
			cur = append(cur, strings.TrimSuffix(line, end))
			stmts = append(stmts, strings.Join(cur, "\n"))
			cur = nil
			continue
		}
		cur = append(cur, line)
	}
	if len(cur) > 0 {
		stmts = append(stmts, strings.Join(cur, "\n"))
	}
	return stmts
}

// delimiter reads a "DELIMITER x" line as the mysql client does: the word
// in any case, then white space, then the new delimiter. A line that is
// only "DELIMITER", or names no delimiter, is not one (and fails as SQL).
func delimiter(line string) (string, bool) {
	f := strings.Fields(line)
	if len(f) != 2 || !strings.EqualFold(f[0], "DELIMITER") {
		return "", false
	}
	return f[1], true
}

// dialect is what differs between the databases: which files run on it
// (a file named *.mysql.sql runs on MySQL and MariaDB only), and how a
// statement is adapted for it.
type dialect struct {
	name  string // as gorm's Dialector names it
	adapt func(string) string
}

var (
	mysql  = dialect{name: "mysql", adapt: func(stmt string) string { return stmt }}
	sqlite = dialect{name: "sqlite", adapt: forSQLite}
)

// statements returns m's statements if m runs on d, else none: a file for
// another database has nothing to do on d, and is recorded all the same.
func (d dialect) statements(m migration) []string {
	if m.only != "" && m.only != d.name {
		return nil
	}
	return m.statements
}

// datetimePrecision matches DATETIME(6) and friends.
var datetimePrecision = regexp.MustCompile(`(?i)\b(DATETIME|TIMESTAMP)\(\d\)`)

// forSQLite adapts a statement for SQLite, where the dialects truly differ.
// SQLite ignores type lengths, but the pure-Go driver turns a text column
// into time.Time only when its declared type is exactly DATE, DATETIME or
// TIMESTAMP: "DATETIME(6)" would scan as a string and fail.
func forSQLite(stmt string) string {
	return datetimePrecision.ReplaceAllString(stmt, "$1")
}
