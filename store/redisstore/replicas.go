package redisstore

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/voicearbiter/arbiter/arbiter"
)

// Replica acknowledgements.
//
// Redis replicates asynchronously: a write is acknowledged when the primary has it,
// and a failover to a replica that lags loses it. With Options.ReplicaAcks a Store
// answers nothing that a promoted replica could lack, whenever the primary has
// replicas online:
//
//   - Save sends WAIT after its script, in the same pipeline on the same connection
//     (WAIT counts the replicas that have everything up to the connection's last
//     command): a Save that fewer replicas than required acknowledged within
//     Options.ReplicaTimeout fails with Unavailable, so its RPC answers nothing (the
//     write stays on the primary, as after any Unavailable Save: whether it survives
//     is unknown, and a retry reads the session first).
//   - Load and Current, whose records answer read-only requests, send WAIT after
//     their read the same way, so a record that a failed Save left on the primary is
//     not answered from either until a replica has it (Redis sets a connection's
//     replication offset after every command, reads included: checked against the
//     redis-server the tests run, TestLaggingReplicaFailsClosed).
//
// How many replicas the primary has online is read from INFO replication (the
// replicas in state online), at most once per Options.ReplicaCheckEvery per primary,
// on the request path of the first request after that time; the WAIT asks for
// min(ReplicaAcks, online). A replica that stops answering stays online for the
// primary until its repl-timeout (redis.conf, 60 s by default) passes: until then
// every write and answered read fails with Unavailable (fail closed), after it the
// primary has no replica and requests go on without WAIT.

// errNotReplicated is wrapped by the Unavailable error of a request whose WAIT fell
// short.
var errNotReplicated = errors.New("not acknowledged by enough replicas")

// replicas keeps, per primary, how many replicas it has online. Safe for concurrent
// use.
type replicas struct {
	want    int
	timeout time.Duration
	every   time.Duration

	mu    sync.Mutex
	known map[string]replicaCount // by primary address
}

type replicaCount struct {
	online int
	at     time.Time
}

func newReplicas(opt Options) *replicas {
	if opt.ReplicaAcks <= 0 {
		return nil
	}
	return &replicas{want: opt.ReplicaAcks, timeout: opt.ReplicaTimeout, every: opt.ReplicaCheckEvery, known: map[string]replicaCount{}}
}

// primary returns the client that reaches the primary holding key (st.client itself,
// except on a Cluster: the node that serves key's slot) and how many replicas must
// acknowledge what is done through it (0: none, no WAIT). Errors: Unavailable (the
// primary or its INFO cannot be reached).
func (st *Store) primary(ctx context.Context, key arbiter.SessionKey) (redis.Cmdable, string, int, error) {
	r := st.replicas
	if r == nil {
		return st.client, "", 0, nil
	}
	var (
		c    redis.Cmdable = st.client
		addr string
	)
	if cc, ok := st.client.(*redis.ClusterClient); ok {
		node, err := cc.MasterForKey(ctx, Key(key))
		if err != nil {
			return nil, "", 0, arbiter.Wrap(arbiter.Unavailable, err, "session %q: redis cluster primary unknown", key.ID)
		}
		c, addr = node, node.Options().Addr
	}
	r.mu.Lock()
	k, ok := r.known[addr]
	r.mu.Unlock()
	if !ok || time.Since(k.at) >= r.every {
		info, err := c.Info(ctx, "replication").Result()
		if err != nil {
			return nil, "", 0, arbiter.Wrap(arbiter.Unavailable, err, "session %q: redis replication state unreadable", key.ID)
		}
		k = replicaCount{online: onlineReplicas(info), at: time.Now()}
		r.mu.Lock()
		r.known[addr] = k
		r.mu.Unlock()
	}
	n := min(r.want, k.online)
	if n == 0 {
		// Nothing to wait for: the Store's own client (on a Cluster it follows
		// MOVED and ASK redirections, which a node's client does not).
		return st.client, addr, 0, nil
	}
	return c, addr, n, nil
}

// onlineReplicas counts the replicas in state online in an INFO replication reply
// ("slave0:ip=10.0.0.2,port=6379,state=online,offset=42,lag=0").
func onlineReplicas(info string) int {
	n := 0
	for _, line := range strings.Split(info, "\n") {
		if strings.HasPrefix(line, "slave") && strings.Contains(line, "state=online") {
			n++
		}
	}
	return n
}

// acked runs queue's commands on key's primary in one pipeline followed, when the
// primary has replicas online, by WAIT for as many as Options.ReplicaAcks asks (at
// most those online), bounded by Options.ReplicaTimeout. The queued commands carry
// their own results and errors; acked's error is for the pipeline as a whole:
// Unavailable when the connection failed (the commands' errors say more) or the WAIT
// fell short (wrapping errNotReplicated), naming what (as "load") and the session.
func (st *Store) acked(ctx context.Context, key arbiter.SessionKey, what string, queue func(p redis.Pipeliner)) error {
	c, _, n, err := st.primary(ctx, key)
	if err != nil {
		return err
	}
	var wait *redis.Cmd
	_, err = c.Pipelined(ctx, func(p redis.Pipeliner) error {
		queue(p)
		if n > 0 {
			wait = p.Do(ctx, "wait", n, st.replicas.timeout.Milliseconds())
		}
		return nil
	})
	if cc, ok := st.client.(*redis.ClusterClient); ok && err != nil && (strings.HasPrefix(err.Error(), "MOVED") || strings.HasPrefix(err.Error(), "ASK")) {
		cc.ReloadState(ctx) // the slot moved (a node's client does not follow): the retry asks its new primary
	}
	if wait == nil {
		return nil // the queued commands' errors are theirs
	}
	if werr := wait.Err(); werr != nil {
		if err == nil {
			err = werr
		}
		return classify(err, key, what)
	}
	if got, _ := wait.Int64(); got < int64(n) {
		return arbiter.Wrap(arbiter.Unavailable, errNotReplicated,
			"%s session %q: %d of the %d redis replicas it waits for acknowledged it within %v (--redis-replica-timeout): nothing is answered from it, since a failover now could lose it; retry",
			what, key.ID, got, n, st.replicas.timeout)
	}
	return nil
}

// noScript reports whether err is Redis's NOSCRIPT reply (EVALSHA of a script the
// server does not have: a new primary after a failover, or a restarted one).
func noScript(err error) bool {
	return err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT")
}

// runAcked runs script on key (EVALSHA, then EVAL when the primary does not have it)
// through acked and returns its reply.
func (st *Store) runAcked(ctx context.Context, key arbiter.SessionKey, what string, script *redis.Script, args ...any) ([]any, error) {
	keys := []string{Key(key)}
	var cmd *redis.Cmd
	err := st.acked(ctx, key, what, func(p redis.Pipeliner) { cmd = script.EvalSha(ctx, p, keys, args...) })
	if cmd != nil && noScript(cmd.Err()) {
		err = st.acked(ctx, key, what, func(p redis.Pipeliner) { cmd = script.Eval(ctx, p, keys, args...) })
	}
	if cmd == nil {
		return nil, err
	}
	if cerr := cmd.Err(); cerr != nil {
		return nil, cerr
	}
	if err != nil {
		return nil, err
	}
	return cmd.Slice()
}
