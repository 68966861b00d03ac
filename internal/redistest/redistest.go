// Package redistest starts real redis-server processes (a single server or a Redis
// Cluster) on free loopback ports for tests, and stops them when the test ends. It
// never touches a Redis the machine already runs (127.0.0.1:6379 stays untouched).
//
// redis-server and redis-cli must be on PATH; when they are not, the test fails (it
// does not skip) with a message saying to install them (apt-get install redis-server).
package redistest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// StartTimeout bounds how long a server may take to answer PING after it starts.
const StartTimeout = 10 * time.Second

// Server is one redis-server process started by the test. Its methods are safe for
// concurrent use.
type Server struct {
	// Addr is the server's host:port on 127.0.0.1.
	Addr string
	// Port is Addr's port.
	Port int
	// Dir is the server's working directory (data files, log), a test temp dir.
	Dir string

	t    testing.TB
	args []string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

// RequireBinaries fails t unless redis-server and redis-cli are on PATH.
func RequireBinaries(t testing.TB) {
	t.Helper()
	for _, bin := range []string{"redis-server", "redis-cli"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Fatalf("%s is not on PATH: these tests run a real Redis; install it (apt-get install redis-server)", bin)
		}
	}
}

// Start starts a redis-server on a free 127.0.0.1 port, with no persistence
// (--save "" --appendonly no) unless extra overrides it, in a temp dir, and waits until
// it answers PING. extra are more redis-server arguments, applied after those, so a
// later value wins: "--appendonly", "yes" turns AOF on, "--save", "60 1" sets an RDB
// save point, "--rename-command", "CONFIG", "" disables CONFIG as managed Redis does.
// The server is killed when the test ends.
func Start(t testing.TB, extra ...string) *Server {
	t.Helper()
	RequireBinaries(t)
	dir := t.TempDir()
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		port, err := freePort(false)
		if err != nil {
			t.Fatal(err)
		}
		s := &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Port: port, Dir: dir, t: t}
		s.args = append([]string{
			"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
			"--dir", dir, "--logfile", filepath.Join(dir, "redis.log"), "--daemonize", "no",
		}, extra...)
		if lastErr = s.start(); lastErr == nil {
			t.Cleanup(s.Kill)
			return s
		}
	}
	t.Fatalf("redis-server did not start: %v", lastErr)
	return nil
}

// URL returns redis://ADDR.
func (s *Server) URL() string { return "redis://" + s.Addr }

func (s *Server) start() error {
	cmd := exec.Command("redis-server", s.args...)
	cmd.Dir = s.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	s.mu.Lock()
	s.cmd, s.done = cmd, done
	s.mu.Unlock()
	deadline := time.Now().Add(StartTimeout)
	for time.Now().Before(deadline) {
		select {
		case <-done:
			return fmt.Errorf("redis-server on %s exited at start; log:\n%s", s.Addr, s.Log())
		default:
		}
		if reply, err := Command(s.Addr, "PING"); err == nil && reply == "+PONG" {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.Kill()
	return fmt.Errorf("redis-server on %s did not answer PING within %v; log:\n%s", s.Addr, StartTimeout, s.Log())
}

// Kill stops the server with SIGKILL (what it had not written to disk is lost) and
// waits for it to exit. Killing a stopped server does nothing.
func (s *Server) Kill() {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-done
}

// Restart starts the server again on the same port, directory and arguments (a
// server with --appendonly yes reloads its data) and waits until it answers PING. It
// fails the test when the server does not come back.
func (s *Server) Restart() {
	s.t.Helper()
	s.Kill()
	var err error
	// The port was ours a moment ago; retry briefly in case the kernel holds it.
	for attempt := 0; attempt < 20; attempt++ {
		if err = s.start(); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.t.Fatalf("restart redis-server on %s: %v", s.Addr, err)
}

// Log returns the server's log file so far.
func (s *Server) Log() string {
	b, _ := os.ReadFile(filepath.Join(s.Dir, "redis.log"))
	return string(b)
}

// Command sends one inline command to the server at addr and returns the first line
// of its reply ("+PONG", "-ERR ...", ":1", "$5" ...). Timeouts: 2 s.
func Command(addr string, args ...string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := c.Write([]byte(b.String())); err != nil {
		return "", err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return strings.TrimRight(line, "\r\n"), err
}

// freePort returns a port that was free on 127.0.0.1 a moment ago; with bus set, port
// + 10000 (the cluster bus port) was free too.
func freePort(bus bool) (int, error) {
	for attempt := 0; attempt < 50; attempt++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		if !bus {
			_ = l.Close()
			return port, nil
		}
		if port+10000 > 65535 {
			_ = l.Close()
			continue
		}
		l2, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port+10000)))
		_ = l.Close()
		if err != nil {
			continue
		}
		_ = l2.Close()
		return port, nil
	}
	return 0, fmt.Errorf("no free port pair for a cluster node")
}

