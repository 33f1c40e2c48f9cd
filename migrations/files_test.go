package migrations

import (
	"reflect"
	"sort"
	"strings"
	"testing"
)

func TestSplit(t *testing.T) {
	in := "-- comment; not a statement\nCREATE TABLE a (\n  x INT\n);\n\nCREATE INDEX i ON a (x);  \nSELECT 1"
	got := split(in)
	want := []string{"CREATE TABLE a (\n  x INT\n)", "CREATE INDEX i ON a (x)", "SELECT 1"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("split:\n got %q\nwant %q", got, want)
	}
}

// A procedure's body keeps its semicolons: DELIMITER changes what ends a
// statement, as in the mysql client.
func TestSplitDelimiter(t *testing.T) {
	in := "DROP PROCEDURE IF EXISTS p;\nDELIMITER //\nCREATE PROCEDURE p()\nBEGIN\n  SELECT 1;\n  SELECT 2;\nEND //\nDELIMITER ;\nSELECT 3;"
	got := split(in)
	want := []string{"DROP PROCEDURE IF EXISTS p", "CREATE PROCEDURE p()\nBEGIN\n  SELECT 1;\n  SELECT 2;\nEND ", "SELECT 3"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("split:\n got %q\nwant %q", got, want)
	}
}

func TestForSQLite(t *testing.T) {
	got := forSQLite("created_at DATETIME(6) NOT NULL, t timestamp(3)")
	want := "created_at DATETIME NOT NULL, t timestamp"
	if got != want {
		t.Errorf("forSQLite: got %q, want %q", got, want)
	}
}

func TestEmbeddedFilesLoad(t *testing.T) {
	v := Versions()
	if len(v) == 0 {
		t.Fatal("no migrations embedded")
	}
	if !sort.StringsAreSorted(v) {
		t.Errorf("versions not in order: %v", v)
	}
}

// A *.mysql.sql file runs on MySQL and MariaDB only; the others everywhere.
func TestDialectStatements(t *testing.T) {
	all, err := load()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range all {
		wantSQLite := len(m.statements)
		if strings.HasSuffix(m.version, ".mysql") {
			wantSQLite = 0
		}
		if got, want := len(mysql.statements(m)), len(m.statements); got != want {
			t.Errorf("%s on MySQL: got %d statements, want %d", m.version, got, want)
		}
		if got := len(sqlite.statements(m)); got != wantSQLite {
			t.Errorf("%s on SQLite: got %d statements, want %d", m.version, got, wantSQLite)
		}
	}
}
