package cluster

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// tailLines is how many lines of a failed node's log Run reports.
const tailLines = 25

// process is one running relayd child.
type process struct {
	index   int
	cmd     *exec.Cmd
	logPath string
	done    chan struct{} // closed once the process has exited
	err     error         // Wait's result; read only after done
}

// startProcess starts exe with args and env through start (exec.Cmd.Start, or a host's Start
// that runs it in a network namespace), its stdout and stderr appended to logPath.
func startProcess(index int, exe string, args, env []string, logPath string, start func(*exec.Cmd) error) (*process, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("node %d: open log: %w", index, err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = sysProcAttr()
	if err := start(cmd); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("node %d: start %s: %w", index, exe, err)
	}
	p := &process{index: index, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// exited reports whether the process has ended.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop asks the process to shut down (SIGTERM), waits up to timeout and then
// kills it; it returns once the process has exited. It reports whether the
// process had to be killed.
func (p *process) stop(timeout time.Duration) (killed bool) {
	if p.exited() {
		return false
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		p.cmd.Process.Kill()
		<-p.done
		return true
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-p.done:
		return false
	case <-t.C:
		p.cmd.Process.Kill()
		<-p.done
		return true
	}
}

// NodeError reports a node that exited or never became ready; it carries the
// end of the node's log.
type NodeError struct {
	Index   int    // 1-based
	Err     error  // what happened
	LogPath string // the node's relayd.log
	Tail    string // its last lines
}

func (e *NodeError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "node %d: %v (log: %s)", e.Index, e.Err, e.LogPath)
	if e.Tail != "" {
		fmt.Fprintf(&b, "\n--- last lines of node %d's log ---\n%s", e.Index, strings.TrimRight(e.Tail, "\n"))
		fmt.Fprintf(&b, "\n--- end of node %d's log ---", e.Index)
	}
	return b.String()
}

func (e *NodeError) Unwrap() error { return e.Err }

// nodeError builds a NodeError for p with the tail of its log.
func (p *process) nodeError(err error) *NodeError {
	return &NodeError{Index: p.index, Err: err, LogPath: p.logPath, Tail: logTail(p.logPath, tailLines)}
}

// logTail returns the last n lines of the file at path (at most its last
// 64 KiB are read); empty when it cannot be read.
func logTail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	const maxRead = 64 << 10
	if st, err := f.Stat(); err == nil && st.Size() > maxRead {
		f.Seek(st.Size()-maxRead, io.SeekStart)
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return ""
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}
