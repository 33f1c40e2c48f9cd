// Package bench holds the side-by-side benchmarks of package dlock against
// the libraries a reader would otherwise reach for: the lua mode against
// github.com/bsm/redislock, and the redlock mode against
// github.com/go-redsync/redsync/v4 on five nodes.
//
// It is a module of its own so that those peer libraries never enter the
// application's go.mod. It has no code outside its _test.go files; run it
// with go test -bench, as README.md shows.
package bench
