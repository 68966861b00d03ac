package redisstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/voicearbiter/arbiter/arbiter"
)

// Where a Persistence was read from.
const (
	FromConfig = "CONFIG GET"
	// FromInfo is the fallback where CONFIG is refused (disabled, renamed, or denied
	// by an ACL, as on most managed Redis): INFO persistence says whether AOF is on,
	// but neither the fsync policy nor the RDB save points.
	FromInfo = "INFO persistence"
)

// Persistence is what one Redis server is configured to keep across a restart.
type Persistence struct {
	// Addr is the server as the client dials it ("primary (Sentinel)" for the
	// primary a Sentinel names).
	Addr string
	// AOF reports appendonly yes.
	AOF bool
	// Fsync is appendfsync (always, everysec or no); "" when it could not be read.
	Fsync string
	// Save is the RDB save points as CONFIG GET save gives them ("3600 1 300 100");
	// "" when there are none or they could not be read.
	Save string
	// From is FromConfig or FromInfo.
	From string
}

// Durable reports whether the server keeps everything it acknowledged across a
// restart or a crash: AOF on with appendfsync always. Anything less can lose
// acknowledged writes without a trace: RDB snapshots roll every session back to the
// last snapshot (minutes old), AOF everysec loses up to a second, appendfsync no what
// the kernel had not flushed; a rolled-back session looks valid (its epoch is
// unchanged), so a decision the arbiter handed out is forgotten and a re-issued call
// could execute again. An fsync policy that could not be read (CONFIG refused, as on
// managed Redis) is not assumed to be always.
func (p Persistence) Durable() bool { return p.AOF && p.Fsync == "always" }

// Loses says what a restart of the server loses, for an operator.
func (p Persistence) Loses() string {
	switch {
	case p.AOF && p.Fsync == "always":
		return "nothing it acknowledged (AOF, appendfsync always)"
	case p.AOF && p.Fsync == "everysec":
		return "up to 1 s of writes (AOF, appendfsync everysec)"
	case p.AOF && p.Fsync == "no":
		return "the writes the kernel had not flushed, typically up to 30 s (AOF, appendfsync no)"
	case p.AOF:
		return "up to the AOF's fsync window (AOF on; appendfsync not readable)"
	case p.Save != "":
		return fmt.Sprintf("every write since its last RDB snapshot (no AOF; save %q): sessions roll back silently", p.Save)
	case p.From == FromInfo:
		return "every session, or every write since its last RDB snapshot (AOF off; RDB save points not readable without CONFIG)"
	default:
		return "every session (no AOF, no RDB save points)"
	}
}

// Persistence reads the persistence configuration of every server the store writes
// to: the single server, the primary a Sentinel names, or every master of a Cluster,
// sorted by address. It asks CONFIG GET (appendonly, appendfsync, save) and, where
// Redis refuses CONFIG with an error reply, INFO persistence. Errors: Unavailable
// when a server does not answer (the result is then incomplete and nil).
func (st *Store) Persistence(ctx context.Context) ([]Persistence, error) {
	var (
		mu  sync.Mutex
		out []Persistence
	)
	read := func(ctx context.Context, c *redis.Client) error {
		p, err := readPersistence(ctx, c)
		if err != nil {
			return err
		}
		mu.Lock()
		out = append(out, p)
		mu.Unlock()
		return nil
	}
	var err error
	switch c := st.client.(type) {
	case *redis.ClusterClient:
		err = c.ForEachMaster(ctx, read)
	case *redis.Client:
		err = read(ctx, c)
	default:
		return nil, arbiter.Errorf(arbiter.Internal, "redis persistence: unsupported client %T", st.client)
	}
	if err != nil {
		return nil, arbiter.Wrap(arbiter.Unavailable, err, "redis persistence: not readable")
	}
	slices.SortFunc(out, func(a, b Persistence) int { return strings.Compare(a.Addr, b.Addr) })
	return out, nil
}

// readPersistence reads one server's persistence: CONFIG GET, or INFO persistence
// when CONFIG answers with an error reply that is not transient.
func readPersistence(ctx context.Context, c *redis.Client) (Persistence, error) {
	p := Persistence{Addr: c.Options().Addr, From: FromConfig}
	if p.Addr == "FailoverClient" { // go-redis's placeholder for a Sentinel-managed primary
		p.Addr = "primary (Sentinel)"
	}
	// One parameter per CONFIG GET: Redis before 7.0 takes only one.
	var cmds []*redis.MapStringStringCmd
	_, err := c.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for _, name := range []string{"appendonly", "appendfsync", "save"} {
			cmds = append(cmds, pipe.ConfigGet(ctx, name))
		}
		return nil
	})
	var rerr redis.Error
	switch {
	case err == nil:
		p.AOF = cmds[0].Val()["appendonly"] == "yes"
		p.Fsync = cmds[1].Val()["appendfsync"]
		p.Save = strings.TrimSpace(cmds[2].Val()["save"])
		return p, nil
	case errors.As(err, &rerr) && !transient(rerr.Error()):
		// CONFIG disabled, renamed or denied: fall back to INFO.
	default:
		return p, fmt.Errorf("%s: %w", p.Addr, err)
	}
	info, err := c.Info(ctx, "persistence").Result()
	if err != nil {
		return p, fmt.Errorf("%s: CONFIG GET refused, and INFO persistence: %w", p.Addr, err)
	}
	p.From = FromInfo
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "aof_enabled:"); ok {
			p.AOF = v == "1"
			return p, nil
		}
	}
	return p, fmt.Errorf("%s: CONFIG GET refused, and INFO persistence has no aof_enabled", p.Addr)
}