// Cluster is a Redis Cluster of masters only, started by the test.
type Cluster struct {
	Nodes []*Server
}

// StartCluster starts n (at least 3) cluster-enabled redis-servers, joins them with
// `redis-cli --cluster create --cluster-replicas 0`, and waits until every node says
// cluster_state:ok. Like Start's, the nodes have no persistence unless extra (more
// redis-server arguments for every node, applied last) overrides it. The nodes are
// killed when the test ends.
func StartCluster(t testing.TB, n int, extra ...string) *Cluster {
	t.Helper()
	RequireBinaries(t)
	if n < 3 {
		t.Fatalf("a Redis Cluster needs at least 3 masters, not %d", n)
	}
	c := &Cluster{}
	var addrs []string
	for i := 0; i < n; i++ {
		dir := t.TempDir()
		var s *Server
		var err error
		for attempt := 0; attempt < 5; attempt++ {
			var port int
			if port, err = freePort(true); err != nil {
				t.Fatal(err)
			}
			s = &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Port: port, Dir: dir, t: t}
			s.args = []string{
				"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
				"--dir", dir, "--logfile", filepath.Join(dir, "redis.log"), "--daemonize", "no",
				"--cluster-enabled", "yes", "--cluster-config-file", filepath.Join(dir, "nodes.conf"),
				"--cluster-node-timeout", "2000",
			}
			s.args = append(s.args, extra...)
			if err = s.start(); err == nil {
				break
			}
		}
		if err != nil {
			t.Fatalf("cluster node %d: %v", i, err)
		}
		t.Cleanup(s.Kill)
		c.Nodes = append(c.Nodes, s)
		addrs = append(addrs, s.Addr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	args := append([]string{"--cluster", "create"}, addrs...)
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	out, err := exec.CommandContext(ctx, "redis-cli", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	deadline := time.Now().Add(20 * time.Second)
	for _, s := range c.Nodes {
		for {
			info, err := exec.CommandContext(ctx, "redis-cli", "-h", "127.0.0.1", "-p", strconv.Itoa(s.Port), "cluster", "info").Output()
			if err == nil && strings.Contains(string(info), "cluster_state:ok") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("cluster node %s not ok after 20 s: %v\n%s", s.Addr, err, info)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return c
}

// URL returns the cluster's seed-list URL in go-redis's cluster form:
// redis://NODE1?addr=NODE2&addr=NODE3.
func (c *Cluster) URL() string {
	u := "redis://" + c.Nodes[0].Addr
	for i, s := range c.Nodes[1:] {
		if i == 0 {
			u += "?"
		} else {
			u += "&"
		}
		u += "addr=" + s.Addr
	}
	return u
}

// Signal sends sig to the server (SIGSTOP freezes it, as a replica that stops
// answering; SIGCONT lets it go on). Signalling a killed server does nothing.
func (s *Server) Signal(sig syscall.Signal) {
	s.mu.Lock()
	cmd := s.cmd
	s.mu.Unlock()
	if cmd != nil {
		_ = cmd.Process.Signal(sig)
	}
}

// StartReplica starts a redis-server replicating primary (--replicaof), with extra
// arguments as Start's, and waits until primary reports it online (synchronised). It
// fails the test when that takes more than StartTimeout.
func StartReplica(t testing.TB, primary *Server, extra ...string) *Server {
	t.Helper()
	r := Start(t, append([]string{"--replicaof", "127.0.0.1", strconv.Itoa(primary.Port)}, extra...)...)
	deadline := time.Now().Add(StartTimeout)
	for time.Now().Before(deadline) {
		if online(primary.Addr, r.Port) {
			return r
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("replica %s of %s not online within %v; its log:\n%s", r.Addr, primary.Addr, StartTimeout, r.Log())
	return nil
}

// online reports whether the server at addr lists a replica on port in state online.
func online(addr string, port int) bool {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write([]byte("INFO replication\r\n")); err != nil {
		return false
	}
	r := bufio.NewReader(c)
	head, err := r.ReadString('\n')
	if err != nil || !strings.HasPrefix(head, "$") {
		return false
	}
	n, _ := strconv.Atoi(strings.TrimSpace(head[1:]))
	buf := make([]byte, n)
	if _, err := io.ReadFull(r, buf); err != nil {
		return false
	}
	return strings.Contains(string(buf), "port="+strconv.Itoa(port)+",state=online")
}
