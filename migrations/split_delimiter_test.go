package migrations

import (
	"io/fs"
	"reflect"
	"strings"
	"testing"
)

// splitBefore is split as it was before it honoured DELIMITER: one statement per
// semicolon at the end of a line.
func splitBefore(text string) []string {
	var stmts []string
	var cur []string
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "--") {
			continue
		}
		line = strings.TrimRight(line, " \t\r")
		if strings.HasSuffix(trimmed, ";") {
			cur = append(cur, strings.TrimSuffix(line, ";"))
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

// Every file without DELIMITER splits exactly as before.
func TestSplitUnchangedWithoutDelimiter(t *testing.T) {
	names, err := fs.Glob(files, "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		b, _ := fs.ReadFile(files, name)
		if strings.Contains(string(b), "DELIMITER") {
			continue
		}
		got, want := split(string(b)), splitBefore(string(b))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: split = %q, before = %q", name, got, want)
		}
	}
}

func TestSplitDelimiterEdges(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []string
	}{
		{"windows line endings", "DELIMITER //\r\nCREATE PROCEDURE p()\r\nBEGIN\r\n  SELECT 1;\r\nEND //\r\nDELIMITER ;\r\nSELECT 2;\r\n",
			[]string{"CREATE PROCEDURE p()\nBEGIN\n  SELECT 1;\nEND ", "SELECT 2"}},
		// The mysql client reads "delimiter" in any case.
		{"lower case delimiter", "delimiter //\nCREATE PROCEDURE p()\nBEGIN\n  SELECT 1;\nEND //\ndelimiter ;\n",
			[]string{"CREATE PROCEDURE p()\nBEGIN\n  SELECT 1;\nEND "}},
		// A commented-out DELIMITER line is a comment: it must change nothing.
		{"delimiter in a comment", "-- DELIMITER //\nSELECT 1;\nSELECT 2;\n",
			[]string{"SELECT 1", "SELECT 2"}},
		// A bare "DELIMITER" is passed on as SQL: the server refuses it, loudly.
		{"bare delimiter", "DELIMITER \nSELECT 1\nFROM t;\n",
			[]string{"DELIMITER\nSELECT 1\nFROM t"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := split(tt.text)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("split = %q, want %q", got, tt.want)
			}
		})
	}
}
