//go:build unix

// Package proctest runs the test binary itself as a helper process, for
// tests that kill a writer with SIGKILL half-way or need another user's
// rights: the test binary's TestMain calls Main, which runs the helper a
// Command names and exits.
package proctest

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

const (
	envName = "DADIL_PROCTEST"
	envArgs = "DADIL_PROCTEST_ARGS"
)

// Main runs the helper named in the environment with its arguments and
// exits with its status; in a normal test run it returns at once. Call it
// first in TestMain.
func Main(helpers map[string]func(args []string) int) {
	name := os.Getenv(envName)
	if name == "" {
		return
	}
	h, ok := helpers[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "proctest: no helper %q\n", name)
		os.Exit(3)
	}
	var args []string
	if err := json.Unmarshal([]byte(os.Getenv(envArgs)), &args); err != nil {
		fmt.Fprintf(os.Stderr, "proctest: arguments: %v\n", err)
		os.Exit(3)
	}
	os.Exit(h(args))
}

// Command returns the command that runs the helper name of this test
// binary with args.
func Command(t *testing.T, name string, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), envName+"="+name, envArgs+"="+string(b))
	return cmd
}

// KillSelf kills the process with SIGKILL, as a crash or kill -9 would: no
// deferred function runs.
func KillSelf() {
	syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {}
}

// Killed reports whether err is the exit of a process killed by SIGKILL.
func Killed(err error) bool {
	ee, ok := err.(*exec.ExitError)
	if !ok {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

// OpenDir returns a new folder that every user may enter and read (its
// files are not shared otherwise), removed when the test ends.
func OpenDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "proctest")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
			if err == nil && fi.IsDir() {
				os.Chmod(p, 0o755)
			}
			return nil
		})
		os.RemoveAll(dir)
	})
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Unprivileged makes cmd run as the user nobody (uid and gid 65534) when
// the test runs as root, for whom permissions do not apply; the test
// binary is copied into OpenDir so that nobody may run it. Files cmd reads
// must be readable by all. Otherwise cmd is left as it is.
func Unprivileged(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if os.Geteuid() != 0 {
		return
	}
	exe := filepath.Join(OpenDir(t), "helper.test")
	if err := copyFile(cmd.Path, exe); err != nil {
		t.Fatal(err)
	}
	cmd.Path, cmd.Args[0] = exe, exe
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	cmd.Dir = filepath.Dir(exe)
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
