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
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "createdb:", err)
		os.Exit(1)
	}
}

func run() error {
	if len(os.Args) != 3 {
		return fmt.Errorf("usage: createdb DSN-without-database NAME")
	}
	dsn, name := os.Args[1], os.Args[2]
	if !regexp.MustCompile(`^[A-Za-z0-9_]{1,64}$`).MatchString(name) {
		return fmt.Errorf("database name %q: want 1-64 of [A-Za-z0-9_]", name)
	}
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
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
