package deploy_test

import (
	"encoding/json"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// stage is one FROM section of the Dockerfile.
type stage struct {
	image, name string
	instrs      []instruction
}

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	cmd  string // upper case: RUN, COPY, ...
	args string
}

func loadDockerfile(t *testing.T) []stage {
	t.Helper()
	data, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	var stages []stage
	var buf string
	for line := range strings.Lines(string(data)) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue // comments may sit between continuation lines too
		}
		if l, ok := strings.CutSuffix(line, `\`); ok {
			buf += strings.TrimSpace(l) + " "
			continue
		}
		cmd, args, _ := strings.Cut(buf+line, " ")
		buf = ""
		in := instruction{cmd: strings.ToUpper(cmd), args: strings.TrimSpace(args)}
		if in.cmd == "FROM" {
			var s stage
			for f := range strings.FieldsSeq(in.args) {
				switch {
				case strings.HasPrefix(f, "--"): // --platform=...
				case s.image == "":
					s.image = f
				case !strings.EqualFold(f, "AS"):
					s.name = f
				}
			}
			stages = append(stages, s)
			continue
		}
		if len(stages) == 0 {
			t.Fatalf("Dockerfile: %s before FROM", in.cmd)
		}
		stages[len(stages)-1].instrs = append(stages[len(stages)-1].instrs, in)
	}
	if len(stages) < 2 {
		t.Fatalf("Dockerfile: %d stages, want a build stage and a runtime stage", len(stages))
	}
	return stages
}

// installedBinaries returns the paths in the final image of the files that
// COPY --from puts there.
func installedBinaries(t *testing.T) map[string]bool {
	t.Helper()
	stages := loadDockerfile(t)
	paths := map[string]bool{}
	for _, in := range stages[len(stages)-1].instrs {
		if in.cmd != "COPY" || !strings.Contains(in.args, "--from=") {
			continue
		}
		var files []string
		for f := range strings.FieldsSeq(in.args) {
			if !strings.HasPrefix(f, "--") {
				files = append(files, f)
			}
		}
		if len(files) < 2 {
			continue
		}
		srcs, dst := files[:len(files)-1], files[len(files)-1]
		for _, src := range srcs {
			if strings.HasSuffix(dst, "/") {
				paths[dst+path.Base(src)] = true
			} else {
				paths[dst] = true
			}
		}
	}
	return paths
}

func TestDockerfileBuildStage(t *testing.T) {
	stages := loadDockerfile(t)
	build := stages[0]
	goVersion := goModVersion(t)
	tag, ok := strings.CutPrefix(build.image, "golang:")
	if !ok || (tag != goVersion && !strings.HasPrefix(tag, goVersion+"-")) {
		t.Errorf("Dockerfile: build stage FROM %s, want golang:%s[-variant] (go.mod's go line)", build.image, goVersion)
	}

	var cgoOff, built bool
	for _, in := range build.instrs {
		if in.cmd == "ENV" && regexp.MustCompile(`(^|\s)CGO_ENABLED[= ]0\b`).MatchString(in.args) {
			cgoOff = true
		}
		if in.cmd != "RUN" || !strings.Contains(in.args, "go build") {
			continue
		}
		built = true
		if !cgoOff && !strings.Contains(in.args, "CGO_ENABLED=0") {
			t.Errorf("Dockerfile: %q runs without CGO_ENABLED=0: the binary would need libc", in.args)
		}
		for _, want := range []string{"-trimpath", `-ldflags "-s -w"`, "./cmd/shop", "./cmd/loadgen"} {
			if !strings.Contains(in.args, want) {
				t.Errorf("Dockerfile: %q lacks %s", in.args, want)
			}
		}
	}
	if !built {
		t.Error("Dockerfile: the first stage has no RUN go build")
	}
}

// installs matches commands that add packages or build code.
var installs = regexp.MustCompile(`(^|[\s;&|])(apk|apt-get|apt|dnf|yum|pip|go|gcc|make)\s`)

func TestDockerfileRuntimeStage(t *testing.T) {
	stages := loadDockerfile(t)
	final := stages[len(stages)-1]
	if strings.HasPrefix(final.image, "golang") {
		t.Errorf("Dockerfile: final stage FROM %s ships the Go toolchain", final.image)
	}
	var user string
	var exposed []string
	var entrypoint []string
	for _, in := range final.instrs {
		switch in.cmd {
		case "RUN":
			if installs.MatchString(in.args) {
				t.Errorf("Dockerfile: final stage runs %q: install and build nothing there, only in the build stage", in.args)
			}
		case "USER":
			user = in.args
		case "EXPOSE":
			exposed = append(exposed, strings.Fields(in.args)...)
		case "ENTRYPOINT":
			if err := json.Unmarshal([]byte(in.args), &entrypoint); err != nil {
				t.Errorf("Dockerfile: ENTRYPOINT %s is not exec form (the image has no shell): %v", in.args, err)
			}
		}
	}
	if name, _, _ := strings.Cut(user, ":"); name == "" || name == "root" || name == "0" {
		t.Errorf("Dockerfile: final stage USER = %q, want a non-root user", user)
	}
	if !slices.Contains(exposed, "8080") {
		t.Errorf("Dockerfile: EXPOSE %q, want 8080 (the shop's default --addr)", exposed)
	}
	installed := installedBinaries(t)
	paths := slices.Sorted(maps.Keys(installed))
	for _, bin := range []string{"shop", "loadgen"} {
		if !slices.ContainsFunc(paths, func(p string) bool { return path.Base(p) == bin }) {
			t.Errorf("Dockerfile: final stage does not COPY --from the %s binary; it copies %q", bin, paths)
		}
	}
	if len(entrypoint) == 0 || path.Base(entrypoint[0]) != "shop" || !installed[entrypoint[0]] {
		t.Errorf("Dockerfile: ENTRYPOINT %q, want the shop binary the final stage copies", entrypoint)
	}
}

// The runtime image holds binaries only, so the shop must carry its schema.
func TestMigrationsEmbedded(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("migrations", "*.go"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), "//go:embed") {
			return
		}
	}
	t.Errorf("migrations/*.go (%v): no //go:embed, but the Docker image copies no SQL files", files)
}

// .dockerignore keeps the build context small without hiding the sources.
func TestDockerignore(t *testing.T) {
	data, err := os.ReadFile(".dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	var patterns []string
	for line := range strings.Lines(string(data)) {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			patterns = append(patterns, line)
		}
	}
	ignored := func(p string) bool {
		for _, pat := range patterns {
			// A pattern matches a path or any directory above it.
			for q := p; q != "."; q = path.Dir(q) {
				if ok, _ := path.Match(strings.TrimPrefix(pat, "/"), q); ok {
					return true
				}
			}
		}
		return false
	}
	for _, p := range []string{"go.mod", "go.sum", "cmd/shop/main.go", "cmd/loadgen/main.go", "internal/app", "migrations/0001.sql"} {
		if ignored(p) {
			t.Errorf(".dockerignore hides %s, which the build needs", p)
		}
	}
	for _, p := range []string{".git", "loadgen-report"} {
		if !ignored(p) {
			t.Errorf(".dockerignore does not exclude %s", p)
		}
	}
}

// goModVersion returns the version on go.mod's go line.
func goModVersion(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go\s+(\S+)`).FindSubmatch(data)
	if m == nil {
		t.Fatal("go.mod: no go line")
	}
	return string(m[1])
}
