// Package flagenv is what the shop and the load generator share about
// their command lines: every flag has an environment variable, PREFIX_NAME
// (--max-in-flight is SHOP_MAX_IN_FLIGHT or LOADGEN_MAX_IN_FLIGHT), a flag
// on the command line beats its variable, and --help lists each flag the
// same way:
//
//	--lock-wait
//	      longest an order waits for its product lock
//	      env SHOP_LOCK_WAIT, default "5s"
//
// Its functions are safe for concurrent use on different flag sets.
package flagenv

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// EnvName is the environment variable of the flag called name under
// prefix: EnvName("SHOP", "max-in-flight") is "SHOP_MAX_IN_FLIGHT".
func EnvName(prefix, name string) string {
	return prefix + "_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// SetFromEnv sets every flag of fs whose variable (EnvName) getenv returns
// non-empty, before fs.Parse, so that the command line wins. It returns an
// error naming the variable and the flag for the first value the flag
// refuses.
func SetFromEnv(fs *flag.FlagSet, prefix string, getenv func(string) string) error {
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		env := EnvName(prefix, f.Name)
		if v := getenv(env); v != "" && err == nil {
			if e := fs.Set(f.Name, v); e != nil {
				err = fmt.Errorf("%s=%q: invalid value for --%s: %v", env, v, f.Name, e)
			}
		}
	})
	return err
}

// PrintFlags writes every flag of fs, in the order of names (nil: fs's
// own, alphabetical), each with its help, its variable and its default.
// A help text that ends in "(default ...)" has that as the default shown;
// otherwise the default is the flag's own, quoted, or "none" when empty.
func PrintFlags(out io.Writer, fs *flag.FlagSet, prefix string, names []string) {
	if names == nil {
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	}
	for _, name := range names {
		f := fs.Lookup(name)
		if f == nil {
			continue
		}
		usage, def := splitDefault(f.Usage)
		if def == "" {
			def = "none"
			if f.DefValue != "" {
				def = fmt.Sprintf("%q", f.DefValue)
			}
		}
		fmt.Fprintf(out, "  --%s\n        %s\n        env %s, default %s\n", f.Name, usage, EnvName(prefix, f.Name), def)
	}
}

// splitDefault cuts a trailing "(default X)" off usage, returning X.
func splitDefault(usage string) (string, string) {
	if !strings.HasSuffix(usage, ")") {
		return usage, ""
	}
	i := strings.LastIndex(usage, " (default ")
	if i < 0 {
		return usage, ""
	}
	return usage[:i], usage[i+len(" (default ") : len(usage)-1]
}
