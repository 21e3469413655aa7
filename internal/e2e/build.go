package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
)

// GoTool is the go command of the toolchain running the test (GOROOT's,
// so a test run by one toolchain does not build with another on PATH).
func GoTool() string {
	root := os.Getenv("GOROOT")
	if root == "" {
		root = runtime.GOROOT()
	}
	if root != "" {
		p := filepath.Join(root, "bin", "go")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return "go"
}

// ModuleRoot is the directory of the module's go.mod.
func ModuleRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(filepath.Dir(file)))
}

// Build builds the module's commands pkgs (e.g. "./cmd/rendezvous") into a
// new temporary directory, once per Build however often Dir is called: a
// test package declares one and removes it in TestMain.
type Build struct {
	pkgs []string
	once sync.Once
	dir  string
	err  error
}

// NewBuild is the build of pkgs; nothing is built before Dir.
func NewBuild(pkgs ...string) *Build { return &Build{pkgs: pkgs} }

// Dir builds the commands (the first call) and returns their directory,
// where each binary is named after its package's last element.
func (b *Build) Dir() (string, error) {
	b.once.Do(func() {
		b.dir, b.err = os.MkdirTemp("", "rendezvous-test-bin-")
		if b.err != nil {
			return
		}
		for _, pkg := range b.pkgs {
			cmd := exec.Command(GoTool(), "build", "-o", b.dir+string(filepath.Separator), pkg)
			cmd.Dir = ModuleRoot()
			if out, err := cmd.CombinedOutput(); err != nil {
				b.err = fmt.Errorf("cannot build %s: %v\n%s", pkg, err, out)
				return
			}
		}
	})
	return b.dir, b.err
}

// Path is binary name's path, built on first use.
func (b *Build) Path(name string) (string, error) {
	dir, err := b.Dir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, name), nil
}

// Remove deletes what was built (TestMain calls it after the run).
func (b *Build) Remove() {
	if b.dir != "" {
		os.RemoveAll(b.dir)
	}
}
