// Command createdb creates a MySQL/MariaDB database if it does not exist,
// waiting up to 30 s for the server. .ci/run uses it when neither the
// mariadb nor the mysql client is installed.
//
//	go run ./cmd/createdb 'root@tcp(127.0.0.1:3306)/' flashsale_test
package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"regexp"
	"time"

	_ "github.com/go-sql-driver/mysql"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	err := run(ctx, os.Args[1:])
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "createdb:", err)
		os.Exit(1)
	}
}

// run creates the database args[1] on the server of the DSN args[0],
// waiting for the server until ctx ends.
func run(ctx context.Context, args []string) error {
	if len(args) != 2 {
		return fmt.Errorf("usage: createdb DSN-without-database NAME")
	}
	dsn, name := args[0], args[1]
	if !regexp.MustCompile(`^[A-Za-z0-9_]{1,64}$`).MatchString(name) {
		return fmt.Errorf("database name %q: want 1-64 of [A-Za-z0-9_]", name)
	}
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	for {
		if err = db.PingContext(ctx); err == nil {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("server not answering: %w", err)
		case <-time.After(time.Second):
		}
	}
	_, err = db.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS `"+name+"` CHARACTER SET utf8mb4")
	return err
}
